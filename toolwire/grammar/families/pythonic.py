"""Pythonic calls (``lfm25``, ``llama4_pythonic``; parsers :class:`~toolwire.parsers.lfm25.Lfm25Parser`,
:class:`~toolwire.parsers.llama4_pythonic.Llama4PythonicParser`, both on :mod:`toolwire.parsers.engine.pythonic`)::

    <|tool_call_start|>[get_weather(city='Paris', days=3), search(q='x')]<|tool_call_end|>     (LFM2.5)
    [get_weather(city="Paris", days="3")]                                                     (Llama 4 pythonic)

Everything comes from the family's declaration (its call block markers, stop tokens, reasoning
markers and dialect; the template's quote is the dialect's first raw quote). One section holds the calls, ``, ``
between them; a call is ``NAME(`` then ``key=VALUE`` pairs in the schema's order (a parameter outside
``required`` may be left out) joined by ``, ``, then ``)``.

Values, as each template writes them:

* LFM2.5: a string is raw text between ``'`` (no ``'`` inside, nor the block's end: a narrowing of the parser's
  closing rule); a string enum is one of its members, quoted; ``True`` / ``False``; ``None``; a number is JSON's;
  a dict is JSON (``tojson``, with the block's end kept out of its strings); a list is Python's literal
  (:func:`py_value`);
* Llama 4 pythonic: every value is ``"`` text ``"`` typed back by the schema: a string is text without ``"``; a
  number JSON's; ``True`` / ``False``; ``None``; a list or dict Python's literal (single-quoted strings, so no
  ``"`` inside). Free text never holds ``[`` (a call list starts there: a narrowing of the parser's rule, which
  wants a call after it).

:func:`py_value` spells a nested value as Python's ``repr`` does: single-quoted strings without escapes, line
breaks or NUL (so the text is the value), ``True`` / ``False`` / ``None``, JSON numbers, lists (``minItems`` /
``maxItems`` kept), dicts of the schema's properties in order (an object without properties is ``{}``), type
lists and ``anyOf`` / ``oneOf`` as choices; what it cannot follow (``$ref``, ``allOf``, an untyped value) is a
string. String constraints (``minLength``, ``pattern`` ...) are not followed in raw text, as in the XML groups.
"""

from __future__ import annotations

from typing import Any

from toolwire.parsers.lfm25 import DIALECT as LFM25_DIALECT
from toolwire.parsers.llama4_pythonic import DIALECT as LLAMA4_PYTHONIC_DIALECT

from ..ir import Alt, CallWire, Lit, Node, Section, Seq, Tag, Text, json_node, ordered_members, repeated
from . import describes

_PY_STRING_EXCLUDES = ("\\", "\n", "\r", "\x00")
"""What a nested single-quoted string never holds beyond its quote: the parser would decode an escape, and the
text would no longer be the value."""
_BRANCH_LIMIT = 8
"""How deep ``anyOf`` / type-list choices are followed (deeper: a string)."""


def _kinds(schema: dict) -> list[str]:
    kind = schema.get("type")
    return kind if isinstance(kind, list) else [kind] if isinstance(kind, str) else []


def _literal(value: Any) -> str:
    """A member of an enum as ``repr`` writes it (``'red'``, ``1``, ``True``, ``None``)."""
    return repr(value)


def py_value(schema: Any, excludes: tuple[str, ...], path: str, depth: int = 0) -> Node:
    """A nested value of ``schema`` as Python's literal (see the module docstring); its strings hold none of
    ``excludes``."""
    string = Tag("'", Text(tuple(x for x in dict.fromkeys((*excludes, *_PY_STRING_EXCLUDES)) if x != "'")), "'")
    if not isinstance(schema, dict) or depth > _BRANCH_LIMIT:
        return string
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if isinstance(values, list) and values:
        members = [_literal(v) for v in values if not any(x in _literal(v) for x in excludes)]
        if members:
            return Alt(tuple(Lit(m) for m in members)) if len(members) > 1 else Lit(members[0])
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list) and branches:
        return Alt(tuple(py_value(b, excludes, path, depth + 1) for b in branches))
    kinds = _kinds(schema)
    if len(kinds) > 1:
        return Alt(tuple(py_value(dict(schema, type=k), excludes, path, depth + 1) for k in kinds))
    kind = kinds[0] if kinds else ("object" if "properties" in schema else "array" if "items" in schema else None)
    if kind == "boolean":
        return Alt((Lit("True"), Lit("False")))
    if kind == "null":
        return Lit("None")
    if kind in ("integer", "number"):
        return json_node(schema, path)
    if kind == "array":
        item = py_value(schema.get("items"), excludes, path + ".items", depth + 1)
        low, high = int(schema.get("minItems", 0) or 0), schema.get("maxItems")
        return Seq((Lit("["), repeated(item, low, None if high is None else int(high), ", "), Lit("]")))
    if kind == "object":
        props = schema.get("properties") or {}
        if not props:
            return Lit("{}")
        required = set(schema.get("required", []))
        keys = list(props)
        pairs = [Seq((Lit(repr(k) + ": "), py_value(props[k], excludes, f"{path}.properties.{k}", depth + 1)))
                 for k in keys]
        return Seq((Lit("{"), ordered_members(pairs, [k not in required for k in keys], ", "), Lit("}")))
    return string


def arguments(schema: dict, value) -> Node:
    """``key=VALUE`` pairs in the schema's order, the optional ones optional, ``, `` between them."""
    props = schema.get("properties") or {}
    required = set(schema.get("required", []))
    keys = list(props)
    pairs = [Seq((Lit(k + "="), value(props[k], f".properties.{k}"))) for k in keys]
    return ordered_members(pairs, [k not in required for k in keys], ", ")


def _string_enum(schema: Any) -> list[str] | None:
    if not isinstance(schema, dict):
        return None
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if isinstance(values, list) and values and all(isinstance(v, str) for v in values):
        return values
    return None


def _kind(schema: Any) -> str | None:
    """The one type a top-level value is written as, or None (a string)."""
    if not isinstance(schema, dict) or any(k in schema for k in ("anyOf", "oneOf", "allOf", "$ref")):
        return None
    kinds = _kinds(schema)
    if not kinds:
        return "object" if "properties" in schema else "array" if "items" in schema else None
    return kinds[0] if len(kinds) == 1 else None


def _calls(request, value) -> tuple:
    """Each tool's call: ``NAME(`` key=VALUE pairs ``)``."""
    return tuple((tool.name, Seq((Lit(tool.name + "("), arguments(tool.schema, value), Lit(")"))))
                 for tool in request.tools)


@describes("lfm25")
def lfm25(fmt, request, *, thinking: bool) -> CallWire:
    """``<|tool_call_start|>[NAME(k=v, ...), ...]<|tool_call_end|>``."""
    call_open, call_close = fmt.markers.CALL_OPEN, fmt.markers.CALL_CLOSE
    quote = LFM25_DIALECT.raw_quotes[0]

    def value(schema: Any, path: str) -> Node:
        members = _string_enum(schema)
        if members is not None:
            return Alt(tuple(Lit(quote + m + quote) for m in members)) if len(members) > 1 else Lit(
                quote + members[0] + quote)
        kind = _kind(schema)
        if kind == "object":
            return json_node(schema, path, (call_close,))
        if kind in ("array", "boolean", "null", "integer", "number"):
            return py_value(schema, (call_close,), path)
        if isinstance(schema, dict) and len(_kinds(schema)) == 2 and "null" in _kinds(schema):
            other = next(k for k in _kinds(schema) if k != "null")
            return Alt((value(dict(schema, type=other), path), Lit("None")))
        return Tag(quote, Text((call_close,)), quote)

    calls = _calls(request, value)
    return CallWire(fmt.name, (call_open,), calls, section=Section(call_open + "[", "]" + call_close, ", "),
                    reasoning=fmt.reasoning_markers, stop_tokens=tuple(fmt.stop_tokens), family="pythonic",
                    self_reasoning=True)


@describes("llama4_pythonic")
def llama4_pythonic(fmt, request, *, thinking: bool) -> CallWire:
    """``[NAME(k="v", ...), ...]`` after free text without ``[``."""
    quote = LLAMA4_PYTHONIC_DIALECT.raw_quotes[0]

    def value(schema: Any, path: str) -> Node:
        members = _string_enum(schema)
        if members is not None:
            written = [m for m in members if quote not in m]
            if written:
                return Alt(tuple(Lit(quote + m + quote) for m in written)) if len(written) > 1 else Lit(
                    quote + written[0] + quote)
        kind = _kind(schema)
        if kind in ("array", "object", "boolean", "null", "integer", "number"):
            return Seq((Lit(quote), py_value(schema, (quote,), path), Lit(quote)))
        return Tag(quote, Text(()), quote)

    calls = _calls(request, value)
    return CallWire(fmt.name, ("[",), calls, section=Section("[", "]", ", "), stop_tokens=tuple(fmt.stop_tokens),
                    family="pythonic")
