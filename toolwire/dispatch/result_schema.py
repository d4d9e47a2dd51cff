"""Checking a tool result's structured data against the tool's output schema (``ToolSpec.output_schema``, MCP
``outputSchema``), with the validators :mod:`toolwire.dispatch.validation` compiles for input schemas (bounded
patterns, local ``$ref`` only). :meth:`toolwire.ToolResult.success` and :meth:`toolwire.ToolResult.from_mcp` call
:func:`check_output_schema` (a function-level import, the one ``tests/core/test_layout.py`` allows core)."""

from __future__ import annotations

import json
from typing import Any

from toolwire.errors import InvalidToolDefinition

from .schema_guard import check_schema
from .validation import _compile, _jsonschema


def check_output_schema(value: Any, schema: Any) -> list[tuple[str, str]]:
    """Where ``value`` breaks ``schema``: ``[(JSON pointer, message)]``, first by place; empty when it conforms.
    A schema that is not a valid JSON Schema raises :class:`~toolwire.errors.InvalidToolDefinition`
    (``output_schema``)."""
    if not isinstance(schema, dict):
        raise InvalidToolDefinition(f"must be a JSON Schema object, got {type(schema).__name__}",
                                    field="output_schema")

    def fail(field: str, detail: str) -> InvalidToolDefinition:
        return InvalidToolDefinition(detail, field=field)

    check_schema(schema, fail, "output_schema")
    text = json.dumps(schema, sort_keys=True, ensure_ascii=False)
    try:
        validator = _compile(text, False)
    except _jsonschema().exceptions.SchemaError as exc:
        raise InvalidToolDefinition(f"is not a valid JSON Schema: {exc.message}", field="output_schema") from None
    found = sorted(validator.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path])
    return [("".join(f"/{p}" for p in error.absolute_path), error.message) for error in found]


__all__ = ["check_output_schema"]
