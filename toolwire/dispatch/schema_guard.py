"""Guards that keep schema validation bounded: what a tool's JSON Schema may hold, and a pattern engine
with a time limit.

At ``ToolSet`` build time (:func:`check_schema`), a schema is an :class:`~toolwire.errors.InvalidToolDefinition`
naming the field when it nests past :data:`MAX_SCHEMA_DEPTH`, when a ``$ref`` points nowhere or outside the
schema (toolwire never fetches), or when references loop without ever descending into the value
(``{"$ref": "#/$defs/a"}`` with ``a`` referring back to itself, directly or through ``allOf``, ``not``,
``if`` ...): such a schema can never finish validating anything. Recursion that descends (a tree whose
``children`` items refer back to the node) is fine.

At validation time, ``pattern``, ``patternProperties`` and the ``regex`` format run on the ``regex``
module with :data:`PATTERN_SECONDS` per match (:func:`search`), so a catastrophic pattern such as
``^(a+)+$`` gives a rejected candidate instead of a hang. ``regex`` also reads ECMA-262's ``\\p{L}``.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import regex

from toolwire.errors import UnrepresentableValue
from toolwire.models import check_json_value

MAX_SCHEMA_DEPTH = 256
"""Nesting bound for a tool's schema, counted in JSON containers (a property level is two)."""

PATTERN_SECONDS = 0.1
"""Time limit of one ``pattern`` match against one value."""

TIMED_OUT = "could not be checked in time"
"""Marks the validation error of a pattern match that ran past :data:`PATTERN_SECONDS`."""

# keywords whose subschemas apply to the same value as their parent (a loop through them never ends)
_SAME_VALUE_LISTS = ("allOf", "anyOf", "oneOf")
_SAME_VALUE_ONE = ("not", "if", "then", "else")
_SAME_VALUE_MAPS = ("dependentSchemas",)


def check_schema(schema: dict, fail: Callable[[str, str], Exception], field: str) -> None:
    """Raise ``fail(field, message)`` for a schema that no validator can finish with (see the module doc)."""
    try:
        check_json_value(schema, field=field)
    except UnrepresentableValue as exc:
        raise fail(exc.field or field, f"{exc.detail}") from None
    _check_depth(schema, fail, field)
    nodes = dict(_schema_nodes(schema))
    edges: dict[str, list[str]] = {}
    for pointer, node in nodes.items():
        targets = []
        ref = node.get("$ref")
        if isinstance(ref, str):
            if not ref.startswith("#"):
                raise fail(f"{field}{_dotted(pointer)}.$ref",
                           f"{ref!r} is not inside this schema; toolwire never fetches schemas (inline it under $defs)")
            target = _resolve(schema, ref)
            if target is None:
                raise fail(f"{field}{_dotted(pointer)}.$ref", f"{ref!r} points to nothing in this schema")
            targets.append(target)
        targets.extend(_same_value_children(pointer, node))
        edges[pointer] = targets
    loop = _find_loop(edges)
    if loop:
        raise fail(f"{field}{_dotted(loop[0])}",
                   "its references loop without descending into the value (" + " -> ".join(p or "#" for p in loop)
                   + "), so validation could never finish")


def search(pattern: str, text: str) -> bool | None:
    """Whether ``pattern`` matches somewhere in ``text`` (ECMA-262 reading, as JSON Schema asks); None when
    the match runs past :data:`PATTERN_SECONDS`. An invalid pattern matches nothing."""
    try:
        return regex.search(pattern, text, timeout=PATTERN_SECONDS) is not None
    except TimeoutError:
        return None
    except (regex.error, RecursionError, OverflowError):
        return False


def is_regex(text: Any) -> bool:
    """The ``regex`` format: ``text`` compiles as a pattern (never a RecursionError, whatever its nesting)."""
    if not isinstance(text, str):
        return True
    try:
        regex.compile(text)
    except (regex.error, RecursionError, OverflowError, ValueError):
        return False
    return True


def bounded_validator_class(cls: Any) -> Any:
    """``cls`` with ``pattern``, ``patternProperties`` and ``additionalProperties`` (which reads the
    patternProperties) on :func:`search`: bounded, with ECMA-262 classes."""
    from jsonschema import ValidationError, validators

    def pattern(validator, patrn, instance, schema):
        if not validator.is_type(instance, "string"):
            return
        found = search(patrn, instance)
        if found is None:
            yield ValidationError(f"{instance!r} {TIMED_OUT} against the pattern {patrn!r}")
        elif not found:
            yield ValidationError(f"{instance!r} does not match {patrn!r}")

    def pattern_properties(validator, patterns, instance, schema):
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in patterns.items():
            for key, value in instance.items():
                found = search(patrn, key)
                if found is None:
                    yield ValidationError(f"the field name {key!r} {TIMED_OUT} against the pattern {patrn!r}",
                                          path=[key])
                elif found:
                    yield from validator.descend(value, subschema, path=key, schema_path=patrn)

    def additional_properties(validator, extra_schema, instance, schema):
        if not validator.is_type(instance, "object"):
            return
        known = schema.get("properties", {})
        patterns = list(schema.get("patternProperties", {}))
        extras = []
        for key in instance:
            if key in known:
                continue
            found = [search(p, key) for p in patterns]
            if None in found:
                yield ValidationError(f"the field name {key!r} {TIMED_OUT} against the patternProperties", path=[key])
            elif not any(found):
                extras.append(key)
        if validator.is_type(extra_schema, "object"):
            for key in extras:
                yield from validator.descend(instance[key], extra_schema, path=key)
        elif not extra_schema and extras:
            yield ValidationError(f"Additional properties are not allowed ({', '.join(map(repr, extras))} "
                                  f"{'was' if len(extras) == 1 else 'were'} unexpected)")

    return validators.extend(cls, {"pattern": pattern, "patternProperties": pattern_properties,
                                   "additionalProperties": additional_properties})


def format_checker(cls: Any) -> Any:
    """``cls``'s format checker with ``regex`` on :func:`is_regex`."""
    checker = cls.FORMAT_CHECKER
    checker = type(checker)(formats=list(checker.checkers))
    checker.checkers["regex"] = (is_regex, ())
    return checker


def boolean_properties_as_schemas(schema: Any) -> Any:
    """A copy of ``schema`` in which a ``false`` / ``true`` property schema is ``{"not": {}}`` / ``{}``:
    the same meaning, but ``jsonschema`` then reports which property was refused (for a bare ``false`` it
    gives no path)."""
    if isinstance(schema, dict):
        out = {}
        for key, value in schema.items():
            if key in ("properties", "patternProperties", "$defs", "definitions") and isinstance(value, dict):
                out[key] = {k: ({"not": {}} if v is False else {} if v is True else boolean_properties_as_schemas(v))
                            for k, v in value.items()}
            else:
                out[key] = boolean_properties_as_schemas(value)
        return out
    if isinstance(schema, list):
        return [boolean_properties_as_schemas(v) for v in schema]
    return schema


# ---- helpers

def _check_depth(schema: Any, fail: Callable[[str, str], Exception], field: str) -> None:
    stack = [(schema, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > MAX_SCHEMA_DEPTH:
                raise fail(field, f"nests deeper than {MAX_SCHEMA_DEPTH} levels")
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))


def _schema_nodes(schema: Any) -> Iterator[tuple[str, dict]]:
    """Every dict in the schema with its JSON pointer (iterative)."""
    stack = [("", schema)]
    while stack:
        pointer, value = stack.pop()
        if isinstance(value, dict):
            yield pointer, value
            stack.extend((f"{pointer}/{_escape(k)}", v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((f"{pointer}/{i}", v) for i, v in enumerate(value))


def _same_value_children(pointer: str, node: dict) -> list[str]:
    out = []
    for key in _SAME_VALUE_LISTS:
        if isinstance(node.get(key), list):
            out.extend(f"{pointer}/{key}/{i}" for i, v in enumerate(node[key]) if isinstance(v, dict))
    for key in _SAME_VALUE_ONE:
        if isinstance(node.get(key), dict):
            out.append(f"{pointer}/{key}")
    for key in _SAME_VALUE_MAPS:
        if isinstance(node.get(key), dict):
            out.extend(f"{pointer}/{key}/{_escape(k)}" for k, v in node[key].items() if isinstance(v, dict))
    return out


def _resolve(schema: Any, ref: str) -> str | None:
    """The pointer a local ``$ref`` names, when it names a schema object in ``schema``."""
    fragment = ref[1:]
    if fragment and not fragment.startswith("/"):
        return None  # $anchor names are not followed; treat as unresolvable rather than guess
    value = schema
    for token in fragment.split("/")[1:] if fragment else []:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return None
    if not isinstance(value, (dict, bool)):
        return None
    return fragment


def _find_loop(edges: dict[str, list[str]]) -> list[str] | None:
    """A cycle in ``edges`` (as the list of pointers on it), or None. Iterative depth-first search."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in edges:
        if state.get(start):
            continue
        path = [start]
        iters = [iter(edges.get(start, ()))]
        state[start] = 1
        while iters:
            nxt = next(iters[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                iters.pop()
                continue
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                iters.append(iter(edges.get(nxt, ())))
    return None


def _escape(key: str) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _dotted(pointer: str) -> str:
    return "".join(f".{t}" for t in pointer.split("/")[1:]) if pointer else ""
