"""Gemma 4 calls (``gemma4``; parser :class:`~toolwire.parsers.gemma.GemmaParser`)::

    <|tool_call>call:NAME{key:VALUE,key:VALUE}<tool_call|>

Values are Gemma's object notation, which no target's JSON support writes, so :func:`gemma_value` spells
them from the schema with the IR's own nodes: a string is ``<|"|>`` free text ``<|"|>`` (the text spells
neither the quote, which ends it, nor a call marker); an enum of strings is one of them, quoted; a boolean
``true`` / ``false``; ``null``; a number or integer is JSON's number (the same syntax; ranges follow the schema);
an array ``[v,v]`` of its ``items`` (``maxItems`` honoured); an object ``{key:v,...}`` of its ``properties``.
A schema the notation cannot follow exactly (``anyOf`` / ``oneOf`` / ``$ref``, a list of types other than
``[T, "null"]``, an untyped value) is written as a string: a narrowing (docs/grammar.md).

Keys are written bare, sorted case-insensitively, as the template's ``dictsort`` writes them (at every level);
a property not in ``required`` may be left out. Markers come from the parser's ``MARKERS``.
"""

from __future__ import annotations

from typing import Any

from toolwire.parsers.gemma import CALL_CLOSE, CALL_OPEN, Q, STOPS

from ..ir import Alt, CallWire, Lit, Node, Seq, Tag, Text, json_node, ordered_members, repeated
from . import describes, reasoning_markers

CALL_PREFIX = "call:"
"""What the template writes between ``<|tool_call>`` and the tool's name."""
STRING_STOPS = (CALL_CLOSE, CALL_OPEN)
"""Markers a string value never spells (the parser watches for them inside strings)."""


def _kinds(schema: dict) -> list[str]:
    kind = schema.get("type")
    return kind if isinstance(kind, list) else [kind] if kind else []


def gemma_value(schema: Any, path: str) -> Node:
    """One value of ``schema`` in Gemma's object notation (see the module docstring)."""
    if not isinstance(schema, dict):
        return Tag(Q, Text(STRING_STOPS), Q)
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if values is not None and all(isinstance(v, str) for v in values):
        return Seq((Lit(Q), Alt(tuple(Lit(v) for v in values)), Lit(Q)))
    kinds = _kinds(schema)
    if len(kinds) == 2 and "null" in kinds:
        single = dict(schema, type=next(k for k in kinds if k != "null"))
        return Alt((gemma_value(single, path), Lit("null")))
    kind = kinds[0] if len(kinds) == 1 and not any(k in schema for k in ("anyOf", "oneOf", "allOf", "$ref")) else None
    if kind == "boolean":
        return Alt((Lit("true"), Lit("false")))
    if kind == "null":
        return Lit("null")
    if kind in ("integer", "number"):
        return json_node(schema, path)
    if kind == "array":
        return array(schema, path)
    if kind == "object":
        return properties(schema, path)
    return Tag(Q, Text(STRING_STOPS), Q)  # a string, or what the notation cannot follow (a narrowing)


def array(schema: dict, path: str) -> Seq:
    """``[v,v,...]`` of ``items`` with at most ``maxItems`` (at least ``minItems``)."""
    item = gemma_value(schema.get("items", {}), path + ".items")
    low, high = int(schema.get("minItems", 0)), schema.get("maxItems")
    if high == 0:
        return Lit("[]")
    return Seq((Lit("["), repeated(item, low, None if high is None else int(high), ","), Lit("]")))


def properties(schema: dict, path: str, open_: str = "{", close: str = "}") -> Seq:
    """``{key:v,...}``: the properties in ``dictsort`` order, the optional ones optional, ``,`` between them."""
    props = schema.get("properties", {}) or {}
    required = set(schema.get("required", []))
    keys = sorted(props, key=str.lower)
    elements = [Seq((Lit(k + ":"), gemma_value(props[k], f"{path}.properties.{k}"))) for k in keys]

    body = ordered_members(elements, [k not in required for k in keys], ",")
    return Seq((Lit(open_), body, Lit(close)))


@describes("gemma4")
def gemma4(fmt, request, *, thinking: bool) -> CallWire:
    """``<|tool_call>call:NAME{...}<tool_call|>`` per call."""
    calls = tuple((tool.name, Seq((Lit(CALL_OPEN + CALL_PREFIX + tool.name),
                                   properties(tool.schema, ""), Lit(CALL_CLOSE))))
                  for tool in request.tools)
    # free text never spells the call closer nor what the parser stops at (STOPS: also the tool response the
    # server fills in after calls); the model may open its reasoning itself at the start (self_reasoning)
    stops = tuple(s for s in STOPS if s not in fmt.stop_tokens)
    return CallWire(fmt.name, (CALL_OPEN,), calls, reasoning=reasoning_markers(fmt),
                    stop_tokens=tuple(fmt.stop_tokens), family="gemma", reserved=(CALL_CLOSE, *stops),
                    self_reasoning=True,
                    key_order="sorted")
