"""LFM2.5 (Liquid AI, ``LFM2.5-8B-A1B.jinja``): ChatML turns after ``<|startoftext|>``, the tools as one
``List of tools: [...]`` line in the system turn, and an assistant turn's calls as one pythonic block,
``<|tool_call_start|>[get_weather(city='Paris', days=3)]<|tool_call_end|>``, after its content.

Reference: the model's own chat template as transformers renders it, ``arguments`` decoded to objects. Native
Python on the family's declaration (:mod:`toolwire.families.lfm25`). What the template does, kept:

* the system turn holds the first system message's text (parts joined: text as is, images ``<image>``, other
  parts as JSON) and, with tools, ``List of tools: [`` + each tool's JSON joined by ``", "`` + ``]`` (after a
  ``\\n`` when there is system text); it is written only when it is not empty;
* an assistant turn writes ``<think>REASONING</think>`` when its reasoning is kept: after the last user
  message, or every turn with ``preserve_thinking=True`` (the template's switch; the context plan decides,
  :mod:`toolwire.context_policy`). A turn whose reasoning is not kept has its content cut after its last
  ``</think>`` and trimmed, as the template does;
* argument values: a string between single quotes *with nothing escaped*, a dict as JSON, anything else as
  Python's ``str`` (``True``, ``None``, ``1.5e-07``, ``['a', 'b']``); content that ends with
  ``CONTINUE_FINAL_MESSAGE_TAG `` keeps that tag after the calls;
* the generation prompt is ``<|im_start|>assistant\\n``: the prompt never opens reasoning.

Refused (:class:`~toolwire.errors.UnrepresentableValue`, naming the field), because the parser could not read
back what the template writes: a tool name or argument name that is no name (``is_name``), a string argument
holding a ``'`` that the parser would take for its end (``'it's'`` is fine: only a quote followed by what
follows a value, such as ``', x=`` or ``')]``, is), any string holding ``<|tool_call_end|>``, and a float that is
not finite.
"""

from __future__ import annotations

import math
from typing import Any

from toolwire.errors import UnrepresentableValue
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, tool_to_dict
from toolwire.parsers.lfm25 import MARKERS, Lfm25Parser
from toolwire.parsers.engine.pythonic import named_calls, raw_string_closes_early
from toolwire.prompt import PromptBuilder
from toolwire.templates.json_text import tojson

M = MARKERS
BOS, IM_START, IM_END = M.BOS, M.IM_START, M.IM_END
THINK_OPEN, THINK_CLOSE = M.THINK_OPEN, M.THINK_CLOSE
CALL_OPEN, CALL_CLOSE = M.CALL_OPEN, M.CALL_CLOSE
SPECIAL_TOKENS = frozenset(M.spellings())
"""Every LFM2.5 marker is a control token of its vocabulary."""
TOOLS_INTRO = "List of tools: ["
CFM_TAG = "CONTINUE_FINAL_MESSAGE_TAG "
"""The template's continue-final-message tag: content ending with it keeps it after the calls."""
_ROLES = frozenset({"system", "user", "assistant", "tool"})  # other roles' names are written as request text


def _parts(out: PromptBuilder, content: Any, index: int | None) -> None:
    """``parse_content``: a string as is; parts as text, ``<image>`` for images, other parts as JSON."""
    if isinstance(content, str):
        out.content(content, index)
        return
    for part in content or ():
        if part.type == "image":
            out.template("<image>", index)
        elif part.type == "text":
            out.content(part.text or "", index)
        else:
            out.content(tojson(part.model_dump(exclude_unset=True)), index)


def _text(content: Any) -> str:
    """The text ``parse_content`` makes of ``content``."""
    if isinstance(content, str):
        return content
    out = PromptBuilder()
    _parts(out, content, None)
    return out.text


def _value_strings(value: Any):
    """Every string inside ``value`` (keys included), iteratively."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, float) and not math.isfinite(item):
            yield None  # (a non-finite float: refused by the caller)


class Lfm25Format(Format):
    """LFM2.5 with pythonic calls."""

    parser_class = Lfm25Parser
    special_tokens = SPECIAL_TOKENS
    """Markers that are single control tokens in the model's vocabulary."""

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        out.special(BOS)
        start, sys_index, system = 0, None, ""
        if messages and messages[0].role == "system":
            start, sys_index = 1, 0
            if messages[0].content:
                system = _text(messages[0].content)
        if system or tools:
            out.special(IM_START, sys_index).template("system\n", sys_index)
            if system:
                _parts(out, messages[0].content, 0)
            if tools:
                if system:
                    out.template("\n", sys_index)
                out.template(TOOLS_INTRO, sys_index)
                for k, tool in enumerate(tools):
                    if k:
                        out.template(", ", sys_index)
                    out.content(tojson(tool_to_dict(tool)), sys_index)
                out.template("]", sys_index)
            out.special(IM_END, sys_index).template("\n", sys_index)
        put = out.appender()
        for index in range(start, len(messages)):
            message = messages[index]
            role = message.role
            put(("special", IM_START, index))
            put(("template" if role in _ROLES else "content", role, index))
            put(("template", "\n", index))
            if role == "assistant":
                self._assistant(out, message, index, options)
            elif message.content:
                _parts(out, message.content, index)
            put(("special", IM_END, index))
            put(("template", "\n", index))
        if options.add_generation_prompt:
            out.special(IM_START).template("assistant\n")
        return False

    def _assistant(self, out: PromptBuilder, message: Message, index: int, options: RenderOptions) -> None:
        kept = options.keeps_reasoning(index)
        if kept and message.reasoning_content is not None:
            out.special(THINK_OPEN, index).content(message.reasoning_content, index).special(THINK_CLOSE, index)
        calls = message.tool_calls
        tag = False
        if message.content is not None:
            if not kept and THINK_CLOSE in (text := _text(message.content)):
                content: Any = text.split(THINK_CLOSE)[-1].strip()
            else:
                content = message.content
            if calls is not None:
                text = _text(content)
                if text.endswith(CFM_TAG):
                    tag = True
                    content = text[:len(text) - len(CFM_TAG)]
            _parts(out, content, index)
        if calls is not None:
            self._calls(out, message, index)
        if tag:
            out.content(CFM_TAG, index)

    @staticmethod
    def _calls(out: PromptBuilder, message: Message, index: int) -> None:
        """``<|tool_call_start|>[NAME(k=v, ...), ...]<|tool_call_end|>``, refusing what could not be read back."""
        pieces: list[tuple[str, str]] = []
        raw: list[tuple[int, str, str]] = []  # (piece index, value, field) of each argument string with a quote
        for ci, name, args, field in named_calls(message, index):
            if ci:
                pieces.append(("template", ", "))
            pieces += [("content", name), ("template", "(")]
            for k, (key, value) in enumerate(args.items()):
                where = f"{field}.arguments.{key}"
                for text in _value_strings(value):
                    if text is None:
                        raise UnrepresentableValue("a float that is not finite has no literal", message_index=index,
                                                   field=where)
                    if CALL_CLOSE in text:
                        raise UnrepresentableValue(f"the value holds {CALL_CLOSE}, which would end the call block",
                                                   message_index=index, field=where)
                if k:
                    pieces.append(("template", ", "))
                pieces += [("content", key), ("template", "=")]
                if isinstance(value, str):
                    if "'" in value:
                        raw.append((len(pieces) + 1, value, where))
                    pieces += [("template", "'"), ("content", value), ("template", "'")]
                elif isinstance(value, dict):
                    pieces.append(("content", tojson(value)))
                else:
                    pieces.append(("content", str(value)))
            pieces.append(("template", ")"))
        pieces.append(("template", "]"))
        if raw:
            _refuse_early_ends(pieces, raw, index)
        put = out.appender()
        put(("special", CALL_OPEN, index))
        put(("template", "[", index))
        for kind, text in pieces:
            if text:
                put((kind, text, index))
        put(("special", CALL_CLOSE, index))


def _refuse_early_ends(pieces: list[tuple[str, str]], raw: list[tuple[int, str, str]], index: int) -> None:
    """Refuse a string argument the parser would read as ending at one of its own quotes."""
    texts = [text for _, text in pieces]
    for at, value, where in raw:
        after = "".join(texts[at + 2:]) + CALL_CLOSE  # what follows the closing quote
        if raw_string_closes_early(value, "'", after, (CALL_CLOSE,)):
            raise UnrepresentableValue("the string holds a ' followed by what ends a value (', key=' or "
                                       "')]'), which the template writes unescaped: it could not be read back",
                                       message_index=index, field=where)


FORMATS: dict[str, Format] = {f.name: f for f in (Lfm25Format(),)}

__all__ = ["FORMATS", "Lfm25Format"]
