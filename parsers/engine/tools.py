"""The declared tools as a parser reads them: their names and parameter schemas, from OpenAI, Anthropic or MCP
definitions (dicts or toolwire models)."""

from __future__ import annotations

from typing import Any, Iterable


def tool_names(tools: Iterable[Any] | None) -> frozenset[str] | None:
    """Declared tool names from OpenAI tool dicts, bare function dicts or models; None when no tools."""
    if tools is None:
        return None
    names = set()
    for tool in tools:
        if hasattr(tool, "function"):
            names.add(tool.function.name)
        elif hasattr(tool, "name") and not isinstance(tool, dict):
            names.add(tool.name)
        elif isinstance(tool, dict):
            fn = tool.get("function", tool)
            if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                names.add(fn["name"])
    return frozenset(names)


def tool_schemas(tools: Iterable[Any] | None) -> dict[str, dict]:
    """Parameter JSON schemas by tool name (empty dict for tools without one)."""
    out: dict[str, dict] = {}
    for tool in tools or ():
        if hasattr(tool, "function"):
            out[tool.function.name] = tool.function.parameters or {}
        elif isinstance(tool, dict):
            fn = tool.get("function", tool)
            if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                out[fn["name"]] = fn.get("parameters") or fn.get("input_schema") or fn.get("inputSchema") or {}
        elif hasattr(tool, "name"):
            out[tool.name] = getattr(tool, "input_schema", None) or {}
    return out


__all__ = ["tool_names", "tool_schemas"]
