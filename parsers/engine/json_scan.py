"""The incremental JSON value scanner (:class:`JsonValueScanner`): finds where one top-level object or array ends
while text streams in. It is string-, escape- and brace-aware, scans every character once and checks the text
against the JSON grammar (numbers by :mod:`~toolwire.parsers.engine.safe_json`'s grammar), so it knows the last
*safe point*: the longest prefix that, closed with ``"``/``}``/``]``, is JSON made only of what the model wrote
(no dangling key, comma or half-written number)."""

from __future__ import annotations

import json
import re

from .safe_json import MAX_DEPTH, NUMBER_START as _NUMBER_START, NUMBER_STEP as _NUMBER_STEP, number_stop

__all__ = ["JsonValueScanner", "JSON_WS", "HEX"]

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
JSON_WS = " \t\n\r"
HEX = frozenset("0123456789abcdefABCDEF")
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
                                                       and HEX.issuperset(rest[1:])))


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
    return digits_at + need if len(digits) == need and HEX.issuperset(digits) else -1


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

    The scanner also checks the JSON grammar (and the nesting bound of :mod:`~toolwire.parsers.engine.safe_json`).
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
                        if ch not in HEX:
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
            if ch in JSON_WS:
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
