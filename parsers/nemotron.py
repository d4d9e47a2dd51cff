"""Stream parser for NVIDIA Nemotron 3 (Qwen3-Coder XML calls, ChatML, ``<think>``).

The call body is Qwen3-Coder's (:mod:`toolwire.parsers.qwen_xml`); the framing around it is Nemotron's own: one
``\\n`` after ``</think>``, one ``\\n`` between content and the first ``<tool_call>``, and ``\\n`` framing inside
values. Values are written with Python's ``str`` (``True``, ``None``, ``1e-07``) except objects and arrays (JSON);
the shared value typing reads them against the tool's schema. With ``thinking=True`` the prompt opened
``<think>\\n``; without it the prompt closed an empty ``<think></think>`` and output starts in content.
"""

from __future__ import annotations

from toolwire.families.nemotron import MARKERS, NEMOTRON3

from .engine.xml_tool import XmlGrammar, XmlToolParser

NEMOTRON_GRAMMAR = XmlGrammar(NEMOTRON3, value_framing="\n", reasoning_framing="\n", after_think_newlines=1,
                              before_call_newlines=1, bare_functions=True)
"""Nemotron 3: ``<think>\\n...\\n</think>\\n``, content then ``\\n<tool_call>``; calls as Qwen3-Coder."""


class NemotronParser(XmlToolParser):
    """Nemotron 3: with ``thinking=True`` the output starts inside the reasoning the prompt opened."""

    family = NEMOTRON3
    grammar = NEMOTRON_GRAMMAR
    reasoning_start = "thinking"


__all__ = ["MARKERS", "NEMOTRON_GRAMMAR", "NemotronParser"]
