"""The repair ladder (:func:`decode_arguments`, :func:`repair_ladder`): strict JSON first, then (each step named by
a diagnostic, status ``repaired``) a code fence, raw control characters in strings, Python literals, trailing
commas, one missing final ``}``/``]`` (before the call's close marker, or for a truncated output) and arguments
written as a JSON string holding the object. Unescaped inner quotes and closing brackets by count are never guessed
at: ``rejected`` with the reason. :func:`call_object_arguments` reads a call object's arguments (``parameters`` as
an alias, a JSON string decoded once)."""

from __future__ import annotations

import json
import re
from typing import Any, Callable, NamedTuple

from .json_scan import HEX, JsonValueScanner
from .safe_json import MAX_DEPTH, JsonTooDeep, JsonTooLarge, loads, utf8_size

__all__ = ["DecodedArguments", "LadderResult", "decode_arguments", "repair_ladder", "call_object_arguments",
           "json_string_object", "element_texts", "check_object", "ARGUMENTS_JSON_STRING", "ALIAS_PARAMETERS"]

class DecodedArguments(NamedTuple):
    """The result of :func:`decode_arguments`."""

    value: dict | None                      # the arguments object, or None when unusable
    status: str                             # "proposed" | "repaired" | "rejected" | "truncated"
    diagnostics: list[tuple[str, str]]      # (code, message) per repair applied or problem found


class LadderResult(NamedTuple):
    """:func:`repair_ladder`'s result: :class:`DecodedArguments` plus the (repaired) JSON text the value
    was decoded from, which :meth:`ArgumentsStream.close` needs to complete streamed fragments."""

    value: Any
    status: str
    diagnostics: list[tuple[str, str]]
    text: str | None


_FENCE_OPEN = re.compile(r"\A\s*```[A-Za-z0-9_+.-]*[ \t]*(?:\r?\n|\Z)")
# the repair tokenizer: strings (both quote styles, possibly unterminated at the end), words, the rest
_TOKEN = re.compile(r'''
    (?P<dq>"(?:[^"\\]|\\.)*(?:"|\Z))
  | (?P<sq>'(?:[^'\\]|\\.)*(?:'|\Z))
  | (?P<ws>\s+)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<num>-?[0-9][0-9.eE+-]*)
  | (?P<other>.)
''', re.X | re.S)
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}
_PY_ESCAPES = {"'": "'", '"': '"', "\\": "\\", "/": "/", "n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}


_CONTROL = re.compile(r"[\x00-\x1f]")
_CONTROL_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f"}


def _open_containers(tokens: list[tuple[str, str]]) -> list[str]:
    """The ``{``/``[`` left open at the end of a token list (strings are tokens, so their brackets do not count)."""
    stack: list[str] = []
    for kind, tok in tokens:
        if kind == "other" and tok in "{[":
            stack.append(tok)
        elif kind == "other" and tok in "}]" and stack:
            stack.pop()
    return stack


def _python_string(token: str) -> str | None:
    """A single-quoted Python string token as JSON text, or None when its escapes are ambiguous."""
    if len(token) < 2 or not token.endswith("'"):
        return None
    body, out, i = token[1:-1], [], 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1] if i + 1 < len(body) else ""
        if nxt in _PY_ESCAPES:
            out.append(_PY_ESCAPES[nxt])
            i += 2
        elif nxt == "u" and len(body) >= i + 6 and all(c in HEX for c in body[i + 2:i + 6]):
            out.append(chr(int(body[i + 2:i + 6], 16)))
            i += 6
        else:
            return None  # \x, octal, \N{...}, a lone backslash: not guessed
    return json.dumps("".join(out), ensure_ascii=False)


def _escape_controls(token: str) -> str:
    """A double-quoted string token with its raw control characters written as JSON escapes."""
    return _CONTROL.sub(lambda m: _CONTROL_ESCAPES.get(m.group(), f"\\u{ord(m.group()):04x}"), token)


def _token_repairs(text: str, truncated: bool, closed: bool = False) -> tuple[str, list[tuple[str, str]], bool]:
    """Raw control characters in strings, Python literals, single-quoted strings, trailing commas and the
    final closer (one missing ``}``/``]``: for a truncated output, or before the call's close marker when
    ``closed``). Returns the new text, the repairs applied (or the reason a repair was refused) and whether a
    string token looks like an unescaped quote."""
    tokens = [(m.lastgroup, m.group()) for m in _TOKEN.finditer(text)]
    diags: list[tuple[str, str]] = []
    literals: list[str] = []
    quoted = 0
    controls = 0
    for k, (kind, tok) in enumerate(tokens):
        if kind == "dq" and _CONTROL.search(tok):
            tokens[k] = ("dq", _escape_controls(tok))
            controls += 1
        elif kind == "word" and tok in _PY_LITERALS:
            tokens[k] = ("word", _PY_LITERALS[tok])
            literals.append(tok)
        elif kind == "sq":
            converted = _python_string(tok)
            if converted is not None:
                tokens[k] = ("dq", converted)
                quoted += 1
    if literals:
        diags.append(("repaired_python_literal",
                      "replaced Python literal(s) " + ", ".join(sorted(set(literals))) + " by JSON ones"))
    if quoted:
        diags.append(("repaired_single_quotes", f"rewrote {quoted} single-quoted string(s) as JSON strings"))
    if controls:
        diags.append(("raw_control_character", f"escaped raw control characters in {controls} string(s)"))
    # a missing final brace (truncated output only): exactly one object left open, outside any string
    if truncated:
        stack: list[str] = []
        for kind, tok in tokens:
            if kind == "other" and tok in "{[":
                stack.append(tok)
            elif kind == "other" and tok in "}]" and stack:
                stack.pop()
        last = next((t for t in reversed(tokens) if t[0] != "ws"), None)
        open_string = last is not None and last[0] == "dq" and not _closed_string(last[1])
        if stack == ["{"] and not open_string:
            tokens.append(("other", "}"))
            diags.append(("repaired_missing_brace", "closed the object the truncated output left open"))
    elif closed:
        stack = _open_containers(tokens)
        last = next((t for t in reversed(tokens) if t[0] != "ws"), None)
        open_string = last is not None and last[0] == "dq" and not _closed_string(last[1])
        if len(stack) == 1 and not open_string:
            closer = "}" if stack[0] == "{" else "]"
            tokens.append(("other", closer))
            diags.append(("missing_closing_brace", f"added the final {closer!r} missing before the call's close marker"))
        elif len(stack) > 1 and not open_string:
            diags.append(("unclosed_brackets", f"{len(stack)} brackets are left open before the call's close "
                          "marker; closing them by count is not guessed"))
    # trailing commas: a ',' whose next non-blank token closes the container (one backward pass)
    commas = 0
    closer_follows = False
    for k in range(len(tokens) - 1, -1, -1):
        kind, tok = tokens[k]
        if kind == "ws":
            continue
        if kind == "other" and tok == "," and closer_follows:
            tokens[k] = ("ws", "")
            commas += 1
            closer_follows = False  # only the last of ",,]" is a trailing comma
            continue
        closer_follows = kind == "other" and tok in "}]"
    if commas:
        diags.append(("repaired_trailing_comma", f"removed {commas} trailing comma(s)"))
    # an unescaped inner quote shows as a string directly followed by a word, number or another string
    suspicious = False
    significant = [t for t in tokens if t[0] != "ws"]
    for (k1, t1), (k2, _t2) in zip(significant, significant[1:]):
        if k1 == "dq" and k2 in ("word", "num", "dq", "sq"):
            suspicious = True
            break
    return "".join(tok for _, tok in tokens), diags, suspicious


_REFUSALS = frozenset({"unclosed_brackets"})  # repairs the ladder will not guess, reported as the reason


def _strict(text: str, load: Callable[[str], Any]) -> tuple[Any, str | None]:
    """(value, None) when ``text`` is strict JSON, else (None, reason). A text past the limits raises."""
    try:
        return load(text), None
    except (JsonTooDeep, JsonTooLarge):
        raise
    except ValueError as exc:
        return None, str(exc)


def _closed_string(token: str) -> bool:
    """Whether a double-quoted string token ends with its own (unescaped) closing quote."""
    if len(token) < 2 or not token.endswith('"'):
        return False
    backslashes = len(token) - 1 - len(token[:-1].rstrip("\\"))
    return backslashes % 2 == 0


def repair_ladder(raw: str, truncated: bool = False, *, max_depth: int = MAX_DEPTH,
                  max_bytes: int | None = None, closed: bool = False, scanned: bool = False) -> LadderResult:
    """The ladder behind :func:`decode_arguments` (same rules); also returns the text the value came
    from. The value must be a JSON object. Text nested deeper than ``max_depth`` or larger than
    ``max_bytes`` UTF-8 bytes is not decoded: ``too_large``, ``rejected`` (``truncated`` if ``truncated``).
    ``scanned``: ``raw`` is (blanks and) one value that a :class:`JsonValueScanner` bounded by ``max_depth``
    read to its end as strict JSON, so its nesting is known to be within the bound and the first decode
    does not count it again (the result is the same)."""
    final = "truncated" if truncated else None
    if not raw.strip():
        return LadderResult(None, final or "rejected", [("empty_arguments", "no JSON text where arguments belong")], None)

    def load(text: str) -> Any:
        return loads(text, max_depth=max_depth, max_bytes=max_bytes)

    def load_scanned(text: str) -> Any:
        return loads(text, max_depth=None, max_bytes=max_bytes)
    try:
        return _climb(raw, final, load, closed, load_scanned if scanned else load)
    except (JsonTooDeep, JsonTooLarge) as exc:
        return LadderResult(None, final or "rejected", [("too_large", str(exc))], None)


def _climb(raw: str, final: str | None, load: Callable[[str], Any], closed: bool = False,
           load_raw: Callable[[str], Any] | None = None) -> LadderResult:
    """The rungs; ``load_raw`` (default ``load``) decodes ``raw`` itself, ``load`` every repaired text."""
    truncated = final is not None
    value, reason = _strict(raw, load_raw or load)
    diags: list[tuple[str, str]] = []
    text = raw
    if reason is None:
        return check_object(value, final or "proposed", diags, text)
    # rung 1: a code fence around the JSON
    m = _FENCE_OPEN.match(text)
    if m:
        start, stop = m.end(), len(text)  # inner = text[start:stop].rstrip(), without copying the text twice
        while stop > start and text[stop - 1].isspace():
            stop -= 1
        closed = stop - start >= 3 and text.startswith("```", stop - 3)
        if closed or truncated:
            text = text[start:stop - 3] if closed else text[start:stop]
            diags.append(("repaired_code_fence", "removed a Markdown code fence around the JSON"))
            value, reason = _strict(text, load)
            if reason is None:
                return check_object(value, final or "repaired", diags, text)
    # rungs 2-4: Python literals and quotes, trailing commas, (truncated) the final brace
    repaired, more, suspicious = _token_repairs(text, truncated, closed)
    refused = [d for d in more if d[0] in _REFUSALS]
    more = [d for d in more if d[0] not in _REFUSALS]
    if more:
        value, reason2 = _strict(repaired, load)
        if reason2 is None:
            return check_object(value, final or "repaired", diags + more, repaired)
    diags.extend(refused)
    if suspicious:
        diags.append(("unescaped_quote", "a string seems to contain an unescaped '\"'; not guessed, raw text kept"))
    elif truncated:
        diags.append(("truncated_json", f"the output ended before the JSON did ({reason})"))
    else:
        diags.append(("invalid_json", f"arguments are not valid JSON ({reason})"))
    return LadderResult(None, final or "rejected", diags, None)


def check_object(value: Any, status: str, diags: list, text: str) -> LadderResult:
    if isinstance(value, str):  # arguments given as a JSON string that holds the object
        inner = json_string_object(value)
        if inner is not None:
            return LadderResult(inner, "truncated" if status == "truncated" else "repaired",
                                diags + [ARGUMENTS_JSON_STRING], None)
    if not isinstance(value, dict):
        return LadderResult(None, "truncated" if status == "truncated" else "rejected",
                        diags + [("arguments_not_object", f"arguments are a JSON {type(value).__name__}, "
                                  "not an object")], None)
    return LadderResult(value, status, diags, text)


ARGUMENTS_JSON_STRING = ("arguments_json_string", "the arguments were a JSON string holding a JSON object; "
                         "decoded once")


def json_string_object(value: Any, *, max_depth: int = MAX_DEPTH) -> dict | None:
    """The object a JSON string holds (tool arguments written as a string: ``"{\\"city\\": ..."``), decoded
    once; None when ``value`` is not a string holding exactly a JSON object."""
    if not isinstance(value, str) or not value.lstrip().startswith("{"):
        return None
    try:
        inner = loads(value, max_depth=max_depth, max_bytes=utf8_size(value))
    except ValueError:
        return None
    return inner if isinstance(inner, dict) else None


ALIAS_PARAMETERS = ("arguments_alias_parameters", "the call object says \"parameters\" where the format writes "
                    "\"arguments\"")


def call_object_arguments(value: Any, key: str = "arguments", alias: str | None = "parameters",
                          ) -> tuple[Any, str | None, list[tuple[str, str]]]:
    """The arguments of a decoded call object ``{"name": ..., key: {...}}``: ``(arguments, the key they came
    under, repairs)``. ``alias`` stands in for a missing ``key`` (``arguments_alias_parameters``), and a JSON
    string holding an object is decoded once (``arguments_json_string``). ``(None, None, [])`` when
    ``value`` is not an object."""
    if not isinstance(value, dict):
        return None, None, []
    repairs: list[tuple[str, str]] = []
    used = key if key in value else alias if alias is not None and alias in value else None
    if used is not None and used != key:
        repairs.append(ALIAS_PARAMETERS)
    args = value.get(used) if used is not None else None
    inner = json_string_object(args)
    if inner is not None:
        args = inner
        repairs.append(ARGUMENTS_JSON_STRING)
    return args, used, repairs


def element_texts(array: str) -> list[str]:
    """The text of each object element of a strict JSON array (``[{...}, {...}]``), as written."""
    out, pos = [], array.index("[") + 1
    while True:
        start = array.find("{", pos)
        if start < 0:
            return out
        end = JsonValueScanner().feed(array[start:])
        out.append(array[start:start + end])
        pos = start + end


def decode_arguments(raw: str, *, truncated: bool = False, max_depth: int = MAX_DEPTH,
                     max_bytes: int | None = None, closed: bool = False) -> DecodedArguments:
    """Decode a call's raw argument text through the repair ladder.

    Strict JSON (bounded by :func:`toolwire.parsers.engine.safe_json.loads`) is ``proposed``. Otherwise, each
    step named by a diagnostic: a Markdown code fence is removed; Python literals ``True``/``False``/
    ``None`` and single-quoted strings (plain JSON-style escapes only) are rewritten from tokens (never
    ``eval``); trailing commas are dropped; with ``truncated=True`` one missing final ``}`` is added. A
    value decoded that way is ``repaired``. Text still not JSON is ``rejected`` (a string followed by
    more text is reported as ``unescaped_quote``: never guessed). With ``truncated=True`` the status is
    always ``truncated`` (the value, when recoverable, is still returned; ``truncated_json`` when not).
    Past ``max_depth`` / ``max_bytes`` nothing is decoded: ``too_large``.
    """
    decoded = repair_ladder(raw, truncated, max_depth=max_depth, max_bytes=max_bytes, closed=closed)
    return DecodedArguments(decoded.value, decoded.status, decoded.diagnostics)


# ---------------------------------------------------------------------------------------------------
# streaming a call's raw argument text
