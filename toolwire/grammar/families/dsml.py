"""DeepSeek DSML calls (``deepseek_v32``, ``deepseek_v4``, ``deepseek_v41``; parser
:class:`~toolwire.parsers.dsml.DsmlStreamParser`)::

    <｜DSML｜tool_calls>\\n
    <｜DSML｜invoke name="NAME">\\n
    <｜DSML｜parameter name="KEY" string="true|false">VALUE</｜DSML｜parameter>\\n ...
    </｜DSML｜invoke>\\n ...
    </｜DSML｜tool_calls>

Every marker comes from the version's :class:`~toolwire.parsers.dsml.DsmlGrammar` (``parser_class.grammar``,
built from the template's marker table), so V3.2's ``function_calls``, V4's ``tool_calls`` and V4.1's
``<｜DSML｜ calls>`` spellings follow it. The ``\\n\\n`` the template writes before the block is text the parser
gives to the block; the grammar lets it stand as content before the trigger (the parse is the same).

Values (:func:`dsml_value`), in the schema's property order, optional ones optional:

* a string-typed (or untyped) parameter is ``string="true"`` free text that contains none of the markers
  that could end it early (the parameter's closer; the next parameter's opener and ``</invoke>``, which the
  parser reads as an implicit close), or an enum of strings is one of them; it may also be written
  ``string="false"`` as a JSON string (the template does that for a string holding the closer);
* any other type is ``string="false"`` JSON of the declared type.
"""

from __future__ import annotations

from typing import Any

from toolwire.parsers.dsml import DsmlStreamParser

from ..ir import Alt, CallWire, Lit, Section, Seq, Tag, TEXT, json_node, optional
from . import describes, reasoning_markers

STRING_ATTRIBUTE = '" string="{}">'
"""How a parameter tag ends: the closing quote of its name and the ``string`` attribute (``true`` / ``false``)."""
NAME_END = '">'
"""How an invoke tag ends after the tool's name."""
LINE = "\n"
"""The line break the DSML templates write between tags."""


def is_text_typed(schema: Any) -> bool:
    """Whether a value of ``schema`` is written ``string="true"``: no type, or ``string`` among its types."""
    if not isinstance(schema, dict):
        return True
    kind = schema.get("type")
    if kind is None:
        values = schema.get("enum", [schema["const"]] if "const" in schema else None)
        if values is not None:
            return all(isinstance(v, str) for v in values)
        return not any(k in schema for k in ("properties", "items", "anyOf", "oneOf", "allOf", "$ref"))
    return "string" in (kind if isinstance(kind, list) else [kind])


def dsml_value(g, key: str, schema: Any, path: str):
    """One ``<｜DSML｜parameter name="KEY" string="...">VALUE</｜DSML｜parameter>`` element."""
    head = g.param_open + key
    as_json = Seq((Lit(head + STRING_ATTRIBUTE.format("false")), json_node(_schema(schema)),
                   Lit(g.param_close)))
    if not is_text_typed(schema):
        return as_json
    text_head = head + STRING_ATTRIBUTE.format("true")
    values = schema.get("enum", [schema["const"]] if "const" in schema else None) if isinstance(schema, dict) else None
    if values is not None and all(isinstance(v, str) for v in values):
        text = Seq((Lit(text_head), Alt(tuple(Lit(v) for v in values)), Lit(g.param_close)))
    else:
        text = Tag(text_head, TEXT, g.param_close)
    return Alt((text, as_json))


def _schema(schema: Any) -> dict:
    return schema if isinstance(schema, dict) else {}


def invoke(g, name: str, schema: dict) -> Seq:
    """``<｜DSML｜invoke name="NAME">\\n`` (parameter ``\\n``)* ``</｜DSML｜invoke>`` (an extra ``\\n`` allowed before the
    closer: the template writes ``\\n\\n`` when no parameter is given)."""
    required = set(schema.get("required", []))
    items = []
    for key, sub in schema.get("properties", {}).items():
        element = Seq((dsml_value(g, key, sub, f".properties.{key}"), Lit(LINE)))
        items.append(element if key in required else optional(element))
    return Seq((Lit(g.invoke_open + name + NAME_END + LINE), *items, optional(Lit(LINE)), Lit(g.invoke_close)))


@describes(DsmlStreamParser)
def dsml(fmt, request, *, thinking: bool) -> CallWire:
    """The version's block: ``block_open\\n`` invoke (``\\n`` invoke)* ``\\nblock_close``."""
    g = fmt.parser_class.grammar
    calls = tuple((tool.name, invoke(g, tool.name, tool.schema)) for tool in request.tools)
    section = Section(g.block_open + LINE, LINE + g.block_close, LINE)
    return CallWire(fmt.name, (g.block_open,), calls, section=section, reasoning=reasoning_markers(fmt),
                    stop_tokens=tuple(fmt.stop_tokens), family="dsml")
