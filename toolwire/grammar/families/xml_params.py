"""XML parameters: one element per argument, the value's text typed by the tool's schema.

* Qwen3-Coder style (``qwen3_coder``, ``qwen35``, ``qwen36``, ``qwen38``, ``nemotron3``, ``step35``,
  ``seed_oss``; parser :class:`~toolwire.parsers.qwen_xml.XmlToolParser`)::

      <tool_call>\\n<function=NAME>\\n<parameter=KEY>\\nVALUE\\n</parameter>\\n</function>\\n</tool_call>

  The markers and the value framing (``\\n`` for Qwen, none for Seed-OSS) come from the parser's own
  :class:`~toolwire.parsers.qwen_xml.XmlGrammar` (``parser_class.grammar``); the ``\\n`` between elements is
  the line break the templates write (:data:`LINE`).

Values (:func:`xml_value`): a string-typed (or untyped, or string-or-something) parameter is free text that
contains none of the markers that could end it early (its closer, the function's and the call's closers, the
next parameter's opener: the parser's closing rule is looser, so this is a narrowing); an enum of strings is
one of them; a boolean is ``true`` / ``false`` / ``True`` / ``False``; any other type is JSON of the declared
type (the parser decodes it). Parameters are written in the
schema's order; a parameter not in ``required`` may be left out.
"""

from __future__ import annotations

from typing import Any

from toolwire.parsers.qwen_xml import XmlToolParser

from ..ir import Alt, CallWire, Lit, Seq, Tag, Text, json_node, optional
from . import describes, reasoning_markers

LINE = "\n"
"""The line break the XML-call templates write between elements."""


def is_text_typed(schema: Any) -> bool:
    """Whether a parameter's value is read as raw text: no type, ``string`` among its types (the parser keeps
    what does not decode as another type as the string), or a string enum."""
    if not isinstance(schema, dict):
        return True
    if any(key in schema for key in ("anyOf", "oneOf", "allOf", "$ref")):
        return any(is_text_typed(s) for s in schema.get("anyOf", []) + schema.get("oneOf", []))
    kind = schema.get("type")
    if kind is None:
        return "properties" not in schema and "items" not in schema and not _non_string_enum(schema)
    kinds = kind if isinstance(kind, list) else [kind]
    return "string" in kinds


def _non_string_enum(schema: dict) -> bool:
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    return values is not None and not all(isinstance(v, str) for v in values)


SCALAR_SPELLINGS = {"boolean": ("true", "false", "True", "False"), "null": ("null", "None")}
"""The spellings the parser reads for these types (the templates write Python's ``True`` / ``False``)."""


def xml_value(schema: Any, begin: str, end: str, excludes: tuple[str, ...], path: str, framing: str = ""):
    """One parameter's ``begin`` value ``end``, the value typed by ``schema`` (see the module docstring).
    ``framing`` is the whitespace the template writes on both sides of a value (the parser drops it)."""
    if isinstance(schema, dict):
        values = schema.get("enum", [schema["const"]] if "const" in schema else None)
        if values is not None and all(isinstance(v, str) for v in values) and schema.get("type") in (None, "string"):
            choice = Alt(tuple(Lit(v) for v in values)) if len(values) > 1 else Lit(values[0])
            return Seq((Lit(begin + framing), choice, Lit(framing + end)))
    if isinstance(schema, dict) and isinstance(schema.get("type"), str) and schema["type"] in SCALAR_SPELLINGS \
            and not schema.get("x-toolwire-json"):
        choice = Alt(tuple(Lit(v) for v in SCALAR_SPELLINGS[schema["type"]]))
        return Seq((Lit(begin + framing), choice, Lit(framing + end)))
    if is_text_typed(schema):  # the framing is text the parser drops; the value may end with it
        return Tag(begin + framing, Text(excludes), end)
    if isinstance(schema, dict) and "x-toolwire-json" in schema:  # a marker of the caller's, not of the schema
        schema = {k: v for k, v in schema.items() if k != "x-toolwire-json"}
    return Seq((Lit(begin + framing), json_node(schema, path, excludes), Lit(framing + end)))


def parameters(schema: dict, element) -> Seq:
    """The schema's parameters in order, each ``element(key, sub_schema, path)``; the optional ones optional."""
    required = set(schema.get("required", []))
    items = []
    for key, sub in schema.get("properties", {}).items():
        node = element(key, sub, f".properties.{key}")
        items.append(node if key in required else optional(node))
    return Seq(tuple(items))


@describes(XmlToolParser)
def qwen_xml(fmt, request, *, thinking: bool) -> CallWire:
    """``<tool_call>\\n<function=NAME>\\n<parameter=KEY>`` value ``</parameter>\\n ... </function>\\n</tool_call>``."""
    g = fmt.parser_class.grammar
    framing = g.value_framing
    # a free value never spells another marker of the call (the parser could end it or start a call there)
    stops = (g.function_close, g.call_close, g.parameter_open)

    def element(key, sub, path):
        value = xml_value(sub, g.parameter_open + key + ">", g.parameter_close, stops, path, framing)
        return Seq((value, Lit(LINE)))

    calls = tuple((tool.name, Seq((Lit(g.call_open + LINE + g.function_open + tool.name + ">" + LINE),
                                   parameters(tool.schema, element),
                                   Lit(g.function_close + LINE + g.call_close))))
                  for tool in request.tools)
    return CallWire(fmt.name, (g.call_open,), calls, reasoning=reasoning_markers(fmt),
                    stop_tokens=tuple(fmt.stop_tokens), family="xml_params", self_reasoning=g.think_open is not None)
