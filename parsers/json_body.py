"""JSON bodies in model output: an incremental value scanner, the repair ladder, raw argument streaming.

Shared by every family whose tool-call arguments are a JSON object (Qwen/Hermes, Kimi K2, DeepSeek
V3.1/R1, Llama 3.1, Mistral).

* :class:`JsonValueScanner` finds where one top-level object/array ends while text streams in. It is
  string-, escape- and brace-aware, scans every character once and also checks the text against the
  JSON grammar, so it knows the last *safe point*: the longest prefix that, closed with ``"``/``}``/``]``,
  is JSON made only of what the model wrote (no dangling key, comma or half-written number).
* :func:`decode_arguments` is the repair ladder: strict JSON first, then (each step named by a
  diagnostic, status ``repaired``) a code fence, raw control characters in strings, Python literals,
  trailing commas, one missing final ``}``/``]`` (before the call's close marker, or for a truncated output)
  and arguments written as a JSON string holding the object. Unescaped inner quotes and closing brackets by
  count are never guessed at: ``rejected`` with the reason. :func:`call_object_arguments` reads a call
  object's arguments (``parameters`` as an alias, a JSON string decoded once).
* :class:`ArgumentsStream` streams a call's raw argument text as ``ArgumentsDelta`` fragments while it
  arrives, up to the scanner's safe point, and at the end completes the fragments so that they
  concatenate to JSON of the call's final arguments (see the class docstring for the rule).
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, NamedTuple

from toolwire.limits import DEFAULT_LIMITS, Limits
from toolwire.output import ToolCallCandidate, ToolCallFinished

from .base import CallBuilder
from .safe_json import (
    MAX_DEPTH, NUMBER_START as _NUMBER_START, NUMBER_STEP as _NUMBER_STEP, JsonTooDeep, JsonTooLarge, loads,
    number_stop, utf8_size,
)

__all__ = ["JsonValueScanner", "DecodedArguments", "decode_arguments", "call_object_arguments", "json_string_object", "element_texts", "LadderResult", "repair_ladder",
           "ArgumentsStream", "ClosedArguments", "call_object_bounds",
           "stream_arguments", "finish_call", "worse_status", "joined_fragments"]

# One match per string segment: a run of plain characters and complete, valid escapes (strict mode), or of
# anything but a quote with any escaped character (lax mode). What stops the run (a quote, a backslash that
# starts an invalid or unfinished escape, a raw control character, the end of the text) is read by hand.
# Possessive loops keep no backtracking state, so a run costs no memory per escape.
try:
    _STRING_RUN = re.compile(r'[^"\\\x00-\x1f]*+(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*+)*+')
    _STRING_RUN_LAX = re.compile(r'[^"\\]*+(?:\\.[^"\\]*+)*+', re.DOTALL)
except re.error:  # Python < 3.11: no possessive quantifiers (the unrolled loops still never backtrack far)
    _STRING_RUN = re.compile(r'[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*')
    _STRING_RUN_LAX = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)
_STRUCTURE_LAX = re.compile(r'["{}\[\]]')
_C_SCANSTRING = json.decoder.c_scanstring  # None when the json C accelerator is missing
_WS = " \t\n\r"
_HEX = frozenset("0123456789abcdefABCDEF")
_ESCAPES = frozenset('"\\/bfnrtu')

_SHORT_RUN = 64
"""Below this many characters a string run is checked with ``_STRING_RUN`` (a streamed token), from it on with the
json C string scanner (a long piece: about twice as fast from a few hundred characters, three times on long ones)."""

_REMEMBERED_RUN = 1 << 20
_last_run: tuple[str | None, int, int] = (None, 0, -1)
"""The last long :func:`_string_run_stop` call (``text``, ``esc``, result): a piece is often checked by two
scanners in the same string (a call object's and its arguments'), so the second check is this lookup (by
identity)."""


def _string_run_stop(text: str, esc: int) -> int:
    """For a scanner strictly inside a string value in escape state ``esc``: where an escape that ``text``
    leaves open begins (``len(text)`` when none) when ``text`` only continues the string (see
    :meth:`JsonValueScanner.string_run`), else -1."""
    head = _escape_rest(esc, text) if esc else 0  # (no call for the usual piece)
    if head < 0:
        return -1
    n = len(text)
    if n - head < _SHORT_RUN:
        stop = _STRING_RUN.match(text, head).end()
        return stop if stop == n or _is_open_escape(text, stop) else -1
    global _last_run
    last_text, last_esc, stop = _last_run
    if last_text is text and last_esc == esc:
        return stop
    if text.find("\\", n - 5) < 0:  # (the usual piece: no escape open at its end)
        stop = n if _continues_string(text[head:] if head else text) else -1
    else:
        stop = _open_escape_start(text, head)
        if ((stop < n and not _is_open_escape(text, stop))
                or not _continues_string(text[head:stop] if head or stop < n else text)):
            stop = -1
    if n <= _REMEMBERED_RUN:  # (a piece a parser reads; a huge text is not kept alive by the memo)
        _last_run = (text, esc, stop)
    return stop


def _is_open_escape(text: str, at: int) -> bool:
    """Whether ``text[at:]`` is an escape cut by the end of the text: ``\\``, or ``\\u`` and up to three hex
    digits."""
    rest = text[at + 1:at + 6]
    return text.startswith("\\", at) and (not rest or (rest[0] == "u" and len(rest) <= 4
                                                       and _HEX.issuperset(rest[1:])))


def _escape_rest(esc: int, text: str) -> int:
    """How many characters of ``text`` finish the escape a scanner in escape state ``esc`` (1..5) has open, or
    -1 when ``text`` does not finish it validly."""
    if esc == 1:
        first = text[:1]
        if not first or first not in _ESCAPES:
            return -1
        if first != "u":
            return 1
        digits_at, need = 1, 4
    else:  # 2..5: "\\u" and esc - 2 hex digits read
        digits_at, need = 0, 6 - esc
    digits = text[digits_at:digits_at + need]
    return digits_at + need if len(digits) == need and _HEX.issuperset(digits) else -1


def _open_escape_start(text: str, start: int) -> int:
    """Where an escape that ``text`` (read from ``start``, outside an escape) leaves unfinished begins: a last
    backslash that is not the second of a pair, with nothing or ``u`` and at most three characters after it;
    ``len(text)`` when there is none."""
    n = len(text)
    last = text.rfind("\\", max(start, n - 5))
    if last < 0:
        return n
    first = last
    while first > start and text[first - 1] == "\\":
        first -= 1
    if (last - first) % 2:  # the second backslash of a pair
        return n
    if last == n - 1 or (text[last + 1] == "u" and last + 6 > n):
        return last
    return n


def _continues_string(text: str) -> bool:
    """Whether ``text`` only continues a JSON string (from outside an escape): no closing quote, no raw control
    character, only whole valid escapes, i.e. ``_STRING_RUN`` matches all of it. The json module's C string
    scanner checks exactly that, about three times faster than the regex on escape-dense text: a closing
    quote put after ``text`` must be the one that ends the string, and nothing before it may be refused."""
    if _C_SCANSTRING is None:
        return _STRING_RUN.match(text).end() == len(text)
    try:
        return _C_SCANSTRING(text + '"', 0, True)[1] == len(text) + 1
    except ValueError:
        return False


# what the grammar expects next (outside strings)
_VALUE, _VALUE_OR_CLOSE, _KEY, _KEY_OR_CLOSE, _COLON, _AFTER = range(6)
# numbers are read by the one JSON number grammar (safe_json: NUMBER_START / NUMBER_STEP / number_stop)
_LITERALS = {"t": "rue", "f": "alse", "n": "ull"}


class JsonValueScanner:
    """Incremental string-, escape- and brace-aware scanner for one top-level JSON value (object/array).

    ``feed(text)`` returns the index in ``text`` just past the end of the top-level value, or -1 while it
    has not ended. Leading whitespace is allowed; each character is looked at once (runs of string
    characters are skipped with one regex search), so scanning is O(total length) however the text is
    split. After the value ended ``feed`` returns 0 and scans nothing.

    The scanner also checks the JSON grammar (and the nesting bound of :mod:`~toolwire.parsers.safe_json`).
    At the first character that cannot continue strict JSON,
    ``error`` is set (``error_pos`` is its absolute position) and scanning goes on brace- and
    string-aware only, so the end of a slightly malformed value is still found. A first non-blank
    character other than ``{``/``[`` is an error too; then ``feed`` never reports an end.

    Attributes: ``depth`` (open objects/arrays), ``in_string``, ``started`` (the value has begun),
    ``done``, ``opener`` (``{`` or ``[``), ``start``/``end``/``pos`` (absolute positions: first value
    character, just past the value, characters consumed), ``error``/``error_pos``, and the safe point
    ``safe`` (absolute) with :meth:`closers` (the text that closes the prefix ending there).
    """

    __slots__ = ("depth", "in_string", "started", "done", "opener", "start", "end", "pos", "error", "error_pos",
                 "safe", "_safe_in_string", "_stack", "_expect", "_is_key", "_esc", "_num", "_lit",
                 "_frozen_closers", "max_depth")

    def __init__(self, max_depth: int = MAX_DEPTH) -> None:
        self.max_depth = max_depth
        self.depth = 0
        self.in_string = False
        self.started = False
        self.done = False
        self.opener: str | None = None
        self.start = -1
        self.end = -1
        self.pos = 0
        self.error: str | None = None
        self.error_pos = -1
        self.safe = -1
        self._safe_in_string = False
        self._stack: list[str] = []
        self._expect = _VALUE
        self._is_key = False
        self._esc = 0          # 0: none, 1: after a backslash, 2..5: reading \\u hex digits
        self._num = -1         # number sub-state, -1 when not inside a number
        self._lit = ""         # rest of a literal being read (``rue`` after ``t``)
        self._frozen_closers: str | None = None

    # ---- public
    def feed(self, text: str) -> int:
        """Scan the next piece; return the index in ``text`` just past the value's end, or -1."""
        if self.done:
            return 0
        base = self.pos
        if self.error is None:
            i = self._scan_strict(text, 0, base)
        else:
            i = 0
        if self.error is not None and not self.done:
            i = self._scan_lax(text, i, base)
        if self.done:
            self.pos = base + i
            return i
        self.pos = base + len(text)
        return -1

    def string_run(self, text: str) -> bool:
        """Scan ``text`` at once when the scanner is strictly inside a string value and ``text`` only continues
        it: it may first finish an escape the previous piece left open and end inside one (``\\`` or
        ``\\u`` and fewer than four hex digits), and between those it has no closing quote, no raw control
        character and only whole valid escapes. Then True is returned and the state is the one :meth:`feed`
        would leave (``safe`` at the end, or at the escape left open); else nothing changes and False."""
        if not self.in_string or self._is_key or self.error is not None:
            return False
        stop = _string_run_stop(text, self._esc)
        if stop < 0:
            return False
        n = len(text)
        self.safe = self.pos + stop
        self.pos += n
        self._esc = n - stop  # 1 after a backslash, 2..5 after "\\u" and the hex digits read
        return True

    def closers(self) -> str:
        """The text that closes the prefix ending at ``safe`` (``"`` for an open string, then ``}``/``]``)."""
        if self._frozen_closers is not None:
            return self._frozen_closers
        return ('"' if self._safe_in_string else "") + "".join(
            "}" if c == "{" else "]" for c in reversed(self._stack))

    @property
    def strict(self) -> bool:
        """Whether everything scanned so far is a prefix of strict JSON."""
        return self.error is None

    # ---- strict scanning (grammar-checking)
    def _fail(self, at: int, message: str) -> None:
        self._frozen_closers = self.closers() if self.safe >= 0 else ""
        self.error = message
        self.error_pos = at
        self._num = -1
        self._lit = ""
        self._esc = 1 if self._esc == 1 else 0

    def _value_done(self, at: int) -> bool:
        """A value ended at absolute ``at``; returns True when it was the top-level one."""
        if not self._stack:
            self.done = True
            self.end = at
            self.safe = at
            self._safe_in_string = False
            return True
        self._expect = _AFTER
        self.safe = at
        self._safe_in_string = False
        return False

    def _scan_strict(self, text: str, i: int, base: int) -> int:
        n = len(text)
        stack = self._stack
        while i < n:
            if self.in_string:
                if self._esc:
                    ch = text[i]
                    if self._esc == 1:
                        if ch not in _ESCAPES:
                            self._fail(base + i, f"invalid escape '\\{ch}' in a string")
                            return i
                        self._esc = 2 if ch == "u" else 0
                    else:
                        if ch not in _HEX:
                            self._fail(base + i, "invalid \\u escape in a string")
                            return i
                        self._esc = self._esc + 1 if self._esc < 5 else 0
                    i += 1
                    if not self._esc and not self._is_key:
                        self.safe = base + i
                    continue
                j = _STRING_RUN.match(text, i).end()
                if j == n:
                    i = n
                    if not self._is_key:
                        self.safe = base + n
                    break
                ch = text[j]
                if ch == '"':
                    self.in_string = False
                    i = j + 1
                    if self._is_key:
                        self._expect = _COLON
                    elif self._value_done(base + i):
                        return i
                elif ch == "\\":
                    if not self._is_key:
                        self.safe = base + j
                    self._esc = 1
                    i = j + 1
                else:
                    if not self._is_key:  # the string's text up to the raw character is safe
                        self.safe = base + j
                    self._fail(base + j, "control character inside a string (must be escaped)")
                    return j
                continue
            ch = text[i]
            if self._num >= 0:
                state = _NUMBER_STEP[self._num].get(ch)
                if state is not None:
                    self._num = state
                    i += 1
                    continue
                problem = number_stop(self._num, ch)
                if problem is not None:
                    self._fail(base + i, problem)
                    return i
                self._num = -1
                if self._value_done(base + i):
                    return i
                continue  # re-read ch as what follows the number
            if self._lit:
                if ch != self._lit[0]:
                    self._fail(base + i, f"unexpected {ch!r} in a literal")
                    return i
                self._lit = self._lit[1:]
                i += 1
                if not self._lit and self._value_done(base + i):
                    return i
                continue
            if ch in _WS:
                i += 1
                continue
            expect = self._expect
            if expect == _VALUE or expect == _VALUE_OR_CLOSE:
                if not self.started:
                    if ch not in "{[":
                        self._fail(base + i, "expected a JSON object or array")
                        return i
                    self.started = True
                    self.opener = ch
                    self.start = base + i
                if ch == "{" or ch == "[":
                    if len(stack) >= self.max_depth:
                        self._fail(base + i, f"nesting deeper than {self.max_depth} levels")
                        return i
                    stack.append(ch)
                    self.depth += 1
                    self._expect = _KEY_OR_CLOSE if ch == "{" else _VALUE_OR_CLOSE
                    i += 1
                    self.safe = base + i
                    self._safe_in_string = False
                elif ch == '"':
                    self.in_string = True
                    self._is_key = False
                    i += 1
                    self.safe = base + i
                    self._safe_in_string = True
                elif ch in _NUMBER_START:
                    self._num = _NUMBER_START[ch]
                    i += 1
                elif ch in _LITERALS:
                    self._lit = _LITERALS[ch]
                    i += 1
                elif ch == "]" and expect == _VALUE_OR_CLOSE:
                    i = self._close(ch, i, base)
                    if self.done:
                        return i
                else:
                    self._fail(base + i, f"expected a value, got {ch!r}")
                    return i
            elif expect == _KEY or expect == _KEY_OR_CLOSE:
                if ch == '"':
                    self.in_string = True
                    self._is_key = True
                    i += 1
                elif ch == "}" and expect == _KEY_OR_CLOSE:
                    i = self._close(ch, i, base)
                    if self.done:
                        return i
                else:
                    self._fail(base + i, f"expected a key string, got {ch!r}")
                    return i
            elif expect == _COLON:
                if ch != ":":
                    self._fail(base + i, f"expected ':', got {ch!r}")
                    return i
                self._expect = _VALUE
                i += 1
            else:  # _AFTER
                if ch == ",":
                    self._expect = _KEY if stack[-1] == "{" else _VALUE
                    i += 1
                elif ch in "}]":
                    if (ch == "}") != (stack[-1] == "{"):
                        self._fail(base + i, f"mismatched {ch!r}")
                        return i
                    i = self._close(ch, i, base)
                    if self.done:
                        return i
                else:
                    self._fail(base + i, f"expected ',' or a closing bracket, got {ch!r}")
                    return i
        return i

    def _close(self, ch: str, i: int, base: int) -> int:
        self._stack.pop()
        self.depth -= 1
        i += 1
        self._value_done(base + i)
        return i

    # ---- lax scanning (after a grammar error: strings and brackets only)
    def _scan_lax(self, text: str, i: int, base: int) -> int:
        n = len(text)
        while i < n:
            if self.in_string:
                if self._esc:
                    self._esc = 0
                    i += 1
                    continue
                j = _STRING_RUN_LAX.match(text, i).end()
                if j == n:
                    return n
                i = j + 1
                if text[j] == '"':
                    self.in_string = False
                else:  # a backslash as the text's last character
                    self._esc = 1
                continue
            if not self.started:
                return n  # not a JSON object or array: no end to report
            m = _STRUCTURE_LAX.search(text, i)
            if m is None:
                return n
            ch = m.group()
            i = m.end()
            if ch == '"':
                self.in_string = True
            elif ch in "{[":
                self.depth += 1
            else:
                self.depth -= 1
                if self.depth <= 0:
                    self.depth = 0
                    self.done = True
                    self.end = base + i
                    return i
        return i


# ---------------------------------------------------------------------------------------------------
# the repair ladder

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
        elif nxt == "u" and len(body) >= i + 6 and all(c in _HEX for c in body[i + 2:i + 6]):
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
        return _check_object(value, final or "proposed", diags, text)
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
                return _check_object(value, final or "repaired", diags, text)
    # rungs 2-4: Python literals and quotes, trailing commas, (truncated) the final brace
    repaired, more, suspicious = _token_repairs(text, truncated, closed)
    refused = [d for d in more if d[0] in _REFUSALS]
    more = [d for d in more if d[0] not in _REFUSALS]
    if more:
        value, reason2 = _strict(repaired, load)
        if reason2 is None:
            return _check_object(value, final or "repaired", diags + more, repaired)
    diags.extend(refused)
    if suspicious:
        diags.append(("unescaped_quote", "a string seems to contain an unescaped '\"'; not guessed, raw text kept"))
    elif truncated:
        diags.append(("truncated_json", f"the output ended before the JSON did ({reason})"))
    else:
        diags.append(("invalid_json", f"arguments are not valid JSON ({reason})"))
    return LadderResult(None, final or "rejected", diags, None)


def _check_object(value: Any, status: str, diags: list, text: str) -> LadderResult:
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

    Strict JSON (bounded by :func:`toolwire.parsers.safe_json.loads`) is ``proposed``. Otherwise, each
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

class ClosedArguments(NamedTuple):
    """The outcome of :meth:`ArgumentsStream.close`: final arguments (consistent with the streamed
    fragments), status, diagnostics and the exact raw text."""

    arguments: dict
    status: str
    diagnostics: list[tuple[str, str]]
    raw: str


class ArgumentsStream:
    """Streams one call's raw argument JSON as fragments while it arrives; finds its end with the scanner.

    The rule: text is emitted (through ``emit(fragment)``) only up to the scanner's safe point, so what
    was sent is always a strict-JSON prefix that closes without invented parts (a key waits for its
    value, a comma for what follows it, a number or literal until it ends). At :meth:`close` the rest
    is emitted so the fragments concatenate to JSON of the returned ``arguments``:

    * valid JSON (``proposed``): the rest of the raw text, so the fragments are the raw text itself;
    * ``repaired``/``truncated`` with a value: the rest of the repaired text (the repairs only touch
      text after the first grammar error, which was never sent);
    * no usable value (``rejected``, or a truncation the ladder cannot close): the closing
      ``"``/``}``/``]`` of what was sent, and ``arguments`` are that streamed prefix (only what the
      model wrote; the status and a diagnostic say it is partial). Never dispatch a rejected call.

    Only an object is streamed; any other value is sent whole at :meth:`close`. Cost is O(raw length).
    ``limits`` bound the nesting the scanner follows and what :meth:`decode` accepts (``too_large`` past them).
    """

    __slots__ = ("scanner", "emit", "limits", "_parts", "_pending", "_sent", "_sent_upto", "_mirror")

    def __init__(self, emit: Callable[[str], None], limits: Limits = DEFAULT_LIMITS,
                 mirror: list[str] | None = None):
        self.scanner = JsonValueScanner(limits.max_depth)
        self.emit = emit
        self.limits = limits
        self._mirror = mirror            # a list ``emit`` also appends every fragment to (the call's fragments)
        self._parts: list[str] = []     # every raw piece received
        self._pending: list[str] = []   # received, not yet sent (short while the JSON is strict)
        self._sent: list[str] = []      # fragments sent
        self._sent_upto = -1            # absolute raw position sent up to (-1: nothing sent)

    @property
    def raw(self) -> str:
        """The raw text received so far (joined once: the pieces are replaced by the joined text)."""
        parts = self._parts
        if len(parts) == 1:
            return parts[0]
        raw = "".join(parts)
        self._parts = [raw] if raw else []
        return raw

    def compact(self, *more: list[str]) -> str:
        """The raw text, joined once; the sent fragments (and each list in ``more`` holding the same fragments,
        like the call's ``fragments``), when they spell the raw text from the value's start, become that one
        string, so the pieces can be freed (a long one-shot output is then kept about once, not twice)."""
        self._compact_value(*more)
        return self.raw

    def _compact_value(self, *more: list[str]) -> str | None:
        """:meth:`compact` without joining the raw text: the value's text (the raw text from the value's start)
        when every received character of it was sent, else None. It is joined once, from the sent fragments;
        they and the raw pieces from the value's start become that one string (the blanks before the value
        stay a piece of their own, so the value is not copied again to cut them off)."""
        scanner, sent = self.scanner, self._sent
        if not scanner.started or self._sent_upto != scanner.pos:
            return None
        value = "".join(sent)  # the fragments are the raw text from the value's start: checked below
        lead = _spelled_after(self._parts, value, scanner.start, sent)
        if lead is None:
            return None
        for fragments in more:  # (usually the very same pieces: no need to compare the text again)
            if _same_items(fragments, sent) or joined_fragments(fragments, value) is value:
                fragments[:] = [value]
        sent[:] = [value]
        self._parts = [lead, value] if lead else [value]
        return value

    @property
    def sent(self) -> str:
        """The fragments emitted so far, joined."""
        return "".join(self._sent)

    def feed(self, text: str) -> int:
        """Add raw text; returns the index in ``text`` just past the value's end, or -1 (like the scanner)."""
        scanner = self.scanner
        if text and scanner.opener == "{" and scanner.string_run(text):  # a string value goes on (the usual step)
            self._parts.append(text)
            if self._pending or scanner.safe < scanner.pos:  # an escape cut by a piece's end
                self._pending.append(text)
                self._send_safe()
            else:  # all of it is safe to send
                self._sent_upto = scanner.pos
                self._send(text)
            return -1
        tracking = scanner.strict
        end = scanner.feed(text)
        piece = text if end < 0 else text[:end]
        if piece:
            self._parts.append(piece)
        if scanner.opener != "{":
            return end
        if self._sent_upto < 0:
            self._sent_upto = scanner.start
            self._pending = ["".join(self._parts)[scanner.start:]]
        elif tracking and piece:
            self._pending.append(piece)
        self._send_safe()
        return end

    def _send_safe(self) -> None:
        """Send what was received up to the scanner's safe point (as one fragment)."""
        scanner = self.scanner
        if scanner.safe > self._sent_upto:
            pending = "".join(self._pending)
            cut = scanner.safe - self._sent_upto
            self._send(pending[:cut])
            self._pending = [pending[cut:]] if scanner.strict and cut < len(pending) else []  # no "" to join
            self._sent_upto = scanner.safe

    def _send(self, fragment: str) -> None:
        if fragment:
            self._sent.append(fragment)
            self.emit(fragment)

    def decode(self, truncated: bool = False, closed: bool = False) -> LadderResult:
        """The raw text so far through the repair ladder, bounded by the limits (``closed``: the call's close
        marker ended the text, so one missing final ``}``/``]`` may be added)."""
        scanner = self.scanner
        return repair_ladder(self.raw, truncated, max_depth=self.limits.max_depth,
                             max_bytes=self.limits.max_argument_bytes, closed=closed,
                             scanned=scanner.done and scanner.strict)

    def close(self, *, truncated: bool = False, decoded: LadderResult | None = None,
              closed: bool = False) -> ClosedArguments:
        """Finish: decode the raw text (or use ``decoded`` from a larger body), emit the completing
        fragment and return arguments consistent with every fragment sent."""
        scanner = self.scanner
        if decoded is None and scanner.done and scanner.strict:  # the pieces are not needed once joined
            value = self._compact_value(*(() if self._mirror is None else (self._mirror,)))
            decoded = None if value is None else self._decode_value(value, truncated)
            if decoded is not None:  # (the usual case: the raw text is never joined)
                return self._complete(decoded, value, scanner.start, value)
        raw = self.raw
        if decoded is None:
            decoded = self.decode(truncated, closed)
        reported = raw[scanner.start:] if scanner.started else raw.lstrip(_WS)
        return self._complete(decoded, raw, 0, reported)

    def _decode_value(self, value: str, truncated: bool) -> LadderResult | None:
        """What :meth:`decode` gives for a value the scanner read whole as strict JSON, decoded from the value's
        text (json.loads skips the blanks before it); None when the ladder must see the raw text: past the size
        limit (its message names the raw text's size) or refused by json.loads all the same (its message
        names a position in the raw text)."""
        limit = self.limits.max_argument_bytes
        size = self.scanner.start + len(value)  # the blanks are ASCII
        if size > limit or (4 * size > limit and self.scanner.start + utf8_size(value) > limit):
            return None
        try:
            parsed = loads(value, max_depth=None)  # the scanner checked the nesting bound
        except ValueError:
            return None
        return _check_object(parsed, "truncated" if truncated else "proposed", [], value)

    def _complete(self, decoded: LadderResult, base: str, offset: int, reported: str) -> ClosedArguments:
        """The end of :meth:`close`: ``base`` is the raw text from absolute position ``offset`` on (the
        decoded text, when it is not a repair, is ``base`` itself)."""
        diags = list(decoded.diagnostics)
        if not any(self._sent):
            if decoded.value is not None:
                self._send(json.dumps(decoded.value, ensure_ascii=False))
                return ClosedArguments(decoded.value, decoded.status, diags, reported)
            self._send("{}")
            return ClosedArguments({}, decoded.status, diags, reported)
        start = self.scanner.start
        if decoded.value is not None and decoded.text is not None:
            text = decoded.text
            upto = self._sent_upto - offset
            if text is base or _same_prefix(text, base, upto):
                rest = text[upto:]
                if decoded.status == "proposed" or self._loads_or_none(self.sent + rest) == decoded.value:
                    self._send(rest)
                    return ClosedArguments(decoded.value, decoded.status, diags, reported)
        # no value consistent with what was sent: close the streamed prefix
        closing = self.scanner.closers()
        self._send(closing)
        partial = self._loads_or_none(base[start - offset:self._sent_upto - offset] + closing)
        if not isinstance(partial, dict):  # cannot happen for a strict prefix; keep the contract anyway
            partial = {}
        status = decoded.status if decoded.status in ("rejected", "truncated") else "rejected"
        if not (self.scanner.done and self.scanner.strict):
            diags.append(("partial_arguments", "arguments hold only the part streamed before the output "
                          + ("ended" if status == "truncated" else "became unusable")))
        return ClosedArguments(partial, status, diags, reported)

    def _loads_or_none(self, text: str) -> Any:
        """Streamed text decoded (the scanner kept it within the depth limit; its size is what was sent)."""
        try:
            return loads(text, max_depth=self.limits.max_depth)
        except ValueError:
            return None


_COMPARE_STEP = 1 << 20


def _same_prefix(text: str, raw: str, n: int) -> bool:
    """``text.startswith(raw[:n])`` without copying ``raw[:n]`` whole (compared a megabyte at a time)."""
    if n > len(raw):
        n = len(raw)
    if len(text) < n:
        return False
    return all(text.startswith(raw[i:min(i + _COMPARE_STEP, n)], i) for i in range(0, n, _COMPARE_STEP))


def _spelled_after(parts: list[str], value: str, skip: int, pieces: list[str]) -> str | None:
    """When the joined ``parts`` are ``skip`` characters and then exactly ``value`` (joined from ``pieces``): those
    first characters; else None. Compared part by part, nothing joined but the first characters, and a part
    that is the very piece of ``value`` at its position needs no comparing (the usual case)."""
    lead: list[str] = []
    pos = -skip
    k, at = 0, 0  # pieces[k] starts at ``at`` in value
    for part in parts:
        if pos < 0:
            lead.append(part[:-pos])
            part, pos = part[-pos:], pos + len(part[:-pos])
            if not part:
                continue
        while at < pos and k < len(pieces):
            at += len(pieces[k])
            k += 1
        if not (at == pos and k < len(pieces) and pieces[k] is part) and not value.startswith(part, pos):
            return None
        pos += len(part)
    return "".join(lead) if pos == len(value) else None


def _same_items(a: list, b: list) -> bool:
    """Whether two lists hold the very same objects in the same order."""
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def joined_fragments(fragments: list[str], whole: str) -> str:
    """``"".join(fragments)``, as the ``whole`` object itself when the fragments spell exactly it (a call's
    arguments text is usually its raw text: one string kept instead of two)."""
    if len(fragments) == 1 and fragments[0] is whole:  # (compacted: nothing to compare)
        return whole
    pos = 0
    for fragment in fragments:
        if not whole.startswith(fragment, pos):
            return "".join(fragments)
        pos += len(fragment)
    return whole if pos == len(whole) else "".join(fragments)


# ---------------------------------------------------------------------------------------------------
# CallBuilder glue: raw-streamed arguments instead of CallBuilder's key/value fragments

_STATUS_RANK = {"proposed": 0, "repaired": 1, "truncated": 2, "rejected": 3}


def worse_status(*statuses: str) -> str:
    """The most severe of candidate statuses: rejected > truncated > repaired > proposed."""
    return max(statuses, key=_STATUS_RANK.__getitem__)


def stream_arguments(call: CallBuilder) -> ArgumentsStream:
    """An :class:`ArgumentsStream` whose fragments become the call's ``ArgumentsDelta`` events."""
    return ArgumentsStream(call._fragment, call.parser.limits, call.fragments)


CALL_OBJECT_BYTES = 4096
"""Room for the name and keys around the arguments when a whole call object is decoded."""


def call_object_bounds(limits: Limits) -> dict[str, int]:
    """:func:`repair_ladder` bounds for a call object that wraps the arguments (``{"name": ..., "arguments":
    {...}}``): one level deeper than the arguments may nest, :data:`CALL_OBJECT_BYTES` more bytes."""
    return {"max_depth": limits.max_depth + 1, "max_bytes": limits.max_argument_bytes + CALL_OBJECT_BYTES}


def diagnostic_severity(code: str) -> str:
    """Severity of a ladder diagnostic: repairs and partial values warn, unusable JSON is an error."""
    return "warning" if code.startswith("repaired_") or code in _WARNINGS else "error"


_WARNINGS = frozenset({"partial_arguments", "raw_control_character", "missing_closing_brace", "arguments_json_string",
                       "arguments_alias_parameters"})


def finish_call(call: CallBuilder, closed: ClosedArguments, *, raw: str | None = None) -> ToolCallCandidate | None:
    """Finish a call whose arguments went through :meth:`ArgumentsStream.close` (use this instead of
    ``CallBuilder.finish``, which would add its own closing fragment). The status is the worse of the
    call's (``rejected`` for an unknown tool or a call in reasoning) and the arguments'; ``raw``
    overrides the raw argument text kept on the candidate."""
    if call.past_limit:  # past Limits.max_calls: no candidate, only its text is kept
        call.keep("".join(call.raw_parts) + (closed.raw if raw is None else raw))
        return None
    for code, message in closed.diagnostics:
        if code == "too_large":
            call.reject_too_large(message)
        else:
            call.diag(code, message, severity=diagnostic_severity(code))
    status = worse_status(call.status, closed.status)
    if closed.status == "truncated":  # the output ended inside the call: truncated, whatever else is wrong
        status = "truncated"
    call.status = status
    raw_arguments = closed.raw if raw is None else raw
    cand = ToolCallCandidate(
        index=call.index, id=call.id, name=call.name, arguments=closed.arguments,
        raw_arguments=raw_arguments, status=status, source=call.source,
        diagnostics=call.diagnostics, arguments_text=joined_fragments(call.fragments, raw_arguments),
    )
    call.parser._events.append(ToolCallFinished(call.index, cand))
    call.parser._candidates.append(cand)
    return cand
