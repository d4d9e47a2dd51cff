"""Seed-OSS stream parser: the shared XML-call parser (:mod:`toolwire.parsers.qwen_xml`) with Seed's markers.

Differences from Qwen3-Coder are data: calls are wrapped in ``<seed:tool_call>``, values have no ``\\n``
framing (``<parameter=K>V</parameter>``), and the model opens ``<seed:think>`` itself at the start of its
output; one ``\\n`` after ``</seed:think>`` and ``\\n\\n`` before the first call are framing.
"""

from __future__ import annotations

from .qwen_xml import XmlGrammar, XmlToolParser

SEED_GRAMMAR = XmlGrammar(call_open="<seed:tool_call>", call_close="</seed:tool_call>", think_open="<seed:think>",
                          think_close="</seed:think>", value_framing="", reasoning_framing="",
                          after_think_newlines=1, stop_tokens=("<seed:eos>",),
                          next_parameter=("\n<parameter=", "<parameter="))
"""Seed-OSS markers and framing."""


class SeedOssParser(XmlToolParser):
    """Seed-OSS: reasoning when the output starts with ``<seed:think>``; XML calls in ``<seed:tool_call>``."""

    grammar = SEED_GRAMMAR
    reasoning_start = "marker"


__all__ = ["SEED_GRAMMAR", "SeedOssParser"]
