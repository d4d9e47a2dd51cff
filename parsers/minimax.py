"""Stream parser for MiniMax-M2 (``<minimax:tool_call>`` blocks of ``<invoke>`` / ``<parameter>`` elements).

Output grammar (what follows the generation prompt ``]~b]ai\\n<think>\\n``): the model always thinks, so
the output starts inside reasoning: ``REASONING\\n</think>\\n\\nCONTENT\\n<minimax:tool_call>\\n<invoke
name="f">\\n<parameter name="k">v</parameter>\\n</invoke>\\n</minimax:tool_call>``.

Framing removed, nothing more: one ``\\n`` before ``</think>``, up to two ``\\n`` after it, one ``\\n`` before
``<minimax:tool_call>`` in content, and whitespace between structural elements. A value ends at
``</parameter>`` followed by ``<parameter name="`` / ``</invoke>`` (or, when ``</invoke>`` is missing,
``<invoke name="`` / ``</minimax:tool_call>``) / the end of output; a value left unclosed
ends at ``</invoke>`` followed by ``<invoke name="`` / ``</minimax:tool_call>`` / the end, or at
``</minimax:tool_call>`` at the end (diagnosed repairs).
"""

from __future__ import annotations

from .engine.lexer import MarkerScanner
from .engine.xml_calls import Closer, XmlCallParser

from toolwire.families.minimax import MARKERS, MINIMAX_M2
M = MARKERS
BLOCK_OPEN, BLOCK_CLOSE = M["block_open"], M["block_close"]
INVOKE_OPEN, INVOKE_CLOSE = M["invoke_open"], M["invoke_close"]
PARAM_OPEN, PARAM_CLOSE = M["parameter_open"], M["parameter_close"]
ATTR_CLOSE = M["attr_close"]

_BLOCK = MarkerScanner((INVOKE_OPEN, BLOCK_CLOSE))
_HEAD = MarkerScanner((ATTR_CLOSE,))
_INVOKE = MarkerScanner((PARAM_OPEN, INVOKE_CLOSE, BLOCK_CLOSE, INVOKE_OPEN))
_KEY = MarkerScanner((ATTR_CLOSE, PARAM_CLOSE, INVOKE_CLOSE))


class MiniMaxParser(XmlCallParser):
    """MiniMax-M2 output; starts inside the reasoning block whatever ``thinking`` says (the model always thinks
    and the generation prompt always opens ``<think>``)."""

    text_markers = {"content": (BLOCK_OPEN,), "reasoning": (M["think_close"], BLOCK_OPEN)}
    framing = {("content", BLOCK_OPEN): 1, ("reasoning", M["think_close"]): 1}
    after_think = 2
    after_think_open = 1
    family = MINIMAX_M2
    opaque_tokens = (M["bos"], M["role"])  # "]~!b[e~[" is ]~!b[ then text, as the tokenizer reads it
    value_closers = {
        PARAM_CLOSE: Closer(PARAM_CLOSE, (PARAM_OPEN, INVOKE_CLOSE, INVOKE_OPEN, BLOCK_CLOSE)),
        INVOKE_CLOSE: Closer(INVOKE_CLOSE, (INVOKE_OPEN, BLOCK_CLOSE), ends_call=True),
        BLOCK_CLOSE: Closer(BLOCK_CLOSE, (), ends_call=True),
    }
    states = {"block_start": "_block_start", "head_first": "_head", "block": "_block", "head": "_head",
              "invoke": "_invoke", "key": "_key_state"}

    def _text_marker(self, marker: str) -> None:
        self._state = "block_start"

    def _unfinished_head(self, text: str) -> str | None:
        if self._state in ("block_start", "head_first"):
            return BLOCK_OPEN + text
        return INVOKE_OPEN + text if self._state == "head" else None

    def _block_start(self, final: bool) -> bool:
        """Right after ``<minimax:tool_call>``: the text up to the first ``<invoke name="`` is kept with the
        head (``self._parts``) until the name is complete, so an unfinished block can be given back whole."""
        marker = self._collect(_BLOCK, final)
        if marker == INVOKE_OPEN:
            self._parts = ["".join(self._parts) + INVOKE_OPEN]
            self._state = "head_first"
            return True
        if marker is None:
            return False
        self._stray(self._take())  # an empty block
        self._state = "text"
        return True

    def _end_structure(self) -> None:
        self._diag("unclosed_block", f"the output ended before {BLOCK_CLOSE}", severity="info")
        self._truncated = True

    def _block(self, final: bool) -> bool:
        marker = self._between(_BLOCK, final)
        if marker is None:
            return False
        self._state = "head" if marker == INVOKE_OPEN else "text"
        return True

    def _head(self, final: bool) -> bool:
        first = self._state == "head_first"
        marker = self._collect(_HEAD, final, self._head_room(skip=1 if first else 0))
        prefix = self._parts.pop(0) if first else ""  # the block's text up to this name (see _block_start)
        if self._head_too_long():
            self._stray(prefix[:-len(INVOKE_OPEN)])
            self._diag("stray_text", f"{INVOKE_OPEN} was not followed by a tool name; ignored",
                       raw=INVOKE_OPEN + self._take_overlong_head(marker))
            self._state = "block"
            return True
        if marker is None:
            if first:
                self._parts.insert(0, prefix)
            return False
        name = self._take()
        self._stray(prefix[:-len(INVOKE_OPEN)])
        if not name.strip():  # names no tool: not a call (never one with an empty name); its text is kept
            self._diag("not_a_tool_call", f"{INVOKE_OPEN}{ATTR_CLOSE} names no tool; kept here",
                       raw=INVOKE_OPEN + name + marker)
            self._state = "block"
            return True
        self._open_call(name)
        self._state = "invoke"
        return True

    def _invoke(self, final: bool) -> bool:
        marker = self._between(_INVOKE, final)
        if marker is None:
            return False
        if marker == PARAM_OPEN:
            self._raw(marker)
            self._state = "key"
            return True
        if marker != INVOKE_CLOSE:
            self._repair("unclosed_invoke", f"{marker!r} came before {INVOKE_CLOSE}")
        self._finish_call()
        self._state = {INVOKE_CLOSE: "block", BLOCK_CLOSE: "text", INVOKE_OPEN: "head"}[marker]
        return True

    def _key_state(self, final: bool) -> bool:
        marker = self._read_key(_KEY, final)
        if marker is None:
            return False
        if marker == ATTR_CLOSE:
            self._raw(marker)
            self._start_value(self._key)
            return True
        self._missing_value()
        if marker == PARAM_CLOSE:
            self._raw(marker)
            self._state = "invoke"
        else:
            self._finish_call()
            self._state = "block"
        return True

    def _value_closed(self, closer: Closer, gap: str) -> None:
        if closer.tag == PARAM_CLOSE:
            self._state = "invoke"
            return
        self._unclosed_value(closer)
        self._finish_call()
        self._state = "block" if closer.tag == INVOKE_CLOSE else "text"
        self._unread(gap)
