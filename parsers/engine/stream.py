"""The stream-parser base every family builds on: feeding text or token ids, event bookkeeping, the result.

A family parser subclasses :class:`StreamParser` and implements :meth:`StreamParser._advance`, which
consumes ``self._buf`` as far as it safely can (using :class:`~toolwire.parsers.engine.lexer.MarkerScanner`)
and leaves only a held-back tail. ``parse(text)`` is exactly ``feed(text)`` then ``finish()``, so
one-shot and streamed results cannot differ.

Calls are built by :class:`~toolwire.parsers.engine.call_builder.CallBuilder`.

**Token ids.** A parser made with ``tokenizer=`` also takes ``feed(ids=[...])``: the ids are decoded
(:class:`toolwire.tokenize.TokenDecoder`) into the same text buffer, and the spans written by control-token
ids are recorded. A marker holding a control-token spelling (``<tool_call>``, ``｜DSML｜`` inside
``<｜DSML｜invoke name="``) then counts only where those ids wrote it; the same text from ordinary tokens is
text. Families see this through the ``literal`` check they pass to every scan (``self._tokens``: None without
a tokenizer, so text parsing costs nothing more) and :meth:`StreamParser._marker_at`.

**Token spans.** Fed ids, every event gets ``span``, the ``(start, end)`` indexes of the fed ids it came from,
and each finished candidate the span of its whole call (:mod:`~toolwire.parsers.engine.token_spans`). A feed of
several ids is then read a run at a time (a run ends after a control id that may end a marker), so its events
depend on the chunking, as text deltas' do; the spans tile the ids at every chunking. ``spans=False`` turns this
off (the ids are then read a chunk at a time, as text is).
"""

from __future__ import annotations

from enum import IntEnum
from operator import index as as_int
from typing import Any, ClassVar, Iterable, Sequence

from toolwire.errors import InvalidOption, StreamClosed
from toolwire.family import Family
from toolwire.limits import DEFAULT_LIMITS, Limits
from toolwire.tokenize.decode import TokenPiece
from toolwire.output import (ArgumentsDelta, ContentDelta, Diagnostic, Event, ParsedOutput, ReasoningDelta,
                             ToolCallCandidate, ToolCallFinished)

from .call_builder import CallBuilder, PastLimitCall
from .reasoning_calls import UnclosedReasoningCalls
from .token_spans import SpanTracker, set_span as _set_span
from .token_input import TokenInput
from .tools import tool_names


class Stage(IntEnum):
    """A stream's stage: reading text, reading token ids, flushed, finished."""

    TEXT = 0
    IDS = 1
    FLUSHED = 2
    FINISHED = 3


_TEXT, _IDS, _FLUSHED, _FINISHED = Stage

_TEXT_EVENTS = frozenset((ContentDelta, ReasoningDelta))

_FEED_CHUNK = 1 << 16
"""Longest piece of text one ``_advance`` step reads (see :meth:`StreamParser._feed_long`)."""


class StreamParser:
    """Base class of every family's stream parser. Subclasses implement :meth:`_advance`.

    Options every family accepts (a family ``__init__`` takes ``**options`` and passes them on):
    ``thinking``, ``promote_reasoning_calls`` (accept calls written inside the reasoning), ``limits``
    (:class:`~toolwire.limits.Limits`), ``tokenizer`` (for ``feed(ids=...)``: any tokenizer
    :mod:`toolwire.tokenize` accepts) and ``call_ids``: the id of a call whose format carries none, a prefix
    (``"call_"`` gives ``call_0``, ``call_1``...; the default) or a callable ``index -> str`` (for servers that
    need globally unique ids, e.g. ``lambda i: f"call_{uuid4().hex}"``). The model's own ids (Kimi's
    ``functions.NAME:IDX``, Mistral's 9-character ids) are kept. ``spans`` (default True): fed ids, each event
    carries the span of ids it came from (``event.span``) and each candidate its call's (``candidate.span``);
    False skips that bookkeeping.
    """

    family: ClassVar[Family | None] = None
    """The family this parser reads (its declaration, :class:`toolwire.Family`): set by each family's parser class;
    None on the shared engine classes."""
    render_options: ClassVar[frozenset[str]] = frozenset()
    """Render options of the family that this parser reads too (Llama 3.1's ``builtin_tools``: their calls count as
    declared): :meth:`toolwire.Format.stream` passes them on."""
    _past_limit: list[str] | None = None  # text of the calls past Limits.max_calls (set on the first one)
    _unclosed: UnclosedReasoningCalls | None = None  # calls in reasoning waiting for the end (reasoning_calls)

    # Few instance attributes here: CPython keeps attribute access fast only up to 30 per instance, and the
    # families add their own.
    def __init__(self, tools: Sequence[Any] | None = None, *, thinking: bool = False,
                 promote_reasoning_calls: bool = False, limits: Limits | None = None, tokenizer: Any = None,
                 call_ids: Any = "call_", spans: bool = True):
        if not (isinstance(call_ids, str) or callable(call_ids)):
            raise InvalidOption(f"call_ids must be a prefix string or a callable index -> id, not "
                                f"{type(call_ids).__name__}", field="call_ids")
        self._call_ids = call_ids
        self.tools = tools
        self.limits = limits or DEFAULT_LIMITS
        self.thinking = thinking
        self.promote_reasoning_calls = promote_reasoning_calls
        self._tokens = TokenInput(tokenizer, spans) if tokenizer is not None else None  # also the scans' ``literal``
        self._stage = _TEXT
        self._names = tool_names(tools)
        self._buf = ""
        self._events: list[Event] = []
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._candidates: list[ToolCallCandidate] = []
        self._diagnostics: list[Diagnostic] = []
        self._call_count = 0
        self._truncated = False
        if tools is not None and self.family is not None and self.family.reasoning and not promote_reasoning_calls:
            self._unclosed = UnclosedReasoningCalls.of(self)

    def _call_id(self, index: int) -> str:
        """The id of call ``index`` when the model wrote none (see ``call_ids``)."""
        factory = self._call_ids
        if isinstance(factory, str):
            return f"{factory}{index}"
        made = factory(index)
        if not isinstance(made, str) or not made:
            raise InvalidOption(f"call_ids({index}) returned {made!r}; it must return a non-empty string",
                                field="call_ids")
        return made

    # ---- public API
    def feed(self, delta: str = "", ids: Iterable[int] | None = None) -> list[Event]:
        """Consume the next piece of output, as text or (with ``tokenizer=``) as token ids, ``feed(ids=...)``;
        returns the events it completes. A stream takes one kind of input: text fed to an id stream, or ids
        fed while text is held back, raise ``ValueError``."""
        # ``ids`` is not keyword-only: a keyword-only default costs every text feed a dict lookup
        if ids is None and self._stage == _TEXT:
            if len(delta) > _FEED_CHUNK:
                self._feed_long(delta)
            elif delta:
                self._buf += delta
                self._advance(False)
            events, self._events = self._events, []  # self._drain(), without its frame
            return events
        return self._feed_ids(delta, ids)

    def _feed_long(self, delta: str) -> None:
        """A very long delta (a whole output given to ``parse``) is read in :data:`_FEED_CHUNK` pieces: the
        result is the same at every chunking, and the buffer each step slices stays short, so one-shot
        parsing stays linear however many calls the output holds."""
        for start in range(0, len(delta), _FEED_CHUNK):
            self._buf += delta[start:start + _FEED_CHUNK]
            self._advance(final=False)

    def flush(self) -> list[Event]:
        """End of output: release what was held back and close what is open; returns those events.
        Call :meth:`finish` afterwards for the result (``finish`` flushes by itself when needed)."""
        if self._stage == _FINISHED:
            raise StreamClosed("flush() after finish()")
        if self._stage != _FLUSHED:
            spans = None
            if self._stage == _IDS:
                pieces = self._tokens.decoder.flush()
                spans = self._tokens.spans
                if spans:
                    spans.took_last(pieces)
                    first, first_diagnostic = len(self._events), len(self._diagnostics)
                self._take_pieces(pieces, final=True)
            self._stage = _FLUSHED
            self._advance(final=True)
            if self._unclosed is not None:
                self._unclosed.settle(self)
            if self._past_limit is not None:
                self._diag("too_large", f"{self._call_count - self.limits.max_calls} tool call(s) past "
                           f"Limits.max_calls={self.limits.max_calls}: not built as candidates; their text is kept "
                           "here", severity="error", raw="".join(self._past_limit))
            if spans:
                self._tokens.trailing = spans.finish(self._events, first, self._diagnostics, first_diagnostic)
        return self._drain()

    def finish(self) -> ParsedOutput:
        """End of output: flush, then return the result. The flush's events are discarded; use
        :meth:`flush` first to stream them."""
        self.flush()
        self._stage = _FINISHED
        out = ParsedOutput(
            content="".join(self._content), reasoning="".join(self._reasoning),
            tool_calls=sorted(self._candidates, key=lambda c: c.index),
            diagnostics=self._diagnostics, truncated=self._truncated,
        )
        if self._tokens is not None and self._tokens.trailing is not None:
            out.trailing_span = self._tokens.trailing
        return out

    def _keep_past_limit(self, text: str) -> None:
        """A call past ``Limits.max_calls`` ended: keep its text (name, id, raw) for the ``too_large`` diagnostic."""
        if self._past_limit is None:
            self._past_limit = []
        self._past_limit.append(text)

    # ---- token ids
    def _feed_ids(self, delta: str, ids: Iterable[int] | None) -> list[Event]:
        """:meth:`feed` past the text fast path: ids, or a feed the stream's stage refuses. The usual feeds come
        first, with spans or without (one ordinary id whose text the vocabulary remembers, several, or one control
        id, while the decoder holds no byte back: :meth:`TokenDecoder.plain_text`, ``plain_texts``,
        ``control_text``); the others take the general path below."""
        tokens = self._tokens
        if self._stage == _IDS and not delta:  # the usual feeds first: ids whose text is known, nothing held back
            decoder = tokens.decoder
            text = decoder.plain_text(ids)
            if text is not None:  # one ordinary id
                tokens.fed += len(text)
                self._take_plain(text)
            elif (texts := decoder.plain_texts(ids)) is not None:  # several: their text is read at once
                text = "".join(texts)
                tokens.fed += len(text)
                self._take_plain(text)
                if tokens.spans:
                    tokens.spans.chunk(texts, self._events, 0, len(self._buf))
                return self._drain()
            elif (text := decoder.control_text(ids)) is not None:  # one control id: its marker
                self._take_pieces([TokenPiece(text, True)], final=False)
            if text is not None:  # one id was read (no id waits for text: the decoder holds nothing back)
                events = self._events  # (empty before this feed: every feed drains it)
                spans = tokens.spans
                if spans:  # the usual steps inline (SpanTracker.chunk does the others)
                    if not events:  # the id waits for an event
                        spans.parts.append(text)
                    elif len(events) == 1 and not spans.parts and not self._buf and (
                            type(event := events[0]) is ArgumentsDelta
                            or type(event) in _TEXT_EVENTS and text.endswith(event.text)):
                        base = spans.base  # one delta that this id alone wrote
                        spans.base = end = base + 1
                        _set_span(event, (base, end))
                    else:
                        spans.chunk([text], events, 0, len(self._buf))
                self._events = []
                return events
        if self._stage >= _FLUSHED:
            raise StreamClosed("feed() after flush() or finish()")
        if ids is None:  # text, while the stream is fed ids
            if delta:
                raise ValueError("this stream is being fed token ids; feed(ids=...) only")
            return self._drain()
        if delta:
            raise ValueError("pass text or ids, not both")
        if tokens is None:
            raise ValueError("feeding token ids needs stream(..., tokenizer=<the model's tokenizer>)")
        if self._stage == _TEXT:
            if self._buf:
                raise ValueError("this stream is being fed text; feed(text) only")
            tokens.start()
            self._stage = _IDS
            return self._feed_ids(delta, ids)  # now through the usual feeds' path
        decoder = tokens.decoder
        known = decoder.vocab.known
        if tokens.spans:
            self._feed_ids_spanned(ids, decoder, known, tokens.spans)
            return self._drain()
        run: list[int] = []
        for tid in ids:
            try:
                number = as_int(tid)
            except TypeError:
                number = -1
            if known(number):
                run.append(number)
                continue
            self._take_pieces(decoder.feed(run), final=False)
            run = []
            self._diag("invalid_token_id", f"token id {tid!r} is not in the vocabulary", raw=str(tid))
        self._take_pieces(decoder.feed(run), final=False)
        return self._drain()

    def _feed_ids_spanned(self, ids: Iterable[int], decoder: Any, known: Any, spans: SpanTracker) -> None:
        """:meth:`_feed_ids` with token spans. Several ids that can be read at once (:meth:`SpanTracker.chunk_texts`:
        nothing held back, each id's text known) are decoded and parsed at once, as without spans, and the
        step's events given the ids by where each id's text ends (:meth:`SpanTracker.chunk`); otherwise one id at
        a time, each step's events given the ids read (:meth:`SpanTracker.step`)."""
        if type(ids) is not list and type(ids) is not tuple:
            ids = list(ids)
        if len(ids) > 1:
            texts = spans.chunk_texts(ids, decoder)
            if texts is not None:
                if None not in texts:
                    self._read_run(ids, texts, decoder, spans)
                    return
                control, start, k = decoder.vocab.control_ids, 0, -1
                while None in texts:
                    k = texts.index(None, k + 1)  # a control id ends a run (the events its marker completes end
                    texts[k] = text = control[ids[k]]  # the step), unless it cannot end a marker of the family
                    if spans.ends_run(text, self.family):
                        self._read_run(ids[start:k + 1], texts[start:k + 1], decoder, spans)
                        start = k + 1
                if start < len(ids):
                    self._read_run(ids[start:], texts[start:], decoder, spans)
                return
        feed, events, step = decoder.feed, self._events, spans.step
        for tid in ids:
            try:
                number = as_int(tid)
            except TypeError:
                number = -1
            if not known(number):
                index = spans.base + len(spans.parts) + spans.waiting
                if spans.waiting:  # it writes no text: in the span of the event that follows it
                    spans.waiting += 1
                else:
                    spans.parts.append("")
                self._diagnostics.append(Diagnostic(code="invalid_token_id", severity="warning", raw=str(tid),
                                                    message=f"token id {tid!r} is not in the vocabulary",
                                                    span=(index, index + 1)))
                continue
            pieces = feed((number,))
            if not pieces:
                if decoder.holds_back():
                    spans.waiting += 1  # a byte of a character still incomplete: its text comes with a later id
                else:  # an id that writes no text (a control id, an empty token), and the ids waiting before it
                    spans.parts += [""] * (spans.waiting + 1)
                    spans.waiting = 0
                continue
            first = len(events)
            self._take_pieces(pieces, final=False)
            step(pieces, events, first, len(self._buf))

    def _read_run(self, ids: Sequence[int], texts: list, decoder: Any, spans: SpanTracker) -> None:
        """Ids whose texts are ``texts`` (:meth:`SpanTracker.chunk_texts`) decoded and parsed at once, the step's
        events given the ids (:meth:`SpanTracker.chunk`)."""
        events = self._events
        first = len(events)
        self._take_pieces(decoder.feed(ids), final=False)
        spans.chunk(texts, events, first, len(self._buf))

    def _take_pieces(self, pieces: list, final: bool) -> None:
        """Decoded :class:`~toolwire.tokenize.TokenPiece` items join the buffer (their control spans recorded),
        parsed right away unless ``final`` (then the flush parses them)."""
        if pieces:
            self._buf += self._tokens.text(pieces)
            if not final:
                self._advance(final=False)

    def _take_plain(self, text: str) -> None:
        """The text of ordinary ids (no control id, whole characters; :meth:`TokenDecoder.plain_text`) joins the
        buffer and is parsed: what :meth:`_take_pieces` does with that one text piece, without the pieces."""
        self._buf += text
        self._advance(False)

    def _reading_ids(self) -> bool:
        """Whether this stream is fed token ids."""
        return self._tokens is not None and self._tokens.decoder is not None

    def _marker_at(self, text: str, pos: int, marker: str) -> bool:
        """Whether ``marker`` starts at ``text[pos]`` (written with its control ids, when fed ids)."""
        return text.startswith(marker, pos) and (self._tokens is None or not self._tokens(text, pos, marker))

    # ---- for subclasses
    def _advance(self, final: bool) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _drain(self) -> list[Event]:
        events, self._events = self._events, []
        return events

    def _emit_content(self, text: str) -> None:
        if text:
            if self._unclosed is not None and self._unclosed.held:  # the reasoning closed
                self._unclosed.release(self)
            self._content.append(text)
            self._events.append(ContentDelta(text))

    def _emit_reasoning(self, text: str) -> None:
        if text:
            if self._unclosed is not None and self._unclosed.held and self._unclosed.reasoning(self, text):
                return  # blanks after a call in reasoning: held with it
            self._reasoning.append(text)
            self._events.append(ReasoningDelta(text))

    def _emit_reasoning_markup(self, text: str) -> None:
        """Reasoning text that is a call block's own markup (DSML keeps its block in the reasoning): it never
        counts as reasoning that goes on after a call (:mod:`~toolwire.parsers.engine.reasoning_calls`)."""
        if text:
            if self._unclosed is not None and self._unclosed.held:
                self._unclosed.markup(self)
            self._reasoning.append(text)
            self._events.append(ReasoningDelta(text))

    def _call_finished(self, event: ToolCallFinished) -> None:
        """A call's ToolCallFinished and its candidate; the event of a call in reasoning may wait for the end of
        the output (:mod:`~toolwire.parsers.engine.reasoning_calls`)."""
        if self._unclosed is not None and event.candidate.source == "reasoning":
            self._unclosed.hold(self, event)
            return
        self._events.append(event)
        self._candidates.append(event.candidate)

    def _reasoning_unclosed(self) -> bool:
        """At the end of the output: whether it ended inside the reasoning block. Read here from ``_mode ==
        "reasoning"``, the state most families keep; a family that keeps it otherwise says so."""
        return getattr(self, "_mode", None) == "reasoning"

    def _diag(self, code: str, message: str, *, severity: str = "warning", raw: str | None = None) -> None:
        self._diagnostics.append(Diagnostic(code=code, message=message, severity=severity, raw=raw))

    def _begin_call(self, name: str, *, source: str = "content", call_id: str | None = None) -> CallBuilder:
        """Open a candidate; checks the name against the declared tools. Past ``limits.max_calls`` the call is a
        :class:`PastLimitCall`: no events, no candidate; its text ends up in one ``too_large`` diagnostic."""
        if self._unclosed is not None and self._unclosed.held:
            if source == "reasoning":
                self._unclosed.markup(self)  # blanks between two calls in reasoning: sent, the calls stay held
            else:
                self._unclosed.release(self)  # a call in content: the reasoning closed
        if self._call_count >= self.limits.max_calls:
            call = PastLimitCall(self, self._call_count, name, source, call_id)
            self._call_count += 1
            call.raw_parts.append(name + (f" {call_id}" if call_id else "") + "\n")
            return call
        call = CallBuilder(self, self._call_count, name, source, call_id)
        self._call_count += 1
        if self._names is not None and name not in self._names:
            call.status = "rejected"
            call.diag("unknown_tool", f"tool {name!r} is not among the declared tools", severity="error")
        elif not name.strip() and not any(d.code == "empty_tool_name" for d in call.diagnostics):
            call.status = "rejected"  # a call without a tool name is never proposed, tools declared or not
            call.diag("empty_tool_name", "the call names no tool", severity="error")
        if source == "reasoning" and not self.promote_reasoning_calls:
            call.status = "rejected"
            call.diag("call_in_reasoning", "a tool call was written inside the reasoning block; it is reported, "
                      "not promoted (pass promote_reasoning_calls=True to accept it)")
        call.start()
        return call
