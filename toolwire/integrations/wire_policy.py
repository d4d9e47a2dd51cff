"""Fail-closed tool calls on an engine's wire: a call toolwire cannot vouch for never reaches a client as a call.

:class:`FailClosedStream` is an :class:`~toolwire.integrations.engine_stream.EngineStream` for an engine's
OpenAI-compatible server (vLLM's adapter uses it). The rules, the same for every family:

* **A call starts on the wire only once its name is known to be declared** (a tool of the request; with no
  tools, or ``tool_choice="none"``, nothing is declared). A call to anything else is never started: when it
  ends, the text the model wrote for it goes to the content, where it was in the output.
* **Its arguments stream as they come, less their last non-blank character**, which is sent when the call
  ends usable (``proposed`` / ``repaired``). So the arguments of a call that ends unusable (invalid JSON,
  truncated, too large) are never complete JSON on the wire: a client cannot execute them.
* **A started call that ends unusable** also has its text put in the content (the client then holds both
  the incomplete call and the text), and it is listed in :attr:`FailClosedStream.unusable` with its index on
  the wire, id, status and diagnostic codes: the engine adapter puts that list on the last delta as a typed
  marker (docs/engines.md, "Fail-closed on the wire").
* **One id per call**: toolwire's own ids are the wire ids (:class:`EngineStream`), so :attr:`parsed`, the
  wire and the marker agree.

Where a call's text starts and ends in the output is found without any parser internals: the stream is fed
one token (ids) or one character (text) at a time, so a call ends where the unit that finished it ends, and it
starts where the content or reasoning emitted before it ends (each run found in the output text from the
point reached so far). Fed whole (``units=False``), a call's end is the end of the delta that finished it:
exact enough to decide, not to cut text; the adapter then replays the output by units when a call is unusable.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from toolwire.integrations.engine_stream import CallPiece, EngineStream, Fold, StreamedCall, reasoning_pair
from toolwire.parsers.engine.reasoning_calls import recovered_in_reasoning
from toolwire.output import (ArgumentsDelta, ContentDelta, ReasoningDelta, ToolCallCandidate, ToolCallFinished,
                             ToolCallStarted)

USABLE = frozenset({"proposed", "repaired", "validated"})
"""Candidate statuses a client may execute (after its own schema check)."""


@dataclass
class UnusableCall:
    """A call that did not reach the wire as a usable call. ``index`` is its index on the wire when its start
    was sent, else None; ``status`` is the candidate's (``rejected``, ``truncated``) or ``undeclared`` (a tool
    the request did not declare: never started); ``codes`` are its diagnostic codes; ``text`` is what the
    model wrote for it (sent as content)."""

    index: int | None
    id: str
    name: str
    status: str
    codes: list[str]
    text: str

    def as_dict(self) -> dict[str, Any]:
        """The marker entry a client sees (``text`` is in the content already)."""
        return {"index": self.index, "id": self.id, "name": self.name, "status": self.status, "codes": self.codes}


@dataclass
class _Track:
    """One call toolwire started, while it is open."""

    id: str
    name: str
    start: int  # offset in the output where its text starts
    wire: int | None = None  # streamed index (None: held, never started)
    args: str = ""  # the arguments text toolwire streamed for it
    sent: int = 0  # how much of ``args`` went on the wire


@dataclass
class _Pending:
    parts: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: list[CallPiece] = field(default_factory=list)


def _skip_blank(text: str, at: int) -> int:
    while at < len(text) and text[at].isspace():
        at += 1
    return at


class FailClosedStream(EngineStream):
    """An :class:`EngineStream` that applies the module's rules. ``declared``: the tool names a call may use
    (None: every name, as toolwire's parse without tools; an empty set: none). ``units``: feed the parser one
    token or character at a time (exact call text; the default)."""

    def __init__(self, format_name: str, tools: Sequence[Any] | None = None, *,
                 declared: Iterable[str] | None = None, units: bool = True, id_seed: bytes | None = None,
                 **options: Any):
        # with id_seed (e.g. the prompt's ids), a generated call id is a hash of the seed, the output fed before
        # the call and its index: the same when the same output is fed again, in any chunking (vLLM's stateless
        # streaming derender replays the output on every chunk with a new parser), different per output
        self._id_digest = hashlib.sha256(id_seed) if id_seed is not None else None
        super().__init__(format_name, tools, **options)
        self.declared = None if declared is None else frozenset(declared)
        self.units = units
        self.unusable: list[UnusableCall] = []
        self.content = ""  # the content sent so far (with the text of unusable calls)
        self._raw = ""  # output text from offset self._base on
        self._base = 0
        self._end = 0  # offset of the end of the output fed so far
        self._cursor = 0  # output attributed to emitted content / reasoning / calls up to here
        self._runs: list[list] = []  # [kind, text] runs emitted since the cursor was last moved
        self._tracks: dict[int, _Track] = {}
        self._open: tuple[int, UnusableCall] | None = None  # an unusable call whose text is not cut yet
        self._raw_decoder = None
        self._opener, self._closer = reasoning_pair(format_name)
        self._content_seen = False  # content (or a call) was emitted: a reasoning block cannot come first now

    def _call_id(self, index: int) -> str:
        if self._id_digest is None:
            return super()._call_id(index)
        made = self._made_ids.get(index)
        if made is None:
            digest = self._id_digest.copy()
            digest.update(b"#%d" % index)
            made = self._made_ids[index] = "chatcmpl-tool-" + digest.hexdigest()[:32]
        return made

    # ---- feeding
    def feed(self, text: str = "", ids: Sequence[int] | None = None) -> Fold:
        if self.parsed is not None:
            return Fold()
        if self._mode is None:
            if ids and self._tokenizer is not None and self._start_ids():
                self._mode = "ids"
                from toolwire.tokenize import TokenDecoder

                self._raw_decoder = TokenDecoder(self._tokenizer)
            elif text:
                self._mode = "text"
            else:
                return Fold()
        pending = _Pending()
        if self._mode == "ids":
            if ids:
                units = [[tid] for tid in ids] if self.units else [list(ids)]
                for unit in units:
                    self._add_raw("".join(piece.text for piece in self._raw_decoder.feed(unit)))
                    if self._id_digest is not None:
                        self._id_digest.update(b",".join(b"%d" % tid for tid in unit) + b",")
                    self._take(self._parser.feed(ids=unit), pending)
        elif text:
            for unit in (text if self.units else (text,)):
                self._add_raw(unit)
                if self._id_digest is not None:
                    self._id_digest.update(unit.encode("utf-8", "surrogatepass"))
                self._take(self._parser.feed(unit), pending)
        return self._settle(pending)

    def flush(self) -> Fold:
        if self.parsed is not None:
            return Fold()
        pending = _Pending()
        if self._raw_decoder is not None:
            self._add_raw("".join(piece.text for piece in self._raw_decoder.flush()))
        self._take(self._parser.flush(), pending)
        self.parsed = self._parser.finish()
        if self._open is not None:
            self._cut(self._end, pending)
        return self._settle(pending)

    @property
    def usable_calls(self) -> list[StreamedCall]:
        """The calls that ended usable, in wire order."""
        return [call for call in self.calls if call.finished]

    # ---- the output text
    def _add_raw(self, text: str) -> None:
        self._raw += text
        self._end += len(text)

    def _find_runs(self) -> None:
        """Move the cursor past the content and reasoning emitted since it was last moved (each run is a
        substring of the output, in order; framing the parser dropped lies between them)."""
        for kind, text in self._runs:
            at = self._raw.find(text, self._cursor - self._base)
            if at >= 0:
                self._cursor = self._base + at + len(text)
        self._runs.clear()

    def _call_start(self) -> int:
        """Where the text of a call starting now begins: after what was emitted before it, and, while nothing
        but reasoning was emitted, after the reasoning block's framing (an empty ``<think></think>``, the
        closer of a block the prompt opened, and the blank around them)."""
        self._find_runs()
        if not self._content_seen and self._closer:
            rest = self._raw[self._cursor - self._base:]
            at = _skip_blank(rest, 0)
            if self._opener and rest.startswith(self._opener, at):
                at = _skip_blank(rest, at + len(self._opener))
            if rest.startswith(self._closer, at):
                self._cursor += _skip_blank(rest, at + len(self._closer))
        return self._cursor

    def _trim(self) -> None:
        keep = min([self._cursor] + [track.start for track in self._tracks.values()]
                   + ([self._open[0]] if self._open is not None else []))
        if keep > self._base:
            self._raw = self._raw[keep - self._base:]
            self._base = keep

    def _text(self, start: int, end: int) -> str:
        return self._raw[max(0, start - self._base):max(0, end - self._base)]

    # ---- events
    def _note_run(self, kind: str, text: str) -> None:
        if self._runs and self._runs[-1][0] == kind:
            self._runs[-1][1] += text
        else:
            self._runs.append([kind, text])

    def _take(self, events: list, pending: _Pending) -> None:
        for event in events:
            kind = type(event)
            if kind is ContentDelta or kind is ReasoningDelta:
                if self._open is not None:  # an unusable call's text ends where this text starts
                    at = self._raw.find(event.text, self._cursor - self._base)
                    self._cut(self._base + at if at >= 0 else self._cursor, pending)
                if kind is ContentDelta:
                    self._content_seen = True
                    pending.parts.append(event.text)
                    self._note_run("content", event.text)
                else:
                    pending.reasoning.append(event.text)
                    self._note_run("reasoning", event.text)
            elif kind is ToolCallStarted:
                if event.source == "reasoning":
                    continue  # reported in ``parsed``, not streamed (as EngineStream does)
                if self._open is not None:
                    self._cut(self._cursor, pending)
                track = self._tracks[event.index] = _Track(event.id, event.name, self._call_start())
                if self.declared is None or event.name in self.declared:
                    track.wire = len(self.calls)
                    self.calls.append(StreamedCall(track.wire, event.id, event.name))
                    pending.calls.append(CallPiece(track.wire, event.id, event.name))
            elif kind is ArgumentsDelta:
                track = self._tracks.get(event.index)
                if track is not None and track.wire is not None:
                    track.args += event.fragment
                    self._send(track, len(track.args.rstrip()) - 1, pending)
            elif kind is ToolCallFinished:
                track = self._tracks.pop(event.index, None)
                if track is not None:
                    self._finish(track, event.candidate, pending)
                elif recovered_in_reasoning(event.candidate) and (self.declared is None
                                                                  or event.candidate.name in self.declared):
                    cand = event.candidate  # issue 33: a call in reasoning that never closed, sent whole at the end
                    wire = len(self.calls)
                    self.calls.append(StreamedCall(wire, cand.id, cand.name, cand.arguments_json(), finished=True))
                    pending.calls.append(CallPiece(wire, cand.id, cand.name, cand.arguments_json()))

    def _send(self, track: _Track, upto: int, pending: _Pending) -> None:
        if upto <= track.sent:
            return
        piece = track.args[track.sent:upto]
        track.sent = upto
        self.calls[track.wire].arguments += piece
        last = pending.calls[-1] if pending.calls else None
        if last is not None and last.index == track.wire:
            last.arguments += piece
        else:
            pending.calls.append(CallPiece(track.wire, arguments=piece))

    def _finish(self, track: _Track, candidate: ToolCallCandidate, pending: _Pending) -> None:
        usable = track.wire is not None and candidate.status in USABLE
        if usable:
            self._send(track, len(track.args), pending)
            self.calls[track.wire].finished = True
        else:
            status = candidate.status if track.wire is not None else "undeclared"
            codes = [d.code for d in candidate.diagnostics if d.severity == "error"] or \
                [d.code for d in candidate.diagnostics]
            if track.wire is None and not codes:
                codes = ["undeclared_tool"]
            owner = UnusableCall(track.wire, track.id, track.name, status, codes, "")
            self.unusable.append(owner)
            # its text runs to where the next content, reasoning or call starts (the framing the parser read
            # after the call, e.g. a block closer, is the call's text too), or to the end of the output
            self._open = (track.start, owner)
        self._runs.clear()
        self._content_seen = True
        self._cursor = self._end

    def _cut(self, end: int, pending: _Pending) -> None:
        start, owner = self._open
        self._open = None
        owner.text = self._text(start, max(start, end))
        pending.parts.append(owner.text)
        self._cursor = max(self._cursor, end)

    def _settle(self, pending: _Pending) -> Fold:
        """The fold of one feed; the cursor moved past what was emitted."""
        if not self._tracks and self._open is None:
            self._find_runs()
            self._trim()
        fold = Fold("".join(pending.parts), "".join(pending.reasoning), pending.calls)
        self.content += fold.content
        return fold
