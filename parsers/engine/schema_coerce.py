"""Schema typing for text-bodied argument values (XML families: Qwen3-Coder, Seed-OSS, GLM, MiniMax).

XML-style wire formats write every argument value as text; the tool's JSON schema says what type it was.
:func:`coerce` turns the raw text back into a typed JSON value. It never evaluates code: JSON goes
through :func:`toolwire.parsers.engine.safe_json.loads`, Python literal spellings of containers through
``ast.literal_eval`` on a size- and depth-bounded input, and scalars only through their exact JSON or
Python spellings (``true``/``True``, ``false``/``False``, ``null``/``None``, JSON numbers).

Resolution order (each step only runs when the previous ones did not decide):

1. **``$ref``** - a local reference (``#/...`` JSON pointer into ``root``, the tool's parameter schema)
   is followed, through chains, with a cycle guard. A non-local or broken reference makes that schema
   *untyped* and adds an ``unresolved_ref`` diagnostic.
2. **Branches** - the schema itself plus every ``anyOf`` / ``oneOf`` branch and every ``allOf`` part,
   recursively, in document order.
3. **``enum`` / ``const``** - when a branch lists the raw text itself as a string member, the value is that
   string (so ``enum: ["1", 2]`` keeps ``"1"`` a string).
4. **Allowed types** - the union of every branch's ``type`` (a string or a list), plus ``null`` when a branch
   says ``nullable: true``. A branch without ``type`` is typed by the JSON types of its ``enum``/``const``
   members, else ``object`` when it has ``properties``/``additionalProperties``/``required``, else ``array``
   when it has ``items``/``prefixItems``. No type anywhere means *untyped*.
5. **Untyped, or string only** - the raw text is kept as a string, unchanged (``"007"``, ``"1e5"``,
   ``"true"`` stay strings). Without a schema values stay strings.
6. **Decoding** - the non-string allowed types are tried in the fixed order ``null``, ``boolean``,
   ``integer``, ``number``, ``object``, ``array``; the first whose decoder accepts the text (surrounding
   whitespace ignored) wins. ``integer`` accepts an integral float (``5.0``) only when ``number`` is not
   allowed, with an ``integer_from_float`` diagnostic. Numbers must be finite; ints stay exact.
7. **Fallback** - if nothing decoded and ``string`` is allowed, the raw string; otherwise the raw string
   is kept and a ``value_type_mismatch`` diagnostic names the expected types (the parser marks the call
   ``repaired``: it is kept, never dropped, and the mismatch is named). Nothing is ever dropped.

**Limits.** A container value past ``max_depth`` (the arguments' bound, as :class:`toolwire.limits.Limits`
states it: the arguments object holding the value is one level) or ``max_bytes`` is not decoded: the raw
string is kept with a ``too_large`` diagnostic (the parser rejects the call).
"""

from __future__ import annotations

import ast
import math
from typing import Any, Callable

from toolwire.limits import utf8_size

from .safe_json import MAX_DEPTH, loads as json_loads, nesting_depth

MAX_LITERAL_CHARS = 262_144
"""Python-literal parsing (``ast.literal_eval``) is only tried on inputs up to this size."""

_DECODE_ORDER = ("null", "boolean", "integer", "number", "object", "array")
_JSON_TYPES = frozenset(_DECODE_ORDER + ("string",))
_MAX_REF_HOPS = 32
_MAX_BRANCH_DEPTH = 16

Diagnostics = list[tuple[str, str]]


# ---------------------------------------------------------------- schema walking

def _resolve_ref(schema: Any, root: dict | None, diags: Diagnostics | None = None) -> dict | None:
    """Follow local ``$ref`` chains; None (untyped) when a reference is non-local, broken or cyclic."""
    seen: set[str] = set()
    hops = 0
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        ref = schema["$ref"]
        target = _pointer(root, ref) if ref not in seen and hops < _MAX_REF_HOPS else None
        if target is None:
            if diags is not None:
                diags.append(("unresolved_ref", f"schema reference {ref!r} cannot be resolved locally; "
                                                "the value is left untyped"))
            return None
        seen.add(ref)
        hops += 1
        schema = target
    return schema if isinstance(schema, dict) else None


def _pointer(root: dict | None, ref: str) -> Any:
    if root is None or not ref.startswith("#"):
        return None
    node: Any = root
    path = ref[1:]
    if not path:
        return root
    if not path.startswith("/"):
        return None
    for part in path[1:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _branches(schema: Any, root: dict | None, diags: Diagnostics | None, depth: int = 0) -> list[dict]:
    """The schema and its anyOf/oneOf/allOf branches (refs resolved), flattened in document order."""
    resolved = _resolve_ref(schema, root, diags)
    if resolved is None or depth > _MAX_BRANCH_DEPTH:
        return []
    out = [resolved]
    for keyword in ("anyOf", "oneOf", "allOf"):
        for branch in resolved.get(keyword) or ():
            out.extend(_branches(branch, root, diags, depth + 1))
    return out


def json_type(value: Any) -> str:
    """The JSON Schema type name of a decoded JSON value (``integer`` for an int, ``number`` for a float or a
    ``Decimal``, ``array`` for a list or tuple); any other Python value gives its class name, which no schema
    type matches. The one such function: the schema coercion here, the drift checks and
    :mod:`toolwire.dispatch.validation` read it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float) or type(value).__name__ == "Decimal":
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _members(branch: dict) -> list[Any]:
    members = list(branch["enum"]) if isinstance(branch.get("enum"), list) else []
    if "const" in branch:
        members.append(branch["const"])
    return members


def _branch_types(branch: dict) -> set[str]:
    declared = branch.get("type")
    if isinstance(declared, str):
        types = {declared}
    elif isinstance(declared, list):
        types = {t for t in declared if isinstance(t, str)}
    else:
        types = set(map(json_type, _members(branch))) & _JSON_TYPES
        if not types:
            if any(k in branch for k in ("properties", "additionalProperties", "required", "patternProperties")):
                types = {"object"}
            elif any(k in branch for k in ("items", "prefixItems")):
                types = {"array"}
    if branch.get("nullable") is True:
        types.add("null")
    return types & _JSON_TYPES


def _allowed(schema: Any, root: dict | None, diags: Diagnostics | None) -> tuple[set[str], list[dict]]:
    branches = _branches(schema, root, diags)
    types: set[str] = set()
    for branch in branches:
        types |= _branch_types(branch)
    return types, branches


# ---------------------------------------------------------------- public API

def parameter_schema(tool_schema: dict | None, key: str) -> dict | None:
    """The schema of parameter ``key`` in a tool's parameter schema, its local ``$ref`` resolved (an unresolvable
    reference is returned unresolved, so :func:`coerce` can report it).

    Looks in ``properties`` (also inside top-level ``allOf`` parts), then a dict ``additionalProperties``.
    ``patternProperties`` is not consulted (regexes from a request are not run). None when unknown.
    """
    root = _resolve_ref(tool_schema, tool_schema) if isinstance(tool_schema, dict) else None
    if root is None:
        return None
    props = root.get("properties")
    if isinstance(props, dict) and key in props:
        return _local(props[key], tool_schema)
    for part in root.get("allOf") or ():
        part = _resolve_ref(part, tool_schema)
        if part and isinstance(part.get("properties"), dict) and key in part["properties"]:
            return _local(part["properties"][key], tool_schema)
    extra = root.get("additionalProperties")
    if isinstance(extra, dict):
        return _local(extra, tool_schema)
    return None


def declared_parameter(tool_schema: dict | None, key: str) -> bool:
    """Whether ``key`` is named in the tool's ``properties`` (also inside top-level ``allOf`` parts). Repairs
    that must be fail-closed (an implicit value close at the next parameter tag) accept only such keys."""
    root = _resolve_ref(tool_schema, tool_schema) if isinstance(tool_schema, dict) else None
    if root is None:
        return False
    for part in (root, *(_resolve_ref(p, tool_schema) for p in root.get("allOf") or ())):
        if isinstance(part, dict) and isinstance(part.get("properties"), dict) and key in part["properties"]:
            return True
    return False


def _local(schema: Any, root: dict) -> dict | None:
    """``schema`` with its local ``$ref`` resolved; an unresolvable one is returned as is (coerce reports it)."""
    resolved = _resolve_ref(schema, root)
    if resolved is None and isinstance(schema, dict):
        return schema
    return resolved


def is_string_schema(schema: dict | None, root: dict | None = None) -> bool:
    """True when :func:`coerce` keeps the value as the raw string (string-only, or untyped/no schema).

    Stream parsers use it to decide whether a value can stream as JSON string fragments as it arrives.
    """
    types, _ = _allowed(schema, root, None)
    return not types or types == {"string"}


def coerce(raw: str, schema: dict | None, root: dict | None = None, *, max_depth: int = MAX_DEPTH,
           max_bytes: int | None = None) -> tuple[object, list[tuple[str, str]]]:
    """Type ``raw`` by ``schema`` (see the module docstring for the order). Returns the value and
    ``(code, message)`` diagnostics; on failure the raw string is kept with a ``value_type_mismatch`` diagnostic,
    past the limits with a ``too_large`` one."""
    diags: Diagnostics = []
    types, branches = _allowed(schema, root, diags)
    if not types or types == {"string"}:
        return raw, diags
    for branch in branches:
        if raw in (m for m in _members(branch) if isinstance(m, str)):
            return raw, diags
    text = raw.strip()
    problem = _size_problem(text, types, max_depth - 1, max_bytes)
    if problem:
        diags.append(("too_large", problem))
        return raw, diags
    for name in _DECODE_ORDER:
        if name not in types:
            continue
        ok, value = _DECODERS[name](text, types, max_depth - 1)
        if ok:
            if name == "integer" and isinstance(value, float):
                value = int(value)
                diags.append(("integer_from_float", f"integer written as {text!r}; read as {value}"))
            return value, diags
    if "string" in types:
        return raw, diags
    expected = " or ".join(t for t in _DECODE_ORDER if t in types)
    diags.append(("value_type_mismatch", f"value {_preview(raw)} is not a valid {expected}; the raw string is kept"))
    return raw, diags


_SEVERITY = {"integer_from_float": "info"}


def coerce_argument(call: Any, key: str, raw: str, schema: dict | None, root: dict | None = None) -> None:
    """Type the text of argument ``key`` with :func:`coerce`, bounded by the call's parser limits, and store it
    on ``call`` (a :class:`~toolwire.parsers.engine.call_builder.CallBuilder`) with its diagnostics: ``too_large`` rejects
    the call, a value that does not fit its type is kept as its raw string with ``value_type_mismatch`` (the
    call ``repaired``), a float read as an integer is noted."""
    limits = call.parser.limits
    value, diags = coerce(raw, schema, root, max_depth=limits.max_depth, max_bytes=limits.max_argument_bytes)
    for code, message in diags:
        if code == "too_large":
            call.reject_too_large(f"argument {key!r}: {message}")
        else:
            call.diag(code, f"argument {key!r}: {message}", severity=_SEVERITY.get(code, "warning"))
            if code == "value_type_mismatch" and call.status == "proposed":
                call.status = "repaired"
    call.value(key, value)


# ---------------------------------------------------------------- decoders

_FAIL = (False, None)


def _preview(raw: str, limit: int = 40) -> str:
    return repr(raw if len(raw) <= limit else raw[:limit] + "...")


def _size_problem(text: str, types: set[str], depth: int, max_bytes: int | None) -> str | None:
    """Why a container value is too large to decode (``depth``: its own nesting bound), or None."""
    if not ({"object", "array"} & types and text[:1] in "[{"):
        return None
    if max_bytes is not None and utf8_size(text, max_bytes) > max_bytes:
        return f"the value takes more than {max_bytes} bytes (Limits.max_argument_bytes); kept as text"
    if text.count("[") + text.count("{") > depth and nesting_depth(text) > depth \
            and (len(text) > MAX_LITERAL_CHARS or _literal_depth(text, depth) > depth):
        return f"the value makes the arguments nest deeper than {depth + 1} levels (Limits.max_depth); kept as text"
    return None


def _json(text: str, depth: int = 0) -> tuple[bool, Any]:
    try:
        return True, json_loads(text, max_depth=depth)
    except (ValueError, RecursionError):
        return _FAIL


def _literal_depth(text: str, limit: int) -> int:
    """Bracket nesting outside ``'``/``"`` strings (stops once past ``limit``)."""
    depth = best = 0
    quote = None
    escaped = False
    for ch in text:
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "[{(":
            depth += 1
            if depth > best:
                best = depth
                if best > limit:
                    return best
        elif ch in "]})":
            depth -= 1
    return best


def _json_compatible(value: Any, limit: int, depth: int = 0) -> bool:
    if depth > limit:
        return False
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_json_compatible(v, limit, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_compatible(v, limit, depth + 1) for k, v in value.items())
    return False


def _literal(text: str, depth: int) -> tuple[bool, Any]:
    """A Python literal (``['a']``, ``{'k': None}``) read with ``ast.literal_eval``, size/depth bounded."""
    if len(text) > MAX_LITERAL_CHARS or _literal_depth(text, depth) > depth:
        return _FAIL
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _FAIL
    return (True, value) if _json_compatible(value, depth) else _FAIL


def _container(kind: type) -> Callable[[str, set[str]], tuple[bool, Any]]:
    opener = "{" if kind is dict else "["

    def decode(text: str, _types: set[str], depth: int) -> tuple[bool, Any]:
        if not text.startswith(opener):
            return _FAIL
        for reader in (_json, _literal):
            ok, value = reader(text, depth)
            if ok and isinstance(value, kind) and _json_compatible(value, depth):
                return True, value
        return _FAIL

    return decode


def _null(text: str, _types: set[str], _depth: int) -> tuple[bool, Any]:
    return (True, None) if text in ("null", "None") else _FAIL


def _boolean(text: str, _types: set[str], _depth: int) -> tuple[bool, Any]:
    if text in ("true", "True"):
        return True, True
    if text in ("false", "False"):
        return True, False
    return _FAIL


def _number_text(text: str) -> tuple[bool, Any]:
    if not text or text[0] not in "-0123456789":
        return _FAIL
    ok, value = _json(text)
    if not ok or isinstance(value, bool) or not isinstance(value, (int, float)):
        return _FAIL
    if isinstance(value, float) and not math.isfinite(value):
        return _FAIL
    return True, value


def _integer(text: str, types: set[str], _depth: int) -> tuple[bool, Any]:
    ok, value = _number_text(text)
    if not ok:
        return _FAIL
    if isinstance(value, int):
        return True, value
    if "number" not in types and value.is_integer():
        return True, value  # converted (with a diagnostic) by coerce
    return _FAIL


def _number(text: str, _types: set[str], _depth: int) -> tuple[bool, Any]:
    return _number_text(text)


_DECODERS: dict[str, Callable[[str, set[str], int], tuple[bool, Any]]] = {
    "null": _null, "boolean": _boolean, "integer": _integer, "number": _number,
    "object": _container(dict), "array": _container(list),
}

__all__ = ["json_type", "parameter_schema", "declared_parameter", "is_string_schema", "coerce", "coerce_argument", "MAX_LITERAL_CHARS"]
