"""Kimi K3 stream parser (XTML): after the generation prompt ``<|open|>message role="assistant"<|sep|><|open|>think<|sep|>``
(thinking) or ``…<|open|>response<|sep|>``, the model writes ``REASONING<|close|>think<|sep|><|open|>response<|sep|>
CONTENT<|close|>response<|sep|>``, then optionally ``<|open|>tools<|sep|>`` with ``<|open|>call tool="NAME"
index="N"<|sep|>`` elements of ``<|open|>argument key="K" type="T"<|sep|>VALUE<|close|>argument<|sep|>``, and
``<|close|>message<|sep|>``.

Every tag opens with ``<|open|>`` or ``<|close|>`` and ends with ``<|sep|>`` (control tokens), so text is exactly
what lies between tags. An argument's value is typed by its ``type`` attribute: ``string`` raw, ``number`` /
``boolean`` / ``null`` / ``object`` / ``array`` as JSON; a call may also carry its arguments as one
``<|open|>json type="object"<|sep|>{…}<|close|>json<|sep|>`` block (the encoder's other form). Values are read
when their element closes, so each delta is scanned once.

Repairs and diagnostics (docs/variants.md): ``value_type_mismatch`` (a value that is not its declared type: kept
as the raw string, the call ``repaired``), ``unclosed_call`` (a call ended by the next call or by
``<|close|>tools``), ``stray_text`` (text between structural tags, kept in the diagnostic), and
``missing_response_open`` (content written after ``<|close|>think`` without ``<|open|>response``; a note).
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from .engine.call_builder import CallBuilder
from .engine.lexer import MarkerScanner
from .engine.schema_coerce import coerce
from .engine.steps import BLANKS, StepParser

from toolwire.families.kimi_k3 import KIMI_K3, MARKERS
M = MARKERS
OPEN, CLOSE, SEP, END = M["open"], M["close"], M["sep"], M["end"]
STRUCTURE = (OPEN, CLOSE, SEP, END)
MAX_TAG_CHARS = 1024
_TEXT_SCAN = MarkerScanner((OPEN, CLOSE, END))
_SEP_SCAN = MarkerScanner((SEP, OPEN, CLOSE))
_ATTR = re.compile(r'[ \t\r\n]+([A-Za-z_][A-Za-z0-9_-]*)="([^"]*)"')
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")

_START, _TEXT, _TAG = range(3)


def _unescape(value: str) -> str:
    return value.replace("&quot;", '"').replace("&amp;", "&")


def parse_tag(text: str) -> tuple[str, dict[str, str]] | None:
    """``NAME attr="v" …`` to (NAME, attributes), or None when it is no tag."""
    m = _NAME.match(text)
    if not m:
        return None
    attrs: dict[str, str] = {}
    pos = m.end()
    for a in _ATTR.finditer(text, pos):
        if a.start() != pos:
            return None
        attrs[a[1]] = _unescape(a[2])
        pos = a.end()
    if text[pos:].strip(" \t\r\n"):  # ASCII blanks only: other whitespace is text, never dropped
        return None
    return m.group(), attrs


class KimiK3Parser(StepParser):
    """Kimi K3 output (see the module docstring)."""

    family = KIMI_K3

    def __init__(self, tools: Sequence[Any] | None = None, *, thinking: bool = False, **options: Any):
        super().__init__(tools, thinking=thinking, **options)
        self._mode = "reasoning" if thinking else "content"  # or "after" (past the response), "tools"
        self._state = _START
        self._closing = False       # the tag being read is a <|close|> tag
        self._tag: list[str] = []
        self._call: CallBuilder | None = None
        self._value: list[str] | None = None   # the open argument's (or json block's) text
        self._value_attrs: dict[str, str] = {}
        self._value_tag = ""
        self._gap: list[str] = []   # text between structural tags
        self._source = "content"
        self._tools_return = "after"  # the mode the tools channel returns to
        self._fresh = True

    def _start(self, buf: str, pos: int, final: bool) -> int | None:
        """A repeated ``<|open|>think<|sep|>`` at the very start of reasoning the prompt opened is dropped."""
        opener = OPEN + "think" + SEP
        rest = buf[pos:pos + len(opener)]
        if self._mode == "reasoning" and rest == opener and self._marker_at(buf, pos, OPEN) \
                and self._marker_at(buf, pos + len(OPEN) + 5, SEP):
            self._diag("duplicate_reasoning_open", "the model opened the think channel the prompt had opened",
                       raw=opener)
            self._state = _TEXT
            return pos + len(opener)
        if not final and self._mode == "reasoning" and self._may_still_be(buf, pos, opener):
            return None
        self._state = _TEXT
        return pos

    # ---- text between tags
    def _text(self, buf: str, pos: int, final: bool) -> int | None:
        hit = _TEXT_SCAN.scan(buf, pos, final=final, literal=self._tokens)
        self._take_text(buf[pos:hit.start])
        if hit.marker is None:
            return None if hit.start == pos else hit.start
        if hit.marker == END:
            return self._stop_token(buf, pos, hit, final, self._take_text)
        self._closing = hit.marker == CLOSE
        self._tag = []
        self._state = _TAG
        return hit.end

    def _take_text(self, text: str) -> None:
        if not text:
            return
        if self._value is not None:
            self._value.append(text)
            if self._call is not None:
                self._call.raw(text)
        elif self._mode == "reasoning":
            self._emit_reasoning(text)
        elif self._mode == "content":
            self._emit_content(text)
        else:
            self._gap.append(text)

    def _between_to_content(self, framing_only: bool = False) -> None:
        """Text after ``<|close|>think``: blanks before ``<|open|>response`` are framing; other text is content
        the model wrote without opening the response channel."""
        text = "".join(self._gap)
        self._gap = []
        self._mode = "content"
        if text.strip(BLANKS):
            if framing_only:
                self._diag("text_before_response", f"text between the think channel and {OPEN}response{SEP} is "
                           "kept as content", severity="info")
            else:
                self._diag("missing_response_open", "content came after the think channel without "
                           f"{OPEN}response{SEP}", severity="info")
            self._emit_content(text)

    def _flush_gap(self) -> None:
        text = "".join(self._gap)
        self._gap = []
        if text.strip(BLANKS):
            target = self._call.diag if self._call is not None else self._diag
            target("stray_text", "text between structural tags was ignored", raw=text)

    # ---- tags
    def _read_tag(self, buf: str, pos: int, final: bool) -> int | None:
        hit = _SEP_SCAN.scan(buf, pos, final=final, literal=self._tokens)
        opener = CLOSE if self._closing else OPEN
        have = sum(map(len, self._tag))
        if have + hit.start - pos > MAX_TAG_CHARS:  # no tag: it ends with the character that crosses the limit,
            keep = MAX_TAG_CHARS + 1 - have      # however the deltas cut the text (and whatever follows it)
            self._tag.append(buf[pos:pos + keep])
            self._not_a_tag(opener + "".join(self._tag))
            return pos + keep
        self._tag.append(buf[pos:hit.start])
        if hit.marker is None:
            if final:
                text = opener + "".join(self._tag)
                code = "truncated_call_header" if text.startswith(OPEN + "call") else "truncated_tag"
                self._diag(code, "the output ended inside a tag", raw=text)
                self._truncated = True
                self._tag = []
                self._state = _TEXT
            return None if hit.start == pos else hit.start
        tag_text = "".join(self._tag)
        self._tag = []
        self._state = _TEXT
        if hit.marker != SEP:  # another tag began before this one ended
            self._not_a_tag(opener + tag_text)
            return hit.start
        parsed = parse_tag(tag_text)
        if parsed is None:
            self._not_a_tag(opener + tag_text + SEP)
            return hit.end
        self._on_tag(self._closing, parsed[0], parsed[1], opener + tag_text + SEP)
        return hit.end

    def _not_a_tag(self, text: str) -> None:
        """Marker text that is no well-formed tag: it stays where it was (text), with a diagnostic."""
        self._tag = []
        self._state = _TEXT
        self._diag("malformed_tag", "an XTML marker not followed by a tag; kept as text", raw=text)
        self._take_text(text)

    def _on_tag(self, closing: bool, name: str, attrs: dict[str, str], raw: str) -> None:
        if self._value is not None:
            if closing and name == self._value_tag:
                self._close_value()
                return
            if closing and name in ("call", "tools", "message") or not closing and name in ("call", "argument"):
                self._repair("unclosed_value", f"the {self._value_tag} element was not closed before {raw}")
                self._close_value()
            else:  # any other tag inside a value is its text
                self._take_text(raw)
                return
        if self._mode == "between" and not (not closing and name == "response"):
            self._between_to_content()
        mode = self._mode
        if not closing and name == "think" and self._fresh and mode == "content":
            self._mode = "reasoning"
        elif closing and name == "think" and mode == "reasoning":
            self._mode = "between"  # blanks up to <|open|>response are framing
            self._fresh = False
            return
        elif not closing and name == "response":
            if mode == "between":
                self._between_to_content(framing_only=True)
            self._mode = "content"
        elif closing and name == "response" and mode == "content":
            self._mode = "after"
        elif not closing and name == "tools":
            self._flush_gap()
            self._source = "reasoning" if mode == "reasoning" else "content"
            self._tools_return = mode if mode in ("reasoning", "content") else "after"
            self._mode = "tools"
        elif closing and name == "tools" and mode == "tools":
            self._flush_gap()
            if self._call is not None:
                self._repair("unclosed_call", "the tools channel closed before the call")
                self._finish_call()
            self._mode = self._tools_return
        elif not closing and name == "call" and mode == "tools":
            self._flush_gap()
            if self._call is not None:
                self._repair("unclosed_call", "the next call began before this one closed")
                self._finish_call()
            if "tool" not in attrs:
                self._diag("malformed_tag", "a call without a tool name was ignored", raw=raw)
                return
            self._call = self._begin_call(attrs["tool"], source=self._source)
            self._call.raw(raw)
        elif closing and name == "call" and self._call is not None:
            self._flush_gap()
            self._call.raw(raw)
            self._finish_call()
        elif not closing and name in ("argument", "json") and self._call is not None:
            self._flush_gap()
            self._call.raw(raw)
            self._value, self._value_attrs, self._value_tag = [], attrs, name
        elif closing and name == "message":
            self._flush_gap()
            if self._call is not None:
                self._repair("unclosed_call", "the message closed before the call")
                self._finish_call()
            self._mode = "after"
        else:
            self._take_text(raw) if mode in ("reasoning", "content") else self._gap.append(raw)
            self._diag("unexpected_tag", f"{raw} was not expected here; kept as text", raw=raw, severity="info")
        self._fresh = False

    def _close_value(self) -> None:
        call = self._call
        raw = "".join(self._value)
        attrs, tag = self._value_attrs, self._value_tag
        self._value = None
        call.raw(CLOSE + tag + SEP)
        if tag == "json":
            value = self._typed("arguments", raw, "object")
            if not isinstance(value, dict):
                call.diag("malformed_arguments", "the json block is not a JSON object", severity="error", raw=raw)
                call.status = "rejected"
                return
            for key, item in value.items():
                call.value(key, item)
            return
        key = attrs.get("key")
        if key is None:
            call.diag("stray_text", "an argument without a key was ignored", raw=raw)
            return
        call.value(key, self._typed(key, raw, attrs.get("type")))

    def _typed(self, key: str, raw: str, kind: str | None) -> Any:
        """An argument's text read by its ``type`` attribute (``string`` raw; others JSON, within the limits).
        A value that is not its type keeps its raw text (``value_type_mismatch``)."""
        if kind in (None, "string"):
            return raw
        limits = self.limits
        value, diags = coerce(raw, {"type": kind}, None, max_depth=limits.max_depth,
                              max_bytes=limits.max_argument_bytes)
        for code, message in diags:
            if code == "too_large":
                self._call.reject_too_large(f"argument {key!r}: {message}")
            elif code == "value_type_mismatch":
                self._repair("value_type_mismatch", f"argument {key!r} is not a valid {kind!r}; the raw text is kept")
            else:
                self._call.diag(code, f"argument {key!r}: {message}", severity="info")
        return value

    @staticmethod
    def _repair_call(call: CallBuilder, code: str, message: str) -> None:
        call.diag(code, message + "; accepted", severity="warning")
        if call.status == "proposed":
            call.status = "repaired"

    def _repair(self, code: str, message: str) -> None:
        if self._call is not None:
            self._repair_call(self._call, code, message)

    def _finish_call(self, status: str | None = None) -> None:
        self._call.finish(status)
        self._call = None

    def _reasoning_unclosed(self) -> bool:
        """The output ended inside the think channel, or in a tools channel opened in it: issue 33's
        unclosed-reasoning calls."""
        return self._mode == "reasoning" or (self._mode == "tools" and self._tools_return == "reasoning")

    def _at_end(self) -> None:
        if self._mode == "between":
            self._between_to_content()
        if self._value is not None and self._call is not None:
            call = self._call
            key = self._value_attrs.get("key")
            raw = "".join(self._value)
            self._value = None
            if key is not None:
                call.value(key, self._typed(key, raw, self._value_attrs.get("type")))
        self._flush_gap()
        if self._call is not None:
            self._call.diag("truncated", "the output ended inside this call", severity="error")
            self._truncated = True
            self._finish_call("truncated")

    _STEPS = (_start, _text, _read_tag)
    """The step of each state (_START, _TEXT, _TAG): :mod:`toolwire.parsers.engine.steps`."""
