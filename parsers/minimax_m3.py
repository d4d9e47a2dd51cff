"""MiniMax-M3 stream parser: ``<mm:think>…</mm:think>`` reasoning, content, then one
``]<]minimax[>[<tool_call>`` block of ``]<]minimax[>[<invoke name="NAME">`` calls whose arguments are elements named
after the parameters, nested values expanded (``<item>`` children for lists).

Every structural tag carries the ``]<]minimax[>[`` prefix (a control token), so a value is exactly the text between
two tags: nothing in it can end it early, and nothing is framing but the newlines between calls. Leaf values are
typed by the tool's schema (:mod:`~toolwire.parsers.engine.schema_coerce`: strings stay exact, ``2023`` is an integer where
the schema says so); an element with children is an object, or a list when its children are ``<item>`` elements
(or the schema says array); an empty element is ``[]`` / ``{}`` / ``""`` as the schema says. Values are typed when
their element closes, so each delta is scanned once.

With ``thinking=True`` (``thinking_mode="enabled"``) the prompt has opened ``<mm:think>``; otherwise the output starts
in content, where a ``<mm:think>`` the model writes itself at the start (``adaptive`` mode) opens reasoning.

Repairs, each named by a diagnostic (docs/variants.md): ``m2_parameter_tag`` (MiniMax-M2's
``<parameter name="KEY">…</parameter>`` inside an M3 block), ``unclosed_invoke`` (a call ended by the next
``<invoke>`` or by ``</tool_call>``), ``mismatched_close`` (a closing tag that skips open elements), and
``stray_text`` (text between structural tags, kept in the diagnostic).
"""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

from .engine.call_builder import CallBuilder
from .engine.tools import tool_schemas
from .engine.lexer import MarkerScanner
from .engine.schema_coerce import coerce, parameter_schema
from .engine.steps import BLANKS, StepParser

NS = "]<]minimax[>["
from toolwire.families.minimax_m3 import MARKERS, MINIMAX_M3
M = MARKERS
BLOCK_OPEN, BLOCK_CLOSE, EOS = M["block_open"], M["block_close"], M["eos"]
THINK_OPEN, THINK_CLOSE = M["think_open"], M["think_close"]
MAX_TAG_CHARS = 512
# The family's other control tokens are read as units in text, as the tokenizer reads them first: no marker starts
# inside one ("]<]minimax[>[e~[" is the namespace token, then text; "]~b]]<]minimax[>[<tool_call>" no block).
_OPAQUE = frozenset((M["bod"], M["role"], NS, M["image"], M["video"]))
_CONTENT = MarkerScanner((BLOCK_OPEN, THINK_CLOSE, EOS, *_OPAQUE))
_REASONING = MarkerScanner((THINK_CLOSE, BLOCK_OPEN, EOS, *_OPAQUE))
_TAG = MarkerScanner((NS, *(_OPAQUE - {NS})))  # the other control tokens: text units inside a block too
_INVOKE = re.compile(r'<invoke name="(?P<name>[^"]*)">', re.S)
_M2_PARAMETER = re.compile(r'<parameter name="(?P<name>[^"]*)">', re.S)

_START, _TEXT, _BLOCK, _TAGNAME = range(4)


class _Element:
    """An open argument element: its key, schema, text and children."""

    __slots__ = ("key", "schema", "text", "children", "tag")

    def __init__(self, key: str, schema: dict | None, tag: str):
        self.key, self.schema, self.tag = key, schema, tag  # tag: the element's own name (key, or "parameter")
        self.text: list[str] = []
        self.children: list[tuple[str, Any]] = []


def _types(schema: Any) -> set:
    if not isinstance(schema, dict):
        return set()
    t = schema.get("type")
    return set(t) if isinstance(t, list) else ({t} if isinstance(t, str) else set())


class MiniMaxM3Parser(StepParser):
    """MiniMax-M3 output (see the module docstring)."""

    family = MINIMAX_M3

    def __init__(self, tools: Sequence[Any] | None = None, *, thinking: bool = False, **options: Any):
        super().__init__(tools, thinking=thinking, **options)
        self._schemas = tool_schemas(tools)
        self._mode = "reasoning" if thinking else "content"
        self._state = _START
        self._tag: list[str] = []
        self._stack: list[_Element] = []
        self._call: CallBuilder | None = None
        self._root: dict | None = None
        self._gap: list[str] = []  # text between tags outside any element
        self._skip = 0             # open elements nested past Limits.max_depth (not built)
        self._lead: list[str] = []  # blanks at the very start, until a <mm:think> (or anything else) follows them


    # ---- text
    def _start(self, buf: str, pos: int, final: bool) -> int | None:
        """A ``<mm:think>`` at the very start: the model opens reasoning (content mode), or repeats the
        prompt's opener (reasoning mode: dropped)."""
        i = self._skip_blanks(buf, pos)
        if not final and self._may_still_be(buf, i, THINK_OPEN):
            if i > pos:  # blanks: read once and kept aside (not scanned again per delta) until what follows decides
                self._lead.append(buf[pos:i])
                return i
            return None
        lead, self._lead = "".join(self._lead), []
        if self._marker_at(buf, i, THINK_OPEN):
            if self._mode == "reasoning":
                self._diag("duplicate_reasoning_open", "the model opened the reasoning the prompt had opened",
                           raw=THINK_OPEN)
            else:
                self._emit_content(lead + buf[pos:i])
            self._mode, self._state = "reasoning", _TEXT
            return i + len(THINK_OPEN)
        self._state = _TEXT
        if lead:
            (self._emit_reasoning if self._mode == "reasoning" else self._emit_content)(lead)
        return pos

    def _text(self, buf: str, pos: int, final: bool) -> int | None:
        reasoning = self._mode == "reasoning"
        hit = (_REASONING if reasoning else _CONTENT).scan(buf, pos, final=final, literal=self._tokens)
        emit = self._emit_reasoning if reasoning else self._emit_content
        emit(buf[pos:hit.start])
        marker = hit.marker
        if marker is None:
            return None if hit.start == pos else hit.start
        if marker in _OPAQUE:  # text, read as one unit
            emit(marker)
            return hit.end
        if marker == EOS:
            return self._stop_token(buf, pos, hit, final, emit)
        if marker == BLOCK_OPEN:
            self._state = _BLOCK
            return hit.end
        if reasoning:
            self._mode = "content"
        else:
            self._diag("reasoning_close_in_content", f"{THINK_CLOSE} came with no reasoning open", raw=THINK_CLOSE)
        return hit.end

    # ---- the block
    def _block(self, buf: str, pos: int, final: bool) -> int | None:
        hit = _TAG.scan(buf, pos, final=final, literal=self._tokens)
        if hit.marker is not None and hit.marker != NS:  # another control token: text, read as one unit
            self._between(buf[pos:hit.end])
            return hit.end
        self._between(buf[pos:hit.start])
        if hit.marker is None:
            return None if hit.start == pos else hit.start
        self._flush_gap()
        self._tag = []
        self._state = _TAGNAME
        return hit.end

    def _between(self, text: str) -> None:
        """Text between tags: an open element's value, else framing (blanks) or stray text."""
        if not text:
            return
        if self._call is not None:
            self._call.raw(text)
        if self._stack:
            self._stack[-1].text.append(text)
        else:
            self._gap.append(text)

    def _flush_gap(self) -> None:
        """The text between two tags outside any element: blanks are framing, anything else one diagnostic."""
        text = "".join(self._gap)
        self._gap = []
        if text.strip(BLANKS):
            self._stray(text)

    def _stray(self, text: str) -> None:
        if self._call is not None:
            self._call.diag("stray_text", "text between structural tags was ignored", raw=text)
        else:
            self._diag("stray_text", "text between structural tags was ignored", raw=text)

    def _tagname(self, buf: str, pos: int, final: bool) -> int | None:
        """After the prefix: the tag up to ``>``."""
        end = buf.find(">", pos)
        length = sum(map(len, self._tag))
        if length + (end if end >= 0 else len(buf)) - pos > MAX_TAG_CHARS:
            # no tag: its text ends with the character that crosses the limit, however the deltas cut it
            keep = MAX_TAG_CHARS + 1 - length
            self._stray(NS + "".join(self._tag) + buf[pos:pos + keep])
            self._state = _BLOCK
            return pos + keep
        if end < 0:
            if not final:
                self._tag.append(buf[pos:])
                return None if pos == len(buf) else len(buf)
            text = NS + "".join(self._tag) + buf[pos:]
            code = "truncated_call_header" if text.startswith(NS + "<invoke") else "truncated_tag"
            self._diag(code, "the output ended inside a tag", raw=text)
            self._truncated = True
            self._state = _BLOCK
            return len(buf) if pos < len(buf) else None
        tag = "".join(self._tag) + buf[pos:end + 1]
        self._tag = []
        self._state = _BLOCK
        self._on_tag(tag)
        return end + 1

    def _on_tag(self, tag: str) -> None:
        call = self._call
        if tag == "</tool_call>":
            if call is not None:
                self._repair(call, "unclosed_invoke", "the block closed before </invoke>")
                self._finish_call()
            self._state = _TEXT  # back to the text the block was written in
            return
        m = _INVOKE.fullmatch(tag)
        if m:
            if call is not None:
                self._repair(call, "unclosed_invoke", "the next <invoke> came before </invoke>")
                self._finish_call()
            if not m["name"].strip():  # names no tool: not a call (never one with an empty name); the tag is kept
                self._diag("not_a_tool_call", "an <invoke> that names no tool is not a call; kept here", raw=NS + tag)
                return
            self._call = self._begin_call(m["name"], source="reasoning" if self._mode == "reasoning" else "content")
            self._root = self._schemas.get(m["name"]) or None
            return
        if call is None:
            self._stray(NS + tag)
            return
        call.raw(NS + tag)
        if tag == "</invoke>":
            if self._stack:
                self._repair(call, "unclosed_element", "</invoke> came with argument elements open")
                while self._stack:
                    self._close_element()
            self._finish_call()
            return
        if self._skip:  # inside elements nested past Limits.max_depth: only their nesting is followed
            if tag.startswith("</"):
                self._skip -= 1
            elif not tag.endswith("/>"):
                self._skip += 1
            return
        if tag.startswith("</"):
            name = tag[2:-1]
            if not any(e.tag == name for e in self._stack):
                call.diag("stray_text", "a closing tag that matches no open element was ignored", raw=NS + tag)
                return
            if self._stack[-1].tag != name:
                self._repair(call, "mismatched_close", f"</{name}> closed elements that were still open")
            while self._stack[-1].tag != name:
                self._close_element()
            self._close_element()
            return
        key, name = tag[1:-1], tag[1:-1]
        m2 = _M2_PARAMETER.fullmatch(tag)
        if m2:  # MiniMax-M2's spelling inside an M3 block (ik_llama.cpp #2008, oh-my-pi #2759)
            key, name = m2["name"], "parameter"
            self._repair(call, "m2_parameter_tag", 'an argument was written <parameter name="KEY"> (the MiniMax-M2 '
                                                   "spelling) instead of <KEY>")
        if tag.startswith("<") and key and len(self._stack) + 1 > self.limits.max_depth:
            call.reject_too_large(f"the arguments nest deeper than {self.limits.max_depth} levels (Limits.max_depth)")
            self._skip = 1
            return
        if tag.startswith("<") and key:
            parent = self._stack[-1] if self._stack else None
            if parent is None:
                schema = parameter_schema(self._root, key) if self._root else None
            elif _types(parent.schema) & {"array"} or (key == "item" and not _types(parent.schema) & {"object"}):
                schema = parent.schema.get("items") if isinstance(parent.schema, dict) else None
            else:
                schema = parameter_schema(parent.schema, key) if isinstance(parent.schema, dict) else None
            self._stack.append(_Element(key, schema if isinstance(schema, dict) else None, name))
            return
        call.diag("stray_text", "an unknown tag was ignored", raw=NS + tag)

    def _close_element(self) -> None:
        element = self._stack.pop()
        value = self._element_value(element)
        if self._stack:
            self._stack[-1].children.append((element.key, value))
        else:
            self._call.value(element.key, value)

    def _element_value(self, element: _Element) -> Any:
        types = _types(element.schema)
        text = "".join(element.text)
        if element.children:
            if text.strip(BLANKS):
                self._call.diag("stray_text", f"text beside the elements of {element.key!r} was ignored", raw=text)
            as_list = "array" in types or ("object" not in types and all(k == "item" for k, _ in element.children))
            return [v for _, v in element.children] if as_list else self._children_object(element)
        if not text:
            if "array" in types:
                return []
            if "object" in types:
                return {}
        value, diags = coerce(text, element.schema, self._root)
        for code, message in diags:
            if code == "too_large":
                self._call.reject_too_large(f"argument {element.key!r}: {message}")
            else:
                self._call.diag(code, f"argument {element.key!r}: {message}",
                                severity="info" if code == "integer_from_float" else "warning")
                if code == "value_type_mismatch" and self._call.status == "proposed":
                    self._call.status = "repaired"  # the raw string kept against its type, as every family marks it
        return value

    def _children_object(self, element: _Element) -> dict[str, Any]:
        """An element's children as an object. A child element repeated (``<tags>a</tags><tags>b</tags>``: not the
        template's spelling of a list, which is ``<item>`` children) keeps its last value, as a repeated argument
        does, with a ``duplicate_argument`` diagnostic whose ``raw`` is the JSON of the value it replaced."""
        value: dict[str, Any] = {}
        for key, child in element.children:
            if key in value:
                self._call.diag("duplicate_argument", f"{element.key!r} has the element {key!r} twice; the last value "
                                "is kept", raw=json.dumps(value[key], ensure_ascii=False))
            value[key] = child
        return value

    @staticmethod
    def _repair(call: CallBuilder, code: str, message: str) -> None:
        call.diag(code, message + "; accepted", severity="warning")
        if call.status == "proposed":
            call.status = "repaired"

    def _finish_call(self, status: str | None = None) -> None:
        self._call.finish(status)
        self._call, self._stack, self._root, self._skip = None, [], None, 0

    def _at_end(self) -> None:
        self._flush_gap()
        if self._state in (_BLOCK, _TAGNAME):
            if self._call is not None:
                self._call.diag("truncated", "the output ended inside this call", severity="error")
                while self._stack:
                    self._close_element()
                self._truncated = True
                self._finish_call("truncated")
            else:
                self._diag("unclosed_block", f"the output ended before {BLOCK_CLOSE}", severity="info")

    _STEPS = (_start, _text, _block, _tagname)
    """The step of each state (_START, _TEXT, _BLOCK, _TAGNAME): :mod:`toolwire.parsers.engine.steps`."""
