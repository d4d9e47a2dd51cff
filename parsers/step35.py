"""Stream parser for StepFun Step 3.5 (Qwen3-Coder XML calls, ChatML, ``<think>`` always opened by the prompt).

The call body is Qwen3-Coder's (:mod:`toolwire.parsers.qwen_xml`); Step's framing: one ``\\n`` after
``</think>``, nothing between content and ``<tool_call>`` or between calls, ``\\n`` inside values. Values are
written with Python's ``str`` except objects and arrays (JSON). The generation prompt always opens
``<think>\\n``, so with ``thinking=True`` (or ``prompt=``) the output starts inside reasoning.
"""

from __future__ import annotations

from toolwire.families.step35 import MARKERS, STEP35

from .engine.xml_tool import XmlGrammar, XmlToolParser

STEP35_GRAMMAR = XmlGrammar(STEP35, value_framing="\n", reasoning_framing="\n", after_think_newlines=1,
                            before_call_newlines=0, bare_functions=True)
"""Step 3.5: ``<think>\\n...\\n</think>\\n``, content directly followed by ``<tool_call>``; a declared
``<function=NAME>`` written without ``<tool_call>`` is a call (``missing_call_wrapper``, issue 33)."""


class Step35Parser(XmlToolParser):
    """Step 3.5: with ``thinking=True`` the output starts inside the reasoning the prompt opened."""

    family = STEP35
    grammar = STEP35_GRAMMAR
    reasoning_start = "thinking"


__all__ = ["MARKERS", "STEP35_GRAMMAR", "Step35Parser"]
