"""GLM-4.5, GLM-4.6 and GLM-4.7 (``<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>``).

Reference: the models' own chat templates (``GLM-4.5.jinja``, ``GLM-4.6.jinja``, ``GLM-4.7-Flash.jinja``) as
transformers renders them. Versions are data on one implementation (:class:`GlmFormat`):

* 4.5 and 4.6 put a newline after ``<|user|>``/``<|system|>``/``<|assistant|>``, after the call name and
  after every ``</arg_value>``; with thinking off they append ``/nothink`` to user turns and pre-fill
  ``<think></think>``. 4.6 differs from 4.5 only by refusing non-object arguments, which toolwire's request
  model refuses for every family anyway.
* 4.7 writes everything without newlines, opens ``<think>`` in the generation prompt when thinking is on
  (``</think>`` when off) and accepts ``clear_thinking=False`` to keep every earlier turn's reasoning.

Earlier reasoning is kept only for assistant turns after the last user message (4.7: all of them with
``clear_thinking=False``), as :mod:`toolwire.context_policy` decides; content and kept reasoning are ``strip()``-ed, as the templates do.

Argument values: strings are written as they are, every other value as JSON (``tojson``: ``", "`` and
``": "`` separators, non-ASCII kept). GLM has no escape, so a value that holds its own closing tag followed
by the next structural marker (``</arg_value><arg_key>``...) raises :class:`UnrepresentableValue`
(see ``docs/xml-values.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolwire.errors import UnrepresentableValue
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, call_arguments, tool_to_dict
from toolwire.parsers.glm import MARKERS, Glm45Parser, Glm46Parser, Glm47Parser
from toolwire.parsers.xml_calls import early_close
from toolwire.prompt import PromptBuilder
from toolwire.templates.json_text import tojson

from .jinja import REASONING_FIELDS

M = MARKERS

_TOOLS_INTRO = ("\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
                "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n")
_TOOLS_OUTRO = "</tools>\n\nFor each function call, output the function name and arguments within the following XML format:\n"


# ---------------------------------------------------------------- helpers shared with templates/minimax.py

def arg_text(value: Any) -> str:
    """An argument value as the HF templates write it: a string as is, anything else as ``tojson``."""
    return value if isinstance(value, str) else tojson(value)


def message_reasoning(message: Message) -> Any:
    """The message's reasoning as transformers passes it to templates: the first of
    :data:`~toolwire.templates.jinja.REASONING_FIELDS` that is not None."""
    extra = message.__pydantic_extra__
    if not extra:  # the usual case: reasoning_content is the only field there is
        return message.reasoning_content
    fields = {"reasoning_content": message.reasoning_content, **extra}
    return next((fields[k] for k in REASONING_FIELDS if fields.get(k) is not None), None)


def jinja_str(value: Any) -> str:
    """What ``{{ value }}`` prints for a plain Python value (``str()``: dicts print as their repr)."""
    return value if isinstance(value, str) else str(value)


def part_dict(part: Any) -> dict:
    """A content part as the dict a template sees (keys as they were set)."""
    return part.model_dump(exclude_unset=True) if hasattr(part, "model_dump") else dict(part)


def check_representable(text: str, closers, *, message_index: int, field: str) -> None:
    """Raise :class:`UnrepresentableValue` when ``text`` would close its element early on the wire."""
    tag = early_close(text, closers)
    if tag is not None:
        raise UnrepresentableValue(
            f"the value holds {tag!r} followed by a structural marker, which would end it early; "
            "this format has no escape for it", message_index=message_index, field=field)


# ---------------------------------------------------------------- GLM

@dataclass(frozen=True)
class GlmStyle:
    """What differs between GLM versions."""

    newlines: bool          # 4.5 / 4.6: newline framing and the /nothink switch
    clear_thinking: bool    # 4.7: accepts the clear_thinking option


def split_reasoning(message: Message, *, strip_both_ends: bool = False) -> tuple[str, str]:
    """(reasoning, content) as the GLM and MiniMax templates derive them: when the message has no reasoning
    field, a ``<think>…</think>`` inside the content is split off. GLM strips the newlines next to the tags
    only; MiniMax (``strip_both_ends``) strips newlines at both ends of each part."""
    content = message.text(joiner="")
    reasoning = message_reasoning(message)
    if isinstance(reasoning, str):
        return reasoning, content
    if "</think>" not in content:
        return "", content
    head, tail = content.split("</think>")[0], content.split("</think>")[-1]
    if strip_both_ends:
        return head.strip("\n").split("<think>")[-1].strip("\n"), tail.strip("\n")
    return head.rstrip("\n").split("<think>")[-1].lstrip("\n"), tail.lstrip("\n")


class GlmFormat(Format):
    """A GLM version (see the module docstring); the parser class matches the version's framing."""

    def __init__(self, style: GlmStyle, parser_class: type):
        self.style = style
        self.parser_class = parser_class

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        nl = "\n" if self.style.newlines else ""
        out.special(M["gmask"]).special(M["sop"])
        if tools:
            self._render_tools(tools, out)
        for index, message in enumerate(messages):
            role = message.role
            if role == "user":
                text = message.text(joiner="")
                out.special(M["user"], index).template(nl, index).content(text, index)
                if self.style.newlines and not options.thinking and not text.endswith(M["nothink"]):
                    out.special(M["nothink"], index)
            elif role == "assistant":
                self._render_assistant(index, message, options.keeps_reasoning(index), out)
            elif role == "tool":
                self._render_tool(index, message, messages, out)
            elif role == "system":
                out.special(M["system"], index).template(nl, index).content(message.text(joiner=""), index)
        if options.add_generation_prompt:
            out.special(M["assistant"])
            if self.style.newlines:
                if not options.thinking:
                    out.template("\n").special(M["think_open"]).special(M["think_close"])
                return False
            out.special(M["think_open"] if options.thinking else M["think_close"])
            return options.thinking
        return False

    def _render_tools(self, tools: list[Tool], out: PromptBuilder) -> None:
        out.special(M["system"]).template(_TOOLS_INTRO)
        for tool in tools:
            out.content(tojson(tool_to_dict(tool))).template("\n")
        out.template(_TOOLS_OUTRO)
        nl = "\n" if self.style.newlines else ""
        out.special(M["call_open"]).template("{function-name}" + nl)
        for n in (1, 2):
            out.special(M["key_open"]).template(f"{{arg-key-{n}}}").special(M["key_close"]).template(nl)
            out.special(M["value_open"]).template(f"{{arg-value-{n}}}").special(M["value_close"]).template(nl)
        out.template("..." + nl).special(M["call_close"])

    def _render_assistant(self, index: int, message: Message, keep_reasoning: bool, out: PromptBuilder) -> None:
        nl = "\n" if self.style.newlines else ""
        reasoning, content = split_reasoning(message)
        out.special(M["assistant"], index).template(nl, index)
        if keep_reasoning and reasoning:
            out.special(M["think_open"], index).content(reasoning.strip(), index).special(M["think_close"], index)
        elif self.style.newlines:
            out.special(M["think_open"], index).special(M["think_close"], index)
        else:
            out.special(M["think_close"], index)
        if content.strip():
            out.template(nl, index).content(content.strip(), index)
        for call_index, call in enumerate(message.tool_calls or ()):
            self._render_call(index, call_index, call, out)

    def _render_call(self, index: int, call_index: int, call: Any, out: PromptBuilder) -> None:
        nl = "\n" if self.style.newlines else ""
        where = f"tool_calls[{call_index}].function"
        name = call.function.name
        if "\n" in name or M["key_open"] in name or M["call_close"] in name:
            raise UnrepresentableValue("a GLM call name cannot hold a newline, <arg_key> or </tool_call>",
                                       message_index=index, field=f"{where}.name")
        put, content, template = out.appender(), out.content, out.template  # put: markers, never empty
        template(nl, index)
        put(("special", M["call_open"], index))
        content(name, index)
        template(nl, index)
        key_open, key_close = ("special", M["key_open"], index), ("special", M["key_close"], index)
        value_open, value_close = ("special", M["value_open"], index), ("special", M["value_close"], index)
        for key, value in call_arguments(call, index, call_index).items():
            field = f"{where}.arguments.{key}"
            if M["key_close"] in key or M["value_open"] in key or M["call_close"] in key:
                raise UnrepresentableValue("a GLM argument name cannot hold </arg_key>, <arg_value> or </tool_call>",
                                           message_index=index, field=field)
            text = arg_text(value)
            check_representable(text, self.parser_class.value_closers, message_index=index, field=field)
            put(key_open)
            content(key, index)
            put(key_close)
            template(nl, index)
            put(value_open)
            content(text, index)
            put(value_close)
            template(nl, index)
        put(("special", M["call_close"], index))

    def _render_tool(self, index: int, message: Message, messages: list[Message], out: PromptBuilder) -> None:
        nl = "\n" if self.style.newlines else ""
        if isinstance(message.content, str):
            if index == 0 or messages[index - 1].role != "tool":
                out.special(M["observation"], index)
            out.template(nl, index).special(M["response_open"], index).template(nl, index)
            out.content(message.content, index)
            out.template(nl, index).special(M["response_close"], index)
            return
        # content parts (or none): the templates print each part's ``output``, else the part itself
        out.special(M["observation"], index)
        for part in message.content or ():
            shown = part_dict(part)
            text = jinja_str(shown["output"]) if "output" in shown else jinja_str(shown)
            out.template(nl, index).special(M["response_open"], index).template(nl, index).content(text, index)
            out.template(nl, index).special(M["response_close"], index)


FORMATS: dict[str, Format] = {f.name: f for f in (
    GlmFormat(GlmStyle(newlines=True, clear_thinking=False), Glm45Parser),
    GlmFormat(GlmStyle(newlines=True, clear_thinking=False), Glm46Parser),
    GlmFormat(GlmStyle(newlines=False, clear_thinking=True), Glm47Parser),
)}
