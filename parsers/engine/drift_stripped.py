"""Calls whose special tokens a server stripped (issue 33, ``missing_markers``): Kimi and Mistral output detokenized
with ``skip_special_tokens`` keeps only each call's id or name and its JSON arguments, in content.

* Kimi: ``functions.NAME:IDX{json}`` (``<|tool_calls_section_begin|>``, ``<|tool_call_begin|>``,
  ``<|tool_call_argument_begin|>``, ``<|tool_call_end|>`` and the section's end all gone), possibly several in a row;
* Mistral: ``NAME{json}`` (``[TOOL_CALLS]`` and ``[ARGS]`` gone), possibly several in a row.

:class:`StrippedCalls` (a mixin of a :class:`~toolwire.parsers.engine.marker_json.JsonCallParser`) reads such a call
only when the declared tools make it one: at the answer's start or a line start in content (or right after such a
call), the name a declared tool, the JSON one object that fits its schema (``drift_stripped_markers``). Text input
only: fed token ids, a call needs its control tokens, so ids never make a call of ordinary text. Without declared
tools nothing here runs.

Streaming: from a line start, text is held back only while it can still be such a call (a prefix of ``functions.``
and a declared name, or of a declared name, then the JSON object until it ends); the moment it cannot, it is read as
content exactly as before (markers in it still count). A call is emitted whole when its object ends, so nothing
sent is taken back and every chunking gives the one-shot result.
"""

from __future__ import annotations

from typing import Any

from .drift import DeclaredTools, Drift, drift_diagnostic, refused_diagnostic, register
from .json_arguments import finish_call
from .json_repair import LadderResult
from .json_scan import JsonValueScanner
from .safe_json import loads

STRIPPED_MARKERS = "drift_stripped_markers"
register(Drift.MISSING_MARKERS, STRIPPED_MARKERS)

KIMI_PREFIX = "functions."
_DIGITS = "0123456789"


def kimi_head(text: str, tools: DeclaredTools) -> tuple[str, str, int] | bool:
    """A stripped Kimi call's head ``functions.NAME:IDX{`` at ``text``'s start: ``(name, id, length before "{")``
    when complete; True while ``text`` can still become one; False once it cannot."""
    n = min(len(text), len(KIMI_PREFIX))
    if text[:n] != KIMI_PREFIX[:n]:
        return False
    if len(text) <= len(KIMI_PREFIX):
        return True
    rest = text[len(KIMI_PREFIX):]
    colon = rest.find(":")
    if colon < 0:
        return any(name.startswith(rest) for name in tools.names)
    name = rest[:colon]
    if name not in tools.names:
        return False
    i = colon + 1
    while i < len(rest) and rest[i] in _DIGITS and i - colon <= 9:
        i += 1
    if i == len(rest):
        return i - colon <= 9
    if i == colon + 1 or rest[i] != "{":
        return False
    end = len(KIMI_PREFIX) + i
    return name, text[:end], end


def mistral_head(text: str, tools: DeclaredTools) -> tuple[str, None, int] | bool:
    """A stripped Mistral call's head ``NAME{`` at ``text``'s start: ``(name, None, len(NAME))`` when complete; True
    while ``text`` can still become one; False once it cannot."""
    brace = text.find("{")
    if brace < 0:
        return any(name.startswith(text) for name in tools.names)
    name = text[:brace]
    return (name, None, brace) if name in tools.names else False


class StrippedCalls:
    """Mixin for a JsonCallParser family: content lines that are calls with their markers stripped (see the
    module). The family sets :attr:`stripped_head` (:func:`kimi_head` or :func:`mistral_head`) and has
    ``self._declared`` (None without tools)."""

    stripped_head: Any = None

    def _stripped_init(self) -> None:
        self._line_start = True   # the content sent so far ends a line (or none was sent: the answer's start)
        self._after_stripped = False  # right after a recovered call: another may follow at once
        self._cand: list | None = None  # [head (name, id, at) or None, JsonValueScanner or None, chars fed]
        self._not_call = False    # the text at the buffer's read position was refused: read it as content

    def _emit_content(self, text: str) -> None:
        if text:
            self._line_start = text.endswith("\n")
            self._after_stripped = False
        super()._emit_content(text)

    def _stripped_active(self) -> bool:
        return (self._declared is not None and not self._in_reasoning and not self._reading_ids()
                and type(self).stripped_head is not None)

    def _text(self, buf: str, pos: int, final: bool) -> int | None:
        if not self._stripped_active():
            return super()._text(buf, pos, final)
        if self._cand is not None:
            return self._stripped_step(buf, pos, final)
        start = self._candidate_start(buf, pos)
        if start is None:
            self._not_call = False
            return super()._text(buf, pos, final)
        if start > pos:  # the text before the candidate, read as usual (no marker spans a line's end)
            self._not_call = False
            at = super()._text(buf[:start], pos, True)
            if at is None or at >= 0 or ~at != start:  # a marker before it: the state machine goes on from there
                return at
            pos = start
        self._cand = [None, None, 0]
        return self._stripped_step(buf, pos, final)

    def _candidate_start(self, buf: str, pos: int) -> int | None:
        """Where the first possible stripped call starts in ``buf[pos:]``: the read position when it is a line start
        (not just refused), else just after a ``\\n``; only where the first character may begin one."""
        tools = self._declared
        firsts = {"f"} if type(self).stripped_head is kimi_head else {n[0] for n in tools.names if n}
        if (self._line_start or self._after_stripped) and not self._not_call and buf[pos:pos + 1] in firsts:
            return pos
        i = pos
        while True:
            i = buf.find("\n", i)
            if i < 0 or i + 1 >= len(buf):  # (a line whose first character has not come: read when it comes)
                return None
            i += 1
            if buf[i] in firsts:
                return i

    def _stripped_step(self, buf: str, pos: int, final: bool) -> int | None:
        cand = self._cand
        text = buf[pos:]
        if cand[0] is None:
            head = type(self).stripped_head(text[:1024 + len(KIMI_PREFIX)], self._declared)
            if head is True and not final and len(text) <= 1024:
                return ~pos  # may still be a call: held
            if not isinstance(head, tuple):
                return self._stripped_back(pos)
            cand[0] = head
            cand[1] = JsonValueScanner(self.limits.max_depth)
            cand[2] = head[2]
        name, call_id, at = cand[0]
        scanner = cand[1]
        end = scanner.feed(text[cand[2]:])
        if not scanner.strict:
            return self._stripped_back(pos)
        if end < 0:
            cand[2] = len(text)
            if final or len(text) > self.limits.max_argument_bytes:
                return self._stripped_back(pos)
            return ~pos
        end += cand[2]
        written = text[:end]
        try:
            arguments = loads(written[at:], max_depth=self.limits.max_depth,
                              max_bytes=self.limits.max_argument_bytes)
        except ValueError:
            return self._stripped_back(pos)
        if not self._declared.arguments_fit(name, arguments):
            self._diagnostics.append(refused_diagnostic(
                STRIPPED_MARKERS, f"the arguments do not fit the schema of {name!r}", written))
            return self._stripped_back(pos)
        self._cand = None
        call = self._begin_call(name, source="content", call_id=call_id or f"call{self._call_count:05d}")
        call.diagnostics.append(drift_diagnostic(
            STRIPPED_MARKERS, "a call with its special tokens stripped (a detokenizer's skip_special_tokens); read "
            "as the call", written, call.index))
        closed = self._closed_stream(call).close(decoded=LadderResult(arguments, "repaired", [], None))
        finish_call(call, closed._replace(raw=written[at:]))
        self._after_stripped = True
        self._line_start = False
        return pos + end

    def _closed_stream(self, call):
        from .marker_json import StreamedCall
        return StreamedCall(call).stream

    def _stripped_back(self, pos: int) -> int:
        """Not a call: the held text is read as content from ``pos`` on, as it was before."""
        self._cand = None
        self._not_call = True
        self._after_stripped = False
        return pos


__all__ = ["STRIPPED_MARKERS", "StrippedCalls", "kimi_head", "mistral_head"]
