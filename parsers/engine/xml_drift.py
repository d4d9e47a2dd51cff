"""Drift recoveries of the XML-bodied families (issue 33): their codes, and the checks they share.

Each recovery is one diagnostic code registered with its class in :data:`~.drift.DRIFT_CODES` (see
:mod:`.drift`); a parser takes it only when the declared tools make the reading unambiguous, and otherwise
leaves the text where it was with the same code at severity ``info`` (:func:`~.drift.refused_diagnostic`).
docs/variants.md ("Drift recovery (issue 33)") lists them per family, with how each streams.

Every recovery here is decided before the stream sends anything it would change: the text it reads is held
back (a call head up to its ``>``, a body up to ``</function>``, whitespace up to a possible closer), so a
stream never takes back what it sent and every chunking gives the one-shot result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, NamedTuple

from .drift import DeclaredTools, Drift, register
from .drift_json import _PY_CALL, _python_arguments  # the JSON group's Python-call reader, reused (issue 33)
from .drift_json import PYTHON_CALL
from .safe_json import loads
from .schema_coerce import coerce

MISSING_CALL_WRAPPER = "missing_call_wrapper"
"""A call written without its wrapper marker: ``<function=NAME>`` in content with no ``<tool_call>`` before it
(Qwen3-Coder and kin; a repair before issue 33, now a drift recovery of class ``missing_markers``), MiniMax-M2's
``<invoke name="NAME">`` with no ``<minimax:tool_call>``. Text only: from token ids a call needs its opener's
control id (so this code is the fuzz suites' one exemption from "ids parse as the text")."""
ORPHAN_CALL_CLOSER = "drift_orphan_call_closer"
"""The ``</tool_call>`` closing a call whose ``<tool_call>`` was missing: dropped, not left in the content."""
FUNCTION_SPACE = "drift_function_space"
"""``<function NAME>`` (a space for the ``=``) inside a call block."""
PARAMETER_ATTRIBUTE = "drift_parameter_attribute"
"""``<parameter name="KEY">`` (MiniMax's attribute style) inside a Qwen ``<function=NAME>`` call."""
JSON_BODY = "drift_json_body"
"""A ``<function=NAME>`` call whose body is one JSON object of arguments instead of ``<parameter=...>`` tags."""
JSON_CALL = "drift_json_call"
"""A call block holding a Hermes-style JSON call, ``{"name": ..., "arguments": {...}}`` (``args`` /
``parameters`` for ``arguments`` too), instead of ``<function=NAME>``: the Qwen3 JSON shape in Qwen3-Coder's
block."""
NAME_WHITESPACE = "drift_name_whitespace"
"""A tool name written with whitespace around it (``<function=get_weather >``, GLM ``get_weather \\n``)."""
STRAY_CLOSER = "drift_stray_closer"
"""GLM: a closing tag glued to the name, ``<tool_call>NAME</arg_value></tool_call>`` (GLM 5.x no-argument calls,
a public report): the name without it."""
GLUED_NAME = "drift_glued_name"
"""GLM: the name glued to the first key, ``<tool_call>get_weathercity</arg_key>`` (``<arg_key>`` lost)."""

register(Drift.MISSING_MARKERS, MISSING_CALL_WRAPPER, ORPHAN_CALL_CLOSER)
register(Drift.BORROWED_SHAPE, FUNCTION_SPACE, PARAMETER_ATTRIBUTE, JSON_BODY, JSON_CALL, PYTHON_CALL)
register(Drift.DAMAGED_NAME, NAME_WHITESPACE, GLUED_NAME, STRAY_CLOSER)

NO_TOOLS = "no tools were declared"

STARTED_UNVERIFIED = frozenset((MISSING_CALL_WRAPPER, FUNCTION_SPACE, PARAMETER_ATTRIBUTE, NAME_WHITESPACE, GLUED_NAME,
                                STRAY_CLOSER))
"""Recoveries that start a call (or add an argument) before its arguments are complete: a streamed call must
start once its name is known, so these check the arguments when the call ends (:func:`off_schema`)."""
ARGUMENTS_OFF_SCHEMA = "drift_arguments_off_schema"
"""A call recovered from drift whose arguments, once complete, do not fit its tool's schema: ``rejected`` (the
call's text stays in its ``raw_arguments``). Not a recovery itself, so not in ``DRIFT_CODES``."""


def off_schema(tools: Iterable[Any] | None, name: str, arguments: Any) -> bool:
    """Whether a recovered call's complete arguments fail its declared tool's schema (see :func:`DeclaredTools.
    arguments_fit`)."""
    known = declared(tools)
    return known is not None and not known.arguments_fit(name, arguments)


def declared(tools: Iterable[Any] | None) -> DeclaredTools | None:
    """The declared tools as a recovery reads them (None: none declared, no recovery fires)."""
    return DeclaredTools.of(tools)


ARGUMENT_KEYS = ("arguments", "args", "parameters")
"""The keys a JSON call's arguments come under: the format's own, and the two borrowed spellings models write."""


def json_call(tools: Iterable[Any] | None, text: str, *, max_depth: int, max_bytes: int
              ) -> tuple[tuple[str, dict] | None, str | None]:
    """``((name, arguments), None)`` when ``text`` is one JSON object ``{"name": N, K: {...}}`` (``K`` one of
    :data:`ARGUMENT_KEYS`, the arguments an object or a JSON string of one) whose name is a declared tool and
    whose arguments fit its schema; ``(None, why not)`` when it is such an object but not recovered;
    ``(None, None)`` when ``text`` is no such object (the recovery does not apply)."""
    body = text.strip(" \t\r\n")
    if not (body.startswith("{") and body.endswith("}")):
        return None, None
    try:
        value = loads(body, max_depth=max_depth, max_bytes=max_bytes)
    except ValueError:
        return None, None
    keys = [k for k in ARGUMENT_KEYS if isinstance(value, dict) and k in value]
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or len(keys) > 1 \
            or set(value) - {"name", *keys}:
        return None, None
    arguments = value[keys[0]] if keys else {}
    if isinstance(arguments, str):
        try:
            arguments = loads(arguments, max_depth=max_depth, max_bytes=max_bytes)
        except ValueError:
            return None, "the arguments string is not JSON"
    known = declared(tools)
    if known is None:
        return None, NO_TOOLS
    name = value["name"]
    if name not in known.names:
        return None, f"{name!r} is not a declared tool"
    if not known.arguments_fit(name, arguments):
        return None, f"the arguments do not fit {name!r}"
    return (name, arguments), None


def python_call(tools: Iterable[Any] | None, text: str, *, max_depth: int, max_bytes: int | None
                ) -> tuple[tuple[str, dict] | None, str | None]:
    """``((name, arguments), None)`` when ``text`` is one Python call ``NAME(k=v, ...)`` (keyword arguments whose
    values are literals, never evaluated: the JSON group's reader, :mod:`.drift_json`) of a declared tool whose
    arguments fit its schema; ``(None, why not)`` when it has that shape but is not recovered (positional or
    non-literal arguments, an undeclared name, arguments off the schema, no tools); ``(None, None)`` when ``text``
    is no Python call (the recovery does not apply)."""
    found = _PY_CALL.fullmatch(text.strip(" \t\r\n"))
    if found is None:
        return None, None
    known = declared(tools)
    if known is None:
        return None, NO_TOOLS
    arguments = _python_arguments(found.group(2), max_depth=max_depth, max_bytes=max_bytes)
    if arguments is None:
        return None, "the call's arguments are not keyword literals"
    name = found.group(1)
    if name not in known.names:
        return None, f"{name!r} is not a declared tool"
    if not known.arguments_fit(name, arguments):
        return None, f"the arguments do not fit {name!r}"
    return (name, arguments), None


PYTHON_START = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,255}[ \t]*\(")
"""The start of a Python call ``NAME(``: a head that may go on to be one (GLM holds it to ``</tool_call>``)."""


def stray_closer_name(tools: Iterable[Any] | None, head: str, closers: Iterable[str]) -> tuple[str | None, str | None]:
    """``(declared name, None)`` when ``head`` is a declared name followed by one of ``closers`` (a closing tag
    glued to it: ``NAME</arg_value>``); ``(None, why not)`` when it has that shape but is not recovered;
    ``(None, None)`` when it has not."""
    for closer in closers:
        if head.endswith(closer) and len(head) > len(closer):
            name = head[:-len(closer)].rstrip()
            if not name or any(ch in "<>\n" for ch in name):
                return None, None
            known = declared(tools)
            if known is None:
                return None, NO_TOOLS
            return (name, None) if name in known.names else (None, f"{name!r} is not a declared tool")
    return None, None


def spaced(marker: str) -> str:
    """The opener ``marker`` (``<function=``) with a space for its final ``=`` (``<function ``)."""
    return marker[:-1] + " " if marker.endswith("=") else marker + " "


def attribute_opener(marker: str) -> str:
    """The attribute-style spelling of a ``<parameter=`` opener: ``<parameter name="``."""
    return marker.rstrip("=") + ' name="'


def whitespace_name(tools: Iterable[Any] | None, written: str) -> tuple[str | None, str | None]:
    """``(declared name, None)`` when ``written`` is a declared name followed by whitespace (and not itself
    declared); ``(None, why not)`` when it has such whitespace but is not recovered; ``(None, None)`` when the
    recovery does not apply (no trailing whitespace, or ``written`` is declared as written). Leading whitespace
    is not this drift (models write it after a damaged opener): such a name is matched exactly."""
    name = written.rstrip()
    if written == name or not name or name != name.lstrip():
        return None, None
    known = declared(tools)
    if known is None:
        return None, NO_TOOLS
    if written in known.names:
        return None, None
    return (name, None) if name in known.names else (None, f"{name!r} is not a declared tool")


__all__ = ["ARGUMENTS_OFF_SCHEMA", "ARGUMENT_KEYS", "FUNCTION_SPACE", "GLUED_NAME", "JSON_BODY", "JSON_CALL",
           "MISSING_CALL_WRAPPER", "NAME_WHITESPACE", "NO_TOOLS", "ORPHAN_CALL_CLOSER", "PARAMETER_ATTRIBUTE",
           "PYTHON_CALL", "PYTHON_START", "STARTED_UNVERIFIED", "python_call", "STRAY_CLOSER", "attribute_opener", "declared", "json_call", "off_schema", "spaced", "stray_closer_name",
           "whitespace_name"]


# ---------------------------------------------------------------- tag words whose angle brackets were lost

LOST_BRACKETS = "drift_lost_brackets"
"""A call whose tag words lost their angle brackets (``function=NAME>`` ... ``/function>``, GLM ``tool_call>NAME``
... ``/tool_call>``), written at a line start in content: read as the call when every word is in place, the name
is declared, every key is a declared parameter of it and the arguments fit (class ``missing_markers``)."""
register(Drift.MISSING_MARKERS, LOST_BRACKETS)

MAX_LOST_BRACKETS_CHARS = 65536
"""How much text a call without brackets may hold back: a longer one is not read as a call (a position, so the
decision is the same at every chunking)."""


class Bracketless(NamedTuple):
    """What a reading of text that starts with a bracket-less tag word says (:func:`read_lost_brackets`).

    ``kind``: ``"more"`` (it can still become a call: hold it), ``"text"`` (it cannot: release it; ``why`` set when
    the text had the call's shape but the declared tools refuse it, ``raw`` the text read up to that decision), or
    ``"call"`` (``name`` and ``arguments``; the call is ``text[:end]``)."""

    kind: str
    end: int = 0
    name: str = ""
    arguments: dict | None = None
    why: str | None = None
    raw: str | None = None


_MORE = Bracketless("more")
_TEXT = Bracketless("text")


@dataclass(frozen=True)
class LostBracketWords:
    """One family's tag words without their ``<``: ``call_open`` (``tool_call>``), ``call_close``; Qwen style:
    ``function_open`` (``function=``), ``function_close``, ``key_open`` (``parameter=``), ``key_close`` unused,
    ``value_close`` (``/parameter>``), ``value_framing`` (``\\n``); GLM style (``function_open`` empty): the name
    follows ``call_open``; ``key_open`` / ``key_close`` (``arg_key>`` / ``/arg_key>``), ``value_open`` /
    ``value_close`` (``arg_value>`` / ``/arg_value>``)."""

    call_open: str
    call_close: str
    function_open: str = ""
    function_close: str = ""
    key_open: str = ""
    key_close: str = ""
    value_open: str = ""
    value_close: str = ""
    value_framing: str = ""

    @classmethod
    def qwen(cls, call_open: str, call_close: str, function_open: str, function_close: str, parameter_open: str,
             parameter_close: str, value_framing: str) -> "LostBracketWords":
        return cls(call_open[1:], call_close[1:], function_open[1:], function_close[1:], parameter_open[1:], ">",
                   "", parameter_close[1:], value_framing)

    @classmethod
    def glm(cls, call_open: str, call_close: str, key_open: str, key_close: str, value_open: str,
            value_close: str) -> "LostBracketWords":
        return cls(call_open[1:], call_close[1:], "", "", key_open[1:], key_close[1:], value_open[1:],
                   value_close[1:])

    @property
    def openers(self) -> tuple[str, ...]:
        """The words that may start such a call at a line start."""
        return tuple(w for w in (self.call_open, self.function_open) if w)


def _ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _word(text: str, i: int, word: str, final: bool) -> int | None | bool:
    """``text[i:]`` starts with ``word``: the index after it; it may, once more text comes: None; it cannot: False."""
    if text.startswith(word, i):
        return i + len(word)
    rest = text[i:i + len(word)]
    return None if not final and len(rest) < len(word) and word.startswith(rest) else False


def _one_of(text: str, i: int, spellings: Iterable[str], final: bool) -> tuple[str, int] | None | bool:
    """``(spelling, index after it)`` for the first of ``spellings`` (each a word and its terminator, e.g.
    ``get_weather>``) that ``text[i:]`` starts with; None while more text may complete one; False when none can
    (:func:`_diverges` finds where)."""
    for s in spellings:
        if text.startswith(s, i):
            return s, i + len(s)
    rest = text[i:]
    if not final and any(s.startswith(rest) for s in spellings):
        return None
    return False


def _diverges(text: str, i: int, spellings: Iterable[str]) -> int:
    """The first index at which ``text[i:]`` stops being a prefix of every one of ``spellings``."""
    k = i
    while k < len(text) and any(s.startswith(text[i:k + 1]) for s in spellings):
        k += 1
    return k


def _value_end(text: str, i: int, close: str, followers: tuple[str, ...], final: bool) -> tuple[int, int] | None:
    """Where the value starting at ``text[i]`` ends: ``(close's index, index after close)`` for the first ``close``
    followed (after whitespace) by one of ``followers``; None when undecided (more text may confirm one)."""
    k = text.find(close, i)
    while k >= 0:
        after = k + len(close)
        j = _ws(text, after)
        if any(text.startswith(f, j) for f in followers):
            return k, after
        rest = text[j:]
        if not final and (j == len(text) or any(f.startswith(rest) for f in followers)):
            return None
        k = text.find(close, k + 1)
    return None


def read_lost_brackets(words: LostBracketWords, known: DeclaredTools, text: str, final: bool, *, max_depth: int,
                       max_bytes: int | None) -> Bracketless:
    """Read ``text`` (which starts with one of ``words.openers``, at a line start in content) as a call whose tag
    words lost their angle brackets. Left to right, each decision on the characters read so far only, so a stream
    decides at the same place whatever its chunking."""
    if len(text) > MAX_LOST_BRACKETS_CHARS:
        return _TEXT
    n = len(text)
    i = 0
    glm = not words.function_open
    if glm or text.startswith(words.call_open):
        i = len(words.call_open)
        if not glm:
            i = _ws(text, i)
            at = _word(text, i, words.function_open, final)
            if at is None or (at is False and not final and i == n):
                return _MORE
            if at is False:
                return _TEXT
            i = at
    else:
        i = len(words.function_open)
    # the name: a declared one, then its terminator
    ends = (words.key_open, "\n", words.call_close) if glm else (">",)
    spellings = [name + end for name in known.names for end in ends]
    found = _one_of(text, i, spellings, final)
    if found is None:
        return _MORE
    if found is False:
        k = _diverges(text, i, spellings)
        written = text[i:k + 1]
        if not written.strip() or any(ch in written for ch in "<"):
            return _TEXT
        return Bracketless("text", why=f"{text[i:k + 1]!r} does not start a declared tool name", raw=text[:k + 1])
    spelled, i = found
    end_word = next(e for e in ends if spelled.endswith(e))
    name = spelled[:-len(end_word)]
    props = known.properties(name)
    schema = known.schemas.get(name) or {}
    arguments: dict[str, Any] = {}
    closing = words.call_close if glm else words.function_close
    if glm and end_word == words.key_open:
        i -= len(words.key_open)  # read again as the first key
    elif glm and end_word == words.call_close:
        i -= len(words.call_close)
    while True:
        i = _ws(text, i)
        if i == n:
            return _MORE if not final else Bracketless("text", why="the call is not closed", raw=text)
        at = _word(text, i, closing, final)
        if at is None:
            return _MORE
        if at is not False:
            i = at
            break
        at = _word(text, i, words.key_open, final)
        if at is None:
            return _MORE
        if at is False:
            return Bracketless("text", why="text that is neither an argument nor the call's end",
                               raw=text[:i + 1])
        i = at
        key_spellings = [key + (words.key_close if glm else ">") for key in props]
        found = _one_of(text, i, key_spellings, final)
        if found is None:
            return _MORE
        if found is False:
            k = _diverges(text, i, key_spellings)
            return Bracketless("text", why=f"{text[i:k + 1]!r} does not start a declared parameter of {name!r}",
                               raw=text[:k + 1])
        spelled, i = found
        key = spelled[:-len(words.key_close if glm else ">")]
        if glm:
            i = _ws(text, i)
            at = _word(text, i, words.value_open, final)
            if at is None or (at is False and i == n and not final):
                return _MORE
            if at is False:
                return Bracketless("text", why=f"argument {key!r} has no value", raw=text[:i + 1])
            i = at
        followers = (words.key_open, words.call_close) if glm else (words.key_open, words.function_close)
        value_start = i
        bounds = _value_end(text, i, words.value_close, followers, final)
        if bounds is None:
            return _MORE if not final else Bracketless("text", why=f"argument {key!r} is not closed", raw=text)
        close_at, i = bounds
        value = text[value_start:close_at]
        framing = words.value_framing
        if framing:  # the template's framing: once after the opening word, once before the closing one
            value = value[len(framing):] if value.startswith(framing) else value
            value = value[:-len(framing)] if value.endswith(framing) else value
        if key in arguments:
            return Bracketless("text", why=f"argument {key!r} given twice", raw=text[:i])
        prop = props.get(key)
        arguments[key], _ = coerce(value, prop if isinstance(prop, dict) else None, schema, max_depth=max_depth,
                                   max_bytes=max_bytes)
    if not glm:  # an optional /tool_call> after /function>
        k = _ws(text, i)
        at = _word(text, k, words.call_close, final)
        if at is None:
            return _MORE
        if at is not False:
            i = at
    if not known.arguments_fit(name, arguments):
        return Bracketless("text", why=f"the arguments do not fit {name!r}", raw=text[:i])
    return Bracketless("call", end=i, name=name, arguments=arguments)
