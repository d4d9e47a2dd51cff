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
  parser reads as an implicit close), or an enum of strings is one of them (the template writes a string
  holding the closer as ``string="false"`` JSON; the grammar does not: such a string cannot be written);
* any other type is ``string="false"`` JSON of the declared type.
"""

from __future__ import annotations

from typing import Any

from toolwire.parsers.dsml import DsmlStreamParser

from ..ir import Alt, CallWire, Lit, Section, Seq, Tag, Text, json_node, optional
from . import describes, reasoning_markers
from .xml_params import is_text_typed

STRING_ATTRIBUTE = '" string="{}">'
"""How a parameter tag ends: the closing quote of its name and the ``string`` attribute (``true`` / ``false``)."""
NAME_END = '">'
"""How an invoke tag ends after the tool's name."""
LINE = "\n"
"""The line break the DSML templates write between tags."""


def dsml_value(g, key: str, schema: Any, path: str):
    """One ``<｜DSML｜parameter name="KEY" string="...">VALUE</｜DSML｜parameter>`` element."""
    head = g.param_open + key
    stops = (g.param_open, g.invoke_close)  # the parser closes a value at these too (implicit_parameter_close)
    json_stops = (g.param_close, *stops)  # and a JSON value at its closer, also inside a string
    as_json = Seq((Lit(head + STRING_ATTRIBUTE.format("false")), json_node(_schema(schema), path, json_stops),
                   Lit(g.param_close)))
    if not is_text_typed(schema):
        return as_json
    text_head = head + STRING_ATTRIBUTE.format("true")
    values = schema.get("enum", [schema["const"]] if "const" in schema else None) if isinstance(schema, dict) else None
    if values is not None and all(isinstance(v, str) for v in values):
        return Seq((Lit(text_head), Alt(tuple(Lit(v) for v in values)), Lit(g.param_close)))
    return Tag(text_head, Text(stops), g.param_close)


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
    """The version's block: ``\\n\\n`` ``block_open\\n`` (invoke ``\\n``)+ ``block_close``; the
    ``\\n\\n`` (``DsmlGrammar.separator``, which the parser requires: ``missing_block_separator``) is part of
    the trigger."""
    g = fmt.parser_class.grammar
    trigger = g.separator + g.block_open
    # each invoke carries its line break (rather than a separator, whose \n would share a prefix with the
    # block's \n</...> end: llguidance's greedy lexer cannot back off from one to the other)
    calls = tuple((tool.name, Seq((invoke(g, tool.name, tool.schema), Lit(LINE)))) for tool in request.tools)
    section = Section(trigger + LINE, g.block_close)
    return CallWire(fmt.name, (trigger,), calls, section=section, reasoning=reasoning_markers(fmt),
                    stop_tokens=tuple(fmt.stop_tokens), family="dsml", text_excludes=text_excludes(g), calls_last=True)


def text_excludes(g) -> tuple[str, ...]:
    """Every DSML marker the parser reads in text (a block, also another version's or a variant spelling; a
    bare invoke or parameter tag; the reasoning closer): free text never spells one."""
    markers = [g.block_open, g.block_close, g.invoke_open, g.invoke_close, g.param_open, g.param_close,
               g.think_close, *sorted(g.opens), *sorted(g.closes), *sorted(g.canonical)]
    words = [m for m in dict.fromkeys(markers) if m and m != g.separator + g.block_open]
    return tuple(m for m in words if not any(o != m and o in m for o in words))  # a spelling holding another: redundant
