"""Stream parser for Tencent Hy3 (``<tool_calls:opensource>`` blocks of GLM-style key/value calls).

Output grammar (what follows the generation prompt; every tag carries the ``:opensource`` suffix)::

    REASONING</think:opensource>CONTENT<tool_calls:opensource>\\n
    <tool_call:opensource>NAME<tool_sep:opensource>\\n
    <arg_key:opensource>K</arg_key:opensource>\\n<arg_value:opensource>V</arg_value:opensource>\\n
    </tool_call:opensource>\\n
    </tool_calls:opensource>

With ``thinking=True`` the prompt opened ``<think:opensource>`` (effort ``low``/``high``), so the output starts
inside reasoning; with thinking off the prompt closed an empty block and output starts in content. Content and
reasoning carry no framing; whitespace between structural tags is framing; values are byte-exact (strings as
written, other values JSON typed by the tool's schema). A value ends at ``</arg_value:opensource>`` followed by
the next key, the end of the call or block, or the end of the output (the closing rule of
:mod:`toolwire.parsers.engine.xml_calls`); a value left unclosed ends at ``</tool_call:opensource>`` (diagnosed repair).
A call is started once ``<tool_sep:opensource>`` ends its name; output that ends inside a call header gives a
``truncated_call_header`` diagnostic and no call.
"""

from __future__ import annotations

from .engine.lexer import MarkerScanner
from .engine.safe_json import loads
from .engine.xml_calls import WHITESPACE, Closer, XmlCallParser
from .engine.xml_drift import STRAY_CLOSER, stray_closer_name

_T = ":opensource"
from toolwire.families.hy3 import HY3, MARKERS
M = MARKERS
CALLS_OPEN, CALLS_CLOSE, CALL_OPEN, CALL_CLOSE = M["calls_open"], M["calls_close"], M["call_open"], M["call_close"]
SEP, KEY_OPEN, KEY_CLOSE, VALUE_OPEN, VALUE_CLOSE = M["sep"], M["key_open"], M["key_close"], M["value_open"], \
    M["value_close"]

_BLOCK = MarkerScanner((CALL_OPEN, CALLS_CLOSE))
_HEAD = MarkerScanner((SEP, KEY_OPEN, CALL_CLOSE, CALL_OPEN, CALLS_CLOSE))
_ARGS = MarkerScanner((KEY_OPEN, CALL_CLOSE, CALL_OPEN, CALLS_CLOSE))
_KEY = MarkerScanner((KEY_CLOSE, VALUE_OPEN, CALL_CLOSE))
_AFTER_KEY = MarkerScanner((VALUE_OPEN, KEY_OPEN, CALL_CLOSE, CALL_OPEN, CALLS_CLOSE))


class Hy3Parser(XmlCallParser):
    """Hy3 output (see the module docstring)."""

    text_markers = {"content": (CALLS_OPEN,), "reasoning": (M["think_close"], CALLS_OPEN)}
    think_open, think_close = M["think_open"], M["think_close"]
    value_closers = {
        VALUE_CLOSE: Closer(VALUE_CLOSE, (KEY_OPEN, CALL_CLOSE, CALL_OPEN, CALLS_CLOSE)),
        CALL_CLOSE: Closer(CALL_CLOSE, (CALL_OPEN, CALLS_CLOSE), ends_call=True),
    }
    family = HY3
    """The end-of-turn token, for the shared machinery that drops one left at the very end of an output."""
    states = {"block": "_block", "head": "_head", "args": "_args", "key": "_key_state", "after_key": "_after_key"}

    def __init__(self, tools=None, *, thinking: bool = False, **options):
        super().__init__(tools, thinking=thinking, **options)
        self._mode = "reasoning" if thinking else "content"

    # ---- the call block
    def _text_marker(self, marker: str) -> None:
        self._state = "block"
        self._parts = []

    def _block(self, final: bool) -> bool:
        """Between calls: the next call, or the end of the block."""
        marker = self._between(_BLOCK, final)
        if marker is None:
            return False
        if marker == CALL_OPEN:
            self._state = "head"
        else:
            self._state = "text"
        return True

    def _end_structure(self) -> None:
        if self._state == "block":
            self._diag("unclosed_tool_calls", f"the output ended before {CALLS_CLOSE}", severity="info")

    # ---- one call
    def _head(self, final: bool) -> bool:
        marker = self._collect(_HEAD, final, self._head_room())
        if self._head_too_long():
            text = CALL_OPEN + self._take_overlong_head(marker)
            self._diag("malformed_tool_call", "a call name ran too long without <tool_sep:opensource>; kept here",
                       raw=text)
            self._state = "block"
            return True
        if marker is None:
            return False
        name = self._take()
        if not name.strip():  # no tool name: not a call (never one with an empty name); its text is kept
            self._diag("not_a_tool_call", f"{CALL_OPEN} was not followed by a tool name; kept here",
                       raw=CALL_OPEN + name)
            self._unread(marker)  # what follows is read as the block's text (kept too)
            self._state = "block"
            return True
        if marker == CALL_CLOSE and self._python_call(name):  # NAME(k=v, ...) as the whole call (drift)
            self._state = "block"
            return True
        stray, why = stray_closer_name(self.tools, name, (VALUE_CLOSE, KEY_CLOSE)) if marker == CALL_CLOSE \
            else (None, None)
        if why is not None:
            self._refuse(STRAY_CLOSER, why, raw=name)
        self._open_call(stray or name)
        if stray is not None:  # NAME</arg_value:opensource></tool_call:opensource>: a closer glued to the name
            self._raw(name[len(stray):])
            self._drift(STRAY_CLOSER, f"a closing tag glued to the tool name {stray!r} was removed", raw=name)
            self._after_call(marker)
            return True
        if marker == SEP:
            self._raw(marker)
            self._state = "args"
            return True
        self._repair("missing_tool_sep", f"the call name was not followed by {SEP}")
        self._key_or_call_end(marker)
        return True

    def _key_or_call_end(self, marker: str) -> None:
        """``marker`` followed a call's name or argument: the next key, or the end of the call."""
        if marker == KEY_OPEN:
            self._raw(marker)
            self._state = "key"
        else:
            self._after_call(marker)

    def _after_call(self, marker: str) -> None:
        """``marker`` ended the call: its own close (next: the block), a new call, or the block's close."""
        if marker != CALL_CLOSE:
            self._repair("unclosed_call", f"{CALL_CLOSE} is missing before {marker}")
        self._finish_call()
        self._state = {CALL_CLOSE: "block", CALL_OPEN: "head", CALLS_CLOSE: "text"}[marker]

    def _args(self, final: bool) -> bool:
        marker = self._collect(_ARGS, final)
        if marker is None and not final:
            return False
        text = self._take()
        self._raw(text)
        if not self._json_arguments(text):
            self._stray(text)
        if marker is None:
            return False
        self._key_or_call_end(marker)
        return True

    def _json_arguments(self, text: str) -> bool:
        """A JSON object written in place of the key/value pairs (as Hy3 preview checkpoints do,
        ``NAME<tool_sep:opensource>{...}``): taken as the arguments, a diagnosed repair."""
        body = text.strip(WHITESPACE)
        if not body.startswith("{") or self.call is None or self.call.arguments:
            return False
        try:
            value = loads(body)
        except ValueError:
            return False
        if not isinstance(value, dict):
            return False
        for key, item in value.items():
            self.call.value(key, item)
        self._repair("arguments_json_object", "the arguments were written as one JSON object instead of "
                     f"{KEY_OPEN} / {VALUE_OPEN} pairs", raw=body)
        return True

    def _key_state(self, final: bool) -> bool:
        marker = self._read_key(_KEY, final)
        if marker is None:
            return False
        self._raw(marker)
        if marker == KEY_CLOSE:
            self._state = "after_key"
        elif marker == VALUE_OPEN:
            self._repair("unclosed_key", f"argument name {self._key!r} was not closed before {VALUE_OPEN}")
            self._start_value(self._key)
        else:
            self._missing_value()
            self._after_call(marker)
        return True

    def _after_key(self, final: bool) -> bool:
        marker = self._between(_AFTER_KEY, final)
        if marker is None:
            return False
        if marker == VALUE_OPEN:
            self._raw(marker)
            self._start_value(self._key)
            return True
        self._missing_value()
        self._key_or_call_end(marker)
        return True

    def _unclosed_value(self, closer: Closer) -> None:
        self._repair("implicit_parameter_close", f"argument {self._key!r} was not closed before {closer.tag!r}")

    def _value_closed(self, closer: Closer, gap: str) -> None:
        if closer.ends_call:
            self._unclosed_value(closer)
            self._finish_call()
            self._state = "block"
            self._unread(gap)
        else:
            self._state = "args"

    # ---- end of output
    def _at_end(self) -> None:
        if self._state == "head":
            header = CALL_OPEN + self._take() + self._buf[self._pos:]
            self._pos = len(self._buf)
            self._diag("truncated_call_header", "the output ended inside a call header, before its name was "
                       "complete", severity="error", raw=header)
            self._truncated = True
            self._state = "text"
            return
        super()._at_end()


__all__ = ["MARKERS", "Hy3Parser"]
