"""Constrained decoding: grammars for a format's tool calls, generated from the same marker tables as its parser.

``toolwire.get_format(name).grammar(tools, tool_choice=..., target=...)`` (or :func:`build`) returns a
:class:`Grammar` for xgrammar (a structural tag, what vLLM and SGLang take), llguidance (a Lark grammar) or
llama.cpp (GBNF with lazy triggers). How it works: a family module (:mod:`toolwire.grammar.families`)
describes the format's call wire as a target-neutral :class:`~toolwire.grammar.ir.CallWire` built from its
marker constants; one emitter per target translates it. docs/grammar.md has the design, the approximations
and the certification numbers.
"""

from __future__ import annotations

from typing import Any

from toolwire.errors import InvalidOption

from .request import TARGETS, check_special_tokens, grammar_request
from .result import Grammar

__all__ = ["Grammar", "TARGETS", "build", "describe"]


def describe(fmt, tools: Any, *, tool_choice: Any = "auto", thinking: bool = False):
    """The :class:`~toolwire.grammar.ir.CallWire` of ``fmt`` for ``tools`` (what every target is emitted from)."""
    from .families import describe as family_describe

    request = grammar_request(tools, tool_choice, "xgrammar")
    return family_describe(fmt, request, thinking=thinking)


def build(fmt, tools: Any, *, tool_choice: Any = "auto", target: str = "xgrammar", thinking: bool = False,
          prompt: Any = None, special_tokens: Any = None) -> Grammar:
    """The :class:`Grammar` constraining ``fmt``'s output for ``tools``; see :meth:`toolwire.Format.grammar`.

    ``special_tokens`` (llguidance only): ``{marker text: token id}`` for the markers that are one special token
    of the tokenizer the grammar will run with (:func:`toolwire.grammar.matchers.special_tokens_of` reads them
    from a Hugging Face or tiktoken tokenizer); they are written as ``<[id]>`` token references."""
    from toolwire.prompt import RenderedPrompt

    from . import gbnf, lark, xgrammar
    from .families import describe as family_describe

    if prompt is not None:
        if not isinstance(prompt, RenderedPrompt):
            raise InvalidOption("prompt must be the RenderedPrompt the output continues "
                                f"(got {type(prompt).__name__})", field="prompt")
        thinking = prompt.opens_reasoning
    request = grammar_request(tools, tool_choice, target)
    special = check_special_tokens(special_tokens, target)
    wire = family_describe(fmt, request, thinking=bool(thinking))
    common = dict(target=target, format=fmt.name, mode=request.mode, triggers=wire.triggers,
                  stop_tokens=wire.stop_tokens, notes=wire.notes)
    if target == "xgrammar":
        import json

        tag = xgrammar.structural_tag(wire, request.mode, thinking=bool(thinking))
        return Grammar(text=json.dumps(tag, ensure_ascii=False), structural_tag=tag, **common)
    if target == "llguidance":
        return Grammar(text=lark.grammar_text(wire, request.mode, thinking=bool(thinking),
                                                     special_tokens=special), **common)
    fields = {spec.name: f"tools[{spec.index}].function.parameters" for spec in request.tools}
    text, lazy, triggers = gbnf.grammar(wire, request.mode, thinking=bool(thinking), fields=fields)
    return Grammar(text=text, lazy=lazy, grammar_triggers=tuple(triggers), **common)
