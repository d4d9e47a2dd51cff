"""XML parameters: one element per argument, the value's text typed by the tool's schema.

* Qwen3-Coder style (``qwen3_coder``, ``qwen35``, ``qwen36``, ``qwen38``, ``nemotron3``, ``step35``,
  ``seed_oss``; parser :class:`~toolwire.parsers.engine.xml_tool.XmlToolParser`)::

      <tool_call>\\n<function=NAME>\\n<parameter=KEY>\\nVALUE\\n</parameter>\\n</function>\\n</tool_call>

  The markers and the value framing (``\\n`` for Qwen, none for Seed-OSS) come from the parser's own
  :class:`~toolwire.parsers.engine.xml_tool.XmlGrammar` (``parser_class.grammar``); the ``\\n`` between elements is
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


from ..ir import Alt, CallWire, Lit, Seq, Star, Tag, Text, json_node, optional
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


def xml_value(schema: Any, begin: str, end: str, excludes: tuple[str, ...], path: str, framing: str = "",
              python_literals: bool = False, json_excludes: tuple[str, ...] | None = None):
    """One parameter's ``begin`` value ``end``, the value typed by ``schema`` (see the module docstring).
    ``framing`` is the whitespace the template writes on both sides of a value (the parser drops it);
    ``python_literals``: an array or object value may also be its Python literal (:func:`python_literal`).
    ``json_excludes``: what a JSON string inside a JSON-typed value never spells (default ``excludes``): only the
    markers that cut the parser's reading of a JSON value (xgrammar writes them as ``json_schema`` excludes,
    each of which multiplies its compile time)."""
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
    value = json_node(schema, path, excludes if json_excludes is None else json_excludes)
    if python_literals and isinstance(schema, dict) and schema.get("type") in ("array", "object"):
        literal = python_literal(schema, (*excludes, end))
        value = value if literal is None else Alt((value, literal))
    return Seq((Lit(begin + framing), value, Lit(framing + end)))


NO_JSON_CUT: tuple[str, ...] = ()
"""``json_excludes`` for parsers that read a JSON-typed value whole (GLM, Laguna, Hy3, MiniMax-M2): no marker
spelled inside one of its strings cuts it (tests/grammar/test_certify.py spells each one there)."""

PYTHON_LITERAL_FORMATS = frozenset({"seed_oss"})
"""Formats whose template writes array and object values as Python literals (``str(value)``: ``['a', 'b']``,
``{'k': True}``), which the parser reads (``schema_coerce``: JSON first, then ``ast.literal_eval``)."""

_PY_STRING_EXCLUDES = ("\\", "\n", "\r", "\x00")
"""What a single-quoted Python string written as free text never holds beyond its quote (the tag's end): an
escape, a line break (a syntax error for ``ast.literal_eval``), a NUL."""


def python_literal(schema: Any, excludes: tuple[str, ...]):
    """The Python-literal spelling ``repr`` writes for a value of ``schema`` (``', '`` / ``': '`` separators,
    properties in schema order), or None where it is not written exactly: strings with constraints, type lists,
    ``anyOf``, item bounds other than ``minItems`` 0 / 1. Strings are single-quoted free text without
    ``excludes`` (the value's closers); numbers are JSON's (the same syntax, the schema's range kept)."""
    if not isinstance(schema, dict) or any(k in schema for k in ("anyOf", "oneOf", "allOf", "$ref", "not")):
        return None
    kind = schema.get("type")
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if values is not None:
        if all(isinstance(v, str) for v in values) and kind in (None, "string"):
            return Alt(tuple(Lit(repr(v)) for v in values)) if len(values) > 1 else Lit(repr(values[0]))
        return None
    if kind == "string":
        if any(k in schema for k in ("minLength", "maxLength", "pattern", "format")):
            return None
        return Tag("'", Text(tuple(excludes) + _PY_STRING_EXCLUDES), "'")
    if kind == "boolean":
        return Alt((Lit("True"), Lit("False")))
    if kind == "null":
        return Lit("None")
    if kind in ("integer", "number"):
        return json_node(schema)
    if kind == "array":
        item = python_literal(schema.get("items"), excludes)
        if item is None or schema.get("minItems", 0) not in (0, 1) or "maxItems" in schema \
                or schema.get("uniqueItems") or "prefixItems" in schema:
            return None
        items = Seq((item, Star(Seq((Lit(", "), item)))))
        return Seq((Lit("["), items if schema.get("minItems", 0) else optional(items), Lit("]")))
    if kind == "object":
        return _python_dict(schema, excludes)
    return None


def _python_dict(schema: dict, excludes: tuple[str, ...]):
    props = schema.get("properties")
    if not props:
        return None
    required = set(schema.get("required", []))
    pairs = []
    for key, sub in props.items():
        value = python_literal(sub, excludes)
        if value is None:
            return None
        pairs.append((key in required, Seq((Lit(repr(key) + ": "), value))))
    firsts = []  # which property is the first one written (every one before it left out)
    for i, (needed, pair) in enumerate(pairs):
        rest = [Seq((Lit(", "), p)) if req else optional(Seq((Lit(", "), p))) for req, p in pairs[i + 1:]]
        firsts.append(Seq((pair, *rest)))
        if needed:
            break
    body = Alt(tuple(firsts)) if len(firsts) > 1 else firsts[0]
    return Seq((Lit("{"), body if required else optional(body), Lit("}")))


def parameters(schema: dict, element) -> Seq:
    """The schema's parameters in order, each ``element(key, sub_schema, path)``; the optional ones optional."""
    required = set(schema.get("required", []))
    items = []
    for key, sub in schema.get("properties", {}).items():
        node = element(key, sub, f".properties.{key}")
        items.append(node if key in required else optional(node))
    return Seq(tuple(items))


@describes("qwen_xml")
def qwen_xml(fmt, request, *, thinking: bool) -> CallWire:
    """``<tool_call>\\n<function=NAME>\\n<parameter=KEY>`` value ``</parameter>\\n ... </function>\\n</tool_call>``."""
    g = fmt.parser_class.grammar
    framing = g.value_framing
    # a free value never spells another marker of the call (the parser could end it or start a call there); a
    # JSON value is cut only by a parameter opener inside one of its strings (implicit_parameter_close)
    stops = (g.function_close, g.call_close, g.parameter_open)

    def element(key, sub, path):
        value = xml_value(sub, g.parameter_open + key + ">", g.parameter_close, stops, path, framing,
                          python_literals=fmt.name in PYTHON_LITERAL_FORMATS, json_excludes=(g.parameter_open,))
        return Seq((value, Lit(LINE)))

    calls = tuple((tool.name, Seq((Lit(g.call_open + LINE + g.function_open + tool.name + ">" + LINE),
                                   parameters(tool.schema, element),
                                   Lit(g.function_close + LINE + g.call_close))))
                  for tool in request.tools)
    return CallWire(fmt.name, (g.call_open,), calls, reasoning=reasoning_markers(fmt),
                    stop_tokens=tuple(fmt.stop_tokens), family="xml_params", self_reasoning=g.think_open is not None)
