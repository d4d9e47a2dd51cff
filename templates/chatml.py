"""The ChatML families that write Qwen3-Coder XML calls (Qwen XML, Nemotron 3, Step 3.5): which of their markers
(:data:`toolwire.families.qwen_xml.CHATML_XML`) are single control tokens."""

from __future__ import annotations

from toolwire.markers import Marker, MarkerTable

CHATML_SPECIAL = (Marker.IM_START, Marker.IM_END, Marker.THINK_OPEN, Marker.THINK_CLOSE, Marker.CALL_OPEN,
                  Marker.CALL_CLOSE, Marker.TOOL_RESPONSE_OPEN, Marker.TOOL_RESPONSE_CLOSE)
"""The ChatML-XML roles whose markers are single control tokens (``<function=`` etc. are plain text)."""


def chatml_special_tokens(markers: MarkerTable, *extra: Marker) -> frozenset[str]:
    """The control-token markers of a ChatML-XML family's table, plus those of the ``extra`` roles."""
    return frozenset(markers[role] for role in CHATML_SPECIAL + extra)


__all__ = ["CHATML_SPECIAL", "chatml_special_tokens"]
