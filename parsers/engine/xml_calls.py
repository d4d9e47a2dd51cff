"""The machinery every XML-bodied call parser runs on: Qwen3-Coder / Qwen3.5 / Qwen3.6 and Seed-OSS
(:mod:`~toolwire.parsers.qwen_xml`), GLM (:mod:`~toolwire.parsers.glm`), MiniMax-M2 (:mod:`~toolwire.parsers.minimax`).

These formats write a call's arguments as tagged text values (``<parameter=k>v</parameter>``,
``<arg_value>v</arg_value>``, ``<parameter name="k">v</parameter>``) that the tool's JSON schema types
(:mod:`toolwire.parsers.engine.schema_coerce`). Per-family rules are in ``docs/xml-values.md``.

**Closing rule.** A value ends at a *closer* (its closing tag, or a tag that ends the enclosing element when
the value was left unclosed) only when the closer is followed, after optional whitespace, by one of that
closer's *followers* (the next structural marker) or by the end of the output. Any other occurrence of a
closer is part of the value. :func:`early_close` applies the same rule to a value before it is rendered, so
the renderers refuse exactly the values the parsers would cut short.

**Streaming.** A string-typed value streams out as JSON string fragments as it arrives. Held back: a possible
closer prefix (plus one framing ``\\n`` before it, in formats that frame values with newlines), and a
candidate closer plus the whitespace after it until the next characters confirm or reject it (rejected, it is
value text). The whitespace is moved out of the buffer while undecided, so the buffer never holds more than
a marker's length and a delta costs time proportional to its own size. Other values are collected and typed
when they close.

**Text.** Content and reasoning stream as they arrive; only newlines that may be framing before the next
marker are held back. ``framing`` says how many newlines before a marker are framing, ``after_think`` how
many after the reasoning block, ``after_think_open`` how many after a reasoning opener.

**Start state and reasoning markers** (the same for every XML family). ``thinking=True`` means the prompt
opened the reasoning block: the output starts in reasoning, and a repeated ``think_open`` at its very start
(after whitespace) is dropped with ``duplicate_reasoning_open``. ``thinking=False`` starts in content; a
``think_open`` at the very start (after the family's framing) is the model opening reasoning itself. A
``think_close`` in content ends nothing: the text before it stays content, the closer is dropped with
``reasoning_close_in_content``. Inside reasoning, ``think_close`` always ends the reasoning, also inside a
call structure the reasoning opened: an unfinished call head goes back into the reasoning text, a call
already started is ``rejected`` with ``reasoning_closed_in_call``.

**Stop tokens.** A family's end-of-turn token (``stop_tokens``) at the very end of the output (trailing
whitespace allowed) is dropped with ``stop_token_in_output``; anywhere else it is text.

A family subclass sets the marker tables (class attributes below) and implements its structural states (call
heads, keys, the space between arguments); :class:`XmlCallParser` runs the loop, the text modes and values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .call_builder import CallBuilder
from .stream import StreamParser
from .tools import tool_schemas
from .lexer import LiteralCheck, MarkerScanner
from .schema_coerce import coerce_argument, is_string_schema, parameter_schema
from .drift import DRIFT_CODES, refused_diagnostic
from .xml_drift import (ARGUMENTS_OFF_SCHEMA, NAME_WHITESPACE, NO_TOOLS, PYTHON_CALL, STARTED_UNVERIFIED, declared,
                        off_schema, python_call, whitespace_name)
from .xml_drift_brackets import LOST_BRACKETS, TEXT, LostBracketReader, LostBracketWords

WHITESPACE = " \t\r\n"
"""Whitespace allowed between a closing tag and the structural marker that confirms it."""

MAX_HEAD_CHARS = 512
"""A call name or argument key longer than this (with no closing marker) is not treated as one (GLM, MiniMax)."""


@dataclass(frozen=True)
class Closer:
    """A tag that may end a value. ``followers`` confirm it (so does the end of the output); ``ends_call``
    means the value was left unclosed and the tag closes the enclosing element (a diagnosed repair)."""

    tag: str
    followers: tuple[str, ...]
    ends_call: bool = False


def confirm(text: str, at: int, followers: Sequence[str], final: bool,
            literal: LiteralCheck | None = None) -> tuple[bool | None, int]:
    """Does ``text[at:]`` start (after whitespace) with a follower, or end? ``(True|False|None, ws_end)``:
    None means undecided until more text arrives. ``literal`` as in :meth:`MarkerScanner.scan`."""
    n = len(text)
    k = at
    while k < n and text[k] in WHITESPACE:
        k += 1
    if k == n:
        return (True if final else None), k
    rest = text[k:k + max(map(len, followers), default=0)]
    for follower in followers:
        if rest.startswith(follower) and (literal is None or not literal(text, k, follower)):
            return True, k
    if not final and any(f.startswith(rest) for f in followers if len(rest) < len(f)):
        return None, k
    return False, k


def _early_close(value: str, closers: Mapping[str, Closer]) -> tuple[str, str] | None:
    """``(closer tag, the closing text: tag, whitespace, follower)`` of the first closer that would end ``value``
    early, or None. Inside a rendered prompt a value is always followed by its own closing tag, which is no
    follower, so only occurrences confirmed by text inside ``value`` itself matter."""
    for tag, closer in closers.items():
        start = value.find(tag)
        while start != -1:
            verdict, k = confirm(value, start + len(tag), closer.followers, final=False)
            if verdict:
                follower = next(f for f in closer.followers if value.startswith(f, k))
                return tag, value[start:k + len(follower)]
            start = value.find(tag, start + 1)
    return None


def early_close(value: str, closers: Mapping[str, Closer]) -> str | None:
    """The closer tag that would end ``value`` early when it is written inside its element, or None."""
    found = _early_close(value, closers)
    return found and found[0]


def closing_text(value: str, closers: Mapping[str, Closer]) -> str | None:
    """The text in ``value`` that would end it early (the closer, whitespace and the follower), or None."""
    found = _early_close(value, closers)
    return found and found[1]


def rstrip_newlines(text: str, limit: int) -> str:
    """``text`` without up to ``limit`` trailing ``\\n`` (the framing a template puts before a marker)."""
    n = 0
    while n < limit and len(text) > n and text[-1 - n] == "\n":
        n += 1
    return text[:len(text) - n] if n else text


def back_off_newlines(buf: str, start: int, end: int, limit: int) -> int:
    """Move ``end`` back over up to ``limit`` ``\\n`` (not before ``start``): they may turn out to be framing."""
    n = 0
    while n < limit and end - n > start and buf[end - 1 - n] == "\n":
        n += 1
    return end - n


Handler = Callable[["XmlCallParser", bool], bool]


class _ReasoningClosed(Exception):
    """Raised (and caught by the parse loop) once ``think_close`` ended the reasoning inside a call structure."""


class XmlCallParser(StreamParser):
    """Base of the XML-bodied call parsers (see the module docstring).

    Subclasses set:
      ``text_markers``   {mode: markers scanned in text of that mode ("content" / "reasoning")}
      ``framing``        {(mode, marker): n}: up to n ``\\n`` right before that marker are framing, not text
      ``after_think``    framing newlines dropped after ``think_close``
      ``think_open``     opens reasoning at the start of the output (state ``"start"``), ``think_close`` ends it
      ``value_closers``  {tag: Closer}; ``value_framing``: text dropped once after a value's opening tag and
                         once before its closing tag ("" for none)
      ``states``         {state: handler name}, for the structural states; a handler takes ``final`` and
                         returns whether to go on (False: more text is needed)
      ``stray_code``     the diagnostic for text between structural markers (and ``stray_message``)
      ``after_think_open`` framing newlines dropped after ``think_open``
      ``next_value_markers`` markers that may start the next argument inside an open value (:meth:`_next_value`)
      ``undecided_markers`` text markers whose framing newlines are kept in ``self._gap`` for the family to
                         give back when the marker turns out to be text
    and implement :meth:`_text_marker` (a marker found in text) and :meth:`_value_closed`, and, for the reasoning
    close inside a call and truncated headers, :meth:`_unfinished_head`.
    """

    text_markers: dict[str, tuple[str, ...]] = {}
    framing: dict[tuple[str, str], int] = {}
    after_think = 0
    think_open = "<think>"
    think_close = "</think>"
    value_closers: dict[str, Closer] = {}
    value_framing = ""
    states: dict[str, str] = {}
    stray_code = "stray_text"
    stray_message = "text between structural markers was ignored"
    after_think_open = 0
    stop_tokens: tuple[str, ...] = ()
    next_value_markers: tuple[str, ...] = ()
    undecided_markers: frozenset[str] = frozenset()
    opaque_tokens: tuple[str, ...] = ()
    """Control tokens of the family that a text marker can overlap (MiniMax ``]~!b[`` and ``[e~[``): read as units
    in text, as the tokenizer reads them first, so no marker starts inside one; they stay text."""
    lost_brackets: LostBracketWords | None = None
    """The family's tag words without their ``<`` (drift ``drift_lost_brackets``, issue 33): with declared tools, a
    line of content starting with one of ``lost_brackets.openers`` is held while it can still become such a call
    (:class:`~.xml_drift_brackets.LostBracketReader`); None: the family has no such recovery."""

    # built once per class from the tables above (:meth:`_compile`)
    _handlers: dict[str, Handler]
    _text_scanners: dict[str, MarkerScanner]
    _held_newlines: dict[str, int]
    _value_scanner: MarkerScanner
    _reasoning_value_scanner: MarkerScanner
    _reasoning_closers: dict[str, Closer]
    _reasoning_scanners: dict[MarkerScanner, MarkerScanner]
    _stop_closers: dict[str, Closer]
    _text_framing: dict[tuple[str, str], int]
    _lost_scanners: dict[str, MarkerScanner] | None
    _lost_start: dict[str, MarkerScanner] | None
    _lost: LostBracketReader | None = None  # the reader of a held call without brackets (set only while one is held)

    def __init_subclass__(cls, **kwargs: Any):
        super().__init_subclass__(**kwargs)
        cls._compile()

    @classmethod
    def _compile(cls) -> None:
        if cls.family is not None:  # the end-of-turn tokens are the declaration's
            cls.stop_tokens = cls.family.stop_tokens
        close = cls.think_close
        extra = {"content": (close,) if close else (), "reasoning": ()}
        cls._text_scanners = {mode: MarkerScanner((*m, *extra.get(mode, ()), *cls.stop_tokens, *cls.opaque_tokens))
                              for mode, m in cls.text_markers.items()}
        framing = cls._text_framing = dict(cls.framing)
        cls._held_newlines = {mode: max([n for (m, _), n in framing.items() if m == mode], default=0)
                              for mode in cls.text_markers}
        cls._value_scanner = MarkerScanner((*cls.value_closers, *cls.next_value_markers))
        cls._stop_closers = {token: Closer(token, ()) for token in cls.stop_tokens}
        cls._reasoning_scanners = {}
        if close:
            cls._reasoning_value_scanner = MarkerScanner((*cls.value_closers, *cls.next_value_markers, close))
            cls._reasoning_closers = {tag: Closer(tag, (*c.followers, close), c.ends_call)
                                      for tag, c in cls.value_closers.items()}
        else:
            cls._reasoning_value_scanner, cls._reasoning_closers = cls._value_scanner, cls.value_closers
        lost = cls.lost_brackets
        cls._lost_scanners = cls._lost_start = None
        if lost is not None and "content" in cls._text_scanners:
            # an opener counts after a newline (which may be framing, as before the call opener; given back if it
            # is not a call), or as the answer's very first characters (:meth:`_lost_answer_start`)
            held = cls._held_newlines.get("content", 0)
            anchored = tuple("\n" + opener for opener in lost.openers)
            for marker in anchored:  # its own newline and these are the framing an opener may take
                framing[("content", marker)] = max(held - 1, 0)
            cls.undecided_markers = cls.undecided_markers | frozenset(anchored)
            markers = cls._text_scanners["content"].markers
            cls._lost_scanners = {**cls._text_scanners, "content": MarkerScanner((*markers, *anchored))}
            cls._lost_start = dict(cls._lost_scanners)  # the same scanners; "the answer's start is still to come"
        cls._handlers = {"start": cls._start, "text": cls._text, "value_start": cls._value_start,
                         "value": cls._value, "closing": cls._closing, "stop": cls._stop,
                         "lost_brackets": cls._lost_brackets_state,
                         **{state: getattr(cls, name) for state, name in cls.states.items()}}

    @classmethod
    def _in_reasoning(cls, scanner: MarkerScanner) -> MarkerScanner:
        """``scanner`` plus ``think_close``: what a structural state scans for inside the reasoning."""
        found = cls._reasoning_scanners.get(scanner)
        if found is None:
            found = cls._reasoning_scanners[scanner] = MarkerScanner((*scanner.markers, cls.think_close))
        return found

    # Instance attributes: StreamParser's 15 plus these 14 (CPython's fast attribute path ends at 30).
    def __init__(self, tools: Sequence[Any] | None = None, **options: Any):
        super().__init__(tools, **options)
        self._schemas = tool_schemas(tools)
        self._state = "start"
        self._mode = "reasoning" if self.thinking else "content"
        self._skip = 0               # framing newlines still to drop at the start of the next text
        self._pos = 0
        self.call: CallBuilder | None = None
        self._parts: list[str] = []  # collected head/key/stray text, or a non-string value's text
        self._key = ""
        self._typed: dict | None = None   # the open value's schema when it is not streamed as a string
        self._pending: tuple[str, Closer] | None = None  # (framing newline, Closer) of a candidate closing tag
        self._gap: list[str] = []    # whitespace after a candidate closing tag (or between call blocks)
        self._carry = ""             # a newline held after a rejected closing tag: value text or framing
        # read at every delta: CPython 3.11 reads an instance attribute faster than a class attribute
        self._handlers = type(self)._handlers
        self._value_scanner = type(self)._value_scanner
        if self._lost_start is not None and self._names is not None:  # only with tools (drift_lost_brackets)
            self._text_scanners = self._lost_start

    # ---- hooks
    def _text_marker(self, marker: str) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _value_closed(self, closer: Closer, gap: str) -> None:  # pragma: no cover - abstract
        """A value was closed by ``closer`` (already typed and stored); ``gap`` is the whitespace after an
        ``ends_call`` closer (give it back with :meth:`_unread` when the next state should read it)."""
        raise NotImplementedError

    def _unclosed_value(self, closer: Closer) -> None:
        """The open value was ended by an ``ends_call`` closer (GLM, MiniMax): a diagnosed repair."""
        self._repair("implicit_parameter_close", f"argument {self._key!r} was not closed before {closer.tag!r}")

    def _end_structure(self) -> None:
        """End of output in a structural state outside any call: diagnose as the family needs."""

    # ---- the loop
    def _advance(self, final: bool) -> None:
        self._pos = 0
        handlers = self._handlers
        while True:
            try:
                while handlers[self._state](self, final):
                    pass
                break
            except _ReasoningClosed:
                continue
        if final:
            self._at_end()
        self._buf = self._buf[self._pos:]

    def _at_end(self) -> None:
        """End of output (GLM, MiniMax): a call still open is ``truncated``, its value so far kept."""
        if self._state == "text":
            if self._mode == "reasoning":
                self._diag("unclosed_reasoning", "the output ended inside the reasoning block", severity="info")
            return
        if self.call is None:
            head = self._unfinished_head(self._take())
            if head is not None:
                self._diag("truncated_call_header", "the output ended inside a call header, before the tool name "
                           "was complete", severity="error", raw=head)
                self._truncated = True
                self._state = "text"
                return
        if self.call is not None:
            if self._state == "value":
                self._close_value()
            elif self._state == "key" and self._parts:
                self.call.diag("truncated_key", "the output ended inside an argument name", raw=self._take())
            self._truncated = True
            self._finish_call("truncated")
        else:
            self._end_structure()
        self._state = "text"

    def _unread(self, text: str) -> None:
        """Put back ``text``, the characters just before ``self._pos``, to be read again by the next state."""
        if text:
            self._buf = text + self._buf[self._pos:]
            self._pos = 0

    # ---- text
    def _emit(self, text: str) -> None:
        if self._mode == "reasoning":
            self._emit_reasoning(text)
        else:
            self._emit_content(text)

    def _drop_framing(self, final: bool) -> bool:
        """Drop pending framing newlines; False when more text is needed to decide."""
        buf, pos, n = self._buf, self._pos, self._skip
        while n and pos < len(buf) and buf[pos] == "\n":
            pos += 1
            n -= 1
        self._pos = pos
        if n and pos == len(buf) and not final:
            self._skip = n
            return False
        self._skip = 0
        return True

    def _start(self, final: bool) -> bool:
        """The start of the output. In content: framing newlines, then ``think_open`` right there opens the
        reasoning block. In reasoning the prompt opened: a repeated ``think_open`` after optional whitespace
        (held in ``self._gap`` while undecided) is dropped with ``duplicate_reasoning_open``."""
        if self._skip and not self._drop_framing(final):
            return False
        marker = self.think_open
        if not marker:
            self._state = "text"
            return True
        buf, pos = self._buf, self._pos
        if self._mode == "reasoning":
            k = pos
            while k < len(buf) and buf[k] in WHITESPACE:
                k += 1
            self._gap.append(buf[pos:k])
            self._pos = k
            if k == len(buf) and not final:
                return False
            if self._marker_at(buf, k, marker):
                self._gap = []
                self._pos = k + len(marker)
                self._diag("duplicate_reasoning_open", f"the prompt already opened the reasoning; a repeated "
                           f"{marker} at its start was dropped", raw=marker)
                self._skip = self.after_think_open
            elif self._can_become(marker, final):
                return False
            else:
                gap = "".join(self._gap)
                self._gap = []
                self._unread(gap)
        elif self._marker_at(buf, pos, marker):
            self._pos += len(marker)
            self._mode = "reasoning"
            self._skip = self.after_think_open
        elif self._can_become(marker, final):
            return False
        self._state = "text"
        return True

    def _text(self, final: bool) -> bool:
        if self._skip and not self._drop_framing(final):
            return False
        buf, pos, mode = self._buf, self._pos, self._mode
        scanners = self._text_scanners
        if scanners is self._lost_start and mode == "content":  # the answer's first characters (drift)
            started = self._lost_answer_start(final)
            if started is None:
                return False
            if started:
                return True
            scanners = self._text_scanners = self._lost_scanners
        hit = scanners[mode].scan(buf, pos, final=final, literal=self._tokens)
        if hit.marker is None:
            end = hit.start if final else back_off_newlines(buf, pos, hit.start, self._held_newlines[mode])
            self._emit(buf[pos:end])
            self._pos = end
            return False
        marker = hit.marker
        if marker in self.opaque_tokens:  # text, read as one unit
            self._emit(buf[pos:hit.end])
            self._pos = hit.end
            return True
        text = buf[pos:hit.start]
        kept = rstrip_newlines(text, self._text_framing.get((mode, marker), 0))
        self._emit(kept)
        if marker in self.undecided_markers:  # its framing is given back if it turns out to be text
            self._gap = [text[len(kept):]]
        self._pos = hit.end
        if marker == self.think_close:
            if mode == "reasoning":
                self._mode = "content"
                self._skip = self.after_think
            else:  # the text around it stays content as written; only the closer is taken out
                self._diag("reasoning_close_in_content", f"{marker} came with no reasoning block open; the text "
                           "before it stays content", raw=marker)
        elif marker in self._stop_closers:
            self._pending = ("", self._stop_closers[marker])
            self._state = "stop"
        else:
            self._text_marker(marker)
        return True

    def _stop(self, final: bool) -> bool:
        """A stop token was read in text: dropped when only whitespace follows it to the end of the output."""
        buf, pos = self._buf, self._pos
        token = self._pending[1].tag
        verdict, k = confirm(buf, pos, (), final)
        self._gap.append(buf[pos:k])
        self._pos = k
        if verdict is None:
            return False
        gap = "".join(self._gap)
        self._gap = []
        if verdict:
            self._diag("stop_token_in_output", f"the end-of-turn token {token} was left at the end of the output; "
                       "dropped", raw=token)
        else:
            self._emit(token)
            self._unread(gap)
        self._state = "text"
        return True

    def _stop_at(self, pos: int, final: bool) -> bool | None:
        """Whether a stop token starts at ``buf[pos]`` (None: it may, once more text arrives)."""
        buf = self._buf
        for token in self.stop_tokens:
            if buf.startswith(token, pos):
                return True
            rest = buf[pos:pos + len(token)]
            if not final and len(rest) < len(token) and token.startswith(rest):
                return None
        return False

    def _can_become(self, marker: str, final: bool) -> bool:
        """The unconsumed rest of the buffer is a proper prefix of ``marker`` (more input may complete it)."""
        rest = self._buf[self._pos:self._pos + len(marker)]
        return not final and len(rest) < len(marker) and marker.startswith(rest)

    # ---- structural text
    def _collect(self, scanner: MarkerScanner, final: bool, room: int | None = None) -> str | None:
        """Collect text up to the next of ``scanner``'s markers into ``self._parts``; the marker found
        (consumed), or None when more text is needed. ``room`` (a head's bound, :meth:`_head_room`): a marker
        more than that many characters on is not read (the text up to it is collected, and the caller finds the
        head too long), so the bound, not the marker, decides at every chunking."""
        buf, pos = self._buf, self._pos
        if self._mode == "reasoning" and self.think_close:
            scanner = self._in_reasoning(scanner)
        hit = scanner.scan(buf, pos, final=final, literal=self._tokens)
        self._parts.append(buf[pos:hit.start])
        if room is not None and hit.start - pos > room:
            self._pos = hit.start
            return None
        self._pos = hit.end
        if hit.marker == self.think_close and self._mode == "reasoning":
            self._close_reasoning_in_call(self._take())
        return hit.marker

    # ---- think_close inside a call structure opened in the reasoning
    def _unfinished_head(self, text: str) -> str | None:
        """The text of a call block whose head (up to a complete name) is unfinished, to give back to the
        reasoning when ``think_close`` cuts it (``text``: what was collected since); None when the block
        already holds a finished call. Families override it."""
        return None

    def _close_reasoning_in_call(self, text: str) -> None:
        """``think_close`` was read inside a call structure opened in the reasoning (``text``: the structure's
        text collected just before it). The reasoning ends all the same: an unfinished head is reasoning text;
        an open call keeps what it has and is ``rejected`` (even with ``promote_reasoning_calls``)."""
        text = rstrip_newlines(text, self._text_framing.get(("reasoning", self.think_close), 0))
        call = self.call
        if call is not None:
            if self._state in ("value", "value_start", "closing", "next_param"):
                self._close_value()
            self._raw(text)
            call.diag("reasoning_closed_in_call", f"{self.think_close} came inside the call, before it was closed; "
                      "the reasoning ends there and the call is rejected", severity="error", raw=text or None)
            call.status = "rejected"
            self._finish_call()
        else:
            head = self._unfinished_head(text)
            if head is not None:
                self._emit_reasoning(head)
            else:
                self._diag("reasoning_closed_in_call", f"{self.think_close} came inside an unclosed call block; "
                           "the reasoning ends there", severity="info", raw=text or None)
        self._mode = "content"
        self._state = "text"
        self._parts = []
        self._gap = []
        self._skip = self.after_think
        raise _ReasoningClosed

    def _between(self, scanner: MarkerScanner, final: bool) -> str | None:
        """Skip the text between structural markers (kept in the call's raw text; non-whitespace is
        diagnosed) up to the next of ``scanner``'s markers, which is returned (None: need more text)."""
        marker = self._collect(scanner, final)
        if marker is None and not final:
            return None
        text = self._take()
        self._raw(text)
        self._stray(text)
        return marker

    def _read_key(self, scanner: MarkerScanner, final: bool) -> str | None:
        """Read an argument name up to the next of ``scanner``'s markers into ``self._key`` (and the call's raw
        text); the marker (consumed, not yet raw), or None when more text is needed."""
        marker = self._collect(scanner, final)
        if marker is not None:
            self._key = self._take()
            self._raw(self._key)
        return marker

    def _take(self) -> str:
        text = "".join(self._parts)
        self._parts = []
        return text

    def _stray(self, text: str, code: str | None = None) -> None:
        """Text between structural markers: whitespace is framing; anything else is kept in a diagnostic
        (on the open call, which it marks ``repaired``, or on the output)."""
        if text.strip(WHITESPACE):
            code = code or self.stray_code
            if self.call is not None:
                self._repair(code, self.stray_message, raw=text)
            else:
                self._diag(code, self.stray_message, raw=text)

    def _raw(self, text: str) -> None:
        if self.call is not None:
            self.call.raw(text)

    def _head_too_long(self) -> bool:
        return sum(map(len, self._parts)) > MAX_HEAD_CHARS

    def _head_room(self, skip: int = 0) -> int:
        """How many more characters a head collected in ``self._parts`` (less its first ``skip`` parts) may take."""
        return MAX_HEAD_CHARS - sum(map(len, self._parts[skip:]))

    def _take_overlong_head(self, marker: str | None) -> str:
        """The first ``MAX_HEAD_CHARS + 1`` collected characters; the rest (and ``marker``) is read again.
        Cutting at a fixed length keeps the result independent of how the output was chunked."""
        text = self._take()
        self._pos -= len(text) - (MAX_HEAD_CHARS + 1) + len(marker or "")
        return text[:MAX_HEAD_CHARS + 1]

    # ---- calls
    def _open_call(self, name: str) -> CallBuilder:
        """Start a candidate (ToolCallStarted) from the text mode the call was written in. A trailing newline
        in the name is removed as a diagnosed repair; other whitespace around it only when the name without it
        is a declared tool (``drift_name_whitespace``); otherwise the name is matched exactly."""
        exact = name
        name = name.rstrip("\n")
        resolved, why = whitespace_name(self.tools, name)
        self.call = self._begin_call(resolved or name, source=self._mode)
        if name != exact:
            self._repair("tool_name_newline", "a newline after the tool name was removed", raw=exact[len(name):])
        self._name_drift(name, resolved, why)
        if not name:
            self.call.status = "rejected"
            self.call.diag("empty_tool_name", "the call has no tool name", severity="error")
        return self.call

    def _name_drift(self, written: str, resolved: str | None, why: str | None) -> None:
        """Report a name written with whitespace around it: recovered (``resolved``) or refused (``why``)."""
        if resolved is not None:
            self._drift(NAME_WHITESPACE, f"whitespace around the tool name {resolved!r} was removed", raw=written)
        elif why is not None:
            self._refuse(NAME_WHITESPACE, why, raw=written)

    def _drift(self, code: str, message: str, raw: str | None) -> None:
        """A drift recovery taken on the open call (issue 33): ``repaired``, the diagnostic names its class."""
        self._repair(code, f"{DRIFT_CODES[code].value}: {message}", raw=raw)

    def _refuse(self, code: str, why: str, raw: str | None) -> None:
        """A drift recovery not taken: the text stays where it was; the code at severity ``info`` says why (on
        the open call, or on the output). Without declared tools nothing is said: no recovery could fire, and text
        that merely looks like a drifted call is ordinary text there (docs/variants.md)."""
        if why == NO_TOOLS:
            return
        diag = refused_diagnostic(code, why, raw)
        if self.call is not None:
            self.call.diag(diag.code, diag.message, severity="info", raw=raw)
        else:
            self._diagnostics.append(diag)

    # ---- tag words whose angle brackets were lost (drift_lost_brackets)
    def _lost_opener(self, marker: str) -> None:
        """One of ``lost_brackets.openers`` was read in content text, after a newline (``marker`` starts with it)
        or as the answer's very first characters: from text input it may start a call without brackets (state
        ``lost_brackets`` reads it again, whole); otherwise it is text, its framing given back. A newline before
        it beyond the family's framing stays content."""
        gap = "".join(self._gap)
        opener = marker
        if marker.startswith("\n"):
            opener = marker[1:]
            gap += "\n"
            keep = len(gap) - min(len(gap), self._held_newlines.get("content", 0))
            self._emit(gap[:keep])
            gap = gap[keep:]
        if self._mode != "content" or self._reading_ids():
            self._gap = []
            self._emit(gap + opener)
            self._state = "text"
            return
        self._gap = [gap]
        self._pos -= len(opener)
        self._lost = LostBracketReader(self.lost_brackets, declared(self.tools), max_depth=self.limits.max_depth,
                                       max_bytes=self.limits.max_argument_bytes)
        self._state = "lost_brackets"

    def _lost_answer_start(self, final: bool) -> bool | None:
        """The answer's first characters, with tools declared: an opening word right there is read as
        :meth:`_lost_opener` reads one after a newline (True); None while they may still become one; False when
        they do not (from then on only a newline before an opening word makes it one)."""
        buf, pos = self._buf, self._pos
        if pos == len(buf):
            return None if not final else False
        for opener in self.lost_brackets.openers:
            if buf.startswith(opener, pos):
                self._gap = []
                self._pos = pos + len(opener)
                self._lost_opener(opener)
                return True
            rest = buf[pos:pos + len(opener)]
            if not final and len(rest) < len(opener) and opener.startswith(rest):
                return None
        return False

    def _lost_brackets_state(self, final: bool) -> bool:
        """Hold the text from the opener while it can still become a call without brackets (in the reader, out of
        the buffer); then either release the opener as content (the text after it is read again as text) or start,
        fill and finish the call at once."""
        reader = self._lost
        buf, pos = self._buf, self._pos
        piece = buf[pos:pos + reader.room()]
        self._pos = pos + len(piece)
        reading = reader.read(piece, final and self._pos == len(buf))
        if reading.kind == "more":
            if self._pos < len(buf):  # the bound was met with the output going on: not a call
                reading = TEXT
            else:
                return False
        held = reader.text
        self._lost = None
        gap = "".join(self._gap)
        self._gap = []
        if reading.kind == "text":
            opener = next(o for o in self.lost_brackets.openers if held.startswith(o))
            if reading.why is not None:
                self._refuse(LOST_BRACKETS, reading.why, raw=reading.raw)
            self._emit_content(gap + opener)
            self._unread(held[len(opener):])
            self._state = "text"
            return True
        raw = held[:reading.end]
        self.call = self._begin_call(reading.name, source="content")
        self._raw(raw)
        for key, value in reading.arguments.items():
            self.call.value(key, value)
        self._drift(LOST_BRACKETS, f"the call's tag words came without their angle brackets; read as a call of "
                    f"{reading.name!r}", raw=raw)
        self._finish_call()
        self._unread(held[reading.end:])
        self._after_lost_brackets()
        return True

    def _after_lost_brackets(self) -> None:
        """Where a call read without brackets leads (families: the state after a call block)."""
        self._state = "text"

    def _python_call(self, text: str) -> bool:
        """``text``, a whole call block's body (held to its closer), as a Python call ``NAME(k=v, ...)`` in the
        family's wrapper (``drift_python_call``): when it reads as a call of a declared tool whose arguments fit,
        the call starts, gets its arguments and ends here, at once; True. False otherwise (the caller keeps the
        text where it went before; a refused reading says why at ``info``)."""
        found, why = python_call(self.tools, text, max_depth=self.limits.max_depth,
                                 max_bytes=self.limits.max_argument_bytes)
        return self._whole_call(PYTHON_CALL, found, why, text, found and f"a Python call {found[0]}(...) was "
                                "written in the call wrapper; read as the call")

    def _whole_call(self, code: str, found: tuple[str, dict] | None, why: str | None, text: str,
                    message: str | None) -> bool:
        """A drift reading of a whole held block (``found``: ``(name, arguments)``, or None with ``why`` when it is
        refused, or None and None when the shape is not there): the call starts, gets its arguments and ends at
        once, with the ``code`` diagnostic saying ``message``; True. False otherwise (a refusal
        says why at ``info``)."""
        if found is None:
            if why is not None:
                self._refuse(code, why, raw=text)
            return False
        name, arguments = found
        self.call = self._begin_call(name, source=self._mode)
        self._raw(text)
        for key, value in arguments.items():
            self.call.value(key, value)
        self._drift(code, message, raw=text)  # given whenever ``found`` is
        self._finish_call()
        return True

    def _finish_call(self, status: str | None = None) -> None:
        call = self.call
        if call is not None and status is None and call.status == "repaired" and not call.past_limit \
                and any(d.code in STARTED_UNVERIFIED and d.severity == "warning" for d in call.diagnostics) \
                and off_schema(self.tools, call.name, call.arguments):
            call.status = "rejected"  # a drift recovery is taken only when the arguments fit (issue 33)
            call.diag(ARGUMENTS_OFF_SCHEMA, f"the call was recovered from drift, but its arguments do not fit "
                      f"{call.name!r}; rejected", severity="error")
        if self.call is not None:
            self.call.finish(status)
            self.call = None

    def _repair(self, code: str, message: str, raw: str | None = None) -> None:
        """Record a diagnosed repair on the open call (a rejected call stays rejected)."""
        if self.call is not None:
            self.call.diag(code, message, raw=raw)
            if self.call.status == "proposed":
                self.call.status = "repaired"

    def _missing_value(self) -> None:
        self._repair("missing_value", f"argument {self._key!r} has no value; it was left out", raw=self._key)

    # ---- values
    def _start_value(self, key: str) -> None:
        """Begin the value of ``key``: streamed when the schema says string (or nothing), else collected."""
        root = self._schemas.get(self.call.name)
        schema = parameter_schema(root, key) if root else None
        self._key = key
        self._typed = None if is_string_schema(schema, root) else schema
        self._parts = []
        self._state = "value_start"
        self._value_scanner = self._reasoning_value_scanner if self._mode == "reasoning" else type(self)._value_scanner

    def _value_start(self, final: bool) -> bool:
        framing = self.value_framing
        if framing:
            if self._pos == len(self._buf) and not final:
                return False
            if self._buf.startswith(framing, self._pos):
                self._raw(framing)
                self._pos += len(framing)
        if self._typed is None:
            self.call.begin_string(self._key)
        self._carry = ""
        self._state = "value"
        return True

    def _value_piece(self, text: str) -> None:
        if text:
            self.call.raw_parts.append(text)  # call.raw(text), without its frame: this runs once per delta
            if self._typed is None:
                self.call.string_piece(text)
            else:
                self._parts.append(text)

    def _close_value(self) -> None:
        call = self.call
        if self._typed is None:
            call.end_string()
            return
        coerce_argument(call, self._key, self._take(), self._typed, self._schemas.get(call.name))

    def _value(self, final: bool) -> bool:
        """Value text up to a candidate closer (then state ``closing``), holding back a possible closer
        prefix and, with ``value_framing``, the newline before it."""
        buf, pos = self._buf, self._pos
        framing = self.value_framing
        scanner = self._value_scanner
        if final or scanner.find(buf, pos) is not None:
            end, marker = scanner.scan(buf, pos, final=final, literal=self._tokens)
        else:  # the usual delta: value text, no closer or prefix of one
            end, marker = len(buf), None
        carry = self._carry  # only ever set with value framing
        if marker is None:
            if framing:
                if not final:
                    if end > pos and buf[end - 1] == "\n":  # back_off_newlines(buf, pos, end, 1), inlined
                        end -= 1
                    if end == pos:
                        return False  # a held newline stays held
                if carry:
                    self._carry = ""
                    self._value_piece(carry)
            self._value_piece(buf[pos:end])
            self._pos = end
            return False
        hit_end = end + len(marker)
        newline = ""
        if carry:
            self._carry = ""
        if framing:
            if end > pos and buf.startswith(framing, end - len(framing)):
                end -= len(framing)
                newline = framing
            elif end == pos and carry:
                newline, carry = carry, ""  # the held newline was the framing of this tag
        if carry:
            self._value_piece(carry)
        self._value_piece(buf[pos:end])
        self._pos = hit_end
        if marker in self.next_value_markers:
            self._next_value(marker, newline)
            return True
        if self._mode == "reasoning":
            if marker == self.think_close:
                self._close_reasoning_in_call("")
            self._pending = (newline, self._reasoning_closers[marker])
        else:
            self._pending = (newline, self.value_closers[marker])
        self._state = "closing"
        return True

    def _next_value(self, marker: str, newline: str) -> None:  # pragma: no cover - families with next_value_markers
        """One of ``next_value_markers`` was read inside a value (``newline``: the framing before it)."""
        raise NotImplementedError

    def _closing(self, final: bool) -> bool:
        """A candidate closer was read: decide from what follows it whether it closes the value. The
        whitespace after it moves to ``self._gap`` while undecided."""
        buf, pos = self._buf, self._pos
        newline, closer = self._pending
        verdict, k = confirm(buf, pos, closer.followers, final, self._tokens)
        self._gap.append(buf[pos:k])
        self._pos = k
        if verdict is None:
            return False
        gap = "".join(self._gap)
        self._gap = []
        if not verdict:  # value text after all...
            text = newline + closer.tag + gap
            framing = self.value_framing
            if framing and text.endswith(framing):  # ...but its last newline may frame the next closer
                text, self._carry = text[:-len(framing)], framing
            self._value_piece(text)
            self._state = "value"
            return True
        self._close_value()
        self._state = "text"
        if closer.ends_call:
            self._raw(newline)
        else:
            self._raw(newline + closer.tag + gap)
            gap = ""
        self._value_closed(closer, gap)
        return True


__all__ = ["MAX_HEAD_CHARS", "WHITESPACE", "Closer", "XmlCallParser", "back_off_newlines", "closing_text", "confirm",
           "early_close", "rstrip_newlines"]
