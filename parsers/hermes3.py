"""Stream parser for Hermes 3: Hermes JSON calls (:class:`~toolwire.parsers.hermes_json.HermesJsonParser`)."""

from __future__ import annotations

from toolwire.families.hermes3 import HERMES3, MARKERS

from .hermes_json import HermesJsonParser


class Hermes3Parser(HermesJsonParser):
    """Hermes 3 output: Hermes JSON calls, no reasoning of its own."""

    family = HERMES3


__all__ = ["Hermes3Parser", "MARKERS"]
