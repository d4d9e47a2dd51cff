"""Poolside Laguna (``poolside-Laguna-S-2.1.jinja``): ``<assistant>…</assistant>`` turns with GLM-4.7 calls.

Reference: the model's own chat template as transformers renders it, ``arguments`` decoded to objects; the
turn's stop ``</assistant>`` is assumed. Native Python on the GLM call writer (:mod:`toolwire.templates.glm`),
since the call syntax is GLM-4.7's with no newlines:
``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>``, strings as is, other values as JSON.

* the prompt starts with ``〈|EOS|〉``; a ``<system>`` block holds the system text (the first system message's,
  ``rstrip``-ed, else Poolside's default sentence; a blank system message opts out of it) and the tool list as
  one JSON line each; it is written when there is system text, tools, or thinking is on;
* ``thinking`` (the template's ``enable_thinking``, on by default there) writes ``<think>R</think>`` in every
  assistant turn and opens ``<think>`` in the generation prompt; off, turns get a bare ``</think>`` and so does
  the prompt. ``preserve_thinking=True`` keeps ``<think>R</think>`` with thinking off. Which turns keep their
  reasoning is the context plan's decision (:mod:`toolwire.context_policy`);
* content is used only when it is a string (the template renders anything else as empty), so toolwire
  refuses content parts (``UnsupportedByFormat`` naming the field), and messages of roles the template drops.

The template's switch ``enable_thinking`` is accepted as an alias of ``thinking``.
"""

from __future__ import annotations

from toolwire.errors import UnsupportedByFormat
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, tool_to_dict
from toolwire.parsers.laguna import LagunaParser
from toolwire.prompt import PromptBuilder
from toolwire.templates.json_text import tojson

from .glm import GlmFormat, GlmStyle

from toolwire.families.laguna import MARKERS
M = MARKERS
DEFAULT_SYSTEM = ("You are a helpful, conversationally-fluent assistant made by Poolside. You are here to be helpful "
                  "to users through natural language conversations.")
_TOOLS_INTRO = ("### Tools\n\nYou may call functions to assist with the user query.\nAll available function "
                "signatures are listed below:\n<available_tools>\n")


_FRAMES = {"user": (M["user_open"], M["user_close"]), "tool": (M["response_open"], M["response_close"]),
           "system": (M["system_open"], M["system_close"])}
"""The markers around a non-assistant message."""


def _text(message: Message, index: int) -> str:
    """The content the template uses: a string, or empty for None; a list of parts would be lost, so refused."""
    if isinstance(message.content, list):
        raise UnsupportedByFormat("the Laguna template renders content parts as empty text; send the content as "
                                  "one string", message_index=index, field="content")
    return message.content or ""


def _reasoning(message: Message) -> str:
    """``reasoning`` (vLLM's field name) first, then ``reasoning_content``, as the template reads them."""
    extra = (message.model_extra or {}).get("reasoning")
    if isinstance(extra, str):
        return extra
    return message.reasoning_content if isinstance(message.reasoning_content, str) else ""


class Laguna(GlmFormat):
    """Laguna S 2.1 (``poolside-Laguna-S-2.1.jinja``)."""


    def __init__(self) -> None:
        super().__init__(GlmStyle(newlines=False, clear_thinking=False), LagunaParser)

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        for index, message in enumerate(messages):
            if message.role not in ("system", "user", "assistant", "tool"):
                raise UnsupportedByFormat(f"the Laguna template drops {message.role!r} messages",
                                          message_index=index, field="role")
        out.special(M["bos"])
        offset, system, sys_index = 0, DEFAULT_SYSTEM, None
        if messages and messages[0].role == "system":
            offset, system, sys_index = 1, _text(messages[0], 0), 0
        if system.strip() or tools or options.thinking:
            out.special(M["system_open"], sys_index)
            if system.strip():
                if sys_index == 0:
                    out.content(system.rstrip(), 0)
                else:
                    out.template(system.rstrip())
                if tools:
                    out.template("\n\n", sys_index)
            if tools:
                out.template(_TOOLS_INTRO, sys_index)
                for tool in tools:
                    out.content(tojson(tool_to_dict(tool)), sys_index)
                    out.template("\n", sys_index)
                out.template("</available_tools>", sys_index)
            out.special(M["system_close"], sys_index).template("\n", sys_index)
        preserve = bool(options.extra.get("preserve_thinking"))
        put, content = out.appender(), out.content  # put: markers and fixed wording, never empty
        for index in range(offset, len(messages)):
            message = messages[index]
            role, text = message.role, _text(message, index)
            if role == "assistant":
                put(("special", M["assistant_open"], index))
                if options.thinking or preserve or options.keeps_reasoning(index):
                    reasoning = _reasoning(message) if options.keeps_reasoning(index) else ""
                    put(("special", M["think_open"], index))
                    content(reasoning, index)
                    put(("special", M["think_close"], index))
                else:
                    put(("special", M["think_close"], index))
                content(text, index)
                for call_index, call in enumerate(message.tool_calls or ()):
                    self._render_call(index, call_index, call, out)
                put(("special", M["assistant_close"], index))
            else:
                opener, closer = _FRAMES[role]
                put(("special", opener, index))
                content(text, index)
                put(("special", closer, index))
            put(("template", "\n", index))
        if options.add_generation_prompt:
            out.special(M["assistant_open"]).special(M["think_open"] if options.thinking else M["think_close"])
            return options.thinking
        return False


FORMATS: dict[str, Format] = {f.name: f for f in (Laguna(),)}

__all__ = ["FORMATS", "MARKERS", "DEFAULT_SYSTEM", "Laguna"]
