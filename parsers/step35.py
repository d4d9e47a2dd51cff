"""Stream parser for StepFun Step 3.5 (Qwen3-Coder XML calls, ChatML, ``<think>`` always opened by the prompt).

The call body is Qwen3-Coder's (:mod:`toolwire.parsers.qwen_xml`); Step's framing: one ``\\n`` after
``</think>``, nothing between content and ``<tool_call>`` or between calls, ``\\n`` inside values. Values are
written with Python's ``str`` except objects and arrays (JSON). The generation prompt always opens
``<think>\\n``, so with ``thinking=True`` (or ``prompt=``) the output starts inside reasoning.
"""

from __future__ import annotations

from .qwen_xml import XmlGrammar, XmlToolParser

STEP35_GRAMMAR = XmlGrammar(call_open="<tool_call>", call_close="</tool_call>", think_open="<think>",
                            think_close="</think>", value_framing="\n", reasoning_framing="\n",
                            after_think_newlines=1, before_call_newlines=0)
"""Step 3.5: ``<think>\\n...\\n</think>\\n``, content directly followed by ``<tool_call>``."""
STEP35_GRAMMAR.stop_tokens = ("<|im_end|>",)
"""The end-of-turn token, for the shared machinery that drops one left at the very end of an output."""


class Step35Parser(XmlToolParser):
    """Step 3.5: with ``thinking=True`` the output starts inside the reasoning the prompt opened."""

    grammar = STEP35_GRAMMAR
    reasoning_start = "thinking"


__all__ = ["STEP35_GRAMMAR", "Step35Parser"]
