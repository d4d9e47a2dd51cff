"""Stream parser for Qwen3.8: Qwen3.5's XML calls (:class:`~toolwire.parsers.qwen_xml.Qwen35Parser`); the effort
line its prompt carries is not in the output."""

from __future__ import annotations

from toolwire.families.qwen38 import QWEN38

from .qwen_xml import Qwen35Parser


class Qwen38Parser(Qwen35Parser):
    """Qwen3.8 output: as Qwen3.5's."""

    family = QWEN38


__all__ = ["Qwen38Parser"]
