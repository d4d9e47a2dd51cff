"""Stream parser for IBM Granite 4: Hermes JSON calls (:class:`~toolwire.parsers.hermes_json.HermesJsonParser`),
turns ending ``<|end_of_text|>``."""

from __future__ import annotations

from toolwire.families.granite import GRANITE4, MARKERS

from .hermes_json import HermesJsonParser


class Granite4Parser(HermesJsonParser):
    """Granite 4 output: Hermes JSON calls, no reasoning of its own."""

    family = GRANITE4


__all__ = ["Granite4Parser", "MARKERS"]
