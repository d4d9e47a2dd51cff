"""Kimi K2 stream parser (placeholder while the JSON body machinery lands)."""
from __future__ import annotations
from .base import StreamParser


class KimiParser(StreamParser):
    def _advance(self, final: bool) -> None:
        self._emit_content(self._buf)
        self._buf = ""


class KimiThinkingParser(KimiParser):
    pass
