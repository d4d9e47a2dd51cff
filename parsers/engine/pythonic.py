"""The pythonic call engine: calls written in Python call syntax, ``[get_weather(city='Paris', days=3),
search(q='x')]``, read from a stream as they arrive. Shared by the families that write them (LFM2.5, Llama 4 with
vLLM's pythonic template); each family parser finds where a call list starts and hands the text to a
:class:`CallListReader`, which builds the candidates through :class:`~toolwire.parsers.engine.call_builder.CallBuilder`.

**Nothing is evaluated.** The reader is a hand-written incremental scanner of literals: no ``eval``, no
``ast``, no name lookup. A value is a string, a number, ``True`` / ``False`` / ``None``, or a list, tuple or dict
of those; anything else (a name, an attribute, an expression, a call such as ``__import__('os')``) makes the call
``rejected`` with a ``not_a_literal`` diagnostic, its text kept in ``raw_arguments``.

**Grammar.** ``[`` CALL (``,`` CALL)* ``]`` where CALL is ``NAME(key=value, ...)``: keyword arguments only (a
positional one is ``positional_argument``, the call ``rejected``), a trailing comma allowed, blanks anywhere
between tokens. A name is a letter or ``_`` then letters, digits, ``_``, ``-`` or ``.`` (tool names such as
``get-weather`` or ``functions.search``, written as they are by the templates).

**Strings, as the templates write them** (:class:`PythonicDialect`):

* an argument's own string value is *raw*: the templates put the text between quotes with nothing escaped
  (LFM2.5 ``'…'``, Llama 4 pythonic ``"…"``), so a backslash is a backslash and a quote inside the text is text.
  Such a string ends at a quote that is *confirmed* by what follows it: blanks then ``,`` and the next
  ``key=``, or ``)`` followed by the next call ``, NAME(``, the list's ``]``, the region's end marker or the end
  of the output (:func:`raw_string_closes_early` applies the same rule to a value before it is rendered, so the
  renderers refuse exactly the values the reader would cut short);
* inside a list or tuple (which the templates write with Python's ``str``) strings are Python literals, in
  either quote, with Python's escapes (``\\n``, ``\\'``, ``\\x41``, ``\\u00e9``, ``\\N{...}`` ...);
* inside a dict, per the dialect: JSON (LFM2.5 writes a top-level dict with ``tojson``: ``"…"`` with JSON
  escapes, ``true`` / ``false`` / ``null``) or Python. Either spelling is read in both modes; the foreign one
  (``true`` in Python, ``True`` in JSON) is an accepted variant (``json_literal`` / ``python_literal``,
  ``repaired``).

Numbers are Python's (``-0.5``, ``1.5e-07``, ``12345678901234567890``, ``1_000``, ``0x1F``); integers stay exact.
A number of more than :data:`MAX_NUMBER_CHARS` characters, or one that is infinite as a float (``1e999``), is
``unrepresentable_number`` (rejected). Tuples are JSON arrays; dict keys must be strings.

**Typed text** (Llama 4 pythonic, whose template writes every value as ``"%s"``): an argument's quoted text is
typed by the tool's JSON schema (:mod:`~toolwire.parsers.engine.schema_coerce`, with containers read by this reader,
never by ``ast``) unless the schema says string.

**Streaming.** Arguments stream as they arrive: a string value as JSON string fragments, containers item by
item, scalars when their token ends. The fragments of one call always concatenate to JSON equal to its final
arguments (a tuple's items are sent when it closes, since ``(x)`` is no tuple until a comma says so). A
quote that may close a raw string is decided by a small resumable look-ahead (at most :data:`MAX_LOOKAHEAD`
characters), so each character is looked at a bounded number of times: linear in the output however it is split.

**Limits** (:class:`~toolwire.limits.Limits`): nesting past ``max_depth`` (the arguments object is one level) and
arguments past ``max_argument_bytes`` reject the call (``too_large``); the rest of it is skipped without building
values. **Nothing is lost:** every character between a call's parentheses is in its ``raw_arguments``; text in
the list that is no call is kept in a ``malformed_call_list`` diagnostic. The end of the output inside a call
makes it ``truncated``.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any, Callable, Iterator

from toolwire.errors import UnrepresentableValue
from toolwire.request_values import call_arguments

from .call_builder import CallBuilder, json_dumps
from .tools import tool_schemas
from .schema_coerce import _allowed, coerce, is_string_schema, parameter_schema

BLANKS = " \t\r\n"
MAX_NAME_CHARS = 256
"""A call name or argument key longer than this is not read as one."""
MAX_NUMBER_CHARS = 1000
"""A number token longer than this is refused (CPython reads at most 4300 digits, and slowly)."""
MAX_LOOKAHEAD = 512
"""How far past a quote the raw-string closing rule looks before deciding the quote is text."""
MAX_ESCAPE_CHARS = 128
"""The longest escape sequence read (``\\N{...}``); longer is malformed."""

PY, JSON = "python", "json"

_is_name_start = re.compile(r"[^\W\d]").match
_name_run = re.compile(r"[\w.\-]*").match
_NAME = re.compile(r"[^\W\d][\w.\-]*")
_DIGITS = r"[0-9](?:_?[0-9])*"
_NUMBER = re.compile(
    r"[+-]?(?:0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+"
    rf"|(?:{_DIGITS}(?:\.(?:{_DIGITS})?)?|\.{_DIGITS})(?:[eE][+-]?{_DIGITS})?)")
_WORDS = {"True": (True, PY), "False": (False, PY), "None": (None, PY),
          "true": (True, JSON), "false": (False, JSON), "null": (None, JSON)}
_SIMPLE_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
                   "t": "\t", "v": "\v", "\n": ""}
_HEX = frozenset("0123456789abcdefABCDEF")
_OCT = frozenset("01234567")


def is_name_start(ch: str) -> bool:
    """Whether ``ch`` may start a call name or argument key (a letter or ``_``)."""
    return _is_name_start(ch) is not None


def is_name_char(ch: str) -> bool:
    """Whether ``ch`` may continue a call name or argument key (a letter, digit, ``_``, ``-`` or ``.``)."""
    return _name_run(ch).end() == 1


def is_name(text: str) -> bool:
    """Whether ``text`` reads as a call name or argument key (renderers refuse names that do not)."""
    return len(text) <= MAX_NAME_CHARS and _NAME.fullmatch(text) is not None


def named_calls(message: Any, index: int) -> Iterator[tuple[int, str, dict[str, Any], str]]:
    """A renderer's view of an assistant message's calls: ``(call index, name, arguments, field)`` for each, after
    checking that the name and every argument key read back as names (:func:`is_name`); ``field`` is the call's
    request field (``tool_calls[i].function``). Raises :class:`~toolwire.errors.UnrepresentableValue` naming the
    field otherwise."""
    for ci, call in enumerate(message.tool_calls):
        name = call.function.name
        field = f"tool_calls[{ci}].function"
        if not is_name(name):
            raise UnrepresentableValue(f"function name {name!r} cannot be written as a pythonic call name "
                                       "(a letter or _ then letters, digits, _, - or .)", message_index=index,
                                       field=f"{field}.name")
        args = call_arguments(call, index, ci)
        for key in args:
            if not is_name(key):
                raise UnrepresentableValue(f"argument name {key!r} cannot be written as a keyword argument",
                                           message_index=index, field=f"{field}.arguments.{key}")
        yield ci, name, args, field


@dataclass(frozen=True)
class PythonicDialect:
    """How one family writes its pythonic calls.

    ``raw_quotes``: the quotes that open an argument's raw string (nothing escaped inside), the one the template
    writes first. ``dict_mode``: how a
    dict written as an argument's value reads (``"json"``: LFM2.5's ``tojson``; ``"python"``). ``typed_text``:
    an argument's quoted text is typed by the tool's schema (Llama 4 pythonic's ``"%s"``)."""

    name: str
    raw_quotes: str = "'\""
    dict_mode: str = JSON
    typed_text: bool = False


# ---------------------------------------------------------------- the raw-string closing rule

_ACCEPT, _REJECT = -1, -2


def _follower_step(state: int, ch: str) -> int:
    """One character of the look-ahead after a quote that may close a raw string. States: 0 after the quote,
    1 after ``,``, 2 in the next key, 3 after the key, 4 after ``)``, 5 after ``),``, 6 in the next call's name,
    7 after that name."""
    blank = ch in BLANKS
    if state == 0:
        return 0 if blank else 1 if ch == "," else 4 if ch == ")" else _REJECT
    if state == 1:
        if blank:
            return 1
        if ch == ")":
            return _ACCEPT  # a trailing comma, then the call's end
        return 2 if _is_name_start(ch) else _REJECT
    if state in (2, 3):
        if ch == "=":
            return _ACCEPT
        if blank:
            return 3
        return 2 if state == 2 and _name_run(ch).end() else _REJECT
    if state == 4:
        return 4 if blank else _ACCEPT if ch == "]" else 5 if ch == "," else _REJECT
    if state == 5:
        return 5 if blank else 6 if _is_name_start(ch) else _REJECT
    # 6, 7: the next call's name
    if ch == "(":
        return _ACCEPT
    if blank:
        return 7
    return 6 if state == 6 and _name_run(ch).end() else _REJECT


_MARKER_STATES = (0, 4)
"""Look-ahead states where a region end marker (or the end of the output) confirms the quote."""


def raw_string_closes_early(value: str, quote: str, after: str, markers: tuple[str, ...] = ()) -> bool:
    """Whether ``value``, written as a raw string between ``quote`` characters and followed by ``after`` (what the
    template writes next: ``, key=...``, ``)]`` ...), would be read as ending at one of its own quotes."""
    start = value.find(quote)
    text = value + quote + after
    while start != -1:
        state, i = 0, start + 1
        limit = min(len(text), i + MAX_LOOKAHEAD)
        while i < limit:
            if state in _MARKER_STATES and any(text.startswith(m, i) for m in markers):
                return True
            state = _follower_step(state, text[i])
            i += 1
            if state < 0:
                break
        if state == _ACCEPT or (state >= 0 and i == len(text)):
            return True
        start = value.find(quote, start + 1)
    return False


# ---------------------------------------------------------------- values

class _Frame:
    """An open list, tuple or dict: its value so far, how its strings read, and what is still to come."""

    __slots__ = ("kind", "value", "mode", "count", "key", "prefix", "comma")

    def __init__(self, kind: str, mode: str, prefix: str | None):
        self.kind = kind
        self.value: Any = {} if kind == "{" else []
        self.mode = mode
        self.count = 0
        self.key: str | None = None   # a dict's key waiting for its value
        self.prefix = prefix          # a tuple's JSON prefix, sent when it closes (None: it is an argument)
        self.comma = False            # a tuple: a comma was read (``(x)`` is no tuple)


_CLOSERS = {"[": "]", "(": ")", "{": "}"}

# reader states
(_LIST, _CALL_NAME, _CALL_OPEN, _ARG, _KEY, _EQUALS, _VALUE, _RAW, _STRING, _WORD, _AFTER, _DICT_KEY,
 _COLON, _AFTER_CALL, _SKIP, _GARBAGE, _DONE) = range(17)


class CallListReader:
    """Reads one call list for a family parser (a :class:`~toolwire.parsers.engine.steps.StepParser`-style step):
    ``read(buf, pos, final)`` consumes what it can and returns where it stopped (``None``: it needs more text).
    :attr:`done` says the list ended; :attr:`stopped_at` names the region end marker it stopped before (not
    consumed), if any.

    ``region_end``: markers that end the region the calls are written in (LFM2.5's ``<|tool_call_end|>``); they
    end the list wherever they appear, inside a string too (a renderer refuses values holding them). Without
    them (Llama 4 pythonic) the list ends at its ``]``, and text after a call that is neither ``,`` nor ``]``
    ends it there (the family reads the rest as content)."""

    def __init__(self, parser: Any, dialect: PythonicDialect):
        self.p = parser
        self.d = dialect
        self._schemas = tool_schemas(parser.tools) if parser.tools is not None else {}
        self.done = True
        self.stopped_at: str | None = None

    # ---- set-up
    def start(self, *, source: str = "content", bracketed: bool = True, region_end: tuple[str, ...] = ()) -> None:
        """A new call list starts (its ``[`` already read when ``bracketed``)."""
        self.source = source
        self.bracketed = bracketed
        self.region_end = region_end
        self._marker_firsts = "".join(sorted({m[0] for m in region_end}))
        self._raw_find = {q: re.compile("[" + re.escape(q + self._marker_firsts) + "]").search for q in "'\""}
        self._str_find = {q: re.compile("[" + re.escape(q + "\\" + self._marker_firsts) + "]").search for q in "'\""}
        self._skip_find = re.compile("[" + re.escape("()[]{}'\"\\" + self._marker_firsts) + "]").search
        self.done = False
        self.stopped_at = None
        self.variant: tuple[str, str] | None = None  # (code, message): every call of this list is a repaired variant
        self._state = _LIST
        self.call: CallBuilder | None = None
        self.calls = 0
        self._tok: list[str] = []     # a name, key or number/word being read
        self._toklen = 0
        self._toklast = ""            # its last character
        self._numeric = False         # it started as a number
        self._key = ""                # the argument being read
        self._schema: dict = {}       # the current call's parameter schema
        self._frames: list[_Frame] = []
        self._parens = 0              # open tuples (their items are sent when the outermost closes)
        self._record: list[str] | None = None  # what an argument's container sent, while it may need resending
        self._quote = ""
        self._mode = PY               # how the string being read escapes
        self._parts: list[str] = []   # a decoded string (nested value or dict key) or typed text
        self._string_role = ""        # "raw" / "arg" (an argument's raw / escaped string, streamed), "text" (an
        # argument's typed text, collected), "value" (a string in a container), "key" (a dict key)
        self._ahead = (0, 0)          # the raw-string look-ahead: (state, characters examined)
        self._raw_from = 0            # where the call's raw text not yet recorded starts
        self._skip_depth = 0
        self._skip_quote = ""         # a string being skipped
        self._skip_raw = False        # ... an argument's raw string (closed by the look-ahead rule)
        self._garbage: list[str] = []
        self._gap: list[str] = []     # blanks after a call's name, read before what follows them decides

    # ---- the step
    def read(self, buf: str, pos: int, final: bool) -> int | None:
        """Consume ``buf`` from ``pos``; returns where the next step starts (``None``: wait for more text)."""
        if self.done:
            return pos
        if pos == len(buf) and not final:  # all read: nothing to do until more text comes
            self._raw_upto(buf, pos)
            self._raw_from = 0
            return None
        nxt = _STEPS[self._state](self, buf, pos, final)
        if nxt is None:
            if final and not self.done:
                self._end_of_output(buf, pos)
                return len(buf)
            self._raw_upto(buf, pos)
            self._raw_from = 0
        return nxt

    # ---- helpers
    def _raw_upto(self, buf: str, i: int) -> None:
        """Record the call's raw text up to ``i`` (everything between its parentheses goes there)."""
        call = self.call
        if call is not None and i > self._raw_from:
            call.raw(buf[self._raw_from:i])
        self._raw_from = i

    def _region_marker(self, buf: str, i: int, final: bool) -> str | None | bool:
        """At ``buf[i]``: the region end marker found there, ``False`` when none starts there, or ``None`` when
        the buffer ends inside a possible one (wait)."""
        for marker in self.region_end:
            if self.p._marker_at(buf, i, marker):
                return marker
        if not final:
            rest = buf[i:]
            if any(len(rest) < len(m) and m.startswith(rest) for m in self.region_end):
                return None
        return False

    def _blanks(self, buf: str, i: int) -> int:
        n = len(buf)
        while i < n and buf[i] in BLANKS:
            i += 1
        return i

    def _stop_at_marker(self, buf: str, i: int, marker: str) -> int:
        """The region ended at ``buf[i]``: close whatever is open (an open call is ``rejected``)."""
        self._raw_upto(buf, i)
        if self.call is not None:
            self._close_values()
            self._reject("unclosed_call", f"the call was not closed before {marker}")
            self._finish_call()
        self._flush_garbage()
        if self.bracketed and self._state != _DONE:
            self.p._diag("unclosed_call_list", f"the call list was not closed with ']' before {marker}",
                         severity="warning", raw="[")
        self.stopped_at = marker
        self._state = _DONE
        self.done = True
        return i

    def _end_of_output(self, buf: str, pos: int) -> None:
        """The output ended inside the list."""
        self._raw_upto(buf, len(buf))
        if self._state == _GARBAGE:
            self._garbage.append(buf[pos:])
        self._flush_garbage()
        self.p._truncated = True
        if self.call is not None:
            call = self.call
            self._close_values()
            call.diag("truncated", "the output ended inside this call", severity="error")
            self._finish_call("truncated" if call.status != "rejected" else None)
        if self.bracketed:  # raw: the list's opener, which no call or content holds
            self.p._diag("unclosed_call_list", "the output ended inside the call list", severity="warning", raw="[")
        self._state = _DONE
        self.done = True

    def _flush_garbage(self) -> None:
        if self._garbage:
            text = "".join(self._garbage)
            self._garbage = []
            if text:
                self.p._diag("malformed_call_list", "text in the call list that is no call; kept here", raw=text)

    # ---- calls
    def _open_call(self, name: str, at: int) -> None:
        """Open the call ``name`` whose arguments start at ``at`` (after its ``(``)."""
        self.call = self.p._begin_call(name, source=self.source)
        self.calls += 1
        if self.variant is not None:
            self._repaired(*self.variant)
        self._schema = self._schemas.get(name) or {}
        self._raw_from = at

    def _finish_call(self, status: str | None = None) -> None:
        call = self.call
        self.call = None
        self._frames = []
        self._parens = 0
        self._record = None
        call.finish(status)

    def _reject(self, code: str, message: str, raw: str | None = None) -> None:
        call = self.call
        call.status = "rejected"
        call.diag(code, message, severity="error", raw=raw)

    def _repaired(self, code: str, message: str) -> None:
        call = self.call
        if not any(d.code == code for d in call.diagnostics):
            call.diag(code, message + "; accepted", severity="warning")
        if call.status == "proposed":
            call.status = "repaired"

    def _fail(self, buf: str, i: int, code: str, message: str, *, in_string: str = "") -> int:
        """A call's arguments went wrong at ``buf[i]``: the call is rejected and the rest of it skipped
        (``in_string``: the quote of a string being read there)."""
        depth = len(self._frames) + 1
        self._close_values()
        self._reject(code, message)
        self._skip_depth = depth
        self._skip_quote, self._skip_raw = in_string, False
        self._state = _SKIP
        return i

    # ---- emission
    def _out(self, text: str) -> None:
        """Send a fragment of the current argument's JSON (held while a tuple is open)."""
        if self._parens:
            return
        if self._record is not None:
            self._record.append(text)
        self.call._emit(text)

    def _item_prefix(self, frame: _Frame) -> str:
        """The JSON that goes before the next item of ``frame`` (a separator, a dict's key)."""
        sep = ", " if frame.count else ""
        if frame.kind != "{":
            return sep
        key = frame.key
        if key in frame.value and not self._parens:
            self._duplicate_key(key)
        return sep + json_dumps(key) + ": "

    def _duplicate_key(self, key: str) -> None:
        """A dict repeats a key: the last value is kept; the text sent holds both, so from here it is kept as the
        call's arguments text (what was sent so far rebuilt from the arguments and this argument's fragments)."""
        call = self.call
        call.diag("duplicate_key", f"argument {self._key!r} repeats the key {key!r}; the last value is kept")
        if call._derived and self._record is not None and not call.past_limit:
            args = call.arguments
            head = (json_dumps(args)[:-1] + ", ") if args else "{"
            call.fragments = [head + json_dumps(self._key) + ": " + "".join(self._record)]
            call._derived = False
        self._record = None

    def _scalar(self, value: Any) -> None:
        """A complete number or literal: sent and stored."""
        frames = self._frames
        if frames:
            frame = frames[-1]
            self._out(self._item_prefix(frame) + json_dumps(value))
            self._add(frame, value)
        else:
            self.call.value(self._key, value)
        self._state = _AFTER

    def _add(self, frame: _Frame, value: Any) -> None:
        if frame.kind == "{":
            frame.value[frame.key] = value
            frame.key = None
        else:
            frame.value.append(value)
        frame.count += 1

    def _open_container(self, kind: str, mode: str) -> bool:
        """``[``, ``(`` or ``{`` opens a value; False when it would nest past ``Limits.max_depth``."""
        frames = self._frames
        if len(frames) + 2 > self.p.limits.max_depth:
            return False
        if frames:
            prefix = self._item_prefix(frames[-1])
            if kind == "(":
                frame = _Frame(kind, mode, prefix)
                self._parens += 1
            else:
                self._out(prefix + kind)
                frame = _Frame(kind, mode, None)
        else:
            frame = _Frame(kind, mode, None)
            if kind == "(":
                self._parens += 1
            else:
                call = self.call
                call._key(self._key)
                self._record = [] if call._derived else None
                self._out(kind)
        frames.append(frame)
        return True

    def _close_container(self) -> None:
        """The innermost container is complete: sent, and stored in its parent (or as the argument)."""
        frame = self._frames.pop()
        value = frame.value
        if frame.kind == "(":
            self._parens -= 1
            if not self._parens and self._frames:
                self._out(frame.prefix + json_dumps(value))
        else:
            self._out("}" if frame.kind == "{" else "]")
        if self._frames:
            self._add(self._frames[-1], value)
        elif frame.kind == "(":
            self.call.value(self._key, value)
        else:
            self._record = None
            self.call._set(self._key, value)
        self._state = _AFTER

    def _close_values(self) -> None:
        """Close what an interrupted argument left open (a string, containers), keeping what was read: the JSON
        sent stays whole and equal to the arguments."""
        role = self._string_role
        if role and self._state in (_RAW, _STRING):
            self._string_role = ""
            if role == "value":
                self._out('"')
                self._add(self._frames[-1], "".join(self._parts))
            elif role in ("raw", "arg"):
                self.call.end_string()
            elif role == "text":
                self._typed("".join(self._parts))
            self._parts = []
        while self._frames:
            frame = self._frames[-1]
            if frame.kind == "{" and frame.key is not None:
                frame.key = None  # its value never started: nothing was sent for it
            self._close_container()
        self._parts = []

    # ---------------------------------------------------------------- states
    def _list(self, buf: str, pos: int, final: bool) -> int | None:
        """Before a call: blanks, then a name, ``]`` (the end of the list), or a region end marker."""
        i = self._blanks(buf, pos)
        if i == len(buf):
            return None if i == pos else i
        ch = buf[i]
        if self.region_end and ch in self._marker_firsts:
            marker = self._region_marker(buf, i, final)
            if marker is None:
                return None if i == pos else i
            if marker:
                return self._stop_at_marker(buf, i, marker)
        if ch == "]" and self.bracketed:
            self._state, self.done = _DONE, True
            return i + 1
        if _is_name_start(ch):
            self._tok, self._toklen = [], 0
            self._state = _CALL_NAME
            return i
        return self._no_call(buf, i)

    def _no_call(self, buf: str, i: int) -> int:
        """Text where a call should start: kept in a diagnostic up to the next ``,`` / ``]`` (or, without a region
        end marker, the list ends here and the family reads the text as content)."""
        if not self.region_end:
            self._flush_garbage()
            if self.bracketed:
                self.p._diag("unclosed_call_list", "the call list was not closed with ']'; the text after it is "
                             "content", severity="warning", raw="[")
            self._state, self.done = _DONE, True
            return i
        self._state = _GARBAGE
        return i

    def _garbage_step(self, buf: str, pos: int, final: bool) -> int | None:
        i = pos
        n = len(buf)
        while i < n:
            ch = buf[i]
            if ch in ",]":
                # a ']' that closes no '[' is part of the text that is no call
                self._garbage.append(buf[pos:i + 1] if ch == "]" and not self.bracketed else buf[pos:i])
                self._flush_garbage()
                if ch == "]" and self.bracketed:
                    self._state, self.done = _DONE, True
                else:
                    self._state = _LIST
                return i + 1
            if ch in self._marker_firsts:
                marker = self._region_marker(buf, i, final)
                if marker is None:
                    self._garbage.append(buf[pos:i])
                    return None if i == pos else i
                if marker:
                    self._garbage.append(buf[pos:i])
                    return self._stop_at_marker(buf, i, marker)
            i += 1
        self._garbage.append(buf[pos:i])
        return None if i == pos else i

    def _call_name(self, buf: str, pos: int, final: bool) -> int | None:
        i = _name_run(buf, pos).end()
        piece = buf[pos:i]
        self._tok.append(piece)
        self._toklen += len(piece)
        if self._toklen > MAX_NAME_CHARS:
            self._garbage.append("".join(self._tok))
            return self._no_call(buf, i)
        if i == len(buf) and not final:
            return None if i == pos else i
        self._state = _CALL_OPEN
        return i

    def _call_open(self, buf: str, pos: int, final: bool) -> int | None:
        """After a call's name: blanks (kept aside while they are all there is, so a long run is not held in the
        buffer), then ``(``."""
        i = self._blanks(buf, pos)
        if i == len(buf) and not final:
            if i > pos:
                self._gap.append(buf[pos:i])
            return None if i == pos else i
        gap, self._gap = "".join(self._gap) + buf[pos:i], []
        name = "".join(self._tok)
        if i < len(buf) and buf[i] == "(":
            self._open_call(name, i + 1)
            self._state = _ARG
            return i + 1
        self._garbage.append(name + gap)
        return self._no_call(buf, i)

    def _arg(self, buf: str, pos: int, final: bool) -> int | None:
        """Before an argument: blanks, then ``)`` (the call's end), a key, or something else."""
        i = self._blanks(buf, pos)
        if i == len(buf):
            return None if i == pos else i
        ch = buf[i]
        if ch == ")":
            self._raw_upto(buf, i)
            self._finish_call()
            self._state = _AFTER_CALL
            return i + 1
        if _is_name_start(ch):
            self._tok, self._toklen = [], 0
            self._state = _KEY
            return i
        if self.region_end and ch in self._marker_firsts:
            marker = self._region_marker(buf, i, final)
            if marker is None:
                return None if i == pos else i
            if marker:
                return self._stop_at_marker(buf, i, marker)
        if ch in "'\"[({0123456789.-+":
            return self._fail(buf, i, "positional_argument", "a positional argument; the tools take keyword "
                              "arguments only (key=value)")
        return self._fail(buf, i, "malformed_arguments", f"unexpected {ch!r} where an argument should start")

    def _key_step(self, buf: str, pos: int, final: bool) -> int | None:
        i = _name_run(buf, pos).end()
        piece = buf[pos:i]
        self._tok.append(piece)
        self._toklen += len(piece)
        if self._toklen > MAX_NAME_CHARS:
            return self._fail(buf, i, "malformed_arguments",
                              f"an argument name longer than {MAX_NAME_CHARS} characters")
        if i == len(buf) and not final:
            return None if i == pos else i
        self._key = "".join(self._tok)
        self._state = _EQUALS
        return i

    def _equals(self, buf: str, pos: int, final: bool) -> int | None:
        """After a key: blanks, then ``=`` (a keyword argument); ``,`` / ``)`` / ``(`` make it positional."""
        i = self._blanks(buf, pos)
        if i == len(buf) and not final:
            return None if i == pos else i
        ch = buf[i] if i < len(buf) else ""
        if ch == "=" and not buf.startswith("==", i):
            if i + 1 == len(buf) and not final:
                return None if i == pos else i
            self._state = _VALUE
            return i + 1
        if ch in ",)(":
            what = "a call" if ch == "(" else "a name"
            return self._fail(buf, i, "positional_argument", f"a positional argument ({what} {self._key!r}, not a "
                              "literal); the tools take keyword arguments only (key=value)")
        return self._fail(buf, i, "not_a_literal", f"{self._key!r} is followed by {ch!r}: an expression, not a "
                          "keyword argument")

    def _value(self, buf: str, pos: int, final: bool) -> int | None:
        """The start of a value (an argument's, a list item, a dict value)."""
        i = self._blanks(buf, pos)
        if i == len(buf):
            return None if i == pos else i
        ch = buf[i]
        frames = self._frames
        if ch in "'\"":
            self._quote = ch
            self._parts = []
            if not frames:
                typed = self.d.typed_text and not is_string_schema(parameter_schema(self._schema, self._key))
                if typed:
                    self._string_role = "text"
                else:
                    self._string_role = "raw" if ch in self.d.raw_quotes else "arg"
                    self.call.begin_string(self._key)
                if ch in self.d.raw_quotes:
                    self._raw_upto(buf, i + 1)
                    self._ahead = (0, 0)
                    self._state = _RAW
                else:
                    self._mode = PY
                    self._state = _STRING
                return i + 1
            frame = frames[-1]
            self._mode = frame.mode
            if ch == "'" and frame.mode == JSON:
                self._repaired("python_string", "a single-quoted (Python) string inside a JSON object")
                self._mode = PY
            self._string_role = "value"
            self._out(self._item_prefix(frame) + '"')
            self._state = _STRING
            return i + 1
        if ch in "[({":
            mode = frames[-1].mode if frames else (self.d.dict_mode if ch == "{" else PY)
            if ch == "{" and not frames:
                mode = self.d.dict_mode
            if not self._open_container(ch, mode):
                self.call.reject_too_large(f"the arguments nest deeper than {self.p.limits.max_depth} levels "
                                           "(Limits.max_depth)")
                depth = len(frames) + 2
                self._close_values()
                self._skip_depth, self._skip_quote, self._skip_raw = depth, "", False
                self._state = _SKIP
                return i + 1
            self._state = _DICT_KEY if ch == "{" else _VALUE
            return i + 1
        if frames and frames[-1].kind != "{" and ch == _CLOSERS[frames[-1].kind]:
            return self._close_at(buf, i)  # an empty list or tuple, or one after a trailing comma
        if ch in "0123456789-+." or _is_name_start(ch):
            self._tok, self._toklen, self._toklast = [], 0, ""
            self._numeric = ch in "0123456789-+."
            self._state = _WORD
            return i
        if self.region_end and ch in self._marker_firsts:
            marker = self._region_marker(buf, i, final)
            if marker is None:
                return None if i == pos else i
            if marker:
                return self._stop_at_marker(buf, i, marker)
        return self._fail(buf, i, "malformed_arguments", f"unexpected {ch!r} where a value should start")

    def _close_at(self, buf: str, i: int) -> int:
        frame = self._frames[-1]
        if frame.kind == "(" and frame.count == 1 and not frame.comma:
            # ``(x)``: a parenthesized value, no tuple
            self._frames.pop()
            self._parens -= 1
            value = frame.value[0]
            if self._frames:
                if not self._parens:
                    self._out(frame.prefix + json_dumps(value))
                self._add(self._frames[-1], value)
            else:
                self.call.value(self._key, value)
            self._state = _AFTER
            return i + 1
        self._close_container()
        return i + 1

    # ---- tokens: numbers and words
    def _word(self, buf: str, pos: int, final: bool) -> int | None:
        """A number or a word (``True``, ``None``, a name): letters, digits, ``_`` and ``.``, a sign first or
        after a number's exponent."""
        i, n = pos, len(buf)
        last = self._toklast
        numeric = self._numeric
        while i < n:
            ch = buf[i]
            if not (ch.isalnum() or ch in "_." or (ch in "+-" and (last == "" or (numeric and last in "eE")))):
                break
            last = ch
            i += 1
        self._toklast = last
        piece = buf[pos:i]
        self._tok.append(piece)
        self._toklen += len(piece)
        if self._toklen > MAX_NUMBER_CHARS:
            return self._fail(buf, i, "unrepresentable_number", f"a number or name longer than {MAX_NUMBER_CHARS} "
                              "characters")
        if i == n and not final:
            return None if i == pos else i
        return self._token_done("".join(self._tok), buf, i)

    def _token_done(self, word: str, buf: str, i: int) -> int:
        frames = self._frames
        known = _WORDS.get(word)
        if known is not None:
            value, spelling = known
            context = frames[-1].mode if frames else PY
            if spelling != context:
                if spelling == JSON:
                    self._repaired("json_literal", f"JSON's {word} written in a Python value")
                else:
                    self._repaired("python_literal", f"Python's {word} written in a JSON object")
            self._scalar(value)
            return i
        number = _number(word)
        if number is _NOT_A_NUMBER:
            if _is_name_start(word[:1]):
                return self._fail(buf, i, "not_a_literal", f"{word!r} is a name, not a literal value (nothing is "
                                  "evaluated)")
            return self._fail(buf, i, "malformed_arguments", f"{word!r} is not a number")
        if number is _INFINITE:
            return self._fail(buf, i, "unrepresentable_number", f"{word} is out of the range of a JSON number")
        self._scalar(number)
        return i

    # ---- strings
    def _raw(self, buf: str, pos: int, final: bool) -> int | None:
        """Inside an argument's raw string: text up to a confirmed closing quote. The text a delta brings is sent
        as one piece where it can be (a quote or ``<`` that turns out to be text does not split it)."""
        quote = self._quote
        find = self._raw_find[quote]
        i = pos
        n = len(buf)
        role = self._string_role
        while True:
            m = find(buf, i)
            j = m.start() if m else n
            if j == n:
                if n > pos:
                    self._raw_piece(buf, pos, n, role)
                return None if n == pos else n
            if buf[j] != quote:  # a region end marker's first character
                marker = self._region_marker(buf, j, final)
                if marker is False:
                    i = j + 1
                    continue
                if j > pos:
                    self._raw_piece(buf, pos, j, role)
                if marker is None:
                    return None if j == pos else j
                self._raw_upto(buf, j)
                self._end_raw_string()
                self._reject("unterminated_string", f"a string was not closed before {marker}")
                return self._stop_at_marker(buf, j, marker)
            verdict = self._closes(buf, j, final)
            if verdict is False:
                i = j + 1
                continue
            if j > pos:
                self._raw_piece(buf, pos, j, role)
            if verdict is None:
                return None if j == pos else j
            self._raw_upto(buf, j)
            self._end_raw_string()
            self._state = _AFTER
            return j + 1

    def _raw_piece(self, buf: str, i: int, j: int, role: str) -> None:
        """String text ``buf[i:j]``: streamed (and recorded as raw text, the same piece) or collected."""
        piece = buf[i:j]
        if role == "raw":
            self._raw_upto(buf, i)
            call = self.call
            call.raw(piece)
            call.string_piece(piece)
            self._raw_from = j
        else:
            self._parts.append(piece)

    def _end_raw_string(self) -> None:
        role = self._string_role
        self._string_role = ""
        if role == "text":
            text = "".join(self._parts)
            self._parts = []
            self._typed(text)
        else:
            self.call.end_string()

    def _typed(self, text: str) -> None:
        """An argument's quoted text typed by its schema (Llama 4 pythonic)."""
        call = self.call
        limits = self.p.limits
        schema = parameter_schema(self._schema, self._key)
        value, diags = type_text(text, schema, self._schema, max_depth=limits.max_depth,
                                 max_bytes=limits.max_argument_bytes)
        for code, message in diags:
            if code == "too_large":
                call.reject_too_large(f"argument {self._key!r}: {message}")
            else:
                call.diag(code, f"argument {self._key!r}: {message}",
                          severity="info" if code == "integer_from_float" else "warning")
                if code == "value_type_mismatch" and call.status == "proposed":
                    call.status = "repaired"
        call.value(self._key, value)

    def _closes(self, buf: str, j: int, final: bool) -> bool | None:
        """Does the quote at ``buf[j]`` close the raw string? Resumes the look-ahead where the last call left it."""
        state, seen = self._ahead
        i = j + 1 + seen
        n = len(buf)
        if i > n:  # (defensive) the text looked at is no longer there: look again
            state, i = 0, j + 1
        limit = j + 1 + MAX_LOOKAHEAD
        while i < n and i < limit:
            if state in _MARKER_STATES and self.region_end and buf[i] in self._marker_firsts:
                marker = self._region_marker(buf, i, final)
                if marker is None:
                    self._ahead = (state, i - j - 1)
                    return None
                if marker:
                    self._ahead = (0, 0)
                    return True
            state = _follower_step(state, buf[i])
            i += 1
            if state == _ACCEPT:
                self._ahead = (0, 0)
                return True
            if state == _REJECT:
                self._ahead = (0, 0)
                return False
        if i >= limit:
            self._ahead = (0, 0)
            return False
        if final:
            self._ahead = (0, 0)
            return True  # the output ends in the look-ahead: the quote closed the string
        self._ahead = (state, i - j - 1)
        return None

    def _string(self, buf: str, pos: int, final: bool) -> int | None:
        """Inside an escaped string (a nested value or a dict key): text up to the closing quote, escapes
        decoded as the string's mode says."""
        quote = self._quote
        find = self._str_find[quote]
        i, n = pos, len(buf)
        while True:
            m = find(buf, i)
            j = m.start() if m else n
            if j > i:
                self._string_piece(buf[i:j])
            if j == n:
                return None if n == pos else n
            ch = buf[j]
            if ch == quote:
                self._string_done()
                return j + 1
            if ch == "\\":
                decoded, end = _escape(buf, j, self._mode, final)
                if end is None:
                    return None if j == pos else j
                if decoded is None:
                    return self._fail(buf, j, "malformed_arguments", f"a bad escape {buf[j:end]!r} in a string",
                                      in_string=quote)
                self._string_piece(decoded)
                i = end
                continue
            marker = self._region_marker(buf, j, final)
            if marker is None:
                return None if j == pos else j
            if marker:
                code = "marker_in_value" if self._frames else "unterminated_string"
                self._reject(code, f"a string was not closed before {marker}")
                return self._stop_at_marker(buf, j, marker)
            self._string_piece(ch)
            i = j + 1

    def _string_piece(self, text: str) -> None:
        if not text:
            return
        role = self._string_role
        if role == "arg":
            self.call.string_piece(text)
            return
        self._parts.append(text)
        if role == "value":
            self._out(encode_basestring(text)[1:-1])

    def _string_done(self) -> None:
        role = self._string_role
        self._string_role = ""
        text = "".join(self._parts)
        self._parts = []
        if role == "key":
            self._frames[-1].key = text
            self._state = _COLON
            return
        self._state = _AFTER
        if role == "arg":
            self.call.end_string()
        elif role == "text":
            self._typed(text)
        else:
            self._out('"')
            self._add(self._frames[-1], text)

    # ---- after a value
    def _after(self, buf: str, pos: int, final: bool) -> int | None:
        """After a value: ``,`` or the enclosing closer (or, for an argument, ``)``)."""
        i = self._blanks(buf, pos)
        if i == len(buf):
            return None if i == pos else i
        ch = buf[i]
        frames = self._frames
        if not frames:
            if ch == ",":
                self._state = _ARG
                return i + 1
            if ch == ")":
                self._raw_upto(buf, i)
                self._finish_call()
                self._state = _AFTER_CALL
                return i + 1
        else:
            frame = frames[-1]
            if ch == ",":
                if frame.kind == "(":
                    frame.comma = True
                self._state = _DICT_KEY if frame.kind == "{" else _VALUE
                return i + 1
            if ch == _CLOSERS[frame.kind]:
                return self._close_at(buf, i)
        if self.region_end and ch in self._marker_firsts:
            marker = self._region_marker(buf, i, final)
            if marker is None:
                return None if i == pos else i
            if marker:
                return self._stop_at_marker(buf, i, marker)
        if ch in "(.[":
            return self._fail(buf, i, "not_a_literal", f"a value followed by {ch!r}: an expression, not a literal")
        return self._fail(buf, i, "not_a_literal", f"unexpected {ch!r} after a value (an expression is not a "
                          "literal)")

    # ---- dicts
    def _dict_key(self, buf: str, pos: int, final: bool) -> int | None:
        i = self._blanks(buf, pos)
        if i == len(buf):
            return None if i == pos else i
        ch = buf[i]
        frame = self._frames[-1]
        if ch == "}":
            self._close_container()
            return i + 1
        if ch in "'\"":
            self._quote = ch
            self._mode = frame.mode
            if ch == "'" and frame.mode == JSON:
                self._repaired("python_string", "a single-quoted (Python) string inside a JSON object")
                self._mode = PY
            self._parts = []
            self._string_role = "key"
            self._state = _STRING
            return i + 1
        if self.region_end and ch in self._marker_firsts:
            marker = self._region_marker(buf, i, final)
            if marker is None:
                return None if i == pos else i
            if marker:
                return self._stop_at_marker(buf, i, marker)
        return self._fail(buf, i, "malformed_arguments", f"a dict key must be a string (got {ch!r})")

    def _colon(self, buf: str, pos: int, final: bool) -> int | None:
        i = self._blanks(buf, pos)
        if i == len(buf):
            return None if i == pos else i
        if buf[i] == ":":
            self._state = _VALUE
            return i + 1
        self._frames[-1].key = None
        return self._fail(buf, i, "malformed_arguments", f"expected ':' after a dict key (got {buf[i]!r})")

    # ---- between calls
    def _after_call(self, buf: str, pos: int, final: bool) -> int | None:
        """After a call's ``)``: ``,`` and the next call, ``]`` (the end of the list), or the region's end."""
        i = self._blanks(buf, pos)
        if i == len(buf):
            if final and not self.bracketed:
                self._state, self.done = _DONE, True
                return i
            return None if i == pos else i
        ch = buf[i]
        if ch == ",":
            self._state = _LIST
            return i + 1
        if ch == "]" and self.bracketed:
            self._state, self.done = _DONE, True
            return i + 1
        if self.region_end and ch in self._marker_firsts:
            marker = self._region_marker(buf, i, final)
            if marker is None:
                return None if i == pos else i
            if marker:
                if not self.bracketed:
                    self.stopped_at, self._state, self.done = marker, _DONE, True
                    return i
                return self._stop_at_marker(buf, i, marker)
        return self._no_call(buf, i if self.region_end else pos)  # (without a region, the blanks are content)

    # ---- recovery
    def _skip(self, buf: str, pos: int, final: bool) -> int | None:
        """The rest of a rejected call, up to the ``)`` that closes it, brackets and strings counted (its text
        goes to the call's raw text)."""
        i, n = pos, len(buf)
        find = self._skip_find
        while i < n:
            if self._skip_quote:
                if self._skip_raw:
                    j = self._raw_find[self._skip_quote](buf, i)
                    j = j.start() if j else n
                    if j == n:
                        return None if n == pos else n
                    if buf[j] == self._skip_quote:
                        verdict = self._closes(buf, j, final)
                        if verdict is None:
                            return None if j == pos else j
                        if verdict:
                            self._skip_quote = ""
                        i = j + 1
                        continue
                else:
                    j = self._str_find[self._skip_quote](buf, i)
                    j = j.start() if j else n
                    if j == n:
                        return None if n == pos else n
                    if buf[j] == "\\":
                        if j + 1 == n and not final:
                            return None if j == pos else j
                        i = j + 2
                        continue
                    if buf[j] == self._skip_quote:
                        self._skip_quote = ""
                        i = j + 1
                        continue
                marker = self._region_marker(buf, j, final)
                if marker is None:
                    return None if j == pos else j
                if marker:
                    return self._stop_at_marker(buf, j, marker)
                i = j + 1
                continue
            m = find(buf, i)
            if m is None:
                return None if n == pos else n
            j = m.start()
            ch = buf[j]
            if ch in "([{":
                self._skip_depth += 1
            elif ch in ")]}":
                self._skip_depth -= 1
                if self._skip_depth <= 0:
                    self._raw_upto(buf, j)
                    self._finish_call()
                    if ch == ")":
                        self._state = _AFTER_CALL
                        return j + 1
                    self._state = _AFTER_CALL  # a closer that is no ')': the call ends there
                    return j
            elif ch in "'\"":
                self._skip_quote = ch
                self._skip_raw = self._skip_depth == 1 and ch in self.d.raw_quotes
                self._ahead = (0, 0)
            elif ch == "\\":
                pass
            else:
                marker = self._region_marker(buf, j, final)
                if marker is None:
                    return None if j == pos else j
                if marker:
                    return self._stop_at_marker(buf, j, marker)
            i = j + 1
        return None if i == pos else i

    def _done(self, buf: str, pos: int, final: bool) -> int | None:
        return pos


_STEPS: tuple[Callable[[CallListReader, str, int, bool], int | None], ...] = (
    CallListReader._list, CallListReader._call_name, CallListReader._call_open, CallListReader._arg,
    CallListReader._key_step, CallListReader._equals, CallListReader._value, CallListReader._raw,
    CallListReader._string, CallListReader._word, CallListReader._after, CallListReader._dict_key,
    CallListReader._colon, CallListReader._after_call, CallListReader._skip, CallListReader._garbage_step,
    CallListReader._done,
)
"""The step of each reader state, in state order."""


# ---------------------------------------------------------------- scalars

_NOT_A_NUMBER = object()
_INFINITE = object()


def _number(word: str) -> Any:
    """A Python number literal to an int or float; :data:`_NOT_A_NUMBER` / :data:`_INFINITE` when it is none /
    no JSON number."""
    if len(word) > MAX_NUMBER_CHARS or _NUMBER.fullmatch(word) is None:
        return _NOT_A_NUMBER
    body = word.lstrip("+-")
    if body[:2].lower() in ("0x", "0o", "0b") or not any(c in body for c in ".eE"):
        try:
            return int(word, 0)  # rejects 007, as Python does
        except ValueError:
            return _NOT_A_NUMBER
    value = float(word)
    if not math.isfinite(value):
        return _INFINITE
    return value


def _escape(buf: str, j: int, mode: str, final: bool) -> tuple[str | None, int | None]:
    """The escape sequence at ``buf[j]`` (a backslash): ``(decoded text, end)``; ``(None, end)`` when it is
    malformed; ``(None, None)`` when the buffer ends inside it (wait)."""
    n = len(buf)
    if j + 1 >= n:
        return (None, n) if final else (None, None)
    ch = buf[j + 1]
    if ch in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[ch], j + 2
    if ch == "/" and mode == JSON:
        return "/", j + 2
    if ch in "xuU":
        width = {"x": 2, "u": 4, "U": 8}[ch]
        digits = buf[j + 2:j + 2 + width]
        if len(digits) < width and not final and all(c in _HEX for c in digits):
            return None, None
        if len(digits) < width or not all(c in _HEX for c in digits):
            return None, j + 2 + len(digits)
        code = int(digits, 16)
        end = j + 2 + width
        if code > 0x10FFFF:
            return None, end
        if ch == "u" and 0xD800 <= code < 0xDC00:  # a high surrogate: joined with a following low one
            nxt = buf[end:end + 6]
            if len(nxt) < 6 and not final and "\\u".startswith(nxt[:2]) and all(c in _HEX for c in nxt[2:]):
                return None, None
            if nxt[:2] == "\\u" and all(c in _HEX for c in nxt[2:]) and len(nxt) == 6:
                low = int(nxt[2:], 16)
                if 0xDC00 <= low < 0xE000:
                    return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)), end + 6
        return chr(code), end
    if ch in _OCT and mode == PY:
        k = j + 1
        while k < n and k < j + 4 and buf[k] in _OCT:
            k += 1
        if k == n and k < j + 4 and not final:
            return None, None
        return chr(int(buf[j + 1:k], 8)), k
    if ch == "N" and mode == PY:
        close = buf.find("}", j + 2, j + MAX_ESCAPE_CHARS)
        if buf[j + 2:j + 3] != "{" and (j + 2 < n or final):
            return None, j + 2
        if close < 0:
            if n - j < MAX_ESCAPE_CHARS and not final:
                return None, None
            return None, min(n, j + MAX_ESCAPE_CHARS)
        try:
            return unicodedata.lookup(buf[j + 3:close]), close + 1
        except KeyError:
            return None, close + 1
    if ch == "\r":  # a line continuation written with CR (LF)
        end = j + 2
        if end == n and not final:
            return None, None
        return "", end + (1 if buf[end:end + 1] == "\n" else 0)
    if mode == JSON and ch != "'":
        return None, j + 2
    return "\\" + ch, j + 2  # Python keeps an unknown escape as it is


# ---------------------------------------------------------------- one-shot reading (typed text, renderers)

class LiteralError(ValueError):
    """The text is not one literal value (see :func:`read_literal`)."""


class LiteralTooDeep(LiteralError):
    """The literal nests deeper than :func:`read_literal`'s ``max_depth``."""


def read_literal(text: str, *, mode: str = PY, max_depth: int = 64) -> Any:
    """One complete literal value (Python spelling, JSON's accepted), read by the same rules as call arguments
    (escaped strings, numbers, literals, containers); raises :class:`LiteralError` otherwise. Nothing is
    evaluated. ``max_depth`` bounds the nesting."""
    reader = _OneShot(text, mode, max_depth)
    value = reader.value(0)
    reader.blanks()
    if reader.i != len(text):
        raise LiteralError(f"text after the value at {reader.i}")
    return value


class _OneShot:
    """An iterative reader of one complete literal (no recursion: a million brackets cost one pass)."""

    def __init__(self, text: str, mode: str, max_depth: int):
        self.text, self.i, self.mode, self.max_depth = text, 0, mode, max_depth

    def blanks(self) -> None:
        t, i = self.text, self.i
        while i < len(t) and t[i] in BLANKS:
            i += 1
        self.i = i

    def scalar(self) -> tuple[bool, Any]:
        """A string, number or literal at ``i``; (False, None) when a container starts there."""
        t = self.text
        self.blanks()
        if self.i >= len(t):
            raise LiteralError("a value is missing")
        ch = t[self.i]
        if ch in "[({":
            return False, None
        if ch in "'\"":
            return True, self.string(ch)
        j = self.i
        while j < len(t) and (t[j].isalnum() or t[j] in "_.") or (
                j < len(t) and t[j] in "+-" and (j == self.i or t[j - 1] in "eE")):
            j += 1
        word = t[self.i:j]
        self.i = j
        if word in _WORDS:
            return True, _WORDS[word][0]
        number = _number(word)
        if number is _NOT_A_NUMBER or number is _INFINITE:
            raise LiteralError(f"{word!r} is not a literal")
        return True, number

    def string(self, quote: str) -> str:
        t = self.text
        i = self.i + 1
        mode = self.mode if quote == '"' else PY
        out: list[str] = []
        while True:
            q = t.find(quote, i)
            b = t.find("\\", i, q if q >= 0 else len(t))
            if q < 0:
                raise LiteralError("a string is not closed")
            if b < 0:
                out.append(t[i:q])
                self.i = q + 1
                return "".join(out)
            out.append(t[i:b])
            decoded, end = _escape(t, b, mode, True)
            if decoded is None:
                raise LiteralError("a bad escape")
            out.append(decoded)
            i = end

    def value(self, depth: int) -> Any:
        ok, value = self.scalar()
        if ok:
            return value
        t = self.text
        # containers, iteratively: a stack of (container, kind, key)
        stack: list[list] = []
        while True:
            self.blanks()
            ch = t[self.i] if self.i < len(t) else ""
            if ch in ("[", "(", "{"):
                if len(stack) + depth + 1 > self.max_depth:
                    raise LiteralTooDeep(f"deeper than {self.max_depth} levels")
                self.i += 1
                stack.append([{} if ch == "{" else [], ch, None, False])
                if ch == "{":
                    self.blanks()
                    if t.startswith("}", self.i):
                        self.i += 1
                        value = stack.pop()[0]
                    else:
                        stack[-1][2] = self.key()
                        continue
                else:
                    self.blanks()
                    if t.startswith(_CLOSERS[ch], self.i):
                        self.i += 1
                        value = stack.pop()[0]
                    else:
                        continue
            else:
                ok, value = self.scalar()
                if not ok:
                    continue
            # ``value`` is complete: attach it, then read separators and closers
            while True:
                if not stack:
                    return value
                top = stack[-1]
                if top[1] == "{":
                    top[0][top[2]] = value
                else:
                    top[0].append(value)
                self.blanks()
                ch = t[self.i] if self.i < len(t) else ""
                closer = _CLOSERS[top[1]]
                if ch == ",":
                    self.i += 1
                    top[3] = True
                    self.blanks()
                    if t.startswith(closer, self.i):
                        self.i += 1
                        value = stack.pop()[0]
                        continue
                    if top[1] == "{":
                        top[2] = self.key()
                    break
                if ch == closer:
                    self.i += 1
                    done = stack.pop()
                    value = done[0]
                    if done[1] == "(" and len(value) == 1 and not done[3]:
                        value = value[0]
                    continue
                raise LiteralError(f"unexpected {ch!r}")

    def key(self) -> str:
        self.blanks()
        t = self.text
        ch = t[self.i] if self.i < len(t) else ""
        if ch not in "'\"":
            raise LiteralError("a dict key must be a string")
        key = self.string(ch)
        self.blanks()
        if not t.startswith(":", self.i):
            raise LiteralError("expected ':'")
        self.i += 1
        return key


def type_text(text: str, schema: dict | None, root: dict | None = None, *, max_depth: int = 64,
              max_bytes: int | None = None) -> tuple[Any, list[tuple[str, str]]]:
    """An argument's text typed by its schema, as :func:`~toolwire.parsers.engine.schema_coerce.coerce` does, except that
    a list or dict is read by :func:`read_literal` (Python's spelling, as ``"%s"`` writes it; JSON's too),
    never by ``ast``: ``"['a', 'b']"`` is ``["a", "b"]`` where the schema says array."""
    if is_string_schema(schema, root):
        return text, []
    stripped = text.strip(BLANKS)
    if stripped[:1] not in ("[", "{", "("):
        return coerce(text, schema, root, max_depth=max_depth, max_bytes=max_bytes)
    types, _ = _allowed(schema, root, None)
    if max_bytes is not None and len(stripped) > max_bytes:
        return text, [("too_large", f"the value takes more than {max_bytes} bytes (Limits.max_argument_bytes); "
                                    "kept as text")]
    try:
        value = read_literal(stripped, max_depth=max_depth - 1)
    except LiteralTooDeep:
        return text, [("too_large", f"the value makes the arguments nest deeper than {max_depth} levels "
                                    "(Limits.max_depth); kept as text")]
    except LiteralError:
        value = None
        kind = None
    else:
        kind = "object" if isinstance(value, dict) else "array" if isinstance(value, list) else None
    if kind is not None and kind in types:
        return value, []
    if "string" in types:
        return text, []
    expected = " or ".join(t for t in ("null", "boolean", "integer", "number", "object", "array") if t in types)
    preview = repr(text if len(text) <= 40 else text[:40] + "...")
    return text, [("value_type_mismatch", f"value {preview} is not a valid {expected}; the raw string is kept")]


__all__ = ["PythonicDialect", "CallListReader", "read_literal", "LiteralError", "LiteralTooDeep",
           "type_text", "is_name", "is_name_start", "is_name_char",
           "raw_string_closes_early", "MAX_NAME_CHARS", "MAX_NUMBER_CHARS", "MAX_LOOKAHEAD", "PY", "JSON"]
