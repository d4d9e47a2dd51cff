"""Kimi K3 (``kimi_k3``; parser :class:`~toolwire.parsers.kimi_k3.KimiK3Parser`, markers from its ``MARKERS``).

The output continues the prompt's ``<|open|>message role="assistant"<|sep|><|open|>think<|sep|>`` (thinking) or
``...<|open|>response<|sep|>``: it is channels from its first character, so the grammar is the whole output
(``CallWire.whole``)::

    [ REASONING <|close|>think<|sep|><|open|>response<|sep|> ]          when the prompt opened the think channel
    CONTENT <|close|>response<|sep|>
    [ <|open|>tools<|sep|> CALL CALL* <|close|>tools<|sep|> ]           by tool_choice
    <|close|>message<|sep|>

    CALL = <|open|>call tool="NAME" index="N"<|sep|> ARGUMENT* <|close|>call<|sep|>
    ARGUMENT = <|open|>argument key="KEY" type="T"<|sep|> VALUE <|close|>argument<|sep|>

``auto``: the tools channel is optional; ``required`` / a named tool: it is there (content may come first: the
response channel always precedes it); ``none``: no tools channel. Arguments follow the schema's order, the
optional ones optional, each typed as the template writes it (:func:`argument`): ``string`` raw text (a string
enum one of its members), ``number`` (integers too), ``boolean``, ``null``, ``array`` / ``object`` as JSON.
Text (reasoning, content, a string value) spells no XTML marker: the parser reads every marker as a tag.
JSON values are spelled from the schema with the IR's own nodes (:func:`json_value`) so that their strings exclude
the markers on every target (no target's own JSON support can exclude words inside strings but xgrammar's).
"""

from __future__ import annotations

import json
from typing import Any

from toolwire.errors import InvalidToolDefinition
from toolwire.parsers.kimi_k3 import CLOSE, END, OPEN, SEP, STRUCTURE

from ..ir import Alt, CallWire, Chars, Lit, Node, Seq, Star, Tag, Text, json_node, optional, ordered_members, repeated
from . import describes, reasoning_markers
from .xml_params import is_text_typed, parameters

TEXT_STOPS = (OPEN, SEP, END)
"""What text before a ``<|close|>`` never spells (it ends at the first ``<|close|>``, the tag's own closer)."""
JSON_STRING_STOPS = (*STRUCTURE, "\\", *(chr(i) for i in range(0x20)))
"""What a JSON string inside a value never holds: an XTML marker, and (no escapes are written) a backslash or a
control character."""
INDEX = Seq((Chars("1-9", 1, 1), Chars("0-9", 0, 3)))
"""A call's ``index`` attribute (the template counts from 1; the parser does not read it)."""
JSON_TYPE = {"integer": "number"}
"""The ``type`` attribute of a value of a JSON Schema type, where it differs (the template's ``xtml_type``)."""


def open_tag(name: str, *attributes: tuple[str, str]) -> str:
    """``<|open|>NAME key="value" ...<|sep|>``, the values escaped as the parser unescapes them."""
    return OPEN + name + "".join(f' {k}="{attribute(v)}"' for k, v in attributes) + SEP


def close_tag(name: str) -> str:
    """``<|close|>NAME<|sep|>``."""
    return CLOSE + name + SEP


def attribute(text: str) -> str:
    """An attribute value with ``&`` and ``"`` escaped (the parser reads ``&amp;`` and ``&quot;`` back)."""
    return text.replace("&", "&amp;").replace('"', "&quot;")


def _kinds(schema: dict) -> list[str]:
    kind = schema.get("type")
    return kind if isinstance(kind, list) else [kind] if isinstance(kind, str) else []


def _string_enum(schema: dict) -> list[str] | None:
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if values is not None and all(isinstance(v, str) and not any(m in v for m in STRUCTURE) for v in values) \
            and schema.get("type") in (None, "string"):
        return values
    return None


def text_until_close(begin: str) -> Tag:
    """``begin`` then free text ending at the next ``<|close|>`` (the caller writes the rest of that tag)."""
    return Tag(begin, Text(TEXT_STOPS), CLOSE)


def argument(key: str, schema: Any, path: str) -> Node:
    """One ``<|open|>argument key="KEY" type="T"<|sep|>`` VALUE ``<|close|>argument<|sep|>`` of ``schema``."""
    def head(kind: str) -> str:
        return open_tag("argument", ("key", key), ("type", kind))

    end = close_tag("argument")
    if not isinstance(schema, dict):
        return Seq((text_until_close(head("string")), Lit(end[len(CLOSE):])))
    values = _string_enum(schema)
    if values is not None:
        return Seq((Lit(head("string")), Alt(tuple(Lit(v) for v in values)), Lit(end)))
    kinds = _kinds(schema)
    if is_text_typed(schema) and not ("null" in kinds and len(kinds) > 1):
        return Seq((text_until_close(head("string")), Lit(end[len(CLOSE):])))
    for keyword in ("anyOf", "oneOf"):
        if isinstance(schema.get(keyword), list):
            return Alt(tuple(argument(key, b, f"{path}.{keyword}[{i}]") for i, b in enumerate(schema[keyword])))
    forms = []
    for kind in kinds or [_kind_of(schema)]:
        if kind == "string":
            forms.append(Seq((text_until_close(head("string")), Lit(end[len(CLOSE):]))))
        else:
            single = dict(schema, type=kind) if kinds else schema
            forms.append(Seq((Lit(head(JSON_TYPE.get(kind, kind))), json_value(single, path), Lit(end))))
    return forms[0] if len(forms) == 1 else Alt(tuple(forms))


def _kind_of(schema: dict) -> str:
    """The JSON type of an untyped, non-text schema: from its keywords or its enum's members."""
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    values = schema.get("enum", [schema.get("const")])
    first = values[0] if values else None
    return ("boolean" if isinstance(first, bool) else "number" if isinstance(first, (int, float)) else
            "null" if first is None else "array" if isinstance(first, list) else "object")


def json_value(schema: Any, path: str) -> Node:
    """A JSON value of ``schema`` as ``tojson`` writes it (``", "`` / ``": "``), strings without markers; what
    the spelling does not follow (no properties, untyped, ``anyOf``, string bounds) is a :class:`Json` node whose
    strings exclude the markers on xgrammar only (docs/grammar.md)."""
    if not isinstance(schema, dict):
        return json_node({}, path, STRUCTURE)
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if values is not None:
        return Alt(tuple(Lit(json.dumps(v, ensure_ascii=False)) for v in values))
    kinds = _kinds(schema)
    if len(kinds) > 1:
        return Alt(tuple(json_value(dict(schema, type=k), path) for k in kinds))
    kind = kinds[0] if kinds and not any(k in schema for k in ("anyOf", "oneOf", "allOf", "$ref")) else None
    if kind == "string" and not any(k in schema for k in ("minLength", "maxLength", "pattern", "format")):
        return Tag('"', Text(JSON_STRING_STOPS), '"')
    if kind == "boolean":
        return Alt((Lit("true"), Lit("false")))
    if kind == "null":
        return Lit("null")
    if kind == "array" and "prefixItems" not in schema:
        item = json_value(schema.get("items", {}), path + ".items")
        return Seq((Lit("["), repeated(item, int(schema.get("minItems", 0)), schema.get("maxItems"), ", "),
                    Lit("]")))
    if kind == "object" and schema.get("properties"):
        return json_object(schema, path)
    return json_node(schema, path, STRUCTURE)  # numbers (their range kept), and what the spelling does not follow


def json_object(schema: dict, path: str) -> Node:
    """``{"key": v, ...}``: the properties in schema order, the optional ones optional, ``", "`` between them."""
    props, required = schema["properties"], set(schema.get("required", []))
    keys = list(props)
    members = [Seq((Lit(json.dumps(k, ensure_ascii=False) + ": "), json_value(props[k], f"{path}.properties.{k}")))
               for k in keys]

    return Seq((Lit("{"), ordered_members(members, [k not in required for k in keys], ", "), Lit("}")))


def _check(text: str, what: str, tool: str, field: str) -> None:
    if not text or any(m in text for m in STRUCTURE):
        raise InvalidToolDefinition(f"the {what} {text!r} cannot be written in a Kimi K3 tag (empty, or it holds "
                                    "an XTML marker)", tool=tool, field=field)


def call(tool) -> Seq:
    """``<|open|>call tool="NAME" index="N"<|sep|>`` arguments ``<|close|>call<|sep|>``."""
    where = f"tools[{tool.index}].function"
    _check(tool.name, "function name", tool.name, where + ".name")
    for key in tool.schema.get("properties", {}):
        _check(key, "argument key", tool.name, f"{where}.parameters.properties.{key}")
    head = open_tag("call", ("tool", tool.name))
    return Seq((Lit(head[:-len(SEP)] + ' index="'), INDEX, Lit('"' + SEP),
                parameters(tool.schema, argument), Lit(close_tag("call"))))


@describes("kimi_k3")
def kimi_k3(fmt, request, *, thinking: bool) -> CallWire:
    """The whole output: [reasoning], the response channel, the tools channel as ``tool_choice`` allows, the
    message's end."""
    calls = tuple((tool.name, call(tool)) for tool in request.tools)
    nodes = [node for _, node in calls]
    tools_channel = Seq((Lit(open_tag("tools")), Alt(tuple(nodes)) if len(nodes) > 1 else nodes[0],
                         Star(Alt(tuple(nodes)) if len(nodes) > 1 else nodes[0]), Lit(close_tag("tools")))) \
        if nodes and request.mode != "none" else None
    response = Seq((text_until_close(""), Lit(close_tag("response")[len(CLOSE):])))
    parts: list[Node] = []
    if thinking:
        parts += [text_until_close(""), Lit(close_tag("think")[len(CLOSE):] + open_tag("response"))]
    parts.append(response)
    if tools_channel is not None:
        parts.append(optional(tools_channel) if request.mode == "auto" else tools_channel)
    parts.append(Lit(close_tag("message")))
    return CallWire(fmt.name, (open_tag("tools"),), calls, reasoning=reasoning_markers(fmt),
                    stop_tokens=tuple(fmt.stop_tokens), family="kimi_k3", whole=Seq(tuple(parts)))
