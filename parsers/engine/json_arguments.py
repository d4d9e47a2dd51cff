"""Raw argument streaming for the JSON-bodied families: :class:`ArgumentsStream` sends a call's raw argument text as
``ArgumentsDelta`` fragments while it arrives, up to the scanner's safe point, and at the end completes the
fragments so that they concatenate to JSON of the call's final arguments (see the class docstring for the rule);
:func:`finish_call` turns the closed arguments into the candidate."""

from __future__ import annotations

import json
from typing import Any, Callable, NamedTuple

from toolwire.limits import DEFAULT_LIMITS, Limits
from toolwire.output import ToolCallCandidate, ToolCallFinished

from .call_builder import CallBuilder
from .json_repair import LadderResult, check_object, repair_ladder
from .json_scan import JSON_WS, JsonValueScanner
from .safe_json import loads, utf8_size

__all__ = ["ArgumentsStream", "ClosedArguments", "call_object_bounds", "stream_arguments", "finish_call",
           "worse_status", "joined_fragments", "diagnostic_severity", "CALL_OBJECT_BYTES"]

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
        reported = raw[scanner.start:] if scanner.started else raw.lstrip(JSON_WS)
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
        return check_object(parsed, "truncated" if truncated else "proposed", [], value)

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
    call.parser._call_finished(ToolCallFinished(call.index, cand))
    return cand
