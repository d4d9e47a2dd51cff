"""MiniMax-M3 (``minimax_m3``; parser :class:`~toolwire.parsers.minimax_m3.MiniMaxM3Parser`, markers from its
``MARKERS``): one block of invokes whose arguments are elements named after the parameters, every tag behind the
namespace prefix ``NS`` (``]<]minimax[>[``)::

    NS<tool_call>\\n NS<invoke name="NAME"> NS<KEY>VALUE NS</KEY> ... NS</invoke>\\n ... NS</tool_call>

A value follows the parameter's schema recursively (:func:`element`), as the template's ``to_xml`` writes it: an
object is its properties as child elements (schema order, the optional ones optional), an array its items as
``<item>`` children (``minItems`` / ``maxItems`` kept), an empty element an empty list / object; a leaf is text
the parser types by the schema: a string (or untyped, or string-or-something) value is free text up to the next
prefix (it spells neither the prefix, which would start a tag, nor the stop token), a string enum one of its
members, a boolean ``true`` / ``false``, a number JSON's number of the schema's range, ``null`` ``null``.

Reasoning is ``<mm:think>`` text ``</mm:think>`` before the content (the prompt opens it, or the model may open it
itself as the first thing it writes); free text never spells the block opener, the think markers nor the stop
token.
"""

from __future__ import annotations

from typing import Any

from toolwire.errors import InvalidToolDefinition
from toolwire.parsers.minimax_m3 import MARKERS, NS

from ..ir import Alt, CallWire, Lit, Node, Section, Seq, Tag, Text, json_node, repeated
from . import describes, reasoning_markers
from .xml_params import is_text_typed, parameters

LINE = "\n"
"""The line break the template writes after the block opener and after each invoke."""
ITEM = "item"
"""The element name of a list item."""
INVOKE_OPEN, INVOKE_CLOSE = NS + '<invoke name="', NS + "</invoke>"
"""An invoke's opening tag up to the name, and its closing tag (the parser's ``_INVOKE`` spelling)."""
STRUCTURAL_NAMES = ("invoke", "tool_call")
"""Element names whose closing tag the parser reads as the end of the call or of the block."""


def _kinds(schema: dict) -> list[str]:
    kind = schema.get("type")
    return kind if isinstance(kind, list) else [kind] if isinstance(kind, str) else []


def check_name(name: str, what: str, tool: str, field: str) -> None:
    """A tool name or element key the wire can carry, else :class:`InvalidToolDefinition` naming ``field``."""
    if not name or any(c in name for c in '<>"/') or NS in name or (what == "key" and name in STRUCTURAL_NAMES):
        raise InvalidToolDefinition(f"the {what} {name!r} cannot be a MiniMax-M3 element name (empty, or it holds "
                                    f"<, >, \", / or {NS}, or it is a structural tag)", tool=tool, field=field)


def value(schema: Any, close: str, tool: str, field: str, stops: tuple[str, ...]) -> Node:
    """The content of an element of ``schema`` followed by its closing tag ``close`` (``NS</KEY>``)."""
    if not isinstance(schema, dict) or is_text_typed(schema) and not _string_enum(schema):
        # free text up to the next prefix, which must be the element's own closing tag
        return Seq((Tag("", Text(stops), NS), Lit(close[len(NS):])))
    if _string_enum(schema):
        values = schema.get("enum", [schema.get("const")])
        return Seq((Alt(tuple(Lit(v) for v in values)), Lit(close)))
    for keyword in ("anyOf", "oneOf"):
        if keyword in schema:
            return Alt(tuple(value(dict(branch), close, tool, f"{field}.{keyword}[{i}]", stops)
                             for i, branch in enumerate(schema[keyword]) if isinstance(branch, dict)))
    kinds = _kinds(schema)
    if len(kinds) > 1:
        return Alt(tuple(value(dict(schema, type=k), close, tool, field, stops) for k in kinds))
    kind = kinds[0] if kinds else ("object" if "properties" in schema else "array" if "items" in schema else None)
    if kind == "object":
        return Seq((parameters(schema, lambda k, sub, path: element(k, sub, tool, field + path, stops)), Lit(close)))
    if kind == "array":
        item = element(ITEM, schema.get("items", {}), tool, field + ".items", stops)
        return Seq((repeated(item, int(schema.get("minItems", 0)), schema.get("maxItems")), Lit(close)))
    if kind == "boolean":
        return Seq((Alt((Lit("true"), Lit("false"))), Lit(close)))
    if kind == "null":
        return Lit("null" + close)
    return Seq((json_node(schema, field), Lit(close)))  # a number, an integer, or a non-string enum / const


def _string_enum(schema: dict) -> bool:
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    return values is not None and all(isinstance(v, str) and NS not in v for v in values) \
        and schema.get("type") in (None, "string")


def element(key: str, schema: Any, tool: str, field: str, stops: tuple[str, ...]) -> Seq:
    """``NS<KEY>`` value ``NS</KEY>``."""
    check_name(key, "key", tool, field)
    return Seq((Lit(f"{NS}<{key}>"), value(schema, f"{NS}</{key}>", tool, field, stops)))


@describes("minimax_m3")
def minimax_m3(fmt, request, *, thinking: bool) -> CallWire:
    """``NS<tool_call>\\n`` invokes ``NS</invoke>\\n`` ... ``NS</tool_call>``."""
    stops = tuple(fmt.stop_tokens)  # a value never spells the stop token (nor the prefix: it ends there)
    calls = []
    for tool in request.tools:
        where = f"tools[{tool.index}].function"
        check_name(tool.name, "function name", tool.name, where + ".name")
        args = parameters(tool.schema, lambda k, sub, path: element(k, sub, tool.name, where + ".parameters" + path,
                                                                    stops))
        calls.append((tool.name, Seq((Lit(INVOKE_OPEN + tool.name + '">'), args, Lit(INVOKE_CLOSE + LINE)))))
    section = Section(MARKERS["block_open"] + LINE, MARKERS["block_close"])
    return CallWire(fmt.name, (MARKERS["block_open"],), tuple(calls), section=section,
                    reasoning=reasoning_markers(fmt), stop_tokens=tuple(fmt.stop_tokens), family="minimax_m3",
                    self_reasoning=True)
