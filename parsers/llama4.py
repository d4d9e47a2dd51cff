"""Llama 4 stream parser: ``<|python_start|>CONTENT<|python_end|>`` then ``{"name": ..., "parameters": {...}}`` calls.

The Llama 4 template writes an assistant turn with calls as its content inside ``<|python_start|>`` …
``<|python_end|>``, then the calls as JSON objects written back to back (no separator); a turn without calls
is plain content. After the block the Llama 3.1 rules apply unchanged (:class:`~toolwire.parsers.llama.LlamaParser`):
a JSON object naming a tool is a call, anything else is content.

Accepted variant: the calls written *inside* the block (``<|python_start|>{"name": …}<|python_end|>``, a
shape Llama 4 models are reported to write, vLLM #16214) are read as calls, each ``repaired`` with a
``calls_in_python_block`` diagnostic. A block the output never closes leaves its text in content with a
``python_block_not_closed`` note.
"""

from __future__ import annotations

from typing import Any, Sequence

from .engine.call_builder import CallBuilder
from .engine.json_arguments import worse_status
from .engine.lexer import MarkerScanner
from .llama import _AFTER, _START, LlamaParser

from toolwire.families.llama4 import LLAMA4, MARKERS
PY_START, PY_END = MARKERS["python_start"], MARKERS["python_end"]
_END_SCAN = MarkerScanner((PY_END,))
_BLANK = " \t\r\n"

_HEAD, _BLOCK = 100, 101  # states added to LlamaParser's


class Llama4Parser(LlamaParser):
    """Llama 4 output: content, or a ``<|python_start|>`` content block followed by JSON calls."""

    family = LLAMA4
    python_tag = None  # Llama 4's vocabulary has no <|python_tag|>: written, it is text (no built-in calls)

    def __init__(self, tools: Sequence[Any] | None = None, *, thinking: bool = False, **options: Any):
        super().__init__(tools, thinking=thinking, **options)
        self._steps = {**self._steps, _HEAD: self._head, _BLOCK: self._block, _AFTER: self._after_call}
        self._state = _HEAD
        self._block_fresh = False  # inside the block, nothing read yet (calls may start here)
        self._in_block = False     # reading calls inside the block (the accepted variant)
        self._fresh_blanks: list[str] = []  # blanks right after <|python_start|>, until a non-blank decides

    # ---- the block
    def _head(self, buf: str, pos: int, final: bool) -> int | None:
        """The very start: ``<|python_start|>`` opens the block; anything else goes to the Llama 3.1 rules."""
        rest = buf[pos:pos + len(PY_START)]
        if self._marker_at(buf, pos, PY_START):
            self._state, self._block_fresh = _BLOCK, True
            return pos + len(PY_START)
        if not final and len(rest) < len(PY_START) and PY_START.startswith(rest):
            return None
        self._state = _START
        return pos

    def _block(self, buf: str, pos: int, final: bool) -> int | None:
        """Content up to ``<|python_end|>``; a first non-blank ``{`` may start calls written inside the block."""
        lead = ""  # blanks at the block's start, read by earlier deltas (kept apart: each is scanned once)
        if self._block_fresh:
            i = pos
            while i < len(buf) and buf[i] in _BLANK:
                i += 1
            if i == len(buf) and not final:
                self._fresh_blanks.append(buf[pos:])
                return None if pos == len(buf) else len(buf)
            self._block_fresh = False
            lead, self._fresh_blanks = "".join(self._fresh_blanks), []
            if buf[i:i + 1] == "{":
                self._in_block = True
                self._state = _START
                self._pending += lead + buf[pos:i]  # what _START would make of them: blanks before a call
                return i
        hit = _END_SCAN.scan(buf, pos, final=final, literal=self._tokens)
        self._emit_content(lead + buf[pos:hit.start])
        if hit.marker is None:
            if final:
                self._block_not_closed()
            return None if hit.start == pos else hit.start
        self._in_block = False
        self._state = _START
        return hit.end

    def _after_call(self, buf: str, pos: int, final: bool) -> int | None:
        """After a call inside the block, ``<|python_end|>`` closes the block (framing, like the blanks)."""
        if self._in_block:
            i = pos
            while i < len(buf) and buf[i] in _BLANK:
                i += 1
            rest = buf[i:i + len(PY_END)]
            if self._marker_at(buf, i, PY_END):
                self._in_block = False
                self._pending = ""
                return i + len(PY_END)
            if not final and len(rest) < len(PY_END) and PY_END.startswith(rest):
                self._pending += buf[pos:i]  # framing if the marker follows, else content (as in _after)
                return None if i == pos else i
        return self._after(buf, pos, final)

    def _to_content(self) -> None:
        super()._to_content()
        if self._in_block:  # text inside the block that is not a call: content up to <|python_end|>
            self._state = _BLOCK

    def _block_not_closed(self) -> None:
        self._in_block = False
        self._diag("python_block_not_closed", "the output ended inside <|python_start|> (no <|python_end|>)",
                   severity="info")

    def _at_end(self) -> None:
        super()._at_end()
        if self._in_block:  # calls inside the block, and the output ended before <|python_end|>
            self._block_not_closed()

    def _begin_call(self, name: str, *, source: str = "content", call_id: str | None = None) -> CallBuilder:
        call = super()._begin_call(name, source=source, call_id=call_id)
        if self._in_block:
            call.diag("calls_in_python_block", "the call was written inside <|python_start|>…<|python_end|>, "
                      "where the template puts content; accepted", severity="warning")
            call.status = worse_status(call.status, "repaired")
        return call
