"""Tencent Hy3 (``tencent-Hy3.jinja``): ``<｜hy_User:opensource｜>`` / ``<｜hy_Assistant:opensource｜>`` turns,
``<think:opensource>`` reasoning and ``<tool_calls:opensource>`` blocks of GLM-style key/value calls.

Reference: the model's own chat template as transformers renders it, ``arguments`` decoded to objects. The
template defines its own special tokens (:data:`toolwire.parsers.hy3.MARKERS`). Native Python; what the
template does, and so this renderer:

* **the thinking switch is** ``reasoning_effort``: ``no_think`` (the template's default: thinking off),
  ``low`` or ``high`` (thinking on). toolwire's ``thinking=True`` means ``high`` unless ``reasoning_effort``
  says ``low``; ``reasoning_effort="low"``/``"high"`` alone turns thinking on, ``"no_think"`` turns it off.
  The effort is written as ``<｜reasoning_mode:opensource｜>reasoning_effort:E`` at the end of the system text,
  or at the end of the tool instructions when there are tools;
* **system text** - every system message's text, wherever it is, joined at the top after the bos token;
* **assistant turns** - ``<think:opensource>R</think:opensource>`` then the content; reasoning is kept for
  turns after the last user message, and for every turn with ``preserved_thinking`` (the template's default when
  tools are declared); as :mod:`toolwire.context_policy` decides. Calls go in one ``<tool_calls:opensource>``
  block with ``\\n`` framing, strings as is, other values as JSON; a turn ends with ``<｜hy_eos:opensource｜>``
  except a closing answer without calls, which the template leaves open (``raw_last_assistant=True`` writes
  that one's content alone);
* **tool results** - one ``<tool_responses:opensource>`` block per run of results after a call turn;
* **generation prompt** - none after a closing assistant turn; else the assistant token then
  ``<think:opensource>`` (thinking on) or an empty ``<think:opensource></think:opensource>``.

Content parts: text parts only; the template silently drops other parts and messages of other roles, so toolwire
refuses them (``UnsupportedByFormat`` naming the field).
"""

from __future__ import annotations

import json

from toolwire.errors import UnrepresentableValue, UnsupportedByFormat
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, call_arguments, tool_to_dict
from toolwire.parsers.hy3 import MARKERS, Hy3Parser
from toolwire.parsers.engine.xml_calls import early_close
from toolwire.prompt import PromptBuilder

M = MARKERS


def _text(message: Message, index: int) -> str:
    """The template's ``visible_text``: a string, or the text of text parts; other parts would be lost."""
    content = message.content
    if content is None or isinstance(content, str):
        return content or ""
    for n, part in enumerate(content):
        if part.type != "text":
            raise UnsupportedByFormat(f"the Hy3 template drops content parts of type {part.type!r}",
                                      message_index=index, field=f"content[{n}].type")
    return "".join(part.text or "" for part in content)


def _check(text: str, what: str, forbidden: tuple[str, ...], index: int, field: str) -> None:
    bad = next((m for m in forbidden if m in text), None)
    if bad is not None:
        raise UnrepresentableValue(f"{what} {text!r} holds {bad!r}, which the Hy3 call format cannot carry",
                                   message_index=index, field=field)


class Hy3(Format):
    """Hy3 (``tencent-Hy3.jinja``)."""

    parser_class = Hy3Parser

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        effort = options.reasoning_effort if options.thinking else "no_think"
        texts = []
        for index, message in enumerate(messages):
            if message.role not in ("system", "user", "assistant", "tool"):
                raise UnsupportedByFormat(f"the Hy3 template drops {message.role!r} messages", message_index=index,
                                          field="role")
            texts.append(_text(message, index))
        out.special(M["bos"])
        has_system = False
        for index, message in enumerate(messages):
            if message.role == "system":
                out.content(texts[index], index)
                has_system = has_system or bool(texts[index])
        if tools:
            self._tools(out, tools, has_system)
        out.special(M["reasoning_mode"]).template("reasoning_effort:" + effort)
        in_results = False
        first_result = True
        for index, message in enumerate(messages):
            role = message.role
            if role in ("user", "assistant") and in_results:
                out.special(M["responses_close"], index)
            if role == "user":
                out.special(M["user"], index).content(texts[index], index)
                in_results = False
            elif role == "assistant":
                last = index == len(messages) - 1
                self._assistant(out, message, index, texts[index], options, last)
                if message.tool_calls:
                    first_result = True
                in_results = False
            elif role == "tool":
                in_results = True
                if first_result:
                    out.special(M["responses_open"], index).template("\n", index)
                    first_result = False
                out.special(M["response_open"], index).template("\n", index).content(texts[index], index)
                out.template("\n", index).special(M["response_close"], index).template("\n", index)
        if in_results:
            out.special(M["responses_close"], len(messages) - 1)
        if options.add_generation_prompt and not (messages and messages[-1].role == "assistant"):
            out.special(M["assistant"]).special(M["think_open"])
            if not options.thinking:
                out.special(M["think_close"])
            return options.thinking
        return False

    @staticmethod
    def _tools(out: PromptBuilder, tools: list[Tool], has_system: bool) -> None:
        """The tool list and the call instructions (the reasoning mode follows them)."""
        out.template(("\n\n" if has_system else "") + "# Tools\n\nYou may call one or more functions to assist with "
                     "the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:"
                     "\n<tools>\n")
        for n, tool in enumerate(tools):
            if n:
                out.template("\n")
            out.content(json.dumps(tool_to_dict(tool), ensure_ascii=False))
        out.template("\n</tools>\n\nFor function call returns, you should first print ").special(M["calls_open"])
        out.template("\nFor each function call, you should return object like:\n").special(M["call_open"])
        out.template("{function-name}").special(M["sep"]).template("\n")
        for n in (1, 2):
            out.special(M["key_open"]).template(f"{{arg-key-{n}}}").special(M["key_close"]).template("\n")
            out.special(M["value_open"]).template(f"{{arg-value-{n}}}").special(M["value_close"]).template("\n")
        out.template("...\n").special(M["call_close"]).template("\nAt the end of function call returns, you should "
                                                                "print ").special(M["calls_close"])

    def _assistant(self, out: PromptBuilder, message: Message, index: int, text: str, options: RenderOptions,
                   last: bool) -> None:
        reasoning = message.reasoning_content if options.keeps_reasoning(index) else None
        if options.extra.get("raw_last_assistant") and last and not message.tool_calls:
            out.special(M["assistant"], index).content(text, index)
            return
        out.special(M["assistant"], index).special(M["think_open"], index).content(reasoning or "", index)
        out.special(M["think_close"], index).content(text, index)
        if not message.tool_calls:
            if not last:
                out.special(M["eos"], index)
            return
        out.special(M["calls_open"], index).template("\n", index)
        for ci, call in enumerate(message.tool_calls):
            where = f"tool_calls[{ci}].function"
            name = call.function.name
            _check(name, "the function name", (M["sep"], M["key_open"], M["call_close"], "\n"), index, f"{where}.name")
            out.special(M["call_open"], index).content(name, index).special(M["sep"], index).template("\n", index)
            for key, value in call_arguments(call, index, ci).items():
                field = f"{where}.arguments.{key}"
                _check(key, "the argument name", (M["key_close"], M["value_open"], M["call_close"]), index, field)
                value_text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                tag = early_close(value_text, Hy3Parser.value_closers)
                if tag is not None:
                    raise UnrepresentableValue(f"the value holds {tag!r} followed by a structural marker, which "
                                               "would end it early; this format has no escape for it",
                                               message_index=index, field=field)
                out.special(M["key_open"], index).content(key, index).special(M["key_close"], index)
                out.template("\n", index).special(M["value_open"], index).content(value_text, index)
                out.special(M["value_close"], index).template("\n", index)
            out.special(M["call_close"], index).template("\n", index)
        out.special(M["calls_close"], index).special(M["eos"], index)


FORMATS: dict[str, Format] = {f.name: f for f in (Hy3(),)}

__all__ = ["FORMATS", "MARKERS", "Hy3"]
