"""StepFun Step 3.5 Flash (``StepFun3.5-Flash.jinja``): ChatML with Qwen3-Coder XML calls, always thinking.

Reference: the model's own chat template as transformers renders it, ``arguments`` decoded to objects, with
the bos token ``<s>``. Native Python; what the template does, and so this renderer:

* the prompt starts with ``<s>``; tools go in a system turn as one JSON line each (the first system message's
  text, untrimmed, before them); a later system message is a turn of its own (``observation`` when its
  ``name`` is ``observation``);
* assistant turns: ``<think>\\nR\\n</think>\\n`` only after the last real user query (a user message that is
  a whole ``<tool_response>`` block does not count), content as is, then each call
  ``<tool_call>\\n<function=NAME>\\n<parameter=K>\\nV\\n</parameter>\\n</function>\\n</tool_call>`` with no
  separator; values with Python's ``str`` (``True``, ``None``) except objects and arrays (JSON). Content
  without ``reasoning_content`` is split at its last ``</think>`` as the template does;
* tool results: one ``tool_response`` turn per run of results, each ``<tool_response>V</tool_response>``;
* the generation prompt always opens ``<think>\\n`` (``thinking`` is always on for this family).

Content parts: text parts (their ``value`` or ``text``) and ``image`` parts (``<im_patch>``); the template
silently drops every other part and every message of another role, so toolwire refuses those
(``UnsupportedByFormat`` naming the field).
"""

from __future__ import annotations

from typing import Any

from toolwire.errors import UnsupportedByFormat
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, tool_to_dict
from toolwire.markers import Marker
from toolwire.parsers.step35 import MARKERS, STEP35_GRAMMAR, Step35Parser
from toolwire.prompt import PromptBuilder, special_pattern

from .chatml import chatml_special_tokens
from .qwen_xml import _split_think, call_values, coder_value, jinja_json, write_call

G = STEP35_GRAMMAR
M = MARKERS
SPECIAL_TOKENS = chatml_special_tokens(MARKERS, Marker.BOS, Marker.IMAGE)
"""Markers taken as single control tokens (``<function=`` etc. are plain text)."""
_SPECIALS = special_pattern(SPECIAL_TOKENS)

_INSTRUCTIONS = (
    "\n</tools>\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n<tool_call>\n"
    "<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n"
    "<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n"
    "</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n- Function calls MUST follow the specified "
    "format: an inner <function=...>\n...\n</function> block must be nested within <tool_call>\n...\n</tool_call> "
    "XML tags\n- Required parameters MUST be specified\n</IMPORTANT><|im_end|>\n")


def content_pieces(message: Message, index: int) -> list[tuple[str, str]]:
    """The template's ``render_content``: text parts (``value`` or ``text``), ``image`` parts as ``<im_patch>``."""
    content = message.content
    if content is None:
        return []
    if isinstance(content, str):
        return [("content", content)]
    out = []
    for n, part in enumerate(content):
        extra = part.model_extra or {}
        if part.type == "text":
            value = extra.get("value", part.text)
            out.append(("content", value if isinstance(value, str) else ""))
        elif part.type == "image":
            out.append(("special", M["image"]))
        else:
            raise UnsupportedByFormat(f"the Step 3.5 template drops content parts of type {part.type!r}",
                                      message_index=index, field=f"content[{n}].type")
    return out


class Step35(Format):
    """Step 3.5 Flash (``StepFun3.5-Flash.jinja``)."""
    tool_result_media = user_media = frozenset({"image"})

    parser_class = Step35Parser

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        if not messages:
            raise UnsupportedByFormat("the Step 3.5 template needs at least one message", field="messages")
        pieces = [content_pieces(m, i) for i, m in enumerate(messages)]
        for index, message in enumerate(messages):
            if message.role not in ("system", "user", "assistant", "tool"):
                raise UnsupportedByFormat(f"the Step 3.5 template drops {message.role!r} messages",
                                          message_index=index, field="role")
        out.special(M["bos"])
        has_system = messages[0].role == "system"
        if tools:
            sys_index = 0 if has_system else None
            out.special(M["im_start"], sys_index).template("system\n", sys_index)
            if has_system:
                self._write(out, pieces[0], 0)
                out.template("\n\n", 0)
            out.template("# Tools\n\nYou have access to the following functions in JSONSchema format:\n\n<tools>",
                         sys_index)
            for tool in tools:
                out.template("\n", sys_index).content(jinja_json(tool_to_dict(tool)), sys_index)
            out.fixed(_INSTRUCTIONS, sys_index, _SPECIALS)
        elif has_system:
            out.special(M["im_start"], 0).template("system\n", 0)
            self._write(out, pieces[0], 0)
            out.special(M["im_end"], 0).template("\n", 0)
        for index, message in enumerate(messages):
            role = message.role
            if role == "user" or (role == "system" and index > 0):
                name = "observation" if role == "system" and message.name == "observation" else role
                out.special(M["im_start"], index).template(name + "\n", index)
                self._write(out, pieces[index], index)
                out.special(M["im_end"], index).template("\n", index)
            elif role == "assistant":
                self._assistant(out, message, index, pieces[index], options, tools)
            elif role == "tool":
                if index == 0 or messages[index - 1].role != "tool":
                    out.special(M["im_start"], index).template("tool_response\n", index)
                out.special(M["tool_response_open"], index)
                self._write(out, pieces[index], index)
                out.special(M["tool_response_close"], index)
                if index == len(messages) - 1 or messages[index + 1].role != "tool":
                    out.special(M["im_end"], index).template("\n", index)
        if options.add_generation_prompt:
            out.special(M["im_start"]).template("assistant\n").special(M["think_open"]).template("\n")
        return options.add_generation_prompt

    @staticmethod
    def _write(out: PromptBuilder, pieces: list[tuple[str, str]], index: int) -> None:
        for kind, text in pieces:
            out.add(kind, text, index)

    def _assistant(self, out: PromptBuilder, message: Message, index: int, pieces: list[tuple[str, str]],
                   options: RenderOptions, tools: Any = None) -> None:
        calls = call_values(message, index, G, coder_value, tools)
        reasoning = message.reasoning_content
        if reasoning is None:
            text = "".join(t for _, t in pieces)
            reasoning = ""
            if M["think_close"] in text:
                reasoning, text = _split_think(text)
                pieces = [("content", text)]
        out.special(M["im_start"], index).template("assistant\n", index)
        if options.keeps_reasoning(index):
            out.special(M["think_open"], index).template("\n", index).content(reasoning, index)
            out.template("\n", index).special(M["think_close"], index).template("\n", index)
        self._write(out, pieces, index)
        for name, args in calls:
            write_call(out, index, name, args, "\n", M["call_open"], M["call_close"])
        out.special(M["im_end"], index).template("\n", index)


FORMATS: dict[str, Format] = {f.name: f for f in (Step35(),)}

__all__ = ["FORMATS", "MARKERS", "SPECIAL_TOKENS", "Step35", "content_pieces"]
