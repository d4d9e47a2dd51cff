"""gpt-oss harmony stream parser: channels, recipients, calls; fed text or token ids.

The model's output continues the generation prompt ``<|start|>assistant``: a header (``<|channel|>analysis``,
`` to=functions.get_weather<|channel|>commentary json``, ``<|channel|>commentary to=functions.x <|constrain|>json``),
``<|message|>``, a body, then ``<|end|>`` / ``<|call|>`` / ``<|return|>`` (the stop token, usually stripped)
and possibly ``<|start|>assistant...`` with the next message. Bodies route by header:

* a recipient (``to=functions.NAME``, in the role part or after the channel) makes a tool call whose JSON
  arguments stream as they arrive (:class:`~toolwire.parsers.engine.json_arguments.ArgumentsStream`); on the
  ``analysis`` channel it is a call too (``repaired``, ``analysis_channel_call``), unless
  ``analysis_calls="reject"`` (then ``source="reasoning"``, not promoted unless asked);
* ``analysis`` is reasoning; ``final`` and ``commentary`` (a preamble) are content;
* a message from another role (a hallucinated tool result) is kept in a diagnostic, never in content.

End of output acts as the stop token: a call whose JSON is complete there is ``proposed``; one still open is
``truncated``. Malformed sequences (a missing ``<|end|>`` or ``<|start|>``, headerless text, stray markers)
are repaired where the intent is clear and always named by a diagnostic; nothing raises.

With ``tokenizer=`` (or ``encoding=``: a tiktoken ``o200k_harmony`` encoding, see
``toolwire.templates.harmony.load_o200k_harmony``) the parser also takes token ids: ``feed(ids=[...])``.
Markers are then recognised by their special ids only, so marker text spelled with ordinary tokens stays text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from toolwire.errors import InvalidOption
from toolwire.limits import size_problem
from toolwire.output import Diagnostic

from .engine.stream import StreamParser
from .engine.call_builder import CallBuilder
from .engine.json_arguments import ArgumentsStream, finish_call, stream_arguments, worse_status
from .engine.lexer import MarkerScanner, held_back_prefix
from .engine.stop_tokens import TrailingStopToken

from toolwire.families.harmony import GPT_OSS, MARKERS

START, END, MESSAGE, CHANNEL = MARKERS["start"], MARKERS["end"], MARKERS["message"], MARKERS["channel"]
CONSTRAIN, CALL, RETURN = MARKERS["constrain"], MARKERS["call"], MARKERS["return"]
ROLES = frozenset({"assistant", "user", "system", "developer", "tool"})
_STRUCTURE = (START, END, MESSAGE, CHANNEL, CONSTRAIN, CALL, RETURN)
_SCANNER = MarkerScanner(_STRUCTURE)
_MARKER_SET = frozenset(_STRUCTURE)
_CHANNEL_VALUE = re.compile(r"[^\s<]*")
_CONTENT_TYPE = re.compile(r"(?:<\|constrain\|>)?[A-Za-z][A-Za-z0-9_.+/-]*")
"""A content type (``json``, ``<|constrain|>json``, ``code``...); any other text there is not one."""
KNOWN_CONTENT_TYPES = frozenset({"json", "code", "<|constrain|>json", "<|constrain|>code"})
"""Content types gpt-oss writes; another one is kept (``unknown_content_type``, raw = it)."""
_ASCII_WS = re.compile(r"[ \t\n\r]+")  # the only header blanks; any other character is kept
ANALYSIS_CALLS = ("accept", "reject")
"""``analysis_calls`` values: what a ``to=functions.NAME`` recipient on the analysis channel is."""
MAX_HEADER_CHARS = 256
"""A header longer than this (or text with a line break where a header belongs) is not a header."""
_TRAPPED_BODY = re.compile(r"[ \t]*(?:assistant[ \t]*)?" + re.escape(CHANNEL) + r"(final|analysis)[ \t]+(?!to=)(\S.*)",
                           re.DOTALL)
"""A header that names the final or analysis channel, then text, and never reaches ``<|message|>``: the model left
the marker out and the text is that channel's body (vLLM #45736 lost such an answer)."""

REASONING_CALL_NOTE = (
    "gpt-oss wrote this call on the analysis channel. Real gpt-oss outputs do this about half the time; the "
    "call is reported with source='reasoning' and not promoted (pass promote_reasoning_calls=True to accept "
    "analysis-channel calls).")


# ---------------------------------------------------------------------------------------------- headers

@dataclass
class Header:
    """A parsed message header. ``author`` names a tool author (``functions.x``) for tool messages."""

    role: str
    channel: str | None = None
    recipient: str | None = None
    content_type: str | None = None
    author: str | None = None
    problems: list[str] = field(default_factory=list)


def parse_header(text: str, role: str | None, default_role: str | None = None) -> Header:
    """Parse the text between ``<|start|>`` (or the prompt's ``<|start|>assistant``) and ``<|message|>``.

    ``role`` is the role already known (the prompt wrote it) or None; ``default_role`` is taken when the
    header names none (a header the model wrote without ``<|start|>role``). The recipient may come before or
    after the channel; the content type is ``json`` or ``<|constrain|>json`` (or absent). This follows
    openai-harmony's header rules, except that a lone ``json`` is a content type, not a recipient.
    """
    problems: list[str] = []
    channel = None
    pieces = text.split(CHANNEL)
    text = pieces[0]
    for n, piece in enumerate(pieces[1:]):
        value = _CHANNEL_VALUE.match(piece).group()
        if not value:
            problems.append("<|channel|> without a channel name")
        elif channel is None:
            channel = value
        if n == 1:
            problems.append("more than one <|channel|>; the first is used")
        text += " " + piece[len(value):]
    if CONSTRAIN in text:
        text = text.replace(CONSTRAIN, " " + CONSTRAIN)
    parts = [p for p in _ASCII_WS.split(text) if p]
    author = None
    if role is None:
        if not parts or (default_role and (parts[0].startswith("to=") or parts[0].startswith(CONSTRAIN)
                                           or parts[0] == "json")):
            if not default_role:
                problems.append("no role in the header")
            role = default_role or "assistant"
        elif parts[0] in ROLES:
            role = parts[0]
        else:
            role, author = "tool", parts.pop(0)
            if not parts:
                problems.append(f"unknown role {author!r}")
    if parts and parts[0] == role:
        parts.pop(0)
    recipient = content_type = None
    if parts:
        last = parts.pop()
        if last.startswith("to="):
            recipient = last[3:]
        elif not parts and not (last.startswith(CONSTRAIN) or last == "json"):
            recipient = last
        elif _CONTENT_TYPE.fullmatch(last):
            content_type = last
            if parts:
                raw = parts.pop()
                recipient = raw[3:] if raw.startswith("to=") else raw
        else:
            parts.append(last)
            if parts[0].startswith("to="):
                recipient = parts.pop(0)[3:]
    if parts:
        problems.append(f"unexpected text in the header: {' '.join(parts)!r}")
    return Header(role, channel, recipient, content_type, author, problems)


# ------------------------------------------------------------------------------------------- the parser

@dataclass
class _Body:
    """The message being read: where its text goes, and a call's argument state."""

    kind: str                                 # "content" | "reasoning" | "call" | "foreign"
    header: Header | None
    call: CallBuilder | None = None
    args: ArgumentsStream | None = None
    trailing: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


class HarmonyStreamParser(TrailingStopToken, StreamParser):
    """Streaming parser for gpt-oss output (text, or token ids with ``tokenizer=``).

    Options: those of :class:`~toolwire.parsers.engine.stream.StreamParser` (``tokenizer``, also spelled ``encoding``,
    is the o200k_harmony tiktoken encoding or any tokenizer :mod:`toolwire.tokenize` accepts),
    ``max_header_chars``, and ``analysis_calls``: ``"accept"`` (default: a ``to=functions.NAME`` call on the
    analysis channel is a real call, ``repaired`` with ``analysis_channel_call``) or ``"reject"`` (reported
    with ``source="reasoning"``, ``rejected`` unless ``promote_reasoning_calls``). ``thinking`` and a
    prompt's ``opens_reasoning`` do not change the start: the prompt ends ``<|start|>assistant`` either way
    and the channel of each message says what it is (docs/harmony.md).

    Fed ids, every harmony marker is a control id, so the decoded pieces are routed directly: a special
    piece is a marker; another control token (``<|endoftext|>``) is read as its text, exactly as the same
    spelling in text input, so ids and text give one result. Of the family's stop tokens, ``<|return|>`` and
    ``<|call|>`` end a message (structure); ``<|endoftext|>`` left at the very end of the output is stripped
    (``stop_token_in_output``), as in every family.
    """

    stop_tokens = (MARKERS.ENDOFTEXT,)  # <|return|> and <|call|> are structure (they end a message)

    def __init__(self, tools: Sequence[Any] | None = None, *, thinking: bool = True, encoding: Any = None,
                 max_header_chars: int = MAX_HEADER_CHARS, analysis_calls: str = "accept", **options: Any):
        if analysis_calls not in ANALYSIS_CALLS:
            raise InvalidOption(f"analysis_calls must be one of {list(ANALYSIS_CALLS)}, got {analysis_calls!r}",
                                field="analysis_calls")
        if encoding is not None:
            options.setdefault("tokenizer", encoding)
        super().__init__(tools, thinking=thinking, **options)
        self.max_header_chars = max_header_chars
        self.analysis_calls = analysis_calls
        self._stop: str | None = None  # <|call|> / <|return|> when it is the last thing read
        self._body: _Body | None = None
        self._foreign_note = ""
        self._held_eot = ""  # a <|endoftext|> id that may be the last thing (id input)
        self._new_header(role="assistant", started=True, explicit=False)

    # ---- the base's hooks: token pieces, or text
    def _take_plain(self, text: str) -> None:
        if self._held_eot:  # a held <|endoftext|> that more output follows: text, as text input reads it
            text, self._held_eot = self._held_eot + text, ""
        self._on_text(text)

    def _take_pieces(self, pieces: list, final: bool) -> None:
        eot = self._held_eot  # a held <|endoftext|> that more output follows is text, as text input reads it
        for text, special in pieces:
            if special and text in _MARKER_SET:
                if eot:
                    self._on_text(eot)
                    eot = ""
                self._on_marker(text)
            elif special and text in self.stop_tokens:
                if eot:
                    self._on_text(eot)
                eot = text  # held: stripped if the output ends here
            else:  # ordinary text, or another control token: its text, as text input reads it
                self._on_text(eot + text)
                eot = ""
        self._held_eot = eot
        if final and eot:
            self._held_eot = ""
            self._diag("stop_token_in_output", f"the end-of-turn token {eot!r} was left at the end of the "
                       "output; it is not content", raw=eot)

    def _advance(self, final: bool) -> None:
        if not self._reading_ids():
            held = self._hold_stop_token(final)
            buf, pos = self._buf, 0
            while True:
                hit = _SCANNER.scan(buf, pos, final=final)
                if hit.start > pos:
                    self._on_text(buf[pos:hit.start])
                if hit.marker is None:
                    pos = hit.start
                    break
                self._on_marker(hit.marker)
                pos = hit.end
            self._buf = buf[pos:] + held
        if final:
            self._at_end()

    # ---- headers
    def _new_header(self, *, role: str | None, started: bool, explicit: bool) -> None:
        self._body = None
        self._hdr: list[str] = []
        self._hdr_len = 0
        self._hdr_role = role
        self._hdr_started = started      # after <|start|> (or the prompt's own <|start|>assistant)
        self._hdr_explicit = explicit    # the model wrote <|start|> itself
        self._hdr_markers = False
        self._hdr_text = False           # non-blank text seen

    def _header_text(self, text: str) -> None:
        """Accumulate header text. A line break after non-blank header text, or more than
        ``max_header_chars``, ends the attempt at an absolute position (so chunking cannot change it)."""
        cut = len(text)
        start = 0 if self._hdr_text else len(text) - len(text.lstrip())
        newline = text.find("\n", start)
        if newline >= 0:
            cut = newline
        budget = self.max_header_chars - self._hdr_len
        if cut > budget:
            cut = max(budget, 0)
        head = text[:cut]
        self._hdr.append(head)
        self._hdr_len += len(head)
        self._hdr_text = self._hdr_text or bool(head.strip())
        if cut == len(text):
            return
        joined = "".join(self._hdr)
        if self._trapped_body(joined, opens=True):
            pass
        elif self._hdr_markers:
            self._diag("malformed_header", "a message header never reached <|message|>; the rest is read as "
                       "content", raw=joined)
            self._open(_Body("content", None))
        else:
            self._diag("missing_header", "text where a message header belongs (no <|channel|> or "
                       "<|message|>); read as final content")
            self._open(_Body("content", None))
            self._emit_content(joined)
        self._on_text(text[cut:])

    def _trapped_body(self, text: str, *, opens: bool) -> bool:
        """A header ``<|channel|>final TEXT`` (or ``analysis``) that ended without ``<|message|>``: TEXT is the
        channel's body (``missing_message_marker``). ``opens``: the message goes on (the header was cut at a line
        break or at its length limit), so its body stays open for the text that follows."""
        m = _TRAPPED_BODY.fullmatch(text) if self._hdr_role in (None, "assistant") else None
        if m is None or CONSTRAIN in m.group(2) or CHANNEL in m.group(2):
            return False
        channel, body = m.groups()
        self._diag("missing_message_marker", f"a {channel} message without {MESSAGE} after its header; the text "
                   f"after the channel name is read as its body", raw=text[:m.start(2)])
        kind = "reasoning" if channel == "analysis" else "content"
        header = Header("assistant", channel)
        self._open(_Body(kind, header))
        (self._emit_reasoning if kind == "reasoning" else self._emit_content)(body)
        if not opens:
            self._body = None
        return True

    def _open_body(self) -> None:
        text = "".join(self._hdr)
        if not self._hdr_started:
            self._diag("missing_start", "a message header without <|start|> before it; read as a new message",
                       severity="info")
        header = parse_header(text, self._hdr_role, None if self._hdr_started else "assistant")
        if header.problems:
            self._diag("malformed_header", "; ".join(header.problems), raw=text)
        if header.recipient is not None and header.role == "assistant" and not self._is_call(header, text):
            self._diag("not_a_recipient", f"{header.recipient!r} names no tool (empty, or not written as to=NAME "
                       "and not declared); the message is read as content", raw=text)
            header.recipient = None
        if header.content_type is not None and header.content_type not in KNOWN_CONTENT_TYPES:
            self._diag("unknown_content_type", f"content type {header.content_type!r} is not one gpt-oss writes; "
                       "ignored", severity="info", raw=header.content_type)
        known_channel = header.channel in (None, "analysis", "final", "commentary")
        if header.role == "assistant" and not known_channel:
            self._diag("unknown_channel", f"unknown channel {header.channel!r}; "
                       + ("the call is kept" if header.recipient not in (None, "all") else "read as final content"),
                       raw=header.channel)
        if header.role != "assistant":
            who = header.author or header.role
            self._open(_Body("foreign", header, kept=[text, MESSAGE]))  # the whole message, header too
            self._foreign_note = f"the model wrote a {header.role} message ({who}); it is not assistant output"
        elif header.recipient not in (None, "all"):
            self._open(_Body("call", header))
            self._start_call(header)
        elif header.channel == "analysis":
            self._open(_Body("reasoning", header))
        else:
            if header.channel is None:
                self._diag("missing_channel", "an assistant message without a channel; read as final content",
                           severity="info")
            self._open(_Body("content", header))

    def _is_call(self, header: Header, text: str) -> bool:
        """A recipient the model wrote as ``to=NAME`` is a call; a bare one only for a declared function; an
        empty one (``to=`` alone) never."""
        recipient = header.recipient
        if recipient in (None, "all"):
            return True
        if not recipient.removeprefix("functions."):
            return False
        if "to=" + recipient in text:
            return True
        name = recipient[len("functions."):] if recipient.startswith("functions.") else recipient
        return self._names is not None and name in self._names

    def _open(self, body: _Body) -> None:
        self._body = body
        self._hdr = []

    def _start_call(self, header: Header) -> None:
        recipient = header.recipient or ""
        name = recipient[len("functions."):] if recipient.startswith("functions.") else recipient
        analysis = header.channel == "analysis"
        source = "reasoning" if analysis and self.analysis_calls == "reject" else "content"
        call = self._begin_call(name, source=source)
        if header.problems:
            call.diag("malformed_header", "the call's header holds text that is not part of it (kept in the "
                      "output's malformed_header diagnostic)")
            call.status = worse_status(call.status, "repaired")
        if analysis and source == "content":
            call.diag("analysis_channel_call", "gpt-oss wrote this call on the analysis channel; accepted as a "
                      "call (analysis_calls='reject' reports it as reasoning instead)")
            call.status = worse_status(call.status, "repaired")
        if source == "reasoning":
            if self.promote_reasoning_calls:
                call.diag("call_in_reasoning_promoted", "a call on the analysis channel, promoted as asked "
                          "(promote_reasoning_calls=True)", severity="info")
            else:
                call.diagnostics[:] = [Diagnostic(code=d.code, message=REASONING_CALL_NOTE, severity=d.severity,
                                                  call_index=d.call_index) if d.code == "call_in_reasoning" else d
                                       for d in call.diagnostics]
        self._body.call = call
        self._body.args = stream_arguments(call)

    # ---- routing
    def _on_text(self, text: str) -> None:
        self._stop = None
        body = self._body
        if body is None:
            self._header_text(text)
        elif body.kind == "content":
            self._emit_content(text)
        elif body.kind == "reasoning":
            self._emit_reasoning(text)
        elif body.kind == "call":
            if body.args.scanner.done:
                body.trailing.append(text)
                return
            end = body.args.feed(text)
            if end >= 0 and end < len(text):
                body.trailing.append(text[end:])
        else:
            body.kept.append(text)

    def _on_marker(self, marker: str) -> None:
        self._stop = marker if marker in (CALL, RETURN) else None
        body = self._body
        if body is not None:
            if marker in (END, CALL, RETURN):
                self._close(eof=False, cut=False)
                self._new_header(role=None, started=False, explicit=False)
            elif marker in (START, CHANNEL):
                self._diag("missing_end", f"a new message ({marker}) began before the previous one ended",
                           raw=marker)
                role = body.header.role if body.header else "assistant"
                self._close(eof=False, cut=True)
                if marker == START:
                    self._new_header(role=None, started=True, explicit=True)
                else:
                    self._new_header(role=role, started=True, explicit=True)
                    self._hdr, self._hdr_len, self._hdr_markers = [CHANNEL], len(CHANNEL), True
            else:
                self._diag("stray_marker", f"{marker} inside a message body; ignored", raw=marker)
            return
        if marker in (CHANNEL, CONSTRAIN):
            self._hdr.append(marker)
            self._hdr_len += len(marker)
            self._hdr_markers = True
        elif marker == MESSAGE:
            self._open_body()
        else:
            leftover = "".join(self._hdr)
            if leftover and self._trapped_body(leftover, opens=False):
                pass
            elif leftover:
                code = "malformed_header" if self._hdr_started else "text_between_messages"
                self._diag(code, f"text where a message header belongs, ended by {marker}", raw=leftover)
            elif marker != START:
                self._diag("stray_marker", f"{marker} outside a message; ignored", raw=marker)
            if marker == START:
                self._new_header(role=None, started=True, explicit=True)
            else:
                self._new_header(role=None, started=False, explicit=False)

    # ---- closing
    def _close(self, *, eof: bool, cut: bool) -> None:
        body = self._body
        if body.kind == "call":
            self._finish_call(body, eof=eof, cut=cut)
        elif body.kind == "foreign":
            self._diag("unexpected_role", self._foreign_note, raw="".join(body.kept))
        self._body = None

    def _finish_call(self, body: _Body, *, eof: bool, cut: bool) -> None:
        call, stream = body.call, body.args
        complete = stream.scanner.done
        truncated = eof and not complete
        closed = stream.close(truncated=truncated)
        if cut and not complete:
            call.status = "rejected"
            call.diag("incomplete_arguments", "the call's message ended before its JSON did", severity="error")
        trailing = "".join(body.trailing)
        if trailing.strip():
            call.diag("trailing_text", "text after the arguments' JSON object was ignored", raw=trailing)
            call.status = worse_status(call.status, "repaired")
        problem = size_problem(closed.arguments, closed.raw, self.limits)
        if problem:
            call.reject_too_large(problem)
        if truncated:  # the output ended inside the call: truncated, whatever else is wrong (too_large too)
            for code, message in closed.diagnostics:
                if code == "too_large":
                    call.reject_too_large(message)
            kept = [d for d in closed.diagnostics if d[0] != "too_large"]
            closed = closed._replace(status="truncated", diagnostics=kept)
            call.status = "truncated"
            self._truncated = True
        finish_call(call, closed, raw=stream.raw + trailing)

    def _at_end(self) -> None:
        if self._stop is not None:
            self._diag("stop_token_in_output", f"the output ends with the stop token {self._stop}; it ended the "
                       "message and is not content", severity="info", raw=self._stop)
        if self._body is not None:
            self._close(eof=True, cut=False)
            return
        text = "".join(self._hdr)
        if not text and not self._hdr_explicit:
            return
        header_like = self._hdr_markers or "to=" in text or self._hdr_explicit
        if self._trapped_body(text, opens=False):
            return
        if not self._hdr_started and not text.strip():
            self._diag("text_between_messages", "blank text after the last message", raw=text)
        elif not header_like or not self._hdr_started:
            self._diag("missing_header", "text where a message header belongs; read as final content")
            self._emit_content(text)
        else:
            self._truncated = True
            cut = max(held_back_prefix(text, m) for m in _MARKER_SET)  # "...<|chan": a marker cut off
            header = parse_header(text[:len(text) - cut], self._hdr_role)
            if header.role == "assistant" and header.recipient not in (None, "all"):
                self._diag("truncated_call_header", "the output ended inside a call's header; no call", raw=text)
            else:
                self._diag("truncated_header", "the output ended inside a message header", raw=text)


class GptOssParser(HarmonyStreamParser):
    """gpt-oss output."""

    family = GPT_OSS


__all__ = ["GptOssParser", "HarmonyStreamParser", "MARKERS", "Header", "parse_header", "REASONING_CALL_NOTE"]
