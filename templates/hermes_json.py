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

from functools import lru_cache
from typing import ClassVar

from toolwire.errors import UnrepresentableValue, UnsupportedByFormat
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, call_arguments, tool_to_dict
from toolwire.templates.json_text import tojson as jinja_json  # transformers' tojson: non-ASCII kept, ", " / ": "
from toolwire.parsers.hermes_json import MARKERS, HermesJsonParser, Qwen3Parser, Qwen3ThinkingParser
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
_specials = lru_cache(maxsize=None)(special_pattern)  # per special-token set: its spellings in fixed text


def _text(message: Message) -> str:
    return message.text()


def _check_name(name: str, index: int, call_index: int) -> None:
    if any(ch in name for ch in '"\\') or any(ord(ch) < 0x20 for ch in name):
        raise UnrepresentableValue(f"function name {name!r} contains '\"', '\\' or a control character, which the "
                                   "template writes unescaped into the call's JSON", message_index=index,
                                   field=f"tool_calls[{call_index}].function.name")


class HermesJsonFormat(Format):
    """The shared Qwen chat frame (``<|im_start|>role\\n...<|im_end|>\\n``) with JSON tool calls."""

    markers: ClassVar[dict[str, str]] = MARKERS
    stop_tokens = ("<|im_end|>", "<|endoftext|>")  # what generation stops on (generation_config eos)
    special_tokens: ClassVar[frozenset[str]] = frozenset(
        {M["im_start"], M["im_end"], M["call_open"], M["call_close"], M["response_open"], M["response_close"],
         M["think_open"], M["think_close"]})
    """Markers that are single control tokens in the model's vocabulary."""
    default_system: ClassVar[str | None] = None
    compact_calls: ClassVar[bool] = False     # Qwen2.5: "\n" before content and before every call
    renders_reasoning: ClassVar[bool] = False

    # ---- pieces
    def _special(self, out: PromptBuilder, marker: str, index: int | None) -> None:
        if marker in self.special_tokens:
            out.special(marker, index)
        else:
            out.template(marker, index)

    def _open(self, out: PromptBuilder, role: str, index: int | None) -> None:
        out.special(M["im_start"], index).template(role, index)

    def _close(self, out: PromptBuilder, index: int | None) -> None:
        out.special(M["im_end"], index).template("\n", index)

    def _system(self, messages: list[Message], tools: list[Tool], out: PromptBuilder) -> None:
        first = messages[0] if messages and messages[0].role == "system" else None
        if tools:
            self._open(out, "system\n", None)
            if first is not None:
                out.content(_text(first), 0).template("\n\n", 0)
            elif self.default_system is not None:
                out.template(self.default_system + "\n\n", None)
            out.fixed(TOOLS_PREAMBLE, None, _specials(self.special_tokens))
            for tool in tools:
                out.template("\n", None).content(jinja_json(tool_to_dict(tool)), None)
            out.fixed(TOOLS_POSTAMBLE, None, _specials(self.special_tokens))
            self._special(out, M["call_open"], None)
            out.template(TOOLS_EXAMPLE, None)
            self._special(out, M["call_close"], None)
            self._close(out, None)
        elif first is not None:
            self._open(out, "system\n", 0)
            out.content(_text(first), 0)
            self._close(out, 0)
        elif self.default_system is not None:
            self._open(out, "system\n", None)
            out.template(self.default_system, None)
            self._close(out, None)

    def _calls(self, out: PromptBuilder, message: Message, index: int, content: str) -> None:
        for ci, call in enumerate(message.tool_calls or ()):
            name = call.function.name
            _check_name(name, index, ci)
            args = jinja_json(call_arguments(call, index, ci))
            if self.compact_calls or ci > 0 or content:
                out.template("\n", index)
            self._special(out, M["call_open"], index)
            out.template('\n{"name": "', index).content(name, index).template('", "arguments": ', index)
            out.content(args, index).template("}\n", index)
            self._special(out, M["call_close"], index)

    def _tool_result(self, out: PromptBuilder, messages: list[Message], i: int) -> None:
        if i == 0 or messages[i - 1].role != "tool":
            self._open(out, "user", i)
        out.template("\n", i)
        self._special(out, M["response_open"], i)
        out.template("\n", i).content(_text(messages[i]), i).template("\n", i)
        self._special(out, M["response_close"], i)
        if i == len(messages) - 1 or messages[i + 1].role != "tool":
            self._close(out, i)

    def _assistant(self, out: PromptBuilder, messages: list[Message], i: int, options: RenderOptions) -> None:
        message = messages[i]
        content = _text(message)
        self._open(out, "assistant\n", i)
        out.content(content, i)
        self._calls(out, message, i, content)
        self._close(out, i)

    # ---- the template
    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        if not messages:
            raise UnsupportedByFormat("the template needs at least one message", field="messages")
        self._system(messages, tools, out)
        for i, message in enumerate(messages):
            if message.role not in _ROLES:
                raise UnsupportedByFormat(f"role {message.role!r} is not rendered by the {self.name} template "
                                          f"(it knows {', '.join(_ROLES)})", message_index=i, field="role")
            if message.role == "user" or (message.role == "system" and i > 0):
                self._open(out, message.role + "\n", i)
                out.content(_text(message), i)
                self._close(out, i)
            elif message.role == "assistant":
                self._assistant(out, messages, i, options)
            elif message.role == "tool":
                self._tool_result(out, messages, i)
        if options.add_generation_prompt:
            return self._generation_prompt(out, options)
        return False

    def _generation_prompt(self, out: PromptBuilder, options: RenderOptions) -> bool:
        self._open(out, "assistant\n", None)
        return False


class Qwen25(HermesJsonFormat):
    """Qwen2.5-Instruct: default system prompt, compact assistant turns, no reasoning."""

    name = "qwen25"
    content_parts = "refuse"  # the template refuses or drops list content
    reference = "Qwen2.5-7B-Instruct chat template (transformers rendering)"
    parser_class = HermesJsonParser
    special_tokens = frozenset({M["im_start"], M["im_end"], M["call_open"], M["call_close"]})
    default_system = QWEN25_SYSTEM
    compact_calls = True

    def _assistant(self, out: PromptBuilder, messages: list[Message], i: int, options: RenderOptions) -> None:
        message = messages[i]
        content = _text(message)
        if not message.tool_calls:
            self._open(out, "assistant\n", i)
            out.content(content, i)
        else:
            self._open(out, "assistant", i)
            if content:
                out.template("\n", i).content(content, i)
            self._calls(out, message, i, content)
        self._close(out, i)


class Qwen3Instruct2507(HermesJsonFormat):
    """Qwen3-Instruct-2507: the Qwen3 frame without any reasoning."""

    name = "qwen3_instruct_2507"
    content_parts = "refuse"  # the template refuses or drops list content
    reference = "Qwen3-4B-Instruct-2507 chat template (transformers rendering)"
    parser_class = HermesJsonParser


class Qwen3(HermesJsonFormat):
    """Qwen3 (hybrid thinking): ``enable_thinking`` switch; reasoning after the last real query."""

    name = "qwen3"
    content_parts = "refuse"  # the template refuses or drops list content
    reference = "Qwen3-8B chat template (transformers rendering)"
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
        self._open(out, "assistant\n", i)
        if keep and (i == len(messages) - 1 or reasoning):
            self._special(out, M["think_open"], i)
            out.template("\n", i).content(reasoning.strip("\n"), i).template("\n", i)
            self._special(out, M["think_close"], i)
            out.template("\n\n", i).content(content.lstrip("\n"), i)
        else:
            out.content(content, i)
        self._calls(out, message, i, content)
        self._close(out, i)

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

    name = "qwen3_thinking_2507"
    content_parts = "refuse"  # the template refuses or drops list content
    reference = "Qwen3-4B-Thinking-2507 chat template (transformers rendering)"
    parser_class = Qwen3ThinkingParser

    def _generation_prompt(self, out: PromptBuilder, options: RenderOptions) -> bool:
        self._open(out, "assistant\n", None)
        self._special(out, M["think_open"], None)
        out.template("\n", None)
        return True


FORMATS: dict[str, Format] = {f.name: f for f in (Qwen25(), Qwen3(), Qwen3Instruct2507(), Qwen3Thinking2507())}

__all__ = ["FORMATS", "MARKERS", "HermesJsonFormat", "Qwen25", "Qwen3", "Qwen3Instruct2507", "Qwen3Thinking2507"]
