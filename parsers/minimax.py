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
from .engine.drift import drift_diagnostic
from .engine.xml_calls import MAX_HEAD_CHARS, WHITESPACE, Closer, XmlCallParser
from .engine.xml_drift import MISSING_CALL_WRAPPER, NO_TOOLS, ORPHAN_CALL_CLOSER

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

    text_markers = {"content": (BLOCK_OPEN, INVOKE_OPEN), "reasoning": (M["think_close"], BLOCK_OPEN)}
    framing = {("content", BLOCK_OPEN): 1, ("content", INVOKE_OPEN): 1, ("reasoning", M["think_close"]): 1}
    undecided_markers = frozenset((INVOKE_OPEN,))  # a call without its block only when the name is declared
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
              "invoke": "_invoke", "key": "_key_state", "bare_head": "_bare_head", "after_bare": "_after_bare"}

    def _text_marker(self, marker: str) -> None:
        self._state = "bare_head" if marker == INVOKE_OPEN else "block_start"

    def _bare_head(self, final: bool) -> bool:
        """``<invoke name="`` in content with no ``<minimax:tool_call>`` before it: a call only when the name is
        a declared tool (``missing_call_wrapper``, as Qwen's ``<function=`` without ``<tool_call>``); otherwise
        it is content, as before. From token ids a call needs its block's control-token opener, so there it
        stays content."""
        buf, pos = self._buf, self._pos
        end = buf.find(ATTR_CLOSE, pos, pos + MAX_HEAD_CHARS + len(ATTR_CLOSE))
        if end < 0 and not final and len(buf) - pos <= MAX_HEAD_CHARS:
            return False
        name = buf[pos:end] if end >= 0 else ""
        framing = "".join(self._gap)
        self._gap = []
        named = name and not any(ch in name for ch in '<>"\n')
        if named and self._names is not None and name in self._names and not self._reading_ids():
            self._pos = end + len(ATTR_CLOSE)
            self._open_call(name)
            self._drift(MISSING_CALL_WRAPPER, f"{INVOKE_OPEN}{name}{ATTR_CLOSE} came without {BLOCK_OPEN} before "
                        "it", raw=INVOKE_OPEN + name + ATTR_CLOSE)
            self._state = "invoke"
            return True
        if named and not self._reading_ids():
            self._refuse(MISSING_CALL_WRAPPER, NO_TOOLS if self._names is None else f"{name!r} is not a declared "
                         "tool", raw=INVOKE_OPEN + name + ATTR_CLOSE)
        self._emit_content(framing + INVOKE_OPEN)
        self._state = "text"
        return True

    def _block_state(self) -> str:
        """Where a finished ``</invoke>`` leads: the block, or (a call written without its block) what follows."""
        bare = self.call is not None and any(d.code == MISSING_CALL_WRAPPER for d in self.call.diagnostics)
        return "after_bare" if bare else "block"

    def _after_bare(self, final: bool) -> bool:
        """After a call written without its block: its orphan ``</minimax:tool_call>`` is dropped
        (``drift_orphan_call_closer``), another ``<invoke name="`` is read as one more such call; anything else
        is content again (the whitespace before it framing)."""
        buf, pos = self._buf, self._pos
        end = pos
        while end < len(buf) and buf[end] in WHITESPACE:
            end += 1
        self._gap.append(buf[pos:end])
        self._pos = end
        if end == len(buf) and not final:
            return False
        if self._marker_at(buf, end, BLOCK_CLOSE):
            self._pos = end + len(BLOCK_CLOSE)
            self._gap = []
            index = self._call_count - 1
            self._diagnostics.append(drift_diagnostic(
                ORPHAN_CALL_CLOSER, f"{BLOCK_CLOSE} closed call {index}, whose {BLOCK_OPEN} was missing; dropped",
                raw=BLOCK_CLOSE, call_index=index))
            self._state = "text"
            return True
        if buf.startswith(INVOKE_OPEN, end):
            self._pos = end + len(INVOKE_OPEN)
            self._state = "bare_head"  # the gap is its framing, given back if it is not a call
            return True
        if not final and any(m.startswith(buf[end:]) for m in (BLOCK_CLOSE, INVOKE_OPEN)):
            return False
        self._gap = []
        self._state = "text"
        return True

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
        text = self._take()
        if marker == BLOCK_CLOSE and self._python_call(text):  # NAME(k=v, ...) as the whole block (drift)
            self._state = "text"
            return True
        self._stray(text)  # an empty block
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
        block = self._block_state()
        self._finish_call()
        self._state = {INVOKE_CLOSE: block, BLOCK_CLOSE: "text", INVOKE_OPEN: "head"}[marker]
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
        block = self._block_state()
        self._finish_call()
        self._state = block if closer.tag == INVOKE_CLOSE else "text"
        self._unread(gap)
