"""Qwen/Hermes JSON family: Qwen2.5, Qwen3, Qwen3-Instruct-2507 and Qwen3-Thinking-2507.

Wire format: ``<tool_call>\\n{"name": NAME, "arguments": {...}}\\n</tool_call>``. Reference: the models' own
chat templates (``Qwen2.5-7B-Instruct.jinja``, ``Qwen3-8B.jinja``, ``Qwen3-4B-Instruct-2507.jinja``,
``Qwen3-4B-Thinking-2507.jinja``) as transformers renders them, with ``arguments`` decoded to objects (what
serving stacks do; a JSON string or an object in the request renders the same). Native Python, not a
Jinja run. What differs (data on one implementation):

* **default system** - Qwen2.5 writes its default system prompt when the request has none; the others
  write no system block without tools and a bare ``# Tools`` block with them;
* **assistant turns** - Qwen2.5 writes ``<|im_start|>assistant`` + ``\\n`` + content only when there is
  content, and a ``\\n`` before every call; Qwen3 always writes the ``\\n`` and separates calls by ``\\n``;
* **history reasoning** - Qwen2.5 and Qwen3-Instruct-2507 never render it. Qwen3 and Qwen3-Thinking-2507
  take it from ``reasoning_content`` (else from a ``</think>`` in the content, which is then cut off, on
  every assistant turn) and write ``<think>\\n...\\n</think>\\n\\n`` on assistant turns after the last real
  user query: always on the final message, otherwise only when there is reasoning. A caller's
  ``policy`` override (``keep_all``, ``drop_all`` ...) replaces the "after the last real query" rule;
* **generation prompt** - Qwen3 writes an empty ``<think>\\n\\n</think>\\n\\n`` when thinking is off;
  Qwen3-Thinking-2507 always opens ``<think>\\n`` (the output starts inside reasoning).

Content given as parts is rendered as its text parts joined by ``\\n\\n`` (the templates only take strings).
A function name the JSON line could not carry (``"``, ``\\`` or a control character) is refused with
:class:`~toolwire.errors.UnrepresentableValue`; argument values are JSON, so any value round-trips.
"""

from __future__ import annotations

import re
from functools import cached_property, lru_cache
from typing import ClassVar

from toolwire.errors import UnrepresentableValue, UnsupportedByFormat
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, call_arguments, tool_to_dict
from toolwire.templates.json_text import tojson as jinja_json  # transformers' tojson: non-ASCII kept, ", " / ": "
from toolwire.parsers.hermes_json import (
    MARKERS, Qwen3Instruct2507Parser, Qwen3Parser, Qwen3ThinkingParser, Qwen25Parser,
)
from toolwire.prompt import PromptBuilder, special_pattern

M = MARKERS

QWEN25_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
TOOLS_PREAMBLE = ("# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
                  "You are provided with function signatures within <tools></tools> XML tags:\n<tools>")
TOOLS_POSTAMBLE = ("\n</tools>\n\nFor each function call, return a json object with function name and arguments "
                   "within <tool_call></tool_call> XML tags:\n")
TOOLS_EXAMPLE = '\n{"name": <function-name>, "arguments": <args-json-object>}\n'
"""The tools block ends ``<tool_call>`` + TOOLS_EXAMPLE + ``</tool_call><|im_end|>\\n``."""

_ROLES = ("system", "user", "assistant", "tool")
_ROLE_LINES = {"system": "system\n", "user": "user\n"}
_specials = lru_cache(maxsize=None)(special_pattern)  # per special-token set: its spellings in fixed text
_UNWRITABLE_NAME = re.compile(r'["\\\x00-\x1f]')
IM_START, IM_END = M["im_start"], M["im_end"]


def _text(message: Message) -> str:
    content = message.content
    return content if content.__class__ is str else message.text()


def _check_name(name: str, index: int, call_index: int) -> None:
    if _UNWRITABLE_NAME.search(name):
        raise UnrepresentableValue(f"function name {name!r} contains '\"', '\\' or a control character, which the "
                                   "template writes unescaped into the call's JSON", message_index=index,
                                   field=f"tool_calls[{call_index}].function.name")


class HermesJsonFormat(Format):
    """The shared Qwen chat frame (``<|im_start|>role\\n...<|im_end|>\\n``) with JSON tool calls.

    The template writes its pieces through :meth:`PromptBuilder.appender` (one list append per piece); a marker's
    kind (``special`` or ``template``) is looked up once per format in :attr:`_kinds`."""

    special_tokens: ClassVar[frozenset[str]] = frozenset(
        {M["im_start"], M["im_end"], M["call_open"], M["call_close"], M["response_open"], M["response_close"],
         M["think_open"], M["think_close"]})
    """Markers that are single control tokens in the model's vocabulary."""
    default_system: ClassVar[str | None] = None
    compact_calls: ClassVar[bool] = False     # Qwen2.5: "\n" before content and before every call
    renders_reasoning: ClassVar[bool] = False

    # ---- pieces
    @cached_property
    def _kinds(self) -> dict[str, str]:
        """Each marker's piece kind in this format: ``special`` for the control tokens, else ``template``."""
        return {name: "special" if marker in self.special_tokens else "template" for name, marker in M.items()}

    @cached_property
    def _tools_block(self) -> tuple[tuple, tuple]:
        """The prompt-level pieces of the tools block before the first tool definition and after the last."""
        specials = _specials(self.special_tokens)
        head = PromptBuilder().fixed(TOOLS_PREAMBLE, None, specials).build().pieces
        tail = PromptBuilder().fixed(TOOLS_POSTAMBLE, None, specials)
        self._special(tail, M["call_open"], None)
        tail.template(TOOLS_EXAMPLE, None)
        self._special(tail, M["call_close"], None)
        self._close(tail, None)
        return head, tail.build().pieces

    def _special(self, out: PromptBuilder, marker: str, index: int | None) -> None:
        if marker in self.special_tokens:
            out.special(marker, index)
        else:
            out.template(marker, index)

    def _open(self, out: PromptBuilder, role: str, index: int | None) -> None:
        out.special(IM_START, index).template(role, index)

    def _close(self, out: PromptBuilder, index: int | None) -> None:
        out.special(IM_END, index).template("\n", index)

    def _system(self, messages: list[Message], tools: list[Tool], out: PromptBuilder) -> None:
        first = messages[0] if messages and messages[0].role == "system" else None
        if tools:
            put, extend = out.appender(), out.extender()
            head, tail = self._tools_block
            put(("special", IM_START, None))
            put(("template", "system\n", None))
            if first is not None:
                out.content(_text(first), 0)
                put(("template", "\n\n", 0))
            elif self.default_system is not None:
                put(("template", self.default_system + "\n\n", None))
            extend(head)
            newline = ("template", "\n", None)
            for tool in tools:
                put(newline)
                put(("content", jinja_json(tool_to_dict(tool)), None))
            extend(tail)
        elif first is not None:
            self._open(out, "system\n", 0)
            out.content(_text(first), 0)
            self._close(out, 0)
        elif self.default_system is not None:
            self._open(out, "system\n", None)
            out.template(self.default_system, None)
            self._close(out, None)

    def _calls(self, out: PromptBuilder, message: Message, index: int, content: str) -> None:
        put, kinds = out.appender(), self._kinds
        call_open = (kinds["call_open"], M["call_open"], index)
        call_close = (kinds["call_close"], M["call_close"], index)
        for ci, call in enumerate(message.tool_calls or ()):
            name = call.function.name
            _check_name(name, index, ci)
            args = jinja_json(call_arguments(call, index, ci))
            if self.compact_calls or ci > 0 or content:
                put(("template", "\n", index))
            put(call_open)
            put(("template", '\n{"name": "', index))
            if name:
                put(("content", name, index))
            put(("template", '", "arguments": ', index))
            put(("content", args, index))
            put(("template", "}\n", index))
            put(call_close)

    def _tool_result(self, out: PromptBuilder, messages: list[Message], i: int) -> None:
        put, kinds = out.appender(), self._kinds
        if i == 0 or messages[i - 1].role != "tool":
            put(("special", IM_START, i))
            put(("template", "user\n", i))
        else:
            put(("template", "\n", i))
        put((kinds["response_open"], M["response_open"], i))
        put(("template", "\n", i))
        text = _text(messages[i])
        if text:
            put(("content", text, i))
        put(("template", "\n", i))
        put((kinds["response_close"], M["response_close"], i))
        if i == len(messages) - 1 or messages[i + 1].role != "tool":
            put(("special", IM_END, i))
            put(("template", "\n", i))

    def _assistant(self, out: PromptBuilder, messages: list[Message], i: int, options: RenderOptions) -> None:
        message = messages[i]
        content = _text(message)
        put = out.appender()
        put(("special", IM_START, i))
        put(("template", "assistant\n", i))
        if content:
            put(("content", content, i))
        self._calls(out, message, i, content)
        put(("special", IM_END, i))
        put(("template", "\n", i))

    # ---- the template
    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        if not messages:
            raise UnsupportedByFormat("the template needs at least one message", field="messages")
        self._system(messages, tools, out)
        put = out.appender()
        for i, message in enumerate(messages):
            role = message.role
            if role == "user" or (role == "system" and i > 0):
                put(("special", IM_START, i))
                put(("template", _ROLE_LINES[role], i))
                text = _text(message)
                if text:
                    put(("content", text, i))
                put(("special", IM_END, i))
                put(("template", "\n", i))
            elif role == "assistant":
                self._assistant(out, messages, i, options)
            elif role == "tool":
                self._tool_result(out, messages, i)
            elif role != "system":
                raise UnsupportedByFormat(f"role {message.role!r} is not rendered by the {self.name} template "
                                          f"(it knows {', '.join(_ROLES)})", message_index=i, field="role")
        if options.add_generation_prompt:
            return self._generation_prompt(out, options)
        return False

    def _generation_prompt(self, out: PromptBuilder, options: RenderOptions) -> bool:
        self._open(out, "assistant\n", None)
        return False


class Qwen25(HermesJsonFormat):
    """Qwen2.5-Instruct: default system prompt, compact assistant turns, no reasoning."""

    content_parts = "refuse"  # the template refuses or drops list content
    parser_class = Qwen25Parser
    special_tokens = frozenset({M["im_start"], M["im_end"], M["call_open"], M["call_close"]})
    default_system = QWEN25_SYSTEM
    compact_calls = True

    def _assistant(self, out: PromptBuilder, messages: list[Message], i: int, options: RenderOptions) -> None:
        message = messages[i]
        content = _text(message)
        put = out.appender()
        put(("special", IM_START, i))
        if not message.tool_calls:
            put(("template", "assistant\n", i))
            if content:
                put(("content", content, i))
        else:
            put(("template", "assistant", i))
            if content:
                put(("template", "\n", i))
                put(("content", content, i))
            self._calls(out, message, i, content)
        put(("special", IM_END, i))
        put(("template", "\n", i))


class Qwen3Instruct2507(HermesJsonFormat):
    """Qwen3-Instruct-2507: the Qwen3 frame without any reasoning."""

    content_parts = "refuse"  # the template refuses or drops list content
    parser_class = Qwen3Instruct2507Parser


class Qwen3(HermesJsonFormat):
    """Qwen3 (hybrid thinking): ``enable_thinking`` switch; reasoning after the last real query."""

    content_parts = "refuse"  # the template refuses or drops list content
    parser_class = Qwen3Parser
    renders_reasoning = True

    def _assistant(self, out: PromptBuilder, messages: list[Message], i: int, options: RenderOptions) -> None:
        message = messages[i]
        content = message.content if isinstance(message.content, str) else _text(message)
        reasoning = message.reasoning_content
        if not isinstance(reasoning, str):
            reasoning = ""
            if M["think_close"] in content:
                before, _, _ = content.partition(M["think_close"])
                reasoning = before.rstrip("\n").split(M["think_open"])[-1].lstrip("\n")
                content = content.split(M["think_close"])[-1].lstrip("\n")
        keep = options.keeps_reasoning(i)  # the template's rule lives in toolwire.context_policy
        put, kinds = out.appender(), self._kinds
        put(("special", IM_START, i))
        put(("template", "assistant\n", i))
        if keep and (i == len(messages) - 1 or reasoning):
            put((kinds["think_open"], M["think_open"], i))
            put(("template", "\n", i))
            out.content(reasoning.strip("\n"), i)
            put(("template", "\n", i))
            put((kinds["think_close"], M["think_close"], i))
            put(("template", "\n\n", i))
            out.content(content.lstrip("\n"), i)
        elif content:
            put(("content", content, i))
        self._calls(out, message, i, content)
        put(("special", IM_END, i))
        put(("template", "\n", i))

    def _generation_prompt(self, out: PromptBuilder, options: RenderOptions) -> bool:
        self._open(out, "assistant\n", None)
        if not options.thinking:
            self._special(out, M["think_open"], None)
            out.template("\n\n", None)
            self._special(out, M["think_close"], None)
            out.template("\n\n", None)
        return False


class Qwen3Thinking2507(Qwen3):
    """Qwen3-Thinking-2507: always thinks; the generation prompt opens ``<think>\\n``."""

    content_parts = "refuse"  # the template refuses or drops list content
    parser_class = Qwen3ThinkingParser

    def _generation_prompt(self, out: PromptBuilder, options: RenderOptions) -> bool:
        self._open(out, "assistant\n", None)
        self._special(out, M["think_open"], None)
        out.template("\n", None)
        return True


FORMATS: dict[str, Format] = {f.name: f for f in (Qwen25(), Qwen3(), Qwen3Instruct2507(), Qwen3Thinking2507())}

__all__ = ["FORMATS", "MARKERS", "HermesJsonFormat", "Qwen25", "Qwen3", "Qwen3Instruct2507", "Qwen3Thinking2507"]
