"""gpt-oss tool definitions as the TypeScript-like ``namespace functions { ... }`` block, in two dialects.

* :func:`hf_namespace` reproduces the ``render_tool_namespace`` / ``render_typescript_type`` macros of the
  HF chat template (``gpt-oss-20b.jinja``) byte for byte, including their whitespace quirks (a nested
  property's type follows ``": \\n" + 16 spaces``; ``default`` comments keep a trailing comma) and their
  refusals (a missing or non-string description is a template error there, an ``UnsupportedByFormat`` here).
* :func:`harmony_namespace` reproduces openai-harmony's ``json_schema_to_typescript`` and tools section
  (indented nested objects, ``oneOf`` unions, titles, examples, one ``//`` per description line).

Both take the tool ``function`` dicts in request order and return the text between ``# Tools\\n\\n`` and the
end of the developer message. Jinja and serde_json semantics are spelled out where they matter (what counts
as defined, truthy, a string) so the two stay exact on any schema, valid or not.
"""

from __future__ import annotations

import json
from typing import Any

from toolwire.errors import UnsupportedByFormat
from toolwire.templates.json_text import tojson

_UNDEF = object()
"""A key the schema does not have (Jinja's ``Undefined``; serde_json's ``get() == None``)."""


class SchemaRefused(Exception):
    """The reference itself fails on this schema (``reason`` says where); turned into UnsupportedByFormat."""


def _get(spec: Any, key: str) -> Any:
    return spec.get(key, _UNDEF) if isinstance(spec, dict) else _UNDEF


def _truthy(value: Any) -> bool:
    return value is not _UNDEF and bool(value)


def _cat(*parts: Any) -> str:
    """Jinja's ``+`` on the template's strings: anything but a string there is a template error."""
    for part in parts:
        if not isinstance(part, str):
            raise SchemaRefused(f"the template adds a {type(part).__name__ if part is not _UNDEF else 'missing'} "
                                "value to text")
    return "".join(parts)


def _tojson(value: Any) -> str:
    return tojson(value)


def _not_in(name: Any, required: Any) -> bool:
    try:
        return name not in required
    except TypeError:
        raise SchemaRefused(f"'required' is a {type(required).__name__}, which the template cannot search") from None


# ------------------------------------------------------------------------------------- HF template dialect

def _hf_type(spec: Any, required: Any) -> str:
    """``render_typescript_type(param_spec, required_params)`` of the HF template."""
    kind = _get(spec, "type")
    if isinstance(kind, str) and kind == "array":
        items = _get(spec, "items")
        if _truthy(items):
            item_kind = _get(items, "type")
            if item_kind == "string":
                out = "string[]"
            elif item_kind in ("number", "integer") and isinstance(item_kind, str):
                out = "number[]"
            elif item_kind == "boolean":
                out = "boolean[]"
            else:
                inner = _hf_type(items, required)
                out = "any[]" if inner == "object | object" or len(inner) > 50 else inner + "[]"
        else:
            out = "any[]"  # a missing ``items`` takes the other branch in Jinja, with the same text
        return out + (" | null" if _truthy(_get(spec, "nullable")) else "")
    if isinstance(kind, (list, tuple)) and kind:
        return " | ".join(_jinja_str(k) for k in kind) if len(kind) > 1 else _jinja_str(kind[0])
    one_of = _get(spec, "oneOf")
    if _truthy(one_of):
        # the template's "object variants -> any" check sets a loop-local variable, so it never fires
        variants = _iterate(one_of, "oneOf")
        out = []
        for n, variant in enumerate(variants):
            out.append(_hf_type(variant, required))
            description = _get(variant, "description")
            if _truthy(description):
                out.append(_cat("// ", description))
            default = _get(variant, "default")
            if default is not _UNDEF:
                out.append("                    // default: " + _tojson(default))
            if n < len(variants) - 1:
                out.append(" | \n")
        return "".join(out)
    if kind == "string":
        enum = _get(spec, "enum")
        if _truthy(enum):
            return '"' + '" | "'.join(_jinja_str(v) for v in _iterate(enum, "enum")) + '"'
        return "string" + (" | null" if _truthy(_get(spec, "nullable")) else "")
    if kind in ("number", "integer"):
        return "number"
    if kind == "boolean":
        return "boolean"
    if kind == "object":
        properties = _get(spec, "properties")
        if not _truthy(properties):
            return "object"
        own_required = _get(spec, "required")
        own_required = own_required if _truthy(own_required) else []
        parts = []
        for name, prop in _items(properties):
            parts.append(_jinja_str(name) + ("?" if _not_in(name, own_required) else "") + ": \n"
                         + " " * 16 + _hf_type(prop, own_required))
        return "{\n" + ", ".join(parts) + "}"
    return "any"


def _jinja_str(value: Any) -> str:
    """How Jinja prints a value (``str()``; JSON data only holds str, int, float, bool, None, list, dict)."""
    return value if isinstance(value, str) else str(value)


def _iterate(value: Any, what: str) -> list:
    """``for x in value`` as Jinja does it: a dict gives its keys, a string its characters; a number fails."""
    if not isinstance(value, (list, tuple, dict, str)):
        raise SchemaRefused(f"{what!r} is a {type(value).__name__}, which the template cannot iterate")
    return list(value)


def _items(mapping: Any) -> list[tuple[Any, Any]]:
    if not isinstance(mapping, dict):
        raise SchemaRefused(f"'properties' is a {type(mapping).__name__}, not an object")
    return list(mapping.items())


def _hf_tool(fn: dict) -> str:
    out = [_cat("// ", _get(fn, "description"), "\n"), _cat("type ", _get(fn, "name"), " = ")]
    params = _get(fn, "parameters")
    properties = _get(params, "properties")
    if not (_truthy(params) and _truthy(properties)):
        out.append("() => any;\n\n")
        return "".join(out)
    required = _get(params, "required")
    required = required if _truthy(required) else []
    out.append("(_: {\n")
    for name, spec in _items(properties):
        description = _get(spec, "description")
        if _truthy(description):
            out.append(_cat("// ", description, "\n"))
        out.append(_jinja_str(name) + ("?" if _not_in(name, required) else "") + ": " + _hf_type(spec, required))
        default = _get(spec, "default")
        if default is not _UNDEF:
            if _truthy(_get(spec, "enum")):
                out.append(_cat(", // default: ", default))
            elif _truthy(_get(spec, "oneOf")):
                out.append(_cat("// default: ", default))
            else:
                out.append(", // default: " + _tojson(default))
        out.append(",\n")
    out.append("}) => any;\n\n")
    return "".join(out)


def hf_namespace(functions: list[dict]) -> str:
    """The HF template's ``render_tool_namespace("functions", tools)``."""
    return "## functions\n\nnamespace functions {\n\n" + "".join(_tool(fn, i, _hf_tool) for i, fn in
                                                                  enumerate(functions)) + "} // namespace functions"


# ------------------------------------------------------------------------------------ openai-harmony dialect

def _is_enum(spec: Any) -> bool:
    enum = _get(spec, "enum")
    return isinstance(enum, list) and bool(enum)


def _compact(value: Any) -> str:
    """serde_json's ``Display`` of a value: compact JSON, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _default_note(spec: Any, default: Any, *, enum_plain: bool) -> str:
    """``default: ...`` as harmony writes it: a string default in quotes (bare for enum properties when
    ``enum_plain``), anything else as compact JSON."""
    if isinstance(default, str) and not _is_enum(spec):
        return f'default: "{default}"'
    if isinstance(default, str) and enum_plain:
        return f"default: {default}"
    return f"default: {_compact(default)}"


def _nullable(spec: Any, text: str) -> str:
    return text + " | null" if _get(spec, "nullable") is True and "null" not in text else text


def _harmony_union(variants: list, indent: str) -> str:
    out = []
    for variant in variants:
        out.append(f"\n{indent} | " + _nullable(variant, _harmony_type(variant, indent + "   ")))
        notes = []
        description = _get(variant, "description")
        if isinstance(description, str):
            notes.append(description)
        default = _get(variant, "default")
        if default is not _UNDEF:
            notes.append(_default_note(variant, default, enum_plain=False))
        if notes:
            out.append(" // " + " ".join(notes))
    return "".join(out)


def _harmony_property_union(out: list, key: str, prop: dict, variants: list, optional: str, indent: str) -> None:
    description = _get(prop, "description")
    description = description if isinstance(description, str) else None
    first = variants[0] if variants else _UNDEF
    above = description is not None and _get(first, "description") != description
    if above:
        out.append(f"{indent}// {description}\n")
    default = _get(prop, "default")
    if default is not _UNDEF:
        out.append(f"{indent}// {_default_note(prop, default, enum_plain=True)}\n")
    out.append(f"{indent}{key}{optional}:\n")
    for n, variant in enumerate(variants):
        out.append(f"{indent} | " + _nullable(variant, _harmony_type(variant, indent + "   ")))
        notes = []
        variant_description = _get(variant, "description")
        if not (n == 0 and above) and isinstance(variant_description, str) and variant_description != description:
            notes.append(variant_description)
        variant_default = _get(variant, "default")
        if variant_default is not _UNDEF:
            notes.append(_default_note(variant, variant_default, enum_plain=True))
        if notes:
            out.append(" // " + " ".join(notes))
        out.append("\n")
    out.append(f"{indent},\n")


def _harmony_object(spec: dict, indent: str) -> str:
    out = []
    description = _get(spec, "description")
    if isinstance(description, str):
        out.append(f"{indent}// {description}\n")
    out.append("{\n")
    properties = _get(spec, "properties")
    if isinstance(properties, dict):
        required_list = _get(spec, "required")
        required = {r for r in required_list if isinstance(r, str)} if isinstance(required_list, list) else set()
        for key, prop in properties.items():
            optional = "" if key in required else "?"
            title = _get(prop, "title")
            if isinstance(title, str):
                out.append(f"{indent}// {title}\n{indent}//\n")
            prop_description = _get(prop, "description")
            if _get(prop, "oneOf") is _UNDEF and isinstance(prop_description, str):
                out.append(f"{indent}// {prop_description}\n")
            examples = _get(prop, "examples")
            if isinstance(examples, list) and examples:
                out.append(f"{indent}// Examples:\n")
                out.extend(f'{indent}// - "{ex}"\n' for ex in examples if isinstance(ex, str))
            variants = _get(prop, "oneOf")
            if isinstance(variants, list):
                _harmony_property_union(out, key, prop, variants, optional, indent)
                continue
            out.append(f"{indent}{key}{optional}: " + _nullable(prop, _harmony_type(prop, indent + "    ")) + ",")
            default = _get(prop, "default")
            if _get(prop, "oneOf") is _UNDEF and default is not _UNDEF:
                out.append(" // " + _default_note(prop, default, enum_plain=True))
            out.append("\n")
    out.append(indent + "}")
    return "".join(out)


def _harmony_type(spec: Any, indent: str) -> str:
    """openai-harmony's ``json_schema_to_typescript(schema, indent)``."""
    variants = _get(spec, "oneOf")
    if isinstance(variants, list):
        return _harmony_union(variants, indent)
    kind = _get(spec, "type")
    if isinstance(kind, list):
        names = ["number" if k == "integer" else k for k in kind if isinstance(k, str)]
        if names:
            return " | ".join(names)
    if not isinstance(kind, str):
        return "any"
    if kind == "object":
        return _harmony_object(spec, indent)
    if kind == "string":
        enum = _get(spec, "enum")
        names = [f'"{v}"' for v in enum if isinstance(v, str)] if isinstance(enum, list) else []
        return " | ".join(names) if names else "string"
    if kind in ("number", "integer"):
        return "number"
    if kind == "boolean":
        return "boolean"
    if kind == "array":
        items = _get(spec, "items")
        return "Array<any>" if items is _UNDEF else _harmony_type(items, indent) + "[]"
    return "any"


def rust_lines(text: str) -> list[str]:
    """Rust's ``str::lines()``: lines end at ``\n`` or ``\r\n`` (a bare ``\r`` stays), no empty last line."""
    if not text:
        return []
    lines = text.split("\n")
    last = lines.pop()
    out = [line[:-1] if line.endswith("\r") else line for line in lines]
    return out + [last] if last else out


def _harmony_tool(fn: dict) -> str:
    description, name = _get(fn, "description"), _get(fn, "name")
    if not isinstance(description, str):
        raise SchemaRefused("openai-harmony needs a string description for every tool")
    lines = [f"// {line}" for line in rust_lines(description)]
    params = _get(fn, "parameters")
    if params is _UNDEF or params is None:
        lines.append(_cat("type ", name, " = () => any;\n"))
    else:
        lines.append(_cat("type ", name, " = (_: ", _harmony_type(params, ""), ") => any;\n"))
    return "".join(line + "\n" for line in lines)


def harmony_namespace(functions: list[dict]) -> str:
    """openai-harmony's tools section for the ``functions`` namespace (after ``# Tools\\n\\n``)."""
    return "## functions\n\nnamespace functions {\n\n" + "".join(_tool(fn, i, _harmony_tool) for i, fn in
                                                                  enumerate(functions)) + "} // namespace functions"


def _tool(fn: dict, index: int, render) -> str:
    try:
        return render(fn)
    except SchemaRefused as exc:
        raise UnsupportedByFormat(f"the reference cannot render this tool: {exc}",
                                  field=f"tools[{index}].function") from None
    except RecursionError:
        raise UnsupportedByFormat("the tool's schema nests too deeply to render",
                                  field=f"tools[{index}].function") from None


__all__ = ["hf_namespace", "harmony_namespace", "rust_lines", "SchemaRefused"]
