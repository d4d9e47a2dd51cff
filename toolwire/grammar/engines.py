"""The structural tag an engine's hook returns (vLLM ``ToolParser.get_structural_tag``, SGLang
``BaseFormatDetector.get_structural_tag`` / ``structure_info``), from plain tool dicts: engine-free, so the
adapters in :mod:`toolwire.integrations` stay thin."""

from __future__ import annotations

from typing import Any, Sequence

import toolwire

from .families import describer
from .ir import split_tag


def has_grammar(format_name: str) -> bool:
    """Whether the format has a grammar description (else the engine keeps decoding unconstrained)."""
    return describer(toolwire.get_format(format_name)) is not None


def structural_tag(format_name: str, tools: Sequence[dict], tool_choice: Any, *, thinking: bool = False,
                   parallel_tool_calls: bool = True, free_arguments: Sequence[str] = ()) -> dict | None:
    """The xgrammar structural-tag dict for an engine request, or None (no tools, ``none``, no description).

    ``free_arguments``: tools whose arguments stay free JSON objects (vLLM's non-strict tools: the call
    envelope is constrained, the arguments are not); ``parallel_tool_calls=False`` stops after one call."""
    if not tools or tool_choice == "none" or not has_grammar(format_name):
        return None
    tools = [_free(t) if t.get("function", {}).get("name") in free_arguments else t for t in tools]
    tag = toolwire.get_format(format_name).grammar(tools, tool_choice=tool_choice, target="xgrammar",
                                                   thinking=thinking).structural_tag
    if not parallel_tool_calls:
        _stop_after_first(tag)
    return tag


def call_boundaries(format_name: str, tool: dict) -> tuple[str, str, str]:
    """``(begin, end, trigger)`` of one call of ``tool`` (SGLang's legacy ``StructureInfo``)."""
    from . import describe

    wire = describe(toolwire.get_format(format_name), [tool])
    begin, _, end = split_tag(wire.call_nodes()[0])
    trigger = next((t for t in wire.triggers if begin.startswith(t)), wire.triggers[0])
    return begin, end, trigger


def _free(tool: dict) -> dict:
    function = dict(tool["function"], parameters={"type": "object"})
    return dict(tool, function=function)


def _stop_after_first(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("type") in ("triggered_tags", "tags_with_separator"):
            node["stop_after_first"] = True
        for value in node.values():
            _stop_after_first(value)
    elif isinstance(node, list):
        for value in node:
            _stop_after_first(value)
