"""Bounded JSON decoding for model output: never a RecursionError, never an unbounded allocation.

Every parser decodes model-written JSON through :func:`loads`. It checks nesting depth with one linear,
string-aware pass before calling ``json.loads``, keeps integers exact (Python ints, so values beyond
2**63 survive) and rejects ``NaN``/``Infinity``, which are not JSON.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

MAX_DEPTH = 64
"""Default maximum nesting depth of a decoded value (objects and arrays)."""


class JsonTooLarge(ValueError):
    """The text is larger than the allowed number of UTF-8 bytes."""

    def __init__(self, size: int, limit: int):
        super().__init__(f"JSON text takes {size} bytes, more than the limit of {limit}")
        self.size = size
        self.limit = limit


class JsonTooDeep(ValueError):
    """The text nests deeper than the allowed depth."""

    def __init__(self, depth: int, limit: int):
        super().__init__(f"JSON nests deeper than {limit} levels (at least {depth})")
        self.depth = depth
        self.limit = limit


# Outside strings only brackets matter. One C-speed pass deletes every string (an unterminated one runs to
# the end of the text, as in a truncated output): the pattern cannot fail at a quote, so it never rescans,
# and its possessive loops keep no backtracking state (linear time and memory). ``bytes.translate`` then
# drops every other character (UTF-8 never puts a bracket byte inside a multi-byte character).
try:
    _STRINGS: re.Pattern | None = re.compile(r'"[^"\\]*+(?:\\.?[^"\\]*+)*+(?:"|\Z)', re.DOTALL)
except re.error:  # Python < 3.11 has no possessive quantifiers: use the plain loop below
    _STRINGS = None
_KEEP = frozenset(b"[]{}")
_OTHER_BYTES = bytes(b for b in range(256) if b not in _KEEP)
_RUNS = re.compile(rb"\[+|\]+")


def nesting_depth(text: str, limit: int | None = None) -> int:
    """Maximum ``[``/``{`` nesting of ``text`` outside strings (``limit`` is accepted for compatibility:
    the count is exact either way, so a result above ``limit`` means too deep).

    Linear and fast on any input (50 MB of brackets take seconds, of ordinary text well under one):
    strings go in one regex pass, other characters in one ``bytes.translate``, adjacent ``][`` pairs (which
    never change the maximum) in a few ``bytes.replace`` passes, and the runs of brackets that remain are
    summed with ``itertools.accumulate``: no Python-level loop per character.
    """
    if "[" not in text and "{" not in text:
        return 0
    if _STRINGS is None:
        return _nesting_depth_loop(text, limit)
    if '"' in text:
        text = _STRINGS.sub("", text)
    brackets = text.encode("utf-8", "surrogatepass").translate(None, _OTHER_BYTES)
    brackets = brackets.replace(b"{", b"[").replace(b"}", b"]")
    for _ in range(8):  # "][" dips one level and comes back: removing it keeps the maximum exact
        shorter = brackets.replace(b"][", b"")
        removed = (len(brackets) - len(shorter)) // 2  # one per boundary between a "]" run and a "[" run
        brackets = shorter
        if removed < 4096:  # few runs remain
            break
    runs = list(map(len, _RUNS.findall(brackets)))  # runs alternate: "[" runs and "]" runs
    if not runs:
        return 0
    first_closes = brackets[0] == 0x5D  # "]"
    runs[1 - first_closes::2] = [-n for n in runs[1 - first_closes::2]]
    best = max(0, max(accumulate(runs)))
    return best


def _nesting_depth_loop(text: str, limit: int | None) -> int:
    """The same count, one character at a time (only used where ``re`` lacks possessive quantifiers)."""
    depth = best = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > best:
                best = depth
                if limit is not None and best > limit:
                    return best
        elif ch in "]}":
            depth -= 1
    return best


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


# ---- the JSON number grammar (RFC 8259, section 6): the one every reader of model JSON follows
# ``-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [-+]? [0-9]+)?``, ASCII digits only. A leading zero (``01``, ``-01``),
# a bare sign or dot (``-``, ``.5``, ``1.``), ``+1``, hex, ``NaN`` / ``Infinity`` are not JSON numbers: a reader
# stops at the character that breaks the grammar, and the text goes through the repair ladder, which does not
# guess what such a number meant (``01`` may be the number 1 or the digits of a string): the call is rejected with
# ``invalid_json`` (docs/variants.md, "JSON numbers").

NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
"""A whole JSON number (``fullmatch``); group 1 is the fraction, group 2 the exponent (either makes it a float)."""

# the states of a number being read one character at a time: after "-", after a leading "0", in the integer
# digits, after ".", in the fraction, after "e", after the exponent's sign, in the exponent digits
(NUMBER_MINUS, NUMBER_ZERO, NUMBER_INT, NUMBER_DOT, NUMBER_FRAC, NUMBER_E, NUMBER_ESIGN,
 NUMBER_EXP) = range(8)
_DIGITS = "0123456789"
NUMBER_START: dict[str, int] = {"-": NUMBER_MINUS, "0": NUMBER_ZERO, **dict.fromkeys(_DIGITS[1:], NUMBER_INT)}
"""The state after a number's first character (a character not in it starts no number)."""
NUMBER_STEP: tuple[dict[str, int], ...] = (
    {"0": NUMBER_ZERO, **dict.fromkeys(_DIGITS[1:], NUMBER_INT)},          # "-": a leading zero is still one
    {".": NUMBER_DOT, "e": NUMBER_E, "E": NUMBER_E},                        # "0": no digit may follow
    {**dict.fromkeys(_DIGITS, NUMBER_INT), ".": NUMBER_DOT, "e": NUMBER_E, "E": NUMBER_E},
    dict.fromkeys(_DIGITS, NUMBER_FRAC),
    {**dict.fromkeys(_DIGITS, NUMBER_FRAC), "e": NUMBER_E, "E": NUMBER_E},
    {**dict.fromkeys(_DIGITS, NUMBER_EXP), "+": NUMBER_ESIGN, "-": NUMBER_ESIGN},
    dict.fromkeys(_DIGITS, NUMBER_EXP),
    dict.fromkeys(_DIGITS, NUMBER_EXP),
)
"""``NUMBER_STEP[state][ch]``: the state after reading ``ch`` (a missing entry: ``ch`` does not continue the number)."""
NUMBER_CAN_END = frozenset((NUMBER_ZERO, NUMBER_INT, NUMBER_FRAC, NUMBER_EXP))
"""The states in which the text read so far is a whole number."""


NUMBER_FOLLOWERS = frozenset(" \t\n\r,]}")
"""What may follow a number inside an object or array: JSON whitespace, ``,``, ``]``, ``}``. Anything else glued to
it (``0x1F``, ``1.5.2``, ``12px``) makes the text no number, rather than a number and junk."""


def number_stop(state: int, ch: str) -> str | None:
    """``ch`` does not continue a number read up to ``state``: None when the number ends there (``ch`` may follow
    a value in a container), else why the text is no JSON number."""
    if state == NUMBER_ZERO and ch in _DIGITS:
        return "a number cannot have a leading zero"
    if state not in NUMBER_CAN_END or ch not in NUMBER_FOLLOWERS:
        return f"unexpected {ch!r} in a number"
    return None


_SIZE_STEP = 1 << 20


def utf8_size(text: str) -> int:
    """The UTF-8 size of ``text`` in bytes (lone surrogates as 3 bytes), without a copy of the whole text:
    ASCII text is its length; other text is encoded a megabyte at a time."""
    if text.isascii():
        return len(text)
    if len(text) <= _SIZE_STEP:  # (a streamed delta: one encode, no generator)
        return len(text.encode("utf-8", "surrogatepass"))
    return sum(len(text[i:i + _SIZE_STEP].encode("utf-8", "surrogatepass")) for i in range(0, len(text), _SIZE_STEP))


def loads(text: str, *, max_depth: int = MAX_DEPTH, max_bytes: int | None = None) -> Any:
    """``json.loads`` with a depth bound; raises ``ValueError`` (``JsonTooDeep`` for depth) on bad input.

    With ``max_bytes``, a text over that many UTF-8 bytes raises ``JsonTooLarge`` before any decoding.
    """
    if max_bytes is not None and (len(text) > max_bytes or (4 * len(text) > max_bytes and utf8_size(text) > max_bytes)):
        raise JsonTooLarge(utf8_size(text), max_bytes)  # (a character takes at most 4 bytes)
    if max_depth is None or text.count("[") + text.count("{") <= max_depth:
        return json.loads(text, parse_constant=_no_constants)
    # Brackets enough to nest too deep: decode first (C speed), then measure the value's nesting, which for
    # JSON is the brackets' nesting. Only a text that does not decode is counted (nesting_depth), so that a
    # too-deep text is JsonTooDeep whether or not it is valid, as when counting first.
    too_deep: RecursionError | None = None
    try:
        value = json.loads(text, parse_constant=_no_constants)
    except RecursionError as exc:  # deeper than the interpreter allows: surely deeper than max_depth
        value, too_deep = _UNDECODED, exc
    except ValueError:
        depth = nesting_depth(text, max_depth)
        if depth > max_depth:
            raise JsonTooDeep(depth, max_depth) from None
        raise
    if value is _UNDECODED or _value_depth(value, max_depth) > max_depth:
        depth = nesting_depth(text, max_depth)
        if depth > max_depth:
            raise JsonTooDeep(depth, max_depth)
        if too_deep is not None:  # a max_depth above the interpreter's recursion limit: as json.loads does
            raise too_deep
    return value


_UNDECODED = object()


def _value_depth(value: Any, limit: int) -> int:
    """Nesting of dicts and lists in a decoded value (a scalar is 0, ``{}`` is 1), iteratively; ``limit + 1`` as
    soon as it is deeper than ``limit``."""
    best = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        depth += 1
        if depth > best:
            best = depth
            if best > limit:
                return limit + 1
        stack.extend((child, depth) for child in children if isinstance(child, (dict, list)))
    return best


def loads_argument(text: str, *, max_depth: int = MAX_DEPTH, max_bytes: int | None = None) -> Any:
    """:func:`loads` for the value of one argument: its nesting counts from the arguments object that holds
    it (so ``max_depth`` is the arguments' bound, as :class:`toolwire.limits.Limits` states it)."""
    try:
        return loads(text, max_depth=max_depth - 1, max_bytes=max_bytes)
    except JsonTooDeep as exc:
        raise JsonTooDeep(exc.depth + 1, max_depth) from None


def error_code(exc: BaseException) -> str:
    """The candidate error code for a decoding failure: ``too_large`` past a limit, else ``invalid_json``."""
    return "too_large" if isinstance(exc, (JsonTooDeep, JsonTooLarge)) else "invalid_json"
