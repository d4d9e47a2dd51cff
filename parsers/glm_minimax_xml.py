"""Streaming machinery shared by the GLM and MiniMax-M2 parsers: text with reasoning, and tagged values.

Both families write a call's arguments as tagged text values (GLM ``<arg_value>v</arg_value>``, MiniMax
``<parameter name="k">v</parameter>``) that the tool's JSON schema types (:mod:`toolwire.parsers.schema_coerce`).

**Closing rule.** A value ends at a *closer* (its closing tag, or the end of the whole call when the value
was left unclosed) only when the closer is followed, after optional whitespace, by one of that closer's
*followers* (the next structural marker) or by the end of the output. Any other occurrence of a closer is
part of the value. :func:`early_close` applies the same rule to a value before it is rendered, so the
renderer refuses exactly the values this parser would cut short.

**Streaming.** A string-typed value streams out as JSON string fragments as it arrives; only a possible
closer prefix (or a closer whose followers have not arrived yet) is held back. Other values are collected
and typed when they close. Every character is scanned a bounded number of times, so a delta costs time
proportional to its own size, however long the value grows.

A family subclass sets the text-mode marker tables and implements the structural states (call heads,
keys, the space between arguments); :class:`TaggedCallParser` runs the loop, the text modes and values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from .base import CallBuilder, StreamParser, tool_schemas
from .lexer import LiteralCheck, MarkerScanner
from .schema_coerce import coerce_argument, is_string_schema, parameter_schema

WHITESPACE = " \t\r\n"
MAX_HEAD_CHARS = 512
"""A call name or argument key longer than this (with no closing marker) is not treated as one."""

@dataclass(frozen=True)
class Closer:
    """A tag that may end a value. ``followers`` confirm it; ``ends_call`` means the value was left
    unclosed and the tag closes the whole call (a diagnosed repair)."""

    tag: str
    followers: tuple[str, ...]
    ends_call: bool = False


def confirm(text: str, at: int, followers: Sequence[str], final: bool,
            literal: LiteralCheck | None = None) -> tuple[bool | None, int]:
    """Does ``text[at:]`` start (after whitespace) with a follower, or end? ``(True|False|None, ws_end)``:
    None means undecided until more text arrives. ``literal`` as in :meth:`MarkerScanner.scan`."""
    n = len(text)
    k = at
    while k < n and text[k] in WHITESPACE:
        k += 1
    if k == n:
        return (True if final else None), k
    rest = text[k:k + max(map(len, followers), default=0)]
    for follower in followers:
        if rest.startswith(follower) and (literal is None or not literal(text, k, follower)):
            return True, k
    if not final and any(f.startswith(rest) for f in followers if len(rest) < len(f)):
        return None, k
    return False, k


def early_close(value: str, closers: dict[str, Closer]) -> str | None:
    """The closer tag that would end ``value`` early when it is written inside its element, or None.

    Inside the rendered prompt a value is always followed by its own closing tag, which is no follower, so
    only occurrences confirmed by text inside ``value`` itself matter."""
    for tag, closer in closers.items():
        start = value.find(tag)
        while start != -1:
            end = start + len(tag)
            verdict, _ = confirm(value, end, closer.followers, final=False)
            if verdict:
                return tag
            start = value.find(tag, start + 1)
    return None


class TaggedCallParser(StreamParser):
    """Base of the GLM and MiniMax parsers (see the module docstring).

    Subclasses set:
      ``text_markers``    {mode: markers scanned in text of that mode ("content"/"reasoning")}
      ``framed``          {(mode, marker)}: one ``\\n`` right before that marker is framing, not text
      ``after_think``     framing newlines dropped after ``</think>``
      ``value_closers``   {tag: Closer}
      ``states``          {state: handler name}, for the structural states
    and implement :meth:`_text_marker` (a marker found in text) and :meth:`_value_closed`.
    """

    text_markers: dict[str, tuple[str, ...]] = {}
    framed: frozenset = frozenset()
    after_think: str = ""
    think_close: str = "</think>"
    value_closers: dict[str, Closer] = {}
    states: dict[str, str] = {}

    def __init__(self, tools: Sequence[Any] | None = None, **options: Any):
        super().__init__(tools, **options)
        self._schemas = tool_schemas(tools)
        self._text_scanners = {mode: MarkerScanner(m) for mode, m in self.text_markers.items()}
        self._value_scanner = MarkerScanner(self.value_closers)
        self._handlers: dict[str, Callable[[bool], bool]] = {
            "text": self._text, "value": self._value,
            **{state: getattr(self, name) for state, name in self.states.items()}}
        self._state = "text"
        self._mode = self._initial_mode()
        self._skip = ""              # framing still to drop at the start of the next text
        self._pos = 0
        self.call: CallBuilder | None = None
        self._parts: list[str] = []  # collected head/key/value/stray text
        self._key = ""
        self._value_is_string = True
        self._lookahead = 0          # resume offset of an undecided closer's whitespace scan

    # ---- hooks
    def _initial_mode(self) -> str:
        return "content"

    def _text_marker(self, marker: str) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _value_closed(self, closer: Closer) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _end_structure(self) -> None:
        """End of output in a structural state (outside any call): diagnose as the family needs."""

    # ---- the loop
    def _advance(self, final: bool) -> None:
        self._pos = 0
        while self._handlers[self._state](final):
            pass
        self._buf = self._buf[self._pos:]
        if final:
            self._at_end()

    def _at_end(self) -> None:
        if self._state == "text":
            if self._mode == "reasoning":
                self._diag("unclosed_reasoning", "the output ended inside the reasoning block", severity="info")
            return
        if self.call is None and self._state in ("head",):
            self._open_call("".join(self._parts))
            self._parts = []
        if self.call is not None:
            if self._state == "value":
                self._close_value()
            elif self._state == "key" and self._parts:
                self.call.diag("truncated_key", "the output ended inside an argument name", raw="".join(self._parts))
            self._truncated = True
            self._finish_call("truncated")
        else:
            self._end_structure()
        self._state = "text"

    # ---- text
    def _emit(self, text: str) -> None:
        if self._mode == "reasoning":
            self._emit_reasoning(text)
        else:
            self._emit_content(text)

    def _drop_framing(self, final: bool) -> bool:
        """Drop pending framing newlines; False when more text is needed to decide."""
        buf, pos = self._buf, self._pos
        while self._skip and pos < len(buf) and buf[pos] == self._skip[0]:
            pos += 1
            self._skip = self._skip[1:]
        self._pos = pos
        if self._skip and pos == len(buf) and not final:
            return False
        self._skip = ""
        return True

    def _text(self, final: bool) -> bool:
        if self._skip and not self._drop_framing(final):
            return False
        buf, pos = self._buf, self._pos
        hit = self._text_scanners[self._mode].scan(buf, pos, final=final, literal=self._tokens)
        end = hit.start
        text = buf[pos:end]
        if hit.marker is None:
            if not final and text.endswith("\n") and any(m == self._mode for m, _ in self.framed):
                text, end = text[:-1], end - 1  # may be framing before a marker still to come
            self._emit(text)
            self._pos = end
            return False
        if text.endswith("\n") and (self._mode, hit.marker) in self.framed:
            text = text[:-1]
        self._emit(text)
        self._pos = hit.end
        if hit.marker == self.think_close and self._mode == "reasoning":
            self._mode = "content"
            self._skip = self.after_think
        else:
            self._text_marker(hit.marker)
        return True

    # ---- collecting structural text
    def _collect(self, scanner: MarkerScanner, final: bool) -> str | None:
        """Collect text up to the next of ``scanner``'s markers into ``self._parts``; the marker found
        (consumed), or None when more text is needed."""
        buf, pos = self._buf, self._pos
        hit = scanner.scan(buf, pos, final=final, literal=self._tokens)
        self._parts.append(buf[pos:hit.start])
        self._pos = hit.end
        return hit.marker

    def _between(self, scanner: MarkerScanner, final: bool) -> str | None:
        """Skip the text between structural markers (kept in the call's raw text; non-whitespace is
        diagnosed) up to the next of ``scanner``'s markers, which is returned (None: need more text)."""
        marker = self._collect(scanner, final)
        if marker is None and not final:
            return None
        text = self._take()
        self._raw(text)
        self._stray(text)
        return marker

    def _take(self) -> str:
        text = "".join(self._parts)
        self._parts = []
        return text

    def _stray(self, text: str) -> None:
        """Text between structural markers: whitespace is framing; anything else is kept in a diagnostic."""
        if text.strip(WHITESPACE):
            message = "text between structural markers was ignored"
            if self.call is not None:
                self._repair("stray_text", message, raw=text)
            else:
                self._diag("stray_text", message, raw=text)

    def _raw(self, text: str) -> None:
        if self.call is not None:
            self.call.raw(text)

    def _head_too_long(self) -> bool:
        return sum(map(len, self._parts)) > MAX_HEAD_CHARS

    def _take_overlong_head(self, marker: str | None) -> str:
        """The first ``MAX_HEAD_CHARS + 1`` collected characters; the rest (and ``marker``) is read again.
        Cutting at a fixed length keeps the result independent of how the output was chunked."""
        text = self._take()
        self._pos -= len(text) - (MAX_HEAD_CHARS + 1) + len(marker or "")
        return text[:MAX_HEAD_CHARS + 1]

    # ---- calls
    def _open_call(self, name: str) -> CallBuilder:
        """Start a candidate (ToolCallStarted). A trailing newline in the name is removed as a diagnosed
        repair; otherwise the name is matched exactly."""
        exact = name
        name = name.rstrip("\n")
        self.call = self._begin_call(name, source=self._mode)
        if name != exact:
            self._repair("tool_name_newline", "a newline after the tool name was removed", raw=exact[len(name):])
        if not name:
            self.call.status = "rejected"
            self.call.diag("empty_tool_name", "the call has no tool name", severity="error")
        return self.call

    def _finish_call(self, status: str | None = None) -> None:
        if self.call is not None:
            self.call.finish(status)
            self.call = None

    def _repair(self, code: str, message: str, raw: str | None = None) -> None:
        """Record a diagnosed repair on the open call."""
        if self.call is not None:
            self.call.diag(code, message, raw=raw)
            if self.call.status == "proposed":
                self.call.status = "repaired"

    # ---- values
    def _start_value(self, key: str) -> None:
        """Begin the value of ``key``: stream it when the schema says string (or nothing), else collect it."""
        assert self.call is not None
        tool_schema = self._schemas.get(self.call.name)
        schema = parameter_schema(tool_schema, key) if tool_schema else None
        self._key = key
        self._value_is_string = is_string_schema(schema, tool_schema)
        if self._value_is_string:
            self.call.begin_string(key)
        self._parts = []
        self._lookahead = 0
        self._state = "value"

    def _value_piece(self, text: str) -> None:
        if text:
            self.call.raw(text)
            if self._value_is_string:
                self.call.string_piece(text)
            else:
                self._parts.append(text)

    def _close_value(self) -> None:
        call = self.call
        if self._value_is_string:
            call.end_string()
            return
        tool_schema = self._schemas.get(call.name)
        schema = parameter_schema(tool_schema, self._key) if tool_schema else None
        coerce_argument(call, self._key, self._take(), schema, tool_schema)

    def _value(self, final: bool) -> bool:
        buf, pos = self._buf, self._pos
        while True:
            hit = self._value_scanner.scan(buf, pos, final=final, literal=self._tokens)
            if hit.marker is None:
                self._value_piece(buf[pos:hit.start])
                self._pos = hit.start
                return False
            closer = self.value_closers[hit.marker]
            resume = hit.end + self._lookahead if hit.start == pos else hit.end
            verdict, ws_end = confirm(buf, resume, closer.followers, final, self._tokens)
            if verdict is None:
                self._value_piece(buf[pos:hit.start])
                self._pos = hit.start
                self._lookahead = ws_end - hit.end
                return False
            self._lookahead = 0
            if not verdict:
                self._value_piece(buf[pos:hit.end])
                pos = hit.end
                continue
            self._value_piece(buf[pos:hit.start])
            self._pos = hit.end
            self._close_value()
            self._state = "text"
            if closer.ends_call:
                self._repair("unclosed_value", f"argument {self._key!r} was not closed before {closer.tag!r}")
            else:
                self._raw(closer.tag)
            self._value_closed(closer)
            return True
