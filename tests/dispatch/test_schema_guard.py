"""Validation never raises or hangs: schemas that cannot finish are refused when the ToolSet is built
(naming the field), patterns are bounded in time, and the remaining hard cases are rejected candidates
with a code. Cases from issue 11 §4 (../shared/fuzz/validation_fuzz.py found them)."""

from __future__ import annotations

import pytest

from toolwire import ParsedOutput, ToolCallCandidate, ToolSet
from toolwire.errors import InvalidToolDefinition


def tool(schema):
    return [{"type": "function", "function": {"name": "f", "parameters": schema}}]


def check(schema, arguments, **options):
    call = ToolCallCandidate(index=0, id="c0", name="f", arguments=arguments, raw_arguments="{}")
    return ParsedOutput(tool_calls=[call]).validate(ToolSet(tool(schema), **options)).tool_calls[0]


def deep_schema(depth):
    schema = {"type": "object"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


LOOPS = {
    "self": ({"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, "$defs": {"n": {"$ref": "#/$defs/n"}}},
             "$defs.n"),
    "mutual": ({"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}},
                "$defs": {"x": {"$ref": "#/$defs/y"}, "y": {"$ref": "#/$defs/x"}}}, "$defs."),
    "root": ({"type": "object", "$ref": "#"}, "parameters"),
    "allOf": ({"type": "object", "$defs": {"n": {"allOf": [{"$ref": "#/$defs/n"}]}},
               "properties": {"a": {"$ref": "#/$defs/n"}}}, "$defs.n"),
    "dependentSchemas": ({"type": "object", "dependentSchemas": {"a": {"$ref": "#"}}}, "parameters"),
    "if": ({"type": "object", "$defs": {"n": {"if": {"$ref": "#/$defs/n"}}}, "properties": {"a": {"$ref": "#/$defs/n"}}},
           "$defs.n"),
}


@pytest.mark.parametrize("case", sorted(LOOPS))
def test_reference_loops_that_never_descend_are_refused_at_build(case):
    schema, where = LOOPS[case]
    with pytest.raises(InvalidToolDefinition) as err:
        ToolSet(tool(schema))
    assert err.value.tool == "f" and where in err.value.field
    assert "loop without descending" in str(err.value)


def test_recursion_that_descends_is_fine_and_deep_values_are_a_rejection_not_a_crash():
    node = {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}}
    schema = {"type": "object", "$defs": {"n": node}, "properties": {"next": {"$ref": "#/$defs/n"}}}
    shallow = {}
    for _ in range(60):
        shallow = {"next": shallow}
    assert check(schema, shallow).status == "validated"
    deep = {}
    for _ in range(5000):
        deep = {"next": deep}
    call = check(schema, deep)
    assert call.status == "rejected" and call.errors[0].code == "too_large"


@pytest.mark.parametrize("ref, words", [("#/$defs/missing", "points to nothing"),
                                        ("http://127.0.0.1:9/x.json", "never fetches")])
def test_refs_that_cannot_be_resolved_locally_are_refused_at_build(ref, words):
    with pytest.raises(InvalidToolDefinition) as err:
        ToolSet(tool({"type": "object", "properties": {"a": {"$ref": ref}}}))
    assert err.value.field.endswith("properties.a.$ref") and words in str(err.value)


def test_a_5000_deep_schema_is_refused_at_build():
    with pytest.raises(InvalidToolDefinition) as err:
        ToolSet(tool(deep_schema(5000)))
    assert "nests deeper than 256" in str(err.value)


@pytest.mark.parametrize("schema, arguments", [
    ({"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a+)+$"}}}, {"a": "a" * 30 + "!"}),
    ({"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a|aa)+$"}}}, {"a": "a" * 40 + "!"}),
    ({"type": "object", "patternProperties": {"^(a|aa)+$": {"type": "string"}}, "additionalProperties": False},
     {"a" * 40 + "!": "x"}),
    ({"type": "object", "propertyNames": {"pattern": "^(a|aa)+$"}}, {"a" * 40 + "!": 1}),
], ids=["pattern", "pattern_alt", "patternProperties", "propertyNames"])
def test_catastrophic_patterns_are_bounded(schema, arguments):
    """Each match stops at PATTERN_SECONDS, so these finish (unbounded, they ran past 20 s each); how long they
    take is measured in bench/bench_schema_guard.py, not asserted here."""
    for formats in (False, True):
        call = check(schema, arguments, formats=formats)
        assert call.status == "rejected"
        assert call.errors[0].code in ("pattern_mismatch", "unexpected_field")


def test_a_pattern_that_times_out_says_so():
    call = check({"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a|aa)+$"}}},
                 {"a": "a" * 40 + "!"})
    assert "in time" in call.errors[0].message


def test_property_name_patterns_name_the_field():
    call = check({"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}}, {"Bad": 1})
    assert call.errors[0].code == "pattern_mismatch" and "field name" in call.errors[0].message


def test_ecma_unicode_classes_are_read():
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^\\p{L}+$"}}}
    assert check(schema, {"a": "Zürich"}).status == "validated"
    assert check(schema, {"a": "42"}).status == "rejected"


def test_format_regex_on_a_deeply_nested_pattern_is_a_rejection():
    schema = {"type": "object", "properties": {"a": {"type": "string", "format": "regex"}}}
    call = check(schema, {"a": "(" * 100_000}, formats=True)
    assert call.status == "rejected" and call.errors[0].code == "pattern_mismatch"


def test_did_you_mean_over_a_large_enum_of_long_strings_is_a_plain_rejection():
    """Its cost (was 32 s for 5,000 entries) is measured in bench/bench_schema_guard.py, not asserted here."""
    options = ["v" * 200 + str(i) for i in range(20_000)]
    call = check({"type": "object", "properties": {"a": {"enum": options}}}, {"a": "v" * 199})
    assert call.status == "rejected" and call.errors[0].code == "enum_mismatch"


def test_a_false_property_schema_names_the_property():
    call = check({"type": "object", "properties": {"a": False}}, {"a": 1})
    assert (call.errors[0].code, call.errors[0].pointer) == ("unexpected_field", "/a")
    assert "'/a'" in call.errors[0].message


def test_draft_04_boolean_exclusive_bounds_are_strict_in_the_message():
    schema = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
              "properties": {"a": {"type": "number", "maximum": 5, "exclusiveMaximum": True},
                             "b": {"type": "number", "minimum": 1, "exclusiveMinimum": True}}}
    call = check(schema, {"a": 5, "b": 1})
    assert sorted(e.message for e in call.errors) == ["'/a' must be < 5; got 5.", "'/b' must be > 1; got 1."]
