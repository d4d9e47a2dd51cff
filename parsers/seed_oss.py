"""Seed-OSS stream parser: the shared XML-call parser (:mod:`toolwire.parsers.qwen_xml`) with Seed's markers.

Differences from Qwen3-Coder are data: calls are wrapped in ``<seed:tool_call>``, values have no ``\\n``
framing (``<parameter=K>V</parameter>``), and the model opens ``<seed:think>`` itself at the start of its
output; one ``\\n`` after ``</seed:think>`` and ``\\n\\n`` before the first call are framing.
"""

from __future__ import annotations

from toolwire.families.seed_oss import MARKERS, SEED_OSS

from .engine.xml_tool import XmlGrammar, XmlToolParser

SEED_GRAMMAR = XmlGrammar(SEED_OSS, value_framing="", reasoning_framing="", after_think_newlines=1,
                          next_parameter=("\n" + MARKERS.PARAMETER_OPEN, MARKERS.PARAMETER_OPEN))
"""Seed-OSS markers and framing."""


class SeedOssParser(XmlToolParser):
    """Seed-OSS: reasoning when the output starts with ``<seed:think>``; XML calls in ``<seed:tool_call>``."""

    family = SEED_OSS
    grammar = SEED_GRAMMAR
    reasoning_start = "marker"


__all__ = ["MARKERS", "SEED_GRAMMAR", "SeedOssParser"]
