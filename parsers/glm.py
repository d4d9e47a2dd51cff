"""Stream parsers for GLM-4.5 / 4.6 (:class:`GlmParser`) and GLM-4.7 (:class:`Glm47Parser`).

Output grammar (what follows the generation prompt):

* 4.5 / 4.6: ``\\n`` framing, an optional ``<think>...</think>`` at the very start, ``\\n``, content, and
  calls each framed as ``\\n<tool_call>NAME\\n<arg_key>k</arg_key>\\n<arg_value>v</arg_value>\\n...</tool_call>``.
  The generation prompt never opens reasoning; the model writes ``<think>`` itself.
* 4.7: no framing at all. With thinking on the prompt already opened ``<think>``, so the output starts
  inside reasoning and ``</think>`` ends it.

Only the framing newlines are removed; values are byte-exact. A value ends at ``</arg_value>`` followed by
``<arg_key>`` / ``</tool_call>`` / ``<tool_call>`` / the end of output; a value left unclosed ends at ``</tool_call>`` followed
by ``<tool_call>`` / the end (diagnosed repair). A newline ends the call name: framing in 4.5 / 4.6, a
diagnosed repair in 4.7. Names are matched exactly against the declared tools.
"""

from __future__ import annotations

from .lexer import MarkerScanner
from .xml_calls import Closer, XmlCallParser

# One marker table shared by the renderer (toolwire.templates.glm re-exports it) and this parser.
MARKERS = {
    "gmask": "[gMASK]",
    "sop": "<sop>",
    "system": "<|system|>",
    "user": "<|user|>",
    "assistant": "<|assistant|>",
    "observation": "<|observation|>",
    "nothink": "/nothink",
    "think_open": "<think>",
    "think_close": "</think>",
    "call_open": "<tool_call>",
    "call_close": "</tool_call>",
    "key_open": "<arg_key>",
    "key_close": "</arg_key>",
    "value_open": "<arg_value>",
    "value_close": "</arg_value>",
    "response_open": "<tool_response>",
    "response_close": "</tool_response>",
}
M = MARKERS

CALL_OPEN, CALL_CLOSE = M["call_open"], M["call_close"]
KEY_OPEN, KEY_CLOSE = M["key_open"], M["key_close"]
VALUE_OPEN, VALUE_CLOSE = M["value_open"], M["value_close"]

_HEAD = MarkerScanner(("\n", KEY_OPEN, CALL_CLOSE))
_ARGS = MarkerScanner((KEY_OPEN, CALL_CLOSE, CALL_OPEN))
_KEY = MarkerScanner((KEY_CLOSE, VALUE_OPEN, CALL_CLOSE))
_AFTER_KEY = MarkerScanner((VALUE_OPEN, KEY_OPEN, CALL_CLOSE, CALL_OPEN))


class GlmParser(XmlCallParser):
    """GLM-4.5 / 4.6 output: newline framing, the model opens ``<think>`` itself (only at the start)."""

    text_markers = {"content": (CALL_OPEN,), "reasoning": (M["think_close"], CALL_OPEN)}
    framing = {("content", CALL_OPEN): 1}
    after_think = 1
    value_closers = {
        VALUE_CLOSE: Closer(VALUE_CLOSE, (KEY_OPEN, CALL_CLOSE, CALL_OPEN)),
        CALL_CLOSE: Closer(CALL_CLOSE, (CALL_OPEN,), ends_call=True),
    }
    states = {"start": "_start", "head": "_head", "args": "_args", "key": "_key_state", "after_key": "_after_key"}
    newline_after_name = True

    def __init__(self, tools=None, **options):
        super().__init__(tools, **options)
        self._begin()

    def _begin(self) -> None:
        """The output starts with a framing newline; a ``<think>`` right after it opens the reasoning block."""
        self._state = "start"
        self._skip = 1

    # ---- text
    def _text_marker(self, marker: str) -> None:
        self._state = "head"
        self._parts = []

    # ---- calls
    def _head(self, final: bool) -> bool:
        marker = self._collect(_HEAD, final)
        if self._head_too_long():
            self._not_a_call(self._take_overlong_head(marker))
            return True
        if marker is None:
            return False
        self._open_call(self._take())
        if marker == "\n":
            if not self.newline_after_name:
                self._repair("tool_name_newline", "a newline after the tool name was removed", raw="\n")
            self._state = "args"
        elif marker == KEY_OPEN:
            self._raw(marker)
            self._state = "key"
        else:
            self._end_call()
        return True

    def _not_a_call(self, head: str) -> None:
        text = CALL_OPEN + head
        self._diag("not_a_tool_call", f"{CALL_OPEN} was not followed by a tool name; kept as text")
        self._emit(text)
        self._state = "text"

    def _end_call(self, status: str | None = None) -> None:
        self._finish_call(status)
        self._state = "text"

    def _next_call(self) -> None:
        self._repair("unclosed_call", f"a new {CALL_OPEN} started before {CALL_CLOSE}")
        self._end_call()
        self._text_marker(CALL_OPEN)

    def _args(self, final: bool) -> bool:
        marker = self._between(_ARGS, final)
        if marker is None:
            return False
        self._next_argument(marker)
        return True

    def _next_argument(self, marker: str) -> None:
        """After an argument: the next key, the end of the call, or a new call (this one left unclosed)."""
        if marker == KEY_OPEN:
            self._raw(marker)
            self._state = "key"
        elif marker == CALL_CLOSE:
            self._end_call()
        else:
            self._next_call()

    def _key_state(self, final: bool) -> bool:
        marker = self._read_key(_KEY, final)
        if marker is None:
            return False
        if marker == KEY_CLOSE:
            self._raw(marker)
            self._state = "after_key"
        elif marker == VALUE_OPEN:
            self._raw(marker)
            self._repair("unclosed_key", f"argument name {self._key!r} was not closed before {VALUE_OPEN}")
            self._start_value(self._key)
        else:
            self._missing_value()
            self._end_call()
        return True

    def _after_key(self, final: bool) -> bool:
        marker = self._between(_AFTER_KEY, final)
        if marker is None:
            return False
        if marker == VALUE_OPEN:
            self._raw(marker)
            self._start_value(self._key)
        else:
            self._missing_value()
            self._next_argument(marker)
        return True

    def _value_closed(self, closer: Closer, gap: str) -> None:
        if closer.ends_call:
            self._unclosed_value(closer)
            self._end_call()
            self._unread(gap)
        else:
            self._state = "args"


class Glm47Parser(GlmParser):
    """GLM-4.7 output: no framing; with thinking on, the output starts inside the reasoning block."""

    framing = {}
    after_think = 0
    newline_after_name = False

    def _begin(self) -> None:
        self._state = "text"
        self._mode = "reasoning" if self.thinking else "content"
