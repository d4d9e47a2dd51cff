"""Token spans: which of the fed token ids each stream event came from.

A stream fed token ids (``stream(..., tokenizer=tok)``, ``feed(ids=...)``) gives every event a ``span``: the
half-open ``(start, end)`` indexes, into the whole id sequence fed so far, of the ids it came from. The spans of a
stream's events tile the ids in order: each starts where the one before ended, so no id is in two spans and
none is left out, except the ids read after the last event (closing markers read after the last call was
finished, a stop token the parser dropped): they are the output's ``trailing_span``, and a diagnostic that names
their text (``stop_token_in_output``) carries the same span (``Diagnostic.span``). An id that is not in the
vocabulary is named by its ``invalid_token_id`` diagnostic's span and lies inside the span of the event after it
(it wrote no text). A finished call's candidate carries the whole call's
span, from its ``ToolCallStarted`` span's start to its ``ToolCallFinished`` span's end.

How ids are given out (:class:`SpanTracker`). An id belongs to the first event emitted once *all* of its text
has been read (its last character left the parser's buffer): text held back (a ``<`` that may open a marker, a
possible stop token) goes out with the ids that wrote it, in the event that releases it, and the ids of framing
no event carries (a marker read before the call it opens is started) go to the next event: a call's opening
marker is in its ``ToolCallStarted`` span, its closing marker in its ``ToolCallFinished`` span. When one step
(the ids the parser read before it emitted) completes several events, the text of content and reasoning events
is looked up in the decoded text (it is that text, verbatim) to find where each one ends, and a call's name to
find where it starts; the step's last event is looked up from the end of what was read, the others from where
the one before ended. The ids before a content or reasoning event (or a call's name; when none follows, all of
them) go to the last call event before it, the call events before that one getting an empty span ``(i, i)``.
An id whose text is split between two events (``" ["`` in pythonic output: content then a call) is in the later
one's span only.

Steps. A feed of one id is one step. A feed of several ids is read a run at a time (:meth:`SpanTracker.chunk`):
each run decoded and parsed at once, as without spans, a run ending after each control id whose marker may
complete events (one that ends a marker of the family, :meth:`SpanTracker.ends_run`), so that ids read after
a marker closed a call are not given to it. So the events of a multi-id feed, and their spans, depend on the
chunking (as the events of text deltas do): at every chunking the spans tile the ids, and each content or
reasoning event's text is its span's decode as above. Ids that cannot be read at once (a character split
between ids, an id outside the vocabulary, ids whose text is not yet known) are read one at a time.

Cost. The tracker keeps only the text of each id read and not yet in a span (positions are counted in that
text, the *window*). The usual one-id steps are done by the stream inline (``StreamParser._feed_ids``): no
event (the id's text is kept), and one delta that this id alone wrote with nothing held back (it gets
``(i, i + 1)``); :meth:`SpanTracker.settle` does the usual others without looking text up (one event taking
every id read; several argument deltas and call ends, the last taking them), :meth:`SpanTracker.assign` the
rest.

Only streams fed ids pay for this; text input never reaches this module.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate
from typing import Any

from toolwire.output import ArgumentsDelta, ContentDelta, ReasoningDelta, ToolCallFinished, ToolCallStarted, _Spanned

set_span = _Spanned._span.__set__
"""``set_span(event, (start, end))`` gives a stream event its span (the events are frozen: their own ``__setattr__``
refuses)."""
_UNLOCATED = frozenset((ArgumentsDelta, ToolCallFinished))  # events whose text assign() never looks up
_ENDS_RUN: dict[tuple[int, str], bool] = {}  # (id of a family, control-id text) -> SpanTracker.ends_run
_FAMILIES: list = []


class SpanTracker:
    """A stream's span bookkeeping: the text of each id read and not yet in a span, the ids still waiting for
    text, and the open calls' starts. Positions are counted in the text of the ids not yet in a span (the
    *window*): nothing is recorded per id but its text, and a step that gives every id read to its one event
    (the usual delta) records nothing at all."""

    __slots__ = ("base", "parts", "waiting", "call_starts")

    def __init__(self) -> None:
        self.base = 0                 # index of the first id no span holds yet
        self.parts: list[str] = []    # the text of each id base.. that wrote text (possibly empty), in order
        self.waiting = 0              # ids after those whose text is not out yet (a partial character, no text)
        self.call_starts: dict[int, int] = {}  # call index -> first id of its ToolCallStarted span

    def step(self, pieces: list, events: list, first: int, buffered: int) -> None:
        """One id was read: it decoded to ``pieces`` (:class:`~toolwire.tokenize.TokenPiece`; ids waiting for
        text wrote the first one), the parser then emitted ``events[first:]`` and holds ``buffered`` characters
        unread. Gives the ids read to those events (:meth:`settle`)."""
        parts = self.parts
        if self.waiting:  # they end where the first piece ends, this id where the last one does
            parts.append(pieces[0][0])
            parts.extend([""] * (self.waiting - 1))
            self.waiting = 0
            parts.append("".join(p[0] for p in pieces[1:]))
        else:
            parts.append(pieces[0][0] if len(pieces) == 1 else "".join(p[0] for p in pieces))
        if len(events) > first:
            self.settle(events, first, buffered)

    def chunk_texts(self, ids: Any, decoder: Any) -> list[str | None] | None:
        """The text of each of ``ids`` (a list or tuple) when they can be read a run at a time (:meth:`chunk`):
        nothing is held back (no partial character, no id waiting for text) and each id is an ``int``, a control
        id (its text None here: the stream decides where it ends a run, :meth:`ends_run`) or an ordinary id that
        decodes to whole characters by itself. None otherwise: read the ids one at a time (:meth:`step`)."""
        texts = None if self.waiting else decoder.remembered_texts(ids)
        if texts is None:  # (a float or numpy id too: the one-id path checks it)
            return None
        if None in texts:  # a control id, or one not yet seen
            vocab = decoder.vocab
            control, known = vocab.control_ids, vocab.known
            for k, text in enumerate(texts):
                if text is None:
                    tid = ids[k]
                    if tid in control:
                        continue
                    if not known(tid):
                        return None
                    text = decoder._whole_text(tid, decoder._id_bytes(tid))
                    if text is None:  # part of a character: its end is where the character's last byte is
                        return None
                    texts[k] = text
        return texts

    def ends_run(self, text: str, family: Any) -> bool:
        """Whether a control id writing ``text`` ends a run of ids read at once: unless it is inside the
        family's markers and ends none of them (DeepSeek's ``｜DSML｜``, always followed by the marker's name), a
        marker it ends may complete events, and the ids after it are then read in a step of their own (so that
        ids read after a call closed are not given to it)."""
        key = (id(family), text)
        known = _ENDS_RUN.get(key)
        if known is None:
            spellings = [s for s in family.markers.values() if text in s] if family is not None else []
            known = _ENDS_RUN[key] = not spellings or any(s.endswith(text) for s in spellings)
            _FAMILIES.append(family)  # kept, so that its id names it
        return known

    def chunk(self, texts: list[str], events: list, first: int, buffered: int) -> None:
        """Several ids, whose texts are ``texts`` (:meth:`chunk_texts`), were read at once: the parser then
        emitted ``events[first:]`` and holds ``buffered`` characters unread. Gives the ids read to those events
        (:meth:`settle`)."""
        self.parts += texts
        if len(events) > first:
            self.settle(events, first, buffered)

    def settle(self, events: list, first: int, buffered: int) -> None:
        """A step emitted ``events[first:]`` and holds ``buffered`` characters unread. With nothing unread, the
        usual cases are done here as :meth:`assign` would: one event takes every id read (a content or reasoning
        event, when the text read ends with its text), and of several argument deltas and call ends the last one
        does; otherwise :meth:`assign`."""
        parts = self.parts
        if not buffered and len(events) > first + 1:  # several events none of which is looked up: the last
            for k in range(first, len(events)):         # takes every id read, the others none (as in assign)
                if type(events[k]) not in _UNLOCATED:
                    break
            else:
                base = self.base
                self.base = end = base + len(parts)
                self.parts = []
                give = self._give
                for k in range(first, len(events) - 1):
                    give(events[k], base, base)
                give(events[-1], base, end)
                return
        elif len(events) == first + 1 and not buffered:
            event = events[first]
            cls = type(event)
            if not (cls is ContentDelta or cls is ReasoningDelta) or \
                    (parts[0] if len(parts) == 1 else "".join(parts)).endswith(event.text):
                base = self.base
                self.base = end = base + len(parts)
                self.parts = []
                if cls is ToolCallStarted:
                    self.call_starts[event.index] = base
                elif cls is ToolCallFinished:
                    event.candidate.span = (self.call_starts.pop(event.index, base), end)
                set_span(event, (base, end))
                return
        self.assign(events, first, buffered)

    def took_last(self, pieces: list) -> None:
        """The decoder's flush gave ``pieces`` (text it held back): the ids waiting for text end there; ids that
        never wrote text end where the text does."""
        text = "".join(p.text for p in pieces)
        if self.waiting:
            self.parts.append(text)
            self.parts.extend([""] * (self.waiting - 1))
            self.waiting = 0
        elif text and self.parts:
            self.parts[-1] += text

    def assign(self, events: list, first: int, buffered: int, final: bool = False) -> int:
        """Give the ids whose text the parser has read (all but the last ``buffered`` characters of the window;
        all of them when ``final``) to ``events[first:]``, the events one step emitted. Returns how many ids are
        left without a span (only at ``final``: ids read after the last event)."""
        parts = self.parts
        window = "".join(parts)
        ends = list(accumulate(map(len, parts)))  # where (in ``window``) the text of each id ends
        limit = len(window) if final else len(window) - buffered
        n = len(ends) if final else bisect_right(ends, limit)
        i = 0            # ids given out so far (from ``base``)
        q = 0            # where (in ``window``) the next event's text may start
        run: list = []   # call events (or text not found) waiting for ids: the last one takes them
        give = self._give
        base = self.base
        last = len(events) - 1
        for k in range(first, len(events)):
            event = events[k]
            cls = type(event)
            if cls is ContentDelta or cls is ReasoningDelta:
                text = event.text
                # the step's last event ends nearest the end of what was read; an earlier one nearest its start
                at = window.find(text, q, limit) if k < last and not run else window.rfind(text, q, limit)
                if at >= 0:
                    if run:
                        j = bisect_right(ends, at, i, n)
                        for other in run[:-1]:
                            give(other, base + i, base + i)
                        give(run[-1], base + i, base + j)
                        i = j
                        run = []
                    q = at + len(text)
                    j = bisect_right(ends, q, i, n)
                    give(event, base + i, base + j)
                    i = j
                    continue
            elif cls is ToolCallStarted and event.name:
                # a call's name is in the text read: the next lookup starts after it, and when call events of
                # the step came before (the call before it closed), the ids before its name go to them, so that
                # each call's span holds its own text
                at = window.find(event.name, q, limit)
                if at >= 0:
                    if run:
                        j = bisect_right(ends, at, i, n)
                        for other in run[:-1]:
                            give(other, base + i, base + i)
                        give(run[-1], base + i, base + j)
                        i = j
                        run = []
                    q = at + len(event.name)
            run.append(event)
        if run:
            for other in run[:-1]:
                give(other, base + i, base + i)
            give(run[-1], base + i, base + n)
            i = n
        if i:
            self.base = base + i
            del parts[:i]
        return n - i

    def _give(self, event: Any, start: int, end: int) -> None:
        set_span(event, (start, end))
        cls = type(event)
        if cls is ToolCallStarted:
            self.call_starts[event.index] = start
        elif cls is ToolCallFinished:
            event.candidate.span = (self.call_starts.pop(event.index, start), end)

    def finish(self, events: list, first: int, diagnostics: list, first_diagnostic: int) -> tuple[int, int] | None:
        """End of output: the ids still without a span go to the flush's events. Returns the span of the ids
        read after the last event (closing markers read after the call was finished, a stop token the parser
        dropped): the output's ``trailing_span``; the flush's diagnostic whose raw text they wrote (a dropped stop
        token) gets the same span."""
        if not self.parts and len(events) == first:  # every id is in a span already, and no event is new
            return None
        left = self.assign(events, first, 0, final=True)
        if not left:
            return None
        base, n = self.base, len(self.parts)
        span = (base, base + n)
        text = "".join(self.parts)
        for k in range(len(diagnostics) - 1, first_diagnostic - 1, -1):
            diag = diagnostics[k]
            raw = diag.raw
            if raw and diag.span is None and (raw in text or text.strip() in raw):
                diagnostics[k] = diag.model_copy(update={"span": span})
                break
        self.base += n
        self.parts = []
        return span


__all__ = ["SpanTracker"]
