"""MiniMax-M2 (``<minimax:tool_call>`` blocks of ``<invoke name="f"><parameter name="k">v</parameter></invoke>``).

Reference: the model's own chat template (``MiniMax-M2.jinja``) as transformers renders it.

* Only a *first* ``system`` message is the system prompt (without one, ``model_identity``, default "You are a
  helpful assistant."); its ``current_date`` / ``current_location`` fields are printed. Later system
  messages are not rendered, as in the template.
* Reasoning is kept only for assistant turns after the last user message, unstripped, as
  ``<think>\\n...\\n</think>\\n\\n``; content is written as is. The generation prompt always opens
  ``<think>\\n`` (the model always thinks).
* A ``tool`` message needs an earlier assistant message with tool calls (the template refuses it otherwise:
  :class:`UnsupportedByFormat`).

Argument values: strings as they are, every other value as JSON. MiniMax has no escape, so a value holding
``</parameter>`` (or ``</invoke>``) followed by the next structural marker raises
:class:`UnrepresentableValue` (see ``docs/xml-values.md``); so does a name or key holding ``">``.
"""

from __future__ import annotations

from typing import Any

from toolwire.errors import InvalidRequest, UnrepresentableValue, UnsupportedByFormat
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, call_arguments, function_to_dict
from toolwire.parsers.minimax import MARKERS, MiniMaxParser
from toolwire.prompt import PromptBuilder
from toolwire.templates.json_text import tojson

from .glm import arg_text, check_representable, jinja_str, part_dict, split_reasoning

M = MARKERS

DEFAULT_IDENTITY = "You are a helpful assistant."
_TOOLS_INTRO = ("\n\n# Tools\nYou may call one or more tools to assist with the user query.\n"
                "Here are the tools available in JSONSchema format:\n\n<tools>\n")
_TOOLS_OUTRO = "</tools>\n\nWhen making tool calls, use XML format to invoke tools and pass parameters:\n\n"
_EXAMPLE = ('\n<invoke name="tool-name-1">\n<parameter name="param-key-1">param-value-1</parameter>\n'
            '<parameter name="param-key-2">param-value-2</parameter>\n...\n</invoke>\n')


def _tool_part_text(part: Any) -> str:
    shown = part_dict(part)
    if "output" in shown:
        return jinja_str(shown["output"])
    if shown.get("type") == "text" and "text" in shown:
        return jinja_str(shown["text"])
    return jinja_str(shown)


class MiniMaxFormat(Format):
    """MiniMax-M2 (see the module docstring)."""

    parser_class = MiniMaxParser

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        offset = 1 if messages and messages[0].role == "system" else 0
        self._render_system(messages[0] if offset else None, tools, options, out)
        conversation = messages[offset:]
        last_call: str | None = None
        for i, message in enumerate(conversation):
            index = i + offset
            if message.role == "assistant":
                last_call = self._render_assistant(index, message, options.keeps_reasoning(index), out)
            elif message.role == "tool":
                if last_call is None:
                    raise UnsupportedByFormat("Message has tool role, but there was no previous assistant message "
                                              "with a tool call (the MiniMax-M2 template refuses this)",
                                              message_index=index, field="role")
                self._render_tool(index, message, conversation, i, out)
            elif message.role == "user":
                out.special(M["role"], index).template("user\n", index).content(message.text(joiner=""), index)
                out.special(M["eos"], index).template("\n", index)
        if options.add_generation_prompt:
            out.special(M["role"]).template("ai\n").special(M["think_open"]).template("\n")
            return True
        return False

    def _render_system(self, system: Message | None, tools: list[Tool], options: RenderOptions,
                       out: PromptBuilder) -> None:
        out.special(M["bos"]).special(M["role"]).template("system\n")
        if system is not None and system.content:
            out.content(system.text(joiner=""), 0)
        else:
            identity = options.extra.get("model_identity", DEFAULT_IDENTITY)
            if not isinstance(identity, str):
                raise InvalidRequest("model_identity must be a string", field="model_identity")
            if "model_identity" in options.extra:
                out.content(identity)
            else:
                out.template(identity)
        extra = (system.model_extra or {}) if system is not None else {}
        for key, label in (("current_date", "Current date: "), ("current_location", "Current location: ")):
            if extra.get(key):
                if not isinstance(extra[key], str):
                    raise InvalidRequest(f"{key} must be a string", message_index=0, field=key)
                out.template("\n" + label, 0).content(extra[key], 0)
        if tools:
            out.template(_TOOLS_INTRO)
            for tool in tools:
                out.template("<tool>").content(tojson(function_to_dict(tool)))
                out.template("</tool>\n")
            out.template(_TOOLS_OUTRO).special(M["block_open"]).template(_EXAMPLE).special(M["block_close"])
        out.special(M["eos"]).template("\n")

    def _render_assistant(self, index: int, message: Message, keep_reasoning: bool, out: PromptBuilder) -> str | None:
        """Write one assistant turn; returns the name of its last tool call (None without calls)."""
        reasoning, content = split_reasoning(message, strip_both_ends=True)
        out.special(M["role"], index).template("ai\n", index)
        if reasoning and keep_reasoning:
            out.special(M["think_open"], index).template("\n", index).content(reasoning, index)
            out.template("\n", index).special(M["think_close"], index).template("\n\n", index)
        out.content(content, index)
        calls = message.tool_calls or []
        if calls:
            out.template("\n", index).special(M["block_open"], index).template("\n", index)
            for call_index, call in enumerate(calls):
                self._render_call(index, call_index, call, out)
            out.special(M["block_close"], index)
        out.special(M["eos"], index).template("\n", index)
        return calls[-1].function.name if calls else None

    def _render_call(self, index: int, call_index: int, call: Any, out: PromptBuilder) -> None:
        where = f"tool_calls[{call_index}].function"
        name = call.function.name
        if M["attr_close"] in name:
            raise UnrepresentableValue('a MiniMax tool name cannot hold \'">\'', message_index=index,
                                       field=f"{where}.name")
        out.template(M["invoke_open"], index).content(name, index).template(M["attr_close"] + "\n", index)
        for key, value in call_arguments(call, index, call_index).items():
            field = f"{where}.arguments.{key}"
            if any(m in key for m in (M["attr_close"], M["parameter_close"], M["invoke_close"])):
                raise UnrepresentableValue('a MiniMax argument name cannot hold \'">\', </parameter> or </invoke>',
                                           message_index=index, field=field)
            text = arg_text(value)
            check_representable(text, MiniMaxParser.value_closers, message_index=index, field=field)
            out.template(M["parameter_open"], index).content(key, index).template(M["attr_close"], index)
            out.content(text, index).template(M["parameter_close"] + "\n", index)
        out.template(M["invoke_close"] + "\n", index)

    def _render_tool(self, index: int, message: Message, conversation: list[Message], i: int,
                     out: PromptBuilder) -> None:
        if i == 0 or conversation[i - 1].role != "tool":
            out.special(M["role"], index).template("tool", index)
        if isinstance(message.content, str):
            out.template("\n" + M["response_open"], index).content(message.content, index)
            out.template(M["response_close"], index)
        else:
            for part in message.content or ():
                out.template("\n" + M["response_open"], index).content(_tool_part_text(part), index)
                out.template("\n" + M["response_close"], index)
        if i == len(conversation) - 1 or conversation[i + 1].role != "tool":
            out.special(M["eos"], index).template("\n", index)


FORMATS: dict[str, Format] = {"minimax_m2": MiniMaxFormat()}
