"""Qwen3.8 (``Qwen3.8-27B.jinja``): the Qwen3.6 XML-call format with a reasoning-effort instruction.

Reference: the model's own chat template as transformers renders it, ``arguments`` decoded to objects. Native
Python on :class:`toolwire.templates.qwen_xml.Qwen36`; what Qwen3.8 changes (data on that implementation):

* **reasoning effort** - with thinking on, ``reasoning_effort`` is ``xhigh`` (the template's default),
  ``medium`` or ``low``; ``xhigh`` and ``low`` write an instruction sentence at the start of the system turn
  (a system turn is written for it even when the request has no system message and no tools), ``medium``
  writes none. Another value is refused, as the template refuses it. With thinking off there is no
  instruction and the effort is ignored, as in the template;
* **history reasoning** - every assistant turn renders ``<think>\\n...\\n</think>\\n\\n`` unless
  ``preserve_thinking=False`` (then only after the last real user query); thinking on or off;
* **inline ``<think>`` in content** - no longer split into reasoning: the content is rendered as is.

The template's switch ``enable_thinking`` is accepted as an alias of ``thinking``.
"""

from __future__ import annotations

from toolwire.errors import InvalidOption
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool
from toolwire.prompt import PromptBuilder

from toolwire.parsers.qwen38 import Qwen38Parser

from .qwen_xml import M, Qwen36, _Content, _write_trimmed

EFFORT_INSTRUCTIONS = {
    "xhigh": "Reasoning effort is set to xhigh. Please think carefully through the task, validate key assumptions, "
             "consider plausible alternatives, and prioritize correctness, consistency, and clarity in the final "
             "answer.",
    "medium": "",
    "low": "Reasoning effort is set to low. Keep your thinking brief and focused, moving directly to the conclusion "
           "without unnecessary elaboration.",
}
DEFAULT_EFFORT = "xhigh"


def effort_instruction(options: RenderOptions) -> str:
    """The system-turn sentence for the requested effort ('' when thinking is off or the effort is medium)."""
    if not options.thinking:
        return ""
    effort = DEFAULT_EFFORT if options.reasoning_effort is None else options.reasoning_effort
    if effort not in EFFORT_INSTRUCTIONS:
        raise InvalidOption(f"Unexpected reasoning effort {effort!r}. Supported types are xhigh (default), medium, "
                            "and low.", field="reasoning_effort")
    return EFFORT_INSTRUCTIONS[effort]


class Qwen38(Qwen36):
    """Qwen3.8 (``Qwen3.8-27B.jinja``): Qwen3.6 plus the effort instruction; keeps every earlier reasoning."""

    parser_class = Qwen38Parser
    split_inline_think = False

    def _preface(self, options: RenderOptions) -> str:
        text = effort_instruction(options)
        return text + "\n\n" if text else ""

    def _system(self, out: PromptBuilder, messages: list[Message], tools: list[Tool], options: RenderOptions,
                media: _Content) -> None:
        if tools:
            super()._system(out, messages, tools, options, media)
            return
        instruction = effort_instruction(options)
        pieces = media.pieces(messages[0], 0, count=False, system=True) if messages[0].role == "system" else []
        if "".join(t for _, t in pieces).strip():
            out.special(M["im_start"], 0).template("system\n" + self._preface(options), 0)
            _write_trimmed(out, pieces, 0)
            out.special(M["im_end"], 0).template("\n", 0)
        elif instruction:
            index = 0 if messages[0].role == "system" else None
            out.special(M["im_start"], index).template("system\n" + instruction, index)
            out.special(M["im_end"], index).template("\n", index)


FORMATS: dict[str, Format] = {f.name: f for f in (Qwen38(),)}

__all__ = ["FORMATS", "Qwen38", "EFFORT_INSTRUCTIONS", "effort_instruction"]
