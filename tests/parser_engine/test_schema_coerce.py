"""Schema typing of text argument values (toolwire.parsers.engine.schema_coerce): the documented resolution order."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings, strategies as st

from toolwire.parsers.engine.schema_coerce import MAX_LITERAL_CHARS, coerce, is_string_schema, parameter_schema
from support import json_scalars, json_values

TOOL = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
        "nothing": {"type": "null"},
        "ids": {"type": "array", "items": {"type": "string"}},
        "opts": {"type": "object"},
        "maybe": {"type": ["string", "null"]},
        "nullable_int": {"type": "integer", "nullable": True},
        "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "one": {"oneOf": [{"type": "boolean"}, {"type": "array"}]},
        "unit": {"enum": ["celsius", "fahrenheit"]},
        "level": {"enum": [1, 2, 3]},
        "mixed_enum": {"type": ["integer", "string"], "enum": ["1", 2]},
        "ref": {"$ref": "#/$defs/Point"},
        "ref_chain": {"$ref": "#/$defs/Alias"},
        "cyclic": {"$ref": "#/$defs/Loop"},
        "remote": {"$ref": "https://example.com/schema.json"},
        "described": {"description": "no type at all"},
        "inferred_obj": {"properties": {"a": {"type": "string"}}},
        "inferred_arr": {"items": {"type": "integer"}},
        "int_only": {"type": "integer"},
    },
    "$defs": {
        "Point": {"type": "object", "properties": {"x": {"type": "number"}}},
        "Alias": {"$ref": "#/$defs/Point"},
        "Loop": {"$ref": "#/$defs/Loop"},
    },
}


def typed(key: str, raw: str):
    return coerce(raw, parameter_schema(TOOL, key), TOOL)


@pytest.mark.parametrize("raw", ["007", "1e5", "true", "null", "None", "[1]", "{}", "  padded  ", ""])
def test_string_schema_keeps_the_raw_text(raw):
    assert typed("name", raw) == (raw, [])


@pytest.mark.parametrize("key,raw,value", [
    ("count", "42", 42),
    ("count", " 42\n", 42),
    ("count", "-7", -7),
    ("count", "12345678901234567890123", 12345678901234567890123),
    ("ratio", "118.5", 118.5),
    ("ratio", "1.5e-07", 1.5e-07),
    ("ratio", "1e5", 100000.0),
    ("ratio", "3", 3),
    ("flag", "true", True),
    ("flag", "False", False),
    ("nothing", "null", None),
    ("nothing", "None", None),
    ("ids", '["INV-102"]', ["INV-102"]),
    ("ids", "['INV-102']", ["INV-102"]),
    ("ids", "[]", []),
    ("opts", '{"venues": ["ACL"], "open_access": true}', {"venues": ["ACL"], "open_access": True}),
    ("opts", "{'venues': ['ACL'], 'open_access': True, 'x': None}", {"venues": ["ACL"], "open_access": True, "x": None}),
    ("maybe", "None", None),
    ("maybe", "null", None),
    ("maybe", "text", "text"),
    ("maybe", "007", "007"),
    ("nullable_int", "None", None),
    ("nullable_int", "5", 5),
    ("either", "5", 5),
    ("either", "five", "five"),
    ("either", "007", "007"),
    ("one", "True", True),
    ("one", "[1, 2]", [1, 2]),
    ("unit", "celsius", "celsius"),
    ("level", "2", 2),
    ("mixed_enum", "1", "1"),
    ("mixed_enum", "2", 2),
    ("ref", '{"x": 1.5}', {"x": 1.5}),
    ("ref_chain", "{'x': 2}", {"x": 2}),
    ("inferred_obj", '{"a": "b"}', {"a": "b"}),
    ("inferred_arr", "[1, 2]", [1, 2]),
])
def test_typed_values_are_decoded(key, raw, value):
    got, diags = typed(key, raw)
    assert diags == []
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("key,raw", [
    ("count", "007"), ("count", "1.5"), ("count", "abc"), ("count", "0x10"), ("count", "true"),
    ("ratio", "NaN"), ("ratio", "Infinity"), ("ratio", "1e999"), ("ratio", "1_000"),
    ("flag", "yes"), ("flag", "TRUE"), ("nothing", "nil"),
    ("ids", "[1, 2"), ("ids", "(1, 2)"), ("ids", "{1, 2}"), ("ids", "__import__('os')"),
    ("opts", "{1: 'a'}"), ("opts", "[]"), ("opts", "{'a': b'x'}"),
])
def test_failures_keep_the_raw_string_with_a_diagnostic(key, raw):
    got, diags = typed(key, raw)
    assert got == raw
    assert [code for code, _ in diags] == ["value_type_mismatch"]


def test_integral_float_for_an_integer_is_converted_with_a_diagnostic():
    assert typed("int_only", "5.0") == (5, [("integer_from_float", "integer written as '5.0'; read as 5")])


@pytest.mark.parametrize("key", ["described", "remote", "cyclic", "absent"])
def test_untyped_or_unresolvable_values_stay_strings(key):
    got, diags = typed(key, "42")
    assert got == "42"
    assert [c for c, _ in diags] == (["unresolved_ref"] if key in ("remote", "cyclic") else [])


def test_without_a_schema_values_stay_strings():
    assert coerce("42", None) == ("42", [])
    assert parameter_schema(None, "x") is None
    assert is_string_schema(None) and is_string_schema({}) and is_string_schema({"type": "string"})
    assert not is_string_schema({"type": ["string", "null"]})
    assert not is_string_schema(parameter_schema(TOOL, "ref"), TOOL)


def test_parameter_schema_resolves_refs_allof_and_additional_properties():
    assert parameter_schema(TOOL, "ref") == {"type": "object", "properties": {"x": {"type": "number"}}}
    merged = {"allOf": [{"properties": {"a": {"type": "integer"}}}], "additionalProperties": {"type": "boolean"}}
    assert parameter_schema(merged, "a") == {"type": "integer"}
    assert parameter_schema(merged, "zzz") == {"type": "boolean"}


def test_deep_or_huge_literals_fail_safely():
    deep = "[" * 5000 + "]" * 5000
    assert typed("ids", deep) == (deep, typed("ids", deep)[1])
    assert [c for c, _ in typed("ids", deep)[1]] == ["too_large"]  # past Limits.max_depth: not decoded
    huge = "[" + ", ".join(["'a'"] * (MAX_LITERAL_CHARS // 5 + 10)) + "]"
    value, diags = typed("ids", huge)
    assert value == huge and [c for c, _ in diags] == ["value_type_mismatch"]
    big_json = json.dumps(["a"] * (MAX_LITERAL_CHARS // 5 + 10))
    assert typed("ids", big_json)[0] == ["a"] * (MAX_LITERAL_CHARS // 5 + 10)


JSON_VALUES = json_values(json_scalars(st.text(max_size=20), int_bound=10**30), st.text(max_size=8))


@settings(max_examples=150, deadline=None)
@given(st.lists(JSON_VALUES, max_size=5))
def test_arrays_round_trip_from_json_and_python_spellings(value):
    schema = {"type": "array"}
    for text in (json.dumps(value, ensure_ascii=False), str(value)):
        assert coerce(text, schema) == (value, [])


@settings(max_examples=150, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False) | st.integers(min_value=-10**40, max_value=10**40))
def test_numbers_round_trip_from_their_str_spelling(value):
    got, diags = coerce(str(value), {"type": "number"})
    assert diags == [] and got == value and type(got) is type(value)
    assert not math.isnan(got)


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_coerce_never_raises_and_never_loses_text(raw):
    for schema in ({"type": "integer"}, {"type": "object"}, {"type": ["array", "null"]}, {"anyOf": [{"type": "boolean"}]}):
        value, diags = coerce(raw, schema)
        if isinstance(value, str):
            assert value == raw
            assert [c for c, _ in diags] == ["value_type_mismatch"]
