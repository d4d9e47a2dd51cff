"""DeepSeek V3.1 and R1: the pre-DSML ``<｜tool▁calls▁begin｜>`` wire formats.

References: the models' own chat templates (``DeepSeek-V3.1.jinja``, ``DeepSeek-R1.jinja``) as transformers
renders them. V3.1 receives ``arguments`` decoded (printed with ``tojson``); R1's template concatenates the
request's JSON string as is. Quirks kept, because the models were trained on them:

* both ignore ``tools`` (no tool declaration in the prompt) and join every system message at the top;
* V3.1 drops all history reasoning, answers after tool results without a new ``<｜Assistant｜>``, and opens
  the generation prompt with ``<think>`` (thinking) or ``<think></think>`` (not thinking);
* R1 writes only the conversation's very first tool call with ``<｜Assistant｜>`` and
  ``<｜tool▁calls▁begin｜>``: every later call (also in later turns) is ``\\n<｜tool▁call▁begin｜>...``, and only
  the first tool result opens ``<｜tool▁outputs▁begin｜>``. Its generation prompt always opens ``<think>\\n``.
"""

from __future__ import annotations

from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, call_arguments
from toolwire.templates.json_text import tojson as json_dumps
from toolwire.parsers.deepseek_legacy import (
    MARKERS, R1_FENCE_CLOSE, R1_FENCE_OPEN, DeepSeekR1Parser, DeepSeekV31Parser,
)
from toolwire.prompt import PromptBuilder

M = MARKERS


def _system_prompt(messages: list[Message], out: PromptBuilder) -> None:
    first = True
    for index, msg in enumerate(messages):
        if msg.role == "system":
            if not first:
                out.template("\n\n", index)
            out.content(msg.text(), index)
            first = False


def _after_think(content: str, last: bool) -> str:
    """History content after a ``</think>`` (V3.1 splits at the first, R1 at the last one)."""
    if "</think>" not in content:
        return content
    return content.rsplit("</think>", 1)[1] if last else content.split("</think>", 1)[1]


class DeepSeekV31Format(Format):
    """DeepSeek-V3.1 (hybrid thinking; ``thinking`` switches the generation prompt's ``<think>``)."""

    content_parts = "refuse"  # the template refuses or drops list content
    parser_class = DeepSeekV31Parser

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        out.special(M["bos"])
        _system_prompt(messages, out)
        last_user = in_tool = False
        for index, msg in enumerate(messages):
            if msg.role == "user":
                in_tool, last_user = False, True
                out.special(M["user"], index).content(msg.text(), index)
            elif msg.role == "assistant" and msg.tool_calls:
                if last_user:
                    out.special(M["assistant"], index).special(M["think_open"], index)
                    out.special(M["think_close"], index)
                last_user = in_tool = False
                for n, call in enumerate(msg.tool_calls):
                    if n == 0:
                        out.content(msg.text(), index).special(M["calls_begin"], index)
                    out.special(M["call_begin"], index).content(call.function.name, index).special(M["sep"], index)
                    out.content(json_dumps(call_arguments(call, index, n)), index).special(M["call_end"], index)
                out.special(M["calls_end"], index).special(M["eos"], index)
            elif msg.role == "assistant":
                if last_user:
                    out.special(M["assistant"], index).special(M["think_open"], index)
                    if not ((msg.model_extra or {}).get("prefix") and options.thinking):
                        out.special(M["think_close"], index)
                last_user = False
                text = msg.text()
                out.content(text if in_tool else _after_think(text, last=False), index).special(M["eos"], index)
                in_tool = False
            elif msg.role == "tool":
                last_user, in_tool = False, True
                out.special(M["output_begin"], index).content(msg.text(), index).special(M["output_end"], index)
        if options.add_generation_prompt and last_user and not in_tool:
            out.special(M["assistant"]).special(M["think_open"])
            if not options.thinking:
                out.special(M["think_close"])
            return options.thinking
        return False


class DeepSeekR1Format(Format):
    """DeepSeek-R1 (always thinks: the generation prompt opens ``<think>\\n``; calls in fenced JSON)."""

    content_parts = "refuse"  # the template refuses or drops list content
    parser_class = DeepSeekR1Parser

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        out.special(M["bos"])
        _system_prompt(messages, out)
        first_call = first_output = True
        in_tool = False
        for index, msg in enumerate(messages):
            if msg.role == "user":
                in_tool = False
                out.special(M["user"], index).content(msg.text(), index)
            elif msg.role == "assistant" and msg.tool_calls:
                in_tool = False
                for n, call in enumerate(msg.tool_calls):
                    call_arguments(call, index, n)  # refuse invalid JSON before printing it verbatim
                    args = call.function.arguments
                    if first_call:
                        out.special(M["assistant"], index).content(msg.text(), index).special(M["calls_begin"], index)
                        first_call = False
                    else:
                        out.template("\n", index)
                    out.special(M["call_begin"], index).content(call.type, index).special(M["sep"], index)
                    out.content(call.function.name, index).template(R1_FENCE_OPEN, index)
                    out.content(args if isinstance(args, str) else json_dumps(args), index)
                    out.template(R1_FENCE_CLOSE, index).special(M["call_end"], index)
                out.special(M["calls_end"], index).special(M["eos"], index)
            elif msg.role == "assistant":
                if in_tool:
                    out.special(M["outputs_end"], index).content(msg.text(), index)
                    in_tool = False
                else:
                    out.special(M["assistant"], index).content(_after_think(msg.text(), last=True), index)
                out.special(M["eos"], index)
            elif msg.role == "tool":
                in_tool = True
                if first_output:
                    out.special(M["outputs_begin"], index)
                    first_output = False
                out.special(M["output_begin"], index).content(msg.text(), index).special(M["output_end"], index)
        if in_tool:
            out.special(M["outputs_end"])
        if options.add_generation_prompt and not in_tool:
            out.special(M["assistant"]).special(M["think_open"]).template("\n")
            return True
        return False


FORMATS: dict[str, Format] = {f.name: f for f in (DeepSeekV31Format(), DeepSeekR1Format())}
