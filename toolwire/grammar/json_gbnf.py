"""JSON Schema -> GBNF rules (llama.cpp's grammar format), for the subset tool schemas use.

No light, maintained converter is on PyPI: llama.cpp's own ``json_schema_to_grammar.py`` ships only inside
its source tree, and xgrammar's (``Grammar.from_json_schema``) needs torch at import and prints xgrammar's
EBNF dialect. So the subset is generated here, and everything else is refused with an
:class:`~toolwire.errors.InvalidToolDefinition` naming the schema field (xgrammar and llguidance take the
schema whole; use them for those schemas).

Supported: ``type`` (one or a list), ``properties`` (written in declared order; a property not in
``required`` may be left out; no other keys: like xgrammar's and llguidance's strict object mode),
``required``, ``additionalProperties`` (only as ``false``, or on an object without ``properties``, which then
takes any keys), ``items``, ``minItems`` / ``maxItems``, ``enum``, ``const``, ``anyOf`` / ``oneOf`` (as a
choice: ``oneOf``'s "exactly one" is not checked), ``minLength`` / ``maxLength``, ``minimum`` / ``maximum``
/ ``exclusiveMinimum`` / ``exclusiveMaximum`` on integers (a range of at most 4096 values, or a lower bound
of 0 or 1 alone), and the annotations (``description``, ``title``, ``default``, ``examples``, ``$schema``,
``$comment``, ``format`` is refused). Whitespace between JSON tokens: up to 20 blanks, like llama.cpp's.
"""

from __future__ import annotations

import json
from typing import Any

from toolwire.errors import InvalidToolDefinition

from .escape import escaped

ANNOTATIONS = frozenset({"description", "title", "default", "examples", "$schema", "$comment", "deprecated",
                         "readOnly", "writeOnly", "strict"})
HANDLED = frozenset({"type", "properties", "required", "additionalProperties", "items", "minItems", "maxItems",
                     "enum", "const", "anyOf", "oneOf", "minLength", "maxLength", "minimum", "maximum",
                     "exclusiveMinimum", "exclusiveMaximum", "nullable"})
MAX_RANGE = 4096

BASE_RULES = {
    "ws": '[ \\t\\n\\r]{0,20}',
    "json-char": '[^"\\\\\\x7F\\x00-\\x1F] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4})',
    "json-string": '"\\"" json-char* "\\""',
    "json-int": '"-"? ("0" | [1-9] [0-9]*)',
    "json-number": 'json-int ("." [0-9]+)? ([eE] [-+]? [0-9]+)?',
    "json-bool": '"true" | "false"',
    "json-null": '"null"',
    "json-value": 'json-object | json-array | json-string | json-number | json-bool | json-null',
    "json-object": '"{" ws (json-string ws ":" ws json-value ws ("," ws json-string ws ":" ws json-value ws)*)? "}"',
    "json-array": '"[" ws (json-value ws ("," ws json-value ws)*)? "]"',
}
"""The generic JSON rules (RFC 8259), referenced by the generated ones."""


def gbnf_literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    return '"' + escaped(text, '"\\', upper_hex=True) + '"'


class JsonGbnf:
    """Collects the rules for several schemas (shared rules are written once)."""

    def __init__(self, rules: dict[str, str], prefix: str = "j"):
        self.rules = rules
        self.prefix = prefix
        self._by_key: dict[str, str] = {}
        self._count = 0
        self._base_added = False

    def _base(self) -> None:
        if not self._base_added:
            for name, body in BASE_RULES.items():
                self.rules.setdefault(name, body)
            self._base_added = True

    def _new(self, body: str) -> str:
        found = self._by_key.get(body)
        if found:
            return found
        self._count += 1
        name = f"{self.prefix}{self._count}"
        self.rules[name] = body
        self._by_key[body] = name
        return name

    def rule(self, schema: Any, field: str, tool: str | None = None) -> str:
        """The name of a rule matching one JSON value of ``schema`` (``field`` names it in errors)."""
        self._base()
        self._tool = tool
        return self._value(schema, field)

    # ---- one schema
    def _refuse(self, field: str, detail: str):
        raise InvalidToolDefinition(f"{field}: {detail} (the gbnf target supports a subset of JSON Schema; "
                                    "the xgrammar and llguidance targets take the schema whole)",
                                    tool=self._tool, field=field)

    def _value(self, schema: Any, field: str) -> str:
        if schema is True or schema == {}:
            return "json-value"
        if schema is False:
            self._refuse(field, "the schema false matches no value")
        if not isinstance(schema, dict):
            self._refuse(field, "a schema must be an object or a boolean")
        unknown = sorted(set(schema) - HANDLED - ANNOTATIONS)
        if unknown:
            self._refuse(f"{field}.{unknown[0]}", f"{unknown[0]!r} is not supported")
        if "const" in schema:
            return self._new(self._json_literal(schema["const"]))
        if "enum" in schema:
            values = schema["enum"]
            if not isinstance(values, list) or not values:
                self._refuse(f"{field}.enum", "enum must be a non-empty list")
            return self._new(" | ".join(self._json_literal(v) for v in values))
        for key in ("anyOf", "oneOf"):
            if key in schema:
                subs = schema[key]
                if not isinstance(subs, list) or not subs:
                    self._refuse(f"{field}.{key}", f"{key} must be a non-empty list")
                rest = {k: v for k, v in schema.items() if k not in (key,) and k not in ANNOTATIONS}
                if rest:
                    self._refuse(f"{field}.{sorted(rest)[0]}", f"{sorted(rest)[0]!r} beside {key} is not supported")
                return self._new(" | ".join(self._value(s, f"{field}.{key}[{i}]") for i, s in enumerate(subs)))
        kind = schema.get("type")
        if kind is None:
            if "properties" in schema:
                kind = "object"
            elif "items" in schema:
                kind = "array"
            else:
                return "json-value"
        kinds = kind if isinstance(kind, list) else [kind]
        if schema.get("nullable") is True and "null" not in kinds:
            kinds = [*kinds, "null"]
        if not kinds:
            self._refuse(f"{field}.type", "type must not be an empty list")
        parts = [self._typed(k, schema, field) for k in kinds]
        return parts[0] if len(parts) == 1 else self._new(" | ".join(parts))

    def _json_literal(self, value: Any) -> str:
        return gbnf_literal(json.dumps(value, ensure_ascii=False))

    def _typed(self, kind: Any, schema: dict, field: str) -> str:
        if kind == "string":
            lo, hi = schema.get("minLength"), schema.get("maxLength")
            if lo is None and hi is None:
                return "json-string"
            lo = self._count_bound(lo, f"{field}.minLength", 0)
            hi = "" if hi is None else self._count_bound(hi, f"{field}.maxLength", 0)
            return self._new(f'"\\"" json-char{{{lo},{hi}}} "\\""')
        if kind == "integer":
            return self._integer(schema, field)
        if kind == "number":
            for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
                if key in schema:
                    self._refuse(f"{field}.{key}", f"{key} on a number is not supported")
            return "json-number"
        if kind == "boolean":
            return "json-bool"
        if kind == "null":
            return "json-null"
        if kind == "array":
            return self._array(schema, field)
        if kind == "object":
            return self._object(schema, field)
        self._refuse(f"{field}.type", f"unknown type {kind!r}")

    @staticmethod
    def _count_bound(value: Any, field: str, least: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise InvalidToolDefinition(f"{field} must be an integer >= {least}, got {value!r}", field=field)
        return value

    def _integer(self, schema: dict, field: str) -> str:
        lo, hi = schema.get("minimum"), schema.get("maximum")
        for key, value in (("minimum", lo), ("maximum", hi), ("exclusiveMinimum", schema.get("exclusiveMinimum")),
                           ("exclusiveMaximum", schema.get("exclusiveMaximum"))):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                self._refuse(f"{field}.{key}", f"{key} must be a number, got {value!r}")
        import math

        if lo is not None:
            lo = math.ceil(lo)
        if hi is not None:
            hi = math.floor(hi)
        if schema.get("exclusiveMinimum") is not None:
            bound = math.floor(schema["exclusiveMinimum"]) + 1
            lo = bound if lo is None else max(lo, bound)
        if schema.get("exclusiveMaximum") is not None:
            bound = math.ceil(schema["exclusiveMaximum"]) - 1
            hi = bound if hi is None else min(hi, bound)
        if lo is None and hi is None:
            return "json-int"
        if lo is not None and hi is not None:
            if hi < lo:
                self._refuse(f"{field}.maximum", f"the range [{lo}, {hi}] is empty")
            if hi - lo < MAX_RANGE:
                return self._new(" | ".join(f'"{n}"' for n in range(lo, hi + 1)))
            self._refuse(f"{field}.maximum", f"an integer range wider than {MAX_RANGE} values is not supported")
        if hi is None and lo in (0, 1):
            return self._new('"0" | [1-9] [0-9]*' if lo == 0 else '[1-9] [0-9]*')
        key = "minimum" if hi is None else "maximum"
        self._refuse(f"{field}.{key}", "an integer bounded on one side only (other than minimum 0 or 1) is not supported")

    def _array(self, schema: dict, field: str) -> str:
        item = self._value(schema.get("items", True), f"{field}.items")
        lo = self._count_bound(schema.get("minItems", 0), f"{field}.minItems", 0)
        hi = schema.get("maxItems")
        if hi is not None:
            hi = self._count_bound(hi, f"{field}.maxItems", 0)
            if hi < lo:
                self._refuse(f"{field}.maxItems", "maxItems is below minItems")
        if lo == 0 and hi is None:
            return self._new(f'"[" ws ({item} ws ("," ws {item} ws)*)? "]"')
        if hi == 0:
            return self._new('"[" ws "]"')
        more_lo = max(lo - 1, 0)
        more = f'("," ws {item} ws){{{more_lo},{"" if hi is None else hi - 1}}}'
        body = f"{item} ws {more}"
        return self._new(f'"[" ws {body} "]"' if lo >= 1 else f'"[" ws ({body})? "]"')

    def _object(self, schema: dict, field: str) -> str:
        props = schema.get("properties")
        extra = schema.get("additionalProperties", True)
        if not props:
            if extra is False:
                return self._new('"{" ws "}"')
            if extra is not True and extra != {}:
                value = self._value(extra, f"{field}.additionalProperties")
                pair = f"json-string ws \":\" ws {value} ws"
                return self._new(f'"{{" ws ({pair} ("," ws {pair})*)? "}}"')
            return "json-object"
        if not isinstance(props, dict):
            self._refuse(f"{field}.properties", "properties must be an object")
        if extra not in (True, False, {}):
            self._refuse(f"{field}.additionalProperties", "additionalProperties as a schema beside properties "
                         "is not supported")
        required = schema.get("required", [])
        if not isinstance(required, list):
            self._refuse(f"{field}.required", "required must be a list")
        missing = [r for r in required if r not in props]
        if missing:
            self._refuse(f"{field}.required", f"required names {missing[0]!r}, which is not in properties")
        pairs = []
        for key, sub in props.items():
            value = self._value(sub, f"{field}.properties.{key}")
            pairs.append((self._new(f"{gbnf_literal(json.dumps(key, ensure_ascii=False))} ws \":\" ws {value} ws"),
                          key in required))
        memo: dict[tuple[int, bool], str] = {}

        def rest(i: int, first: bool) -> str:
            """Rule for the pairs from ``i`` on; ``first``: nothing written yet (no comma before)."""
            if i == len(pairs):
                return '""'
            if (i, first) in memo:
                return memo[(i, first)]
            pair, needed = pairs[i]
            take = f'{pair} {rest(i + 1, False)}' if first else f'"," ws {pair} {rest(i + 1, False)}'
            body = take if needed else f"{take} | {rest(i + 1, first)}"
            name = self._new(body)
            memo[(i, first)] = name
            return name

        return self._new(f'"{{" ws {rest(0, True)} "}}"')
