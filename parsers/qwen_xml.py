"""Stream parser for Qwen3-Coder-style XML tool calls, shared by Qwen3-Coder / Qwen3.5 / Qwen3.6 and Seed-OSS.

Wire format (Qwen3-Coder; Seed-OSS wraps the same body in ``<seed:tool_call>`` and adds no ``\\n`` framing
inside values)::

    <tool_call>
    <function=NAME>
    <parameter=KEY>
    VALUE
    </parameter>
    </function>
    </tool_call>

One implementation, parametrized by an :class:`XmlGrammar` (markers plus framing). The rules, also written
in ``docs/xml-values.md``:

* **Exact whitespace.** Only the framing the template adds is removed: ``grammar.value_framing`` (``\\n`` for
  Qwen) once after ``<parameter=KEY>`` and once before the closing tag. Everything else in a value is kept.
* **Closing tag inside a value.** A ``</parameter>`` closes the value only when it is followed, after optional
  whitespace (space, tab, CR, LF), by ``<parameter=``, ``</function>``, the call's closing marker, or the end
  of the output. Otherwise it is value text. While undecided, the candidate tag and the whitespace after it
  are held back; everything before it has already streamed.
* **Unclosed parameters.** ``</function>`` (followed by the call's closing marker or the end) or the call's
  closing marker (followed by a new call or the end) also end an open value; the value is kept and the
  call is ``repaired`` with an ``unclosed_parameter`` diagnostic.
* **Typing** comes from the tool's JSON schema (:mod:`toolwire.parsers.schema_coerce`): string values stream
  as JSON string fragments as they arrive, holding back only a possible closing-tag prefix and one framing
  ``\\n``; other values are decoded and sent when complete.
* **Names** are matched exactly; a trailing newline in a function name is removed with a
  ``tool_name_repaired`` diagnostic (status ``repaired``). Unknown names give ``rejected`` candidates.

Every state keeps only a bounded tail in the buffer (a marker prefix, a name of at most
:data:`MAX_NAME_CHARS`); whitespace runs and junk are moved into lists, so streaming cost is linear.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Literal, Sequence

from .base import CallBuilder, StreamParser, tool_schemas
from .lexer import MarkerScanner
from .schema_coerce import coerce_argument, is_string_schema, parameter_schema

WHITESPACE = " \t\r\n"
"""Whitespace allowed between a closing tag and the structural marker that confirms it."""

MAX_NAME_CHARS = 256
"""A function or parameter name longer than this (no ``>`` yet) is malformed, not held back forever."""


class XmlGrammar:
    """Markers and framing of one XML-bodied family. Scanners are built once per grammar."""

    def __init__(self, *, call_open: str, call_close: str, think_open: str | None, think_close: str | None,
                 value_framing: str, reasoning_framing: str, after_think_newlines: int,
                 before_call_newlines: int = 2, function_open: str = "<function=",
                 function_close: str = "</function>", parameter_open: str = "<parameter=",
                 parameter_close: str = "</parameter>"):
        self.call_open, self.call_close = call_open, call_close
        self.think_open, self.think_close = think_open, think_close
        self.function_open, self.function_close = function_open, function_close
        self.parameter_open, self.parameter_close = parameter_open, parameter_close
        self.value_framing = value_framing
        self.reasoning_framing = reasoning_framing
        self.after_think_newlines = after_think_newlines
        self.before_call_newlines = before_call_newlines
        self.content_scan = MarkerScanner([call_open])
        self.reasoning_scan = MarkerScanner([m for m in (think_close, call_open) if m])
        self.call_scan = MarkerScanner([function_open, call_close])
        self.body_scan = MarkerScanner([parameter_open, function_close, call_close, function_open])
        self.value_scan = MarkerScanner([parameter_close, function_close, call_close])
        self.after_function_scan = MarkerScanner([call_close, function_open, call_open])
        # what must follow a candidate closing tag inside a value for it to close the value ("" = end of output)
        self.followers: dict[str, tuple[str, ...]] = {
            parameter_close: (parameter_open, function_close, call_close, ""),
            function_close: (call_close, ""),
            call_close: (call_open, ""),
        }

    def unsafe_value(self, text: str) -> str | None:
        """The closing sequence that would end ``text`` early if it were rendered as a value, else None."""
        for terminator, followers in self.followers.items():
            start = text.find(terminator)
            while start >= 0:
                end = start + len(terminator)
                while end < len(text) and text[end] in WHITESPACE:
                    end += 1
                for follower in followers:
                    if follower and text.startswith(follower, end):
                        return text[start:end] + follower
                start = text.find(terminator, start + 1)
        return None


QWEN_GRAMMAR = XmlGrammar(call_open="<tool_call>", call_close="</tool_call>", think_open="<think>",
                          think_close="</think>", value_framing="\n", reasoning_framing="\n",
                          after_think_newlines=2)
"""Qwen3-Coder / Qwen3.5 / Qwen3.6: ``\\n`` framing inside values, ``<think>\\n...\\n</think>\\n\\n``."""

State = Literal["start", "content", "reasoning", "call", "func_name", "body", "param_name", "value_start",
                "value", "closing", "after_function", "between"]


class XmlToolParser(StreamParser):
    """Stream parser for one :class:`XmlGrammar`. Subclasses set ``grammar`` and ``reasoning_start``.

    ``reasoning_start``: ``"never"`` (no reasoning channel), ``"thinking"`` (the prompt opened the reasoning
    block when ``thinking=True``) or ``"marker"`` (the model opens it with ``grammar.think_open`` at the start).
    """

    grammar: ClassVar[XmlGrammar] = QWEN_GRAMMAR
    reasoning_start: ClassVar[str] = "never"

    def __init__(self, tools: Sequence[Any] | None = None, *, thinking: bool = False, **options: Any):
        super().__init__(tools, thinking=thinking, **options)
        self._schemas = tool_schemas(tools)
        if self.reasoning_start == "marker":
            self._state: State = "start"
        elif self.reasoning_start == "thinking" and thinking:
            self._state = "reasoning"
        else:
            self._state = "content"
        self._pos = 0
        self._final = False
        self._strip_newlines = 0          # framing newlines still to drop at the start of content
        self._source = "content"           # where the current call block was opened
        self._call: CallBuilder | None = None
        self._root: dict | None = None     # the current call's parameter schema
        self._key = ""
        self._typed: dict | None = None    # the current value's schema when it is not a plain string
        self._pieces: list[str] = []       # a non-string value's text
        self._pending = ("", "")           # (framing newline, candidate closing tag) while undecided
        self._gap: list[str] = []          # whitespace held after a candidate tag or after a call block
        self._carry = ""                   # a newline held after a rejected tag: value text or framing
        self._junk: list[str] = []         # unexpected text inside a call block

    # ------------------------------------------------------------------ driver
    def _advance(self, final: bool) -> None:
        self._pos, self._final = 0, final
        handlers = self._HANDLERS
        while handlers[self._state](self):
            pass
        if final:
            self._end_of_output()
        self._buf = self._buf[self._pos:]

    # ------------------------------------------------------------------ helpers
    def _take(self, end: int) -> str:
        """Consume ``buf[pos:end]``; inside a function body it also becomes the call's raw text."""
        text = self._buf[self._pos:end]
        self._pos = end
        if self._call is not None and self._state in ("body", "param_name", "value_start", "value", "closing"):
            self._call.raw(text)
        return text

    def _skip(self, n: int) -> None:
        self._pos += n

    def _whitespace_run(self) -> str:
        buf, start = self._buf, self._pos
        end = start
        while end < len(buf) and buf[end] in WHITESPACE:
            end += 1
        self._pos = end
        return buf[start:end]

    def _can_become(self, marker: str) -> bool:
        """The unconsumed rest of the buffer is a proper prefix of ``marker`` (more input may complete it)."""
        rest = len(self._buf) - self._pos
        return not self._final and rest < len(marker) and marker.startswith(self._buf[self._pos:])

    def _flush_junk(self, code: str = "unexpected_text") -> None:
        text = "".join(self._junk)
        self._junk = []
        if not text.strip(WHITESPACE):
            return  # framing whitespace
        message = "text outside the call structure was kept here, not in any argument"
        if self._call is not None:
            self._call.diag(code, message, raw=text)
            if self._call.status == "proposed":
                self._call.status = "repaired"
        else:
            self._diag(code, message, raw=text)

    def _value_piece(self, text: str) -> None:
        if not text:
            return
        if self._typed is None:
            self._call.string_piece(text)
        else:
            self._pieces.append(text)

    # ------------------------------------------------------------------ content and reasoning
    def _start(self) -> bool:
        marker = self.grammar.think_open
        if self._marker_at(self._buf, self._pos, marker):
            self._skip(len(marker))
            self._state = "reasoning"
            return True
        if self._can_become(marker):
            return False
        self._state = "content"
        return True

    def _content(self) -> bool:
        buf, g = self._buf, self.grammar
        while self._strip_newlines and self._pos < len(buf) and buf[self._pos] == "\n":
            self._pos += 1
            self._strip_newlines -= 1
        if self._pos < len(buf):
            self._strip_newlines = 0
        hit = g.content_scan.scan(buf, self._pos, final=self._final, literal=self._tokens)
        if hit.marker:
            self._emit_content(_rstrip_newlines(buf[self._pos:hit.start], g.before_call_newlines))
            self._pos = hit.end
            self._open_block("content")
            return True
        end = hit.start if self._final else _back_off_newlines(buf, self._pos, hit.start, g.before_call_newlines)
        self._emit_content(buf[self._pos:end])
        self._pos = end
        return False

    def _reasoning(self) -> bool:
        buf, g = self._buf, self.grammar
        hit = g.reasoning_scan.scan(buf, self._pos, final=self._final, literal=self._tokens)
        framing = len(g.reasoning_framing)
        if hit.marker == g.think_close:
            self._emit_reasoning(_rstrip_newlines(buf[self._pos:hit.start], framing))
            self._pos = hit.end
            self._state = "content"
            self._strip_newlines = g.after_think_newlines
            return True
        if hit.marker == g.call_open:
            self._emit_reasoning(buf[self._pos:hit.start])
            self._pos = hit.end
            self._open_block("reasoning")
            return True
        end = hit.start if self._final else _back_off_newlines(buf, self._pos, hit.start, framing)
        self._emit_reasoning(buf[self._pos:end])
        self._pos = end
        return False

    def _open_block(self, source: str) -> None:
        self._source = source
        self._state = "call"

    def _after_block(self) -> None:
        self._state = "reasoning" if self._source == "reasoning" else "between"
        self._gap = []

    def _between(self) -> bool:
        """After a call block in content: whitespace up to the next call (or the end) is framing."""
        self._gap.append(self._whitespace_run())
        g = self.grammar
        if self._pos == len(self._buf):
            if self._final:
                self._gap = []
                self._state = "content"
            return False
        if self._marker_at(self._buf, self._pos, g.call_open):
            self._gap = []
            self._skip(len(g.call_open))
            self._open_block("content")
            return True
        if self._can_become(g.call_open):
            return False
        self._emit_content("".join(self._gap))
        self._gap = []
        self._state = "content"
        return True

    # ------------------------------------------------------------------ call block
    def _scan_junk(self, scanner: MarkerScanner):
        hit = scanner.scan(self._buf, self._pos, final=self._final, literal=self._tokens)
        self._junk.append(self._take(hit.start))
        return hit

    def _in_call(self) -> bool:
        g = self.grammar
        hit = self._scan_junk(g.call_scan)
        if hit.marker == g.function_open:
            self._flush_junk()
            self._skip(len(hit.marker))
            self._state = "func_name"
            return True
        if hit.marker == g.call_close:
            if not "".join(self._junk).strip(WHITESPACE):
                self._diag("empty_tool_call", "a tool-call block without a function", severity="info")
            self._flush_junk("malformed_tool_call")
            self._skip(len(hit.marker))
            self._after_block()
            return True
        return False

    def _read_name(self) -> str | None:
        """A name ending at ``>``; None while incomplete. Too long: junk, and the block goes on."""
        end = self._buf.find(">", self._pos, self._pos + MAX_NAME_CHARS + 1)
        if end < 0:
            if len(self._buf) - self._pos > MAX_NAME_CHARS:
                raise _Malformed
            return None
        return self._buf[self._pos:end]

    def _func_name(self) -> bool:
        g = self.grammar
        try:
            name = self._read_name()
        except _Malformed:
            self._junk.append(g.function_open + self._take(self._pos + MAX_NAME_CHARS))
            self._flush_junk("malformed_function_name")
            self._state = "call"
            return True
        if name is None:
            return False
        self._skip(len(name) + 1)
        self._begin(name)
        self._state = "body"
        return True

    def _begin(self, written: str) -> None:
        name = written.rstrip("\r\n")
        self._call = call = self._begin_call(name, source=self._source)
        if name != written:
            call.diag("tool_name_repaired", f"a trailing newline after the function name {name!r} was removed")
            if call.status != "rejected":
                call.status = "repaired"
        self._root = self._schemas.get(name)

    def _finish_call(self, status: str | None = None) -> None:
        self._call.finish(status)
        self._call = None

    def _repair(self, code: str, message: str) -> None:
        self._call.diag(code, message)
        if self._call.status not in ("rejected", "truncated"):
            self._call.status = "repaired"

    def _body(self) -> bool:
        g = self.grammar
        hit = self._scan_junk(g.body_scan)
        if hit.marker is None:
            return False
        self._flush_junk()
        if hit.marker == g.parameter_open:
            self._take(hit.end)
            self._state = "param_name"
        elif hit.marker == g.function_close:
            self._skip(len(hit.marker))
            self._finish_call()
            self._state = "after_function"
        elif hit.marker == g.call_close:
            self._skip(len(hit.marker))
            self._repair("unclosed_function", f"{g.function_close} is missing before {g.call_close}")
            self._finish_call()
            self._after_block()
        else:  # a new <function= before this one was closed
            self._skip(len(hit.marker))
            self._repair("unclosed_function", f"{g.function_close} is missing before the next function")
            self._finish_call()
            self._state = "func_name"
        return True

    def _param_name(self) -> bool:
        try:
            key = self._read_name()
        except _Malformed:
            self._junk.append(self._take(self._pos + MAX_NAME_CHARS))
            self._flush_junk("malformed_parameter_name")
            self._state = "body"
            return True
        if key is None:
            return False
        self._take(self._pos + len(key) + 1)
        self._key = key
        schema = parameter_schema(self._root, key)
        self._typed = None if is_string_schema(schema, self._root) else (schema or {})
        self._state = "value_start"
        return True

    def _value_start(self) -> bool:
        framing = self.grammar.value_framing
        if framing:
            if self._pos == len(self._buf) and not self._final:
                return False
            if self._buf.startswith(framing, self._pos):
                self._take(self._pos + len(framing))
        if self._typed is None:
            self._call.begin_string(self._key)
        else:
            self._pieces = []
        self._carry = ""
        self._state = "value"
        return True

    def _value(self) -> bool:
        buf, g = self._buf, self.grammar
        framing = g.value_framing
        hit = g.value_scan.scan(buf, self._pos, final=self._final, literal=self._tokens)
        carry, self._carry = self._carry, ""
        if hit.marker:
            end = hit.start
            newline = ""
            if framing and end > self._pos and buf.startswith(framing, end - len(framing)):
                end -= len(framing)
                newline = framing
            elif end == self._pos and carry:
                newline, carry = carry, ""  # the held newline was the framing of this tag
            self._carried(carry)
            self._value_piece(self._take(end))
            self._pos = hit.end
            self._pending = (newline, hit.marker)
            self._gap = []
            self._state = "closing"
            return True
        end = hit.start
        if not self._final and framing:
            end = _back_off_newlines(buf, self._pos, end, 1)
        if end > self._pos or self._final:
            self._carried(carry)
            self._value_piece(self._take(end))
        else:
            self._carry = carry
        return False

    def _carried(self, text: str) -> None:
        """A held framing newline that turned out to be value text."""
        if text:
            self._call.raw(text)
            self._value_piece(text)

    def _closing(self) -> bool:
        """A candidate closing tag was seen: decide from what follows it whether it closes the value."""
        self._gap.append(self._whitespace_run())
        newline, tag = self._pending
        followers = self.grammar.followers[tag]
        at_end = self._pos == len(self._buf)
        if at_end and not self._final:
            return False
        confirmed = at_end or any(f and self._marker_at(self._buf, self._pos, f) for f in followers)
        if not confirmed:
            if any(f and self._can_become(f) for f in followers):
                return False
            text = newline + tag + "".join(self._gap)  # it was value text after all
            framing = self.grammar.value_framing
            if framing and text.endswith(framing):  # ...but its last newline may frame the next closing tag
                text, self._carry = text[:-len(framing)], framing
            self._call.raw(text)
            self._value_piece(text)
            self._gap = []
            self._state = "value"
            return True
        self._close_value()
        g = self.grammar
        if tag == g.parameter_close:
            self._call.raw(newline + tag + "".join(self._gap))
            self._state = "body"
        else:
            self._call.raw(newline)
            self._repair("unclosed_parameter", f"parameter {self._key!r} was not closed with {g.parameter_close}")
            if tag == g.call_close:
                self._repair("unclosed_function", f"{g.function_close} is missing before {g.call_close}")
                self._finish_call()
                self._after_block()
            else:
                self._finish_call()
                self._state = "after_function"
        self._gap = []
        return True

    def _close_value(self) -> None:
        call = self._call
        if self._typed is None:
            call.end_string()
            return
        coerce_argument(call, self._key, "".join(self._pieces), self._typed, self._root)
        self._pieces = []

    def _after_function(self) -> bool:
        g = self.grammar
        hit = self._scan_junk(g.after_function_scan)
        if hit.marker is None:
            return False
        self._flush_junk()
        self._skip(len(hit.marker))
        if hit.marker == g.call_close:
            self._after_block()
        elif hit.marker == g.function_open:
            self._state = "func_name"
        else:
            self._diag("unclosed_tool_call", f"{g.call_close} is missing before the next {g.call_open}",
                       severity="info")
            self._open_block(self._source)
        return True

    # ------------------------------------------------------------------ end of output
    def _end_of_output(self) -> None:
        state, g = self._state, self.grammar
        if state in ("call", "func_name"):
            rest = self._take(len(self._buf))
            self._junk.append((g.function_open if state == "func_name" else "") + rest)
            text = g.call_open + "".join(self._junk)
            self._junk = []
            self._diag("truncated_tool_call", "the output ended inside a tool call before its function name "
                       "was complete", severity="error", raw=text)
            self._truncated = True
        elif state in ("body", "param_name", "value_start", "value", "closing"):
            if state == "param_name":
                self._call.diag("truncated_parameter", "the output ended inside a parameter name",
                                raw=g.parameter_open + self._take(len(self._buf)))
            if state in ("value", "closing"):
                self._close_value()
            self._flush_junk()
            self._call.diag("truncated_call", "the output ended before the call was complete", severity="error")
            self._finish_call("truncated")
            self._truncated = True
        elif state == "after_function":
            self._flush_junk()
            self._diag("unclosed_tool_call", f"the output ended before {g.call_close}", severity="info")
        self._state = "content"

    _HANDLERS: ClassVar[dict[str, Callable[["XmlToolParser"], bool]]] = {
        "start": _start, "content": _content, "reasoning": _reasoning, "call": _in_call,
        "func_name": _func_name, "body": _body, "param_name": _param_name, "value_start": _value_start,
        "value": _value, "closing": _closing, "after_function": _after_function, "between": _between,
    }


class _Malformed(Exception):
    """A name ran past MAX_NAME_CHARS without its closing ``>``."""


def _rstrip_newlines(text: str, limit: int) -> str:
    """``text`` without up to ``limit`` trailing ``\\n`` (the framing a template puts before a marker)."""
    n = 0
    while n < limit and len(text) > n and text[-1 - n] == "\n":
        n += 1
    return text[:len(text) - n] if n else text


def _back_off_newlines(buf: str, start: int, end: int, limit: int) -> int:
    """Move ``end`` back over up to ``limit`` ``\\n`` (not before ``start``): they may turn out to be framing."""
    n = 0
    while n < limit and end - n > start and buf[end - 1 - n] == "\n":
        n += 1
    return end - n


class Qwen3CoderParser(XmlToolParser):
    """Qwen3-Coder: no reasoning channel; calls in content."""

    grammar = QWEN_GRAMMAR
    reasoning_start = "never"


class Qwen35Parser(XmlToolParser):
    """Qwen3.5 / Qwen3.6: with ``thinking=True`` the prompt opened ``<think>\\n``, so output starts in reasoning."""

    grammar = QWEN_GRAMMAR
    reasoning_start = "thinking"


__all__ = ["XmlGrammar", "XmlToolParser", "QWEN_GRAMMAR", "Qwen3CoderParser", "Qwen35Parser", "MAX_NAME_CHARS",
           "WHITESPACE"]
