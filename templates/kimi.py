"""Kimi K2 family: Kimi-K2-Instruct and Kimi-K2-Thinking (``<|tool_call_begin|>functions.NAME:IDX`` calls).

Reference: the models' own chat templates (``Kimi-K2-Instruct.jinja``, ``Kimi-K2-Thinking.jinja``) as
transformers renders them, with ``arguments`` decoded to objects (what serving stacks do). Quirks kept:

* K2-Instruct numbers call ids itself (``functions.NAME:<index in the message>``), ignoring the request's
  ids, and writes the tool-result header with a literal backslash-n (``## Return of ID\\n``);
* K2-Thinking renders the request's own ids, a real newline after the tool-result header, ``<think>`` blocks
  on every assistant turn, and keeps ``reasoning_content`` only after the last assistant message without
  tool calls (the current tool loop); earlier turns get an empty ``<think></think>``.
"""

from __future__ import annotations

from typing import Any

from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, call_arguments, tool_to_dict
from toolwire.templates.json_text import tojson as json_dumps
from toolwire.parsers.kimi import CALL_ID_PREFIX, MARKERS, KimiParser, KimiThinkingParser
from toolwire.prompt import PromptBuilder

from .glm import jinja_str, message_reasoning

M = MARKERS

_ROLE_OPEN = {"user": M["user"], "assistant": M["assistant"]}  # every other role opens with <|im_system|>
_HEADED_ROLES = frozenset({"system", "user", "assistant", "tool"})  # K2-Instruct writes no header for others


def _is_image(part: Any) -> bool:
    extra = part.model_extra or {}
    return part.type == "image" or "image" in extra or "image_url" in extra


def render_parts(message: Message, out: PromptBuilder, index: int) -> None:
    """Content as Kimi's templates print it: a string as is; parts joined, images as media markers."""
    content = message.content
    if content is None:
        return
    if isinstance(content, str):
        out.content(content, index)
        return
    for part in content:
        if _is_image(part):
            out.special(M["media_start"], index).template("image", index).special(M["media_content"], index)
            out.special(M["media_pad"], index).special(M["media_end"], index).template("\n", index)
        else:
            out.content(part.text or "", index)


def _tools_block(tools: list[Tool], out: PromptBuilder) -> None:
    if tools:
        out.special(M["system"]).template("tool_declare").special(M["middle"])
        out.content(json_dumps([tool_to_dict(t) for t in tools])).special(M["end"])


def _call(out: PromptBuilder, index: int, id_parts: list[tuple[str, str]], arguments: dict) -> None:
    put, add = out.appender(), out.add
    put(("special", M["call_begin"], index))
    for kind, text in id_parts:
        add(kind, text, index)
    put(("special", M["argument_begin"], index))
    put(("content", json_dumps(arguments), index))  # JSON text, never empty
    put(("special", M["call_end"], index))


class KimiK2Format(Format):
    """Kimi-K2-Instruct: no reasoning; call ids numbered per message by the template."""
    user_media = frozenset({"image", "image_url"})  # a tool result's parts are printed as text only

    parser_class = KimiParser
    default_system = "You are a helpful assistant"

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        _tools_block(tools, out)
        put = out.appender()  # markers and fixed wording, never empty
        system, middle, end = M["system"], M["middle"], M["end"]
        for index, msg in enumerate(messages):
            role = msg.role
            if index == 0 and role != "system":
                out.special(system).template("system").special(middle)
                out.template(self.default_system).special(end)
            if role in _HEADED_ROLES:
                put(("special", system if role in ("system", "tool") else _ROLE_OPEN[role], index))
                put(("template", role, index))
                put(("special", middle, index))
            # other roles get no header at all in this template (kept as is)
            if role == "assistant" and msg.tool_calls:
                out.content(msg.text(""), index)
                put(("special", M["section_begin"], index))
                for n, call in enumerate(msg.tool_calls):
                    args = call_arguments(call, index, n)
                    _call(out, index, [("template", CALL_ID_PREFIX), ("content", call.function.name),
                                       ("template", f":{n}")], args)
                put(("special", M["section_end"], index))
            elif role == "tool":
                put(("template", "## Return of ", index))
                out.content(str(msg.tool_call_id), index)
                put(("template", "\\n", index))
                out.content(msg.text(""), index)
            else:
                render_parts(msg, out, index)
            put(("special", end, index))
        if options.add_generation_prompt:
            out.special(M["assistant"]).template("assistant").special(M["middle"])
        return False


class KimiK2ThinkingFormat(Format):
    """Kimi-K2-Thinking: ``<think>`` on every assistant turn; reasoning kept for the current tool loop."""
    tool_result_media = user_media = frozenset({"image", "image_url"})

    parser_class = KimiThinkingParser
    default_system = "You are Kimi, an AI assistant created by Moonshot AI."

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        _tools_block(tools, out)
        if not messages or messages[0].role != "system":
            out.special(M["system"]).template("system").special(M["middle"])
            out.template(self.default_system).special(M["end"])
        call_number = 0
        for index, msg in enumerate(messages):
            opener = _ROLE_OPEN.get(msg.role, M["system"])
            out.special(opener, index)
            if msg.name:
                out.content(msg.name, index)
            else:
                out.template(msg.role, index)
            out.special(M["middle"], index)
            if msg.role == "assistant":
                out.special(M["think_open"], index)
                reasoning = message_reasoning(msg)
                if reasoning is not None and options.keeps_reasoning(index):
                    out.content(jinja_str(reasoning), index)
                out.special(M["think_close"], index)
                render_parts(msg, out, index)
                if msg.tool_calls:
                    out.special(M["section_begin"], index)
                    for n, call in enumerate(msg.tool_calls):
                        call_id = call.id or f"{CALL_ID_PREFIX}{call.function.name}:{call_number}"
                        _call(out, index, [("content", call_id)], call_arguments(call, index, n))
                        call_number += 1
                    out.special(M["section_end"], index)
            elif msg.role == "tool":
                out.template("## Return of ", index).content(str(msg.tool_call_id), index).template("\n", index)
                render_parts(msg, out, index)
            else:
                render_parts(msg, out, index)
            out.special(M["end"], index)
        if options.add_generation_prompt:
            out.special(M["assistant"]).template("assistant").special(M["middle"])
        return False


FORMATS: dict[str, Format] = {f.name: f for f in (KimiK2Format(), KimiK2ThinkingFormat())}
