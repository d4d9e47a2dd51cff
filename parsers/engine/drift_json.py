"""Drift readings of a JSON-bodied call (issue 33): what a call body or header that drifted from its format says,
when the declared tools make it unambiguous.

Each reading recognises one drift shape and returns a :class:`Recovered` (the call: declared name, arguments that
fit its schema) or a :class:`Refused` (the shape is there, but the declared tools do not make it one call: an
undeclared name, arguments off-schema, two readings). The family parser decides what to do with either
(:mod:`toolwire.parsers.hermes_json`, :mod:`toolwire.parsers.kimi`); the checks themselves are
:class:`~toolwire.parsers.engine.drift.DeclaredTools`'. Nothing here runs without declared tools.

Readings of a Hermes/Qwen ``<tool_call>`` body (:func:`read_call_body`):

* ``<function=NAME>{json}</function>`` and ``<function NAME>{json}</function>`` (Qwen3-Coder's tag around a JSON
  body) -- ``drift_function_tag`` (borrowed shape);
* ``<function=NAME><parameter=k>v</parameter>...</function>`` (Qwen3-Coder's XML call written inside a Hermes
  wrapper; values typed by the schema) -- ``drift_function_tag`` (borrowed shape);
* ``NAME(k="v", n=3)`` (a Python call) -- ``drift_python_call`` (borrowed shape);
* ``{"function=NAME": {...}}`` or ``{"name": "function=NAME", "arguments": {...}}`` -- ``drift_function_key``;
* ``{"name": ..., "args": {...}}`` / ``"input"`` / ``"parameters"`` with no ``"arguments"`` --
  ``drift_arguments_key`` (borrowed shape; ``parameters`` keeps its older code ``arguments_alias_parameters``
  where the name is clean, this reading only fires where the call is otherwise unusable);
* a name with blanks around it (``"get_weather "``) -- ``drift_name_whitespace`` (damaged name);
* a string value whose closing quote is missing before the object's closing braces
  (``{"city": "Paris}}``) -- ``drift_unclosed_string`` (damaged delimiters): the one place to close it that gives
  a call object for a declared tool with fitting arguments.

* ``{"NAME": {...}}`` (the name as the only key) -- ``drift_name_as_key``; ``{"name": NAME, "k": v}`` (the
  arguments beside the name) -- ``drift_flat_arguments``; ``{"NAME_k": v}`` / ``{"name": "NAMEk": v}`` (the name
  glued to the first argument key, one split only) -- ``drift_glued_name`` (damaged name; also read in Mistral's
  ``[TOOL_CALLS]{...}`` header and, for an object that names a declared tool, in Llama 3.1's bare JSON answer:
  :func:`read_bare_object`);
* a string whose opening or closing ``"`` was written ``'`` -- ``drift_wrong_quote`` (damaged delimiters): the one
  ``'`` whose turn into ``"`` gives fitting arguments (:func:`wrong_quote`; a streamed call takes it only when what
  it sent is a prefix of the re-quoted text).

Readings of a Kimi call id (:func:`read_kimi_id`): ``functionsNAMEN``, ``functions_NAME_N``, ``functionsNAME:N``
(the id's separators lost) -- ``drift_call_id_separators`` (damaged name).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, NamedTuple

from .drift import GLUED_NAME, NAME_WHITESPACE, PYTHON_CALL, DeclaredTools, Drift, register
from .drift_python import PYTHON_CALL_SHAPE, python_call_arguments
from .safe_json import loads
from .schema_coerce import coerce

FUNCTION_TAG = "drift_function_tag"
FUNCTION_KEY = "drift_function_key"
ARGUMENTS_KEY = "drift_arguments_key"
UNCLOSED_STRING = "drift_unclosed_string"
CALL_ID_SEPARATORS = "drift_call_id_separators"
MISSING_ARGS_MARKER = "drift_missing_args_marker"
CALL_OBJECT_AFTER_MARKER = "drift_call_object_after_marker"
NAME_AS_KEY = "drift_name_as_key"
FLAT_ARGUMENTS = "drift_flat_arguments"
WRONG_QUOTE = "drift_wrong_quote"

CLASSES: dict[str, Drift] = {
    FUNCTION_TAG: Drift.BORROWED_SHAPE, FUNCTION_KEY: Drift.BORROWED_SHAPE, ARGUMENTS_KEY: Drift.BORROWED_SHAPE,
    UNCLOSED_STRING: Drift.DAMAGED_DELIMITERS, CALL_ID_SEPARATORS: Drift.DAMAGED_NAME,
    MISSING_ARGS_MARKER: Drift.MISSING_MARKERS, CALL_OBJECT_AFTER_MARKER: Drift.BORROWED_SHAPE,
    NAME_AS_KEY: Drift.DAMAGED_NAME, FLAT_ARGUMENTS: Drift.DAMAGED_NAME, WRONG_QUOTE: Drift.DAMAGED_DELIMITERS,
}
"""Each recovery code only the JSON-bodied families take, and its class (registered here; the codes both groups
take are :mod:`.drift`'s)."""
for _code, _drift in CLASSES.items():
    register(_drift, _code)


class Recovered(NamedTuple):
    """A drifted call read unambiguously: the declared tool, its arguments, the recovery's code and what it did."""

    code: str
    name: str
    arguments: dict
    message: str
    closed_at: int | None = None
    """``drift_unclosed_string``: how many characters before the text's end the missing quote was put."""
    requoted_at: int | None = None
    """``drift_wrong_quote``: the position in the text of the ``'`` read as ``"``."""


class Refused(NamedTuple):
    """A drift shape the declared tools do not make one call: the recovery's code and why."""

    code: str
    why: str


Reading = Recovered | Refused | None

_BLANKS = " \t\r\n"
_FUNCTION_TAG = re.compile(r"<function(?:=|[ \t]+)([^>\n]{1,256})>(.*?)(?:</function>)?", re.S)
_PARAMETER_HEAD = re.compile(r"<parameter(?:=|[ \t]+name=\")([^>\n\"]{1,256})\"?>\n?")
_PARAMETER_CLOSE = "</parameter>"
_ARG_KEYS = ("args", "input", "parameters")


def settle(code: str, tools: DeclaredTools, written: str, arguments: Any, message: str) -> Reading:
    """The drift reading of a call that names ``written`` with ``arguments``: recovered when ``written`` resolves to
    a declared tool and ``arguments`` fit its schema; refused otherwise."""
    name = tools.resolve_name(written)
    if name is None:
        return Refused(code, f"{written!r} is not a declared tool")
    if not tools.arguments_fit(name, arguments):
        return Refused(code, f"the arguments do not fit the schema of {name!r}")
    return Recovered(code, name, arguments, message)


def read_call_body(text: str, value: Any, tools: DeclaredTools, *, max_depth: int, max_bytes: int | None) -> Reading:
    """The drift reading of a closed ``<tool_call>`` body ``text`` (``value``: what the repair ladder decoded from
    it, or None), or None when the body shows no drift shape this module knows."""
    body = text.strip(_BLANKS)
    if body.startswith("<function"):
        return _function_tag(body, tools, max_depth=max_depth, max_bytes=max_bytes)
    if isinstance(value, dict):
        return _call_object(value, tools)
    if value is None and body.startswith("{"):
        reading = _undecoded_object(body, tools, max_depth=max_depth, max_bytes=max_bytes)
        if isinstance(reading, Recovered) and reading.requoted_at is not None:  # a position in ``text``
            reading = reading._replace(requoted_at=reading.requoted_at + len(text) - len(text.lstrip(_BLANKS)))
        return reading
    m = PYTHON_CALL_SHAPE.fullmatch(body)
    if m is not None and value is None:
        arguments = python_call_arguments(m.group(2), max_depth=max_depth, max_bytes=max_bytes)
        if arguments is None:
            return Refused(PYTHON_CALL, "the call's arguments are not keyword literals")
        return settle(PYTHON_CALL, tools, m.group(1), arguments,
                      "a Python call NAME(k=v, ...) inside the wrapper; read as the call")
    return None


def _function_tag(body: str, tools: DeclaredTools, *, max_depth: int, max_bytes: int | None) -> Reading:
    m = _FUNCTION_TAG.fullmatch(body)
    if m is None:
        return Refused(FUNCTION_TAG, "a <function...> tag that does not enclose the whole body")
    written, inner = m.group(1), m.group(2).strip(_BLANKS)
    if written.startswith("name="):  # <function name="NAME">
        written = written[5:].strip("\"'")
    if inner.startswith("{"):
        try:
            arguments = loads(inner, max_depth=max_depth, max_bytes=max_bytes)
        except ValueError:
            return Refused(FUNCTION_TAG, "the JSON inside the <function> tag does not parse")
        return settle(FUNCTION_TAG, tools, written, arguments,
                      "a <function=NAME> tag around a JSON body (Qwen3-Coder's shape); read as the call")
    name = tools.resolve_name(written)
    if name is None:
        return Refused(FUNCTION_TAG, f"{written!r} is not a declared tool")
    arguments: dict[str, Any] = {}
    pos = 0
    schema = tools.schemas.get(name) or {}
    while (start := inner.find("<parameter", pos)) >= 0:  # one pass: each tag's close found once (linear)
        if inner[pos:start].strip(_BLANKS):
            return Refused(FUNCTION_TAG, "text between the <parameter> tags")
        head = _PARAMETER_HEAD.match(inner, start)
        end = inner.find(_PARAMETER_CLOSE, head.end()) if head else -1
        if end < 0:
            return Refused(FUNCTION_TAG, "a <parameter> tag that is malformed or not closed")
        key = head.group(1).strip(_BLANKS)
        if key in arguments:
            return Refused(FUNCTION_TAG, f"parameter {key!r} given twice")
        raw = inner[head.end():end]
        prop = tools.properties(name).get(key)
        arguments[key], _ = coerce(raw[:-1] if raw.endswith("\n") else raw, prop if isinstance(prop, dict) else None,
                                   schema, max_depth=max_depth, max_bytes=max_bytes)
        pos = end + len(_PARAMETER_CLOSE)
    if inner[pos:].strip(_BLANKS):
        return Refused(FUNCTION_TAG, "text inside the <function> tag that is neither JSON nor <parameter> tags")
    return settle(FUNCTION_TAG, tools, written, arguments,
                  "a Qwen3-Coder <function=NAME><parameter=...> call inside the wrapper; read as the call")


def _call_object(value: dict, tools: DeclaredTools) -> Reading:
    name = value.get("name")
    if len(value) == 1:
        (key, arguments), = value.items()
        if isinstance(key, str) and key.startswith("function="):
            return settle(FUNCTION_KEY, tools, key[len("function="):], arguments,
                          "\"function=NAME\" written as the call object's key; read as the call")
    if "name" not in value:
        return name_keyed(value, tools)
    if not isinstance(name, str):
        return None
    code, message = None, ""
    if name.startswith("function="):
        code, name = FUNCTION_KEY, name[len("function="):]
        message = "the name written \"function=NAME\"; read as NAME"
    if "arguments" in value:
        arguments = value["arguments"]
    else:
        present = [key for key in _ARG_KEYS if key in value]
        if len(present) > 1:  # two readings
            return Refused(code or ARGUMENTS_KEY, f"two keys may hold the arguments: {present}")
        if not present and code is None:
            return flat_arguments(value, tools)
        if not present:
            return Refused(code, "no arguments object")
        arguments = value[present[0]]
        if code is None:
            code, message = ARGUMENTS_KEY, f"the arguments written under {present[0]!r}; read as \"arguments\""
    if code is None and name != name.strip(_BLANKS) and name.strip(_BLANKS):
        code, message = NAME_WHITESPACE, f"the name {name!r} has blanks around it; read as {name.strip(_BLANKS)!r}"
    if code is None:
        return None
    if len(set(value) - {"name", "arguments", *_ARG_KEYS}) or not isinstance(arguments, dict):
        return Refused(code, "the call object has other keys, or its arguments are not an object")
    return settle(code, tools, name, arguments, message)


def name_keyed(value: dict, tools: DeclaredTools) -> Reading:
    """An object without ``"name"``: ``{"NAME": {...}}`` (the tool's name as the only key, its arguments the value:
    ``drift_name_as_key``) or ``{"NAMEkey": v, ...}`` / ``{"NAME_key": v, ...}`` (the name glued to the first
    argument key, the other keys the rest of the arguments: ``drift_glued_name``); None for any other object."""
    if not value:
        return None
    first, first_value = next(iter(value.items()))
    if len(value) == 1 and isinstance(first_value, dict) and (first in tools.names or not glued_readings(tools, first)):
        if not _NAME_LIKE.fullmatch(first) or first in _CALL_FIELDS:  # not a name: no reading, nothing said
            return None
        return settle(NAME_AS_KEY, tools, first, first_value,
                      "the tool's name written as the object's only key, its arguments as the value; read as the call")
    readings = glued_readings(tools, first)
    if not readings:
        return None
    if len(readings) > 1:
        return Refused(GLUED_NAME, f"key {first!r} splits into two declared tool + parameter readings: "
                       f"{sorted(readings)}")
    (name, key), = readings
    if key in value:
        return Refused(GLUED_NAME, f"parameter {key!r} given twice")
    arguments = {key: first_value, **{k: v for k, v in value.items() if k != first}}
    return settle(GLUED_NAME, tools, name, arguments,
                  f"the name glued to the first argument key ({first!r}); read as {name!r} with {key!r}")


def flat_arguments(value: dict, tools: DeclaredTools) -> Reading:
    """``{"name": NAME, "k": v, ...}``: the arguments written beside the name instead of under ``"arguments"``
    (``drift_flat_arguments``); None unless there is such a key. ``"id"`` / ``"type"`` stay call fields."""
    name = value.get("name")
    arguments = {k: v for k, v in value.items() if k not in ("name", "id", "type")}
    if not isinstance(name, str) or not arguments:
        return None
    return settle(FLAT_ARGUMENTS, tools, name, arguments,
                  "the arguments written beside \"name\" instead of under \"arguments\"; read as the call")


def read_bare_object(value: Any, tools: DeclaredTools) -> Reading:
    """A whole JSON answer that is not a call object (Llama 3.1, where a reply that *is* a call object is the call):
    the name as the only key, the arguments beside the name, or the name glued to the first key. Such an answer is
    read only when its would-be name is a declared tool: any other object is ordinary JSON (no reading, nothing
    said), so a JSON answer never draws a diagnostic."""
    if not isinstance(value, dict) or not value:
        return None
    if "name" in value:
        name = value["name"]
        if (not isinstance(name, str) or tools.resolve_name(name) is None
                or set(value) & {"arguments", "parameters", *_ARG_KEYS}):
            return None
        return flat_arguments(value, tools)
    first = next(iter(value))
    if first not in tools.names and not glued_readings(tools, first):
        return None
    return name_keyed(value, tools)


_CALL_FIELDS = frozenset({"name", "arguments", "parameters", "args", "input", "function", "id", "type", "tool",
                          "tool_name", "call"})  # a call object's own field names, never read as a tool's name
_NAME_LIKE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,255}")
_GLUE_SEPARATORS = ("", "_", ".", "-", " ")


def glued_readings(tools: DeclaredTools, text: str) -> set[tuple[str, str]]:
    """Every ``(declared tool, its declared parameter)`` that ``text`` is, glued with no separator or one of
    ``_ . - space`` (``get_weathercity``, ``get_weather_city``). A recovery takes it only when there is one."""
    readings = set()
    for name in tools.names:
        if len(text) <= len(name) or not text.startswith(name):
            continue
        rest = text[len(name):]
        for sep in _GLUE_SEPARATORS:
            if rest.startswith(sep) and rest[len(sep):] in tools.properties(name):
                readings.add((name, rest[len(sep):]))
    return readings


_GLUED_NAME_VALUE = re.compile(r'\{[ \t\r\n]*"name"[ \t\r\n]*:[ \t\r\n]*"([^"\\\x00-\x1f]{1,512})"[ \t\r\n]*:')


def _undecoded_object(body: str, tools: DeclaredTools, *, max_depth: int, max_bytes: int | None) -> Reading:
    """A body that opens an object but does not decode: its last string left unclosed (``drift_unclosed_string``),
    a value quoted with the wrong quote (``drift_wrong_quote``), or the name glued to the first argument key inside
    the name's string (``{"name": "get_weathercity": "Paris"}``: ``drift_glued_name``)."""
    def call_of(value):
        if isinstance(value, dict) and isinstance(value.get("name"), str):
            return value.get("name"), value.get("arguments")
        return None
    m = _GLUED_NAME_VALUE.match(body)
    if m is not None and any(len(m.group(1)) > len(name) and m.group(1).startswith(name) for name in tools.names):
        return glued_name_value(m.group(1), body[m.end():], tools, max_depth=max_depth, max_bytes=max_bytes)
    first = unclosed_string(body, call_of, tools, max_depth=max_depth, max_bytes=max_bytes)
    if isinstance(first, Recovered):
        return first
    second = wrong_quote(body, call_of, tools, max_depth=max_depth, max_bytes=max_bytes)
    return second if isinstance(second, Recovered) or first is None else first


def glued_name_value(written: str, rest: str, tools: DeclaredTools, *, max_depth: int,
                     max_bytes: int | None) -> Reading:
    """``{"name": "NAMEkey": v, ...}``: what stood between the name and the first argument key lost, so the key is
    glued to the name's string and its value follows. Read as ``NAME`` with ``{"key": v, ...}`` (the object's one
    or two final ``}``) when one split gives a declared tool and its parameter and the arguments fit."""
    readings = glued_readings(tools, written)
    if len(readings) != 1:  # (only called when a declared name starts ``written``)
        return Refused(GLUED_NAME, f"name {written!r} " + ("reads as two declared tool + parameter readings"
                                                           if readings else "is a declared tool glued to no parameter "
                                                           "of it"))
    (name, key), = readings
    text = rest.rstrip(_BLANKS)
    fits = []
    for cut in (1, 2) if text.endswith("}}") else (1,):  # the arguments' own "}" may be missing or written
        try:
            value = loads('{"' + key + '":' + text[:len(text) - cut + 1], max_depth=max_depth, max_bytes=max_bytes)
        except ValueError:
            continue
        reading = settle(GLUED_NAME, tools, name, value,
                         f"the name glued to the first argument key ({written!r}); read as {name!r} with {key!r}")
        if isinstance(reading, Recovered) and reading not in fits:
            fits.append(reading)
    if len(fits) == 1:
        return fits[0]
    return Refused(GLUED_NAME, "two readings of the object's end" if fits else
                   f"the arguments after {written!r} do not fit the schema of {name!r}")


_WRONG_QUOTE_MESSAGE = "a string value quoted with the wrong quote ('); re-quoted"
_MAX_QUOTES = 32


def wrong_quote(text: str, call_of: Any, tools: DeclaredTools, *, max_depth: int, max_bytes: int | None) -> Reading:
    """JSON ``text`` that does not decode because a string's opening or closing ``"`` was written ``'``
    (``{"city": "Paris', "days": 2}``, ``{"city": 'Paris"}``): each ``'`` turned into ``"`` in turn; recovered only
    when exactly one gives JSON that ``call_of(value)`` makes a call ``(name, arguments)`` of a declared tool with
    fitting arguments. None when no such turn gives a call at all (not this drift)."""
    quotes = [i for i, ch in enumerate(text) if ch == "'"]
    if not quotes or len(quotes) > _MAX_QUOTES:
        return None
    return _one_fitting(WRONG_QUOTE, _WRONG_QUOTE_MESSAGE, "requoted_at",
                        ((i, text[:i] + '"' + text[i + 1:]) for i in quotes), call_of, tools,
                        max_depth=max_depth, max_bytes=max_bytes, two="two re-quotings fit",
                        none="re-quoting gives no call of a declared tool with fitting arguments")


def _unclosed_string(body: str, tools: DeclaredTools, *, max_depth: int, max_bytes: int | None) -> Reading:
    """``{..."k": "v}}`` -- the closing quote of the last string missing before the object's closing braces: close
    it before each run of the final braces in turn; recovered only when exactly one place gives a call object of a
    declared tool whose arguments fit."""
    return unclosed_string(body, lambda value: (value.get("name"), value.get("arguments"))
                           if isinstance(value, dict) and isinstance(value.get("name"), str) else None,
                           tools, max_depth=max_depth, max_bytes=max_bytes)


_UNCLOSED_MESSAGE = "a string value whose closing quote is missing before the object's end; closed there"


def unclosed_string(text: str, call_of: Any, tools: DeclaredTools, *, max_depth: int,
                    max_bytes: int | None) -> Reading:
    """JSON ``text`` ending ``..."v}}`` whose last string never closes: the quote added before each of the final
    closing braces in turn; ``call_of(value)`` says which call ``(name, arguments)`` each parse is (None: none).
    Recovered only when exactly one place gives a call of a declared tool whose arguments fit; None when no place
    gives JSON at all (not this drift)."""
    closers = len(text) - len(text.rstrip("}"))
    if not closers or not _open_string(text):
        return None
    # more braces after the quote than levels cannot parse
    return _one_fitting(UNCLOSED_STRING, _UNCLOSED_MESSAGE, "closed_at",
                        ((k, text[:len(text) - k] + '"' + text[len(text) - k:])
                         for k in range(1, min(closers, max_depth + 1) + 1)), call_of, tools,
                        max_depth=max_depth, max_bytes=max_bytes, two="two places to close the string fit",
                        none="closing the string gives no call of a declared tool with fitting arguments")


def _one_fitting(code: str, message: str, mark: str, candidates: Iterable[tuple[int, str]], call_of: Any,
                 tools: DeclaredTools, *, max_depth: int, max_bytes: int | None, two: str, none: str) -> Reading:
    """The one repaired spelling (``(where, text)`` each) that decodes to a call of a declared tool with fitting
    arguments, recorded at ``mark``; a refusal (``two`` / ``none``) when two fit or none does; None when no
    spelling decodes to a call at all (not this drift)."""
    fits: list[Recovered] = []
    any_call = False
    for at, candidate in candidates:
        try:
            value = loads(candidate, max_depth=max_depth, max_bytes=max_bytes)
        except ValueError:
            continue
        call = call_of(value)
        if call is None:
            continue
        any_call = True
        reading = settle(code, tools, call[0], call[1], message)
        if isinstance(reading, Recovered):
            fits.append(reading._replace(**{mark: at}))
    if len(fits) == 1:
        return fits[0]
    if not any_call:
        return None
    return Refused(code, two if fits else none)


def _open_string(text: str) -> bool:
    """Whether JSON-ish ``text`` ends inside a string (quotes counted, backslash escapes skipped)."""
    inside, i = False, 0
    while i < len(text):
        ch = text[i]
        if inside and ch == "\\":
            i += 2
            continue
        if ch == '"':
            inside = not inside
        i += 1
    return inside


def read_mistral_header(header: str, tools: DeclaredTools, *, max_depth: int, max_bytes: int | None) -> Reading:
    """A Mistral call header that never met ``[ARGS]``: ``NAME{json}`` (the ``[ARGS]`` token lost, the name glued to
    the arguments) or ``{"name": ..., "arguments": {...}}`` (one call object where the format before v11 wrote an
    array of them); None for anything else."""
    text = header.strip(_BLANKS)
    brace = text.find("{")
    if brace < 0 or not text.endswith("}"):
        return None
    try:
        value = loads(text[brace:], max_depth=max_depth + 1, max_bytes=max_bytes)
    except ValueError:
        if brace == 0:
            return wrong_quote(text, lambda v: (v.get("name"), v.get("arguments"))
                               if isinstance(v, dict) and isinstance(v.get("name"), str) else None,
                               tools, max_depth=max_depth + 1, max_bytes=max_bytes)
        first = unclosed_string(text[brace:], lambda args: (text[:brace], args), tools, max_depth=max_depth,
                                max_bytes=max_bytes)
        if isinstance(first, Recovered):
            return first
        second = wrong_quote(text[brace:], lambda args: (text[:brace], args), tools, max_depth=max_depth,
                             max_bytes=max_bytes)
        return second if isinstance(second, Recovered) or first is None else first
    if brace == 0:
        if isinstance(value, dict) and "name" not in value:
            return name_keyed(value, tools)
        if isinstance(value, dict) and isinstance(value.get("name"), str) and not set(value) & {
                "arguments", *_ARG_KEYS}:
            return flat_arguments(value, tools)
        if not isinstance(value, dict) or not isinstance(value.get("name"), str) or "arguments" not in value:
            return None
        if set(value) - {"name", "arguments", "id"}:
            return Refused(CALL_OBJECT_AFTER_MARKER, "the call object has other keys")
        return settle(CALL_OBJECT_AFTER_MARKER, tools, value["name"], value["arguments"],
                      "one call object after [TOOL_CALLS] (no array, no [ARGS]); read as the call")
    return settle(MISSING_ARGS_MARKER, tools, text[:brace], value,
                  "the name glued to its JSON arguments, [ARGS] missing; read as the call")


_KIMI_GLUED = re.compile(r"functions[._]?(?P<name>.+?)(?:[:._]?(?P<index>[0-9]+))?", re.S)


def read_kimi_id(text: str, tools: DeclaredTools) -> tuple[str, str] | Refused | None:
    """A Kimi call id whose separators were lost (``functionsexec5``, ``functions_get_weather_1``,
    ``functionsget_weather:0``): ``(name, message)`` when exactly one declared tool reads it, Refused when the id
    has the shape but no declared tool (or two) fits it, None when it is not such an id."""
    if not text.startswith("functions") or text.startswith("functions.") and ":" in text:
        return None
    readings = set()
    rest = text[len("functions"):]
    for sep in ("", ".", "_"):
        if sep and not rest.startswith(sep):
            continue
        body = rest[len(sep):]
        digits = len(body) - len(body.rstrip("0123456789"))
        stem = body[:len(body) - digits] if digits else body
        for cut in (stem, stem[:-1] if stem[-1:] in ":._" else None):
            if cut and cut in tools.names:
                readings.add(cut)
    if len(readings) == 1:
        name = readings.pop()
        return name, f"call id {text!r} has lost its separators (functions.NAME:IDX); read as a call of {name!r}"
    if readings:
        return Refused(CALL_ID_SEPARATORS, f"call id {text!r} reads as two declared tools: {sorted(readings)}")
    return Refused(CALL_ID_SEPARATORS, f"call id {text!r} names no declared tool")


__all__ = ["CLASSES", "Reading", "Recovered", "Refused", "flat_arguments", "glued_readings", "name_keyed",
           "read_bare_object", "read_call_body", "read_kimi_id", "read_mistral_header", "settle", "wrong_quote"]
