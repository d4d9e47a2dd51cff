"""Validation: every error code with its pointer, expected, got, message and retryable; tool_choice; no
silent mutation; cached validators; golden DSML outputs validate."""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolwire
from support import golden_params, json_values
from toolwire.errors import InvalidOption, InvalidToolDefinition
from toolwire.output import CallError, Diagnostic, ParsedOutput, ToolCallCandidate
from toolwire.dispatch.specs import ToolSpec
from toolwire.dispatch.validation import MissingExtra, ToolSet, as_tool_set, compiled_validator

WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": {
    "type": "object",
    "properties": {
        "city": {"type": "string", "pattern": "^[A-Z]", "minLength": 2},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2, "uniqueItems": True},
        "when": {"type": "string", "format": "date"},
        "step": {"type": "number", "multipleOf": 0.5, "exclusiveMinimum": 0},
        "opts": {"type": "object", "properties": {"hourly": {"type": "boolean", "default": False}},
                 "required": ["hourly"], "additionalProperties": False},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    },
    "required": ["city"],
    "additionalProperties": False,
}}}
SEARCH = {"type": "function", "function": {"name": "search_papers", "parameters": {
    "type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}
TOOLS = [WEATHER, SEARCH]


def cand(args, name="get_weather", index=0, **fields) -> ToolCallCandidate:
    return ToolCallCandidate(index=index, id=f"call_{index}", name=name, arguments=args,
                             raw_arguments=json.dumps(args, ensure_ascii=False), **fields)


def errors_of(args, name="get_weather", **options):
    out = cand(args, name).validate(TOOLS, **options)
    assert out.status == "rejected"
    return [e.model_dump() for e in out.errors]


def one_error(args, **options):
    errors = errors_of(args, **options)
    assert len(errors) == 1, errors
    return errors[0]


def test_valid_call_is_validated_with_canonical_arguments():
    out = cand({"days": 3, "city": "Paris", "note": None}).validate(TOOLS)
    assert out.status == "validated" and out.errors == []
    assert out.canonical_arguments == {"city": "Paris", "days": 3, "note": None}
    assert list(out.canonical_arguments) == ["city", "days", "note"]


def test_unknown_tool_suggests_the_closest_names():
    assert one_error({"city": "Paris"}, name="get_wether") == {
        "code": "unknown_tool", "pointer": "", "expected": ["get_weather"], "got": "get_wether", "retryable": True,
        "message": "There is no tool 'get_wether'. Did you mean 'get_weather'? The available tools are: "
                   "get_weather, search_papers."}


def test_unknown_tool_without_close_names_lists_the_tools():
    error = one_error({}, name="translate")
    assert error["expected"] == ["get_weather", "search_papers"]
    assert error["message"] == ("There is no tool 'translate'. The available tools are: get_weather, "
                                "search_papers.")


def test_unknown_tool_when_no_tools_are_declared():
    out = cand({}, name="x").validate([])
    assert out.errors[0].message == ("There is no tool 'x': no tools are available in this conversation. "
                                     "Answer without calling a tool.")


def test_missing_required_names_the_field_and_its_type():
    assert one_error({"unit": "celsius"}) == {
        "code": "missing_required", "pointer": "/city", "expected": "string", "got": None, "retryable": True,
        "message": "Add the required field 'city' (string)."}


def test_missing_nested_field():
    error = one_error({"city": "Paris", "opts": {}})
    assert (error["pointer"], error["expected"]) == ("/opts/hourly", "boolean")
    assert error["message"] == "Add the required field 'hourly' (boolean) to '/opts'."


def test_unexpected_field_suggests_the_intended_one():
    assert one_error({"city": "Paris", "dayz": 3}) == {
        "code": "unexpected_field", "pointer": "/dayz", "retryable": True, "got": "dayz",
        "expected": ["city", "days", "note", "opts", "step", "tags", "unit", "when"],
        "message": "Remove the field 'dayz' from the arguments: it is not a parameter. Did you mean 'days'? "
                   "Allowed fields: city, days, note, opts, step, tags, unit, when."}


def test_type_mismatch():
    assert one_error({"city": "Paris", "days": "3"}) == {
        "code": "type_mismatch", "pointer": "/days", "expected": "integer", "got": "string", "retryable": True,
        "message": "'/days' must be an integer, not a string (\"3\")."}


def test_type_mismatch_in_a_union():
    error = one_error({"city": "Paris", "note": 5})
    assert (error["code"], error["expected"], error["got"]) == ("type_mismatch", ["string", "null"], "integer")
    assert error["message"] == "'/note' must be a string or null, not an integer (5)."


def test_type_mismatch_of_an_array_item():
    error = one_error({"city": "Paris", "tags": ["a", 1]})
    assert (error["code"], error["pointer"], error["expected"], error["got"]) == (
        "type_mismatch", "/tags/1", "string", "integer")


def test_enum_mismatch_suggests_the_closest_value():
    assert one_error({"city": "Paris", "unit": "celsus"}) == {
        "code": "enum_mismatch", "pointer": "/unit", "expected": ["celsius", "fahrenheit"], "got": "celsus",
        "retryable": True, "message": "'/unit' must be one of \"celsius\", \"fahrenheit\"; got \"celsus\". "
                                      "Did you mean \"celsius\"?"}


@pytest.mark.parametrize("args, pointer, expected, got, message", [
    ({"days": 0}, "/days", ">= 1", 0, "'/days' must be >= 1; got 0."),
    ({"days": 15}, "/days", "<= 14", 15, "'/days' must be <= 14; got 15."),
    ({"step": 0}, "/step", "> 0", 0, "'/step' must be > 0; got 0."),
    ({"step": 0.3}, "/step", "multiple of 0.5", 0.3, "'/step' must be a multiple of 0.5; got 0.3."),
    ({"tags": ["a", "b", "c"]}, "/tags", "at most 2 items", 3, "'/tags' must have at most 2 items; it has 3."),
    ({"tags": ["a", "a"]}, "/tags", "unique items", ["a", "a"], "'/tags': ['a', 'a'] has non-unique elements."),
])
def test_out_of_range(args, pointer, expected, got, message):
    assert one_error({"city": "Paris", **args}) == {
        "code": "out_of_range", "pointer": pointer, "expected": expected, "got": got, "retryable": True,
        "message": message}


def test_min_length_is_out_of_range_too():
    errors = errors_of({"city": "P"})
    assert [(e["code"], e["expected"], e["got"]) for e in errors] == [("out_of_range", "at least 2 characters", 1)]


def test_pattern_mismatch():
    assert one_error({"city": "paris"}) == {
        "code": "pattern_mismatch", "pointer": "/city", "expected": "^[A-Z]", "got": "paris", "retryable": True,
        "message": "'/city' must match the pattern ^[A-Z]; got \"paris\"."}


def test_formats_are_checked_only_when_asked():
    assert cand({"city": "Paris", "when": "tomorrow"}).validate(TOOLS).status == "validated"
    error = one_error({"city": "Paris", "when": "tomorrow"}, formats=True)
    assert (error["code"], error["expected"], error["got"]) == ("pattern_mismatch", "format date", "tomorrow")
    assert cand({"city": "Paris", "when": "2025-01-31"}).validate(TOOLS, formats=True).status == "validated"


def test_invalid_json_from_the_parser():
    bad = ToolCallCandidate(index=0, id="c", name="get_weather", raw_arguments='{"city": "Par', status="rejected",
                            diagnostics=[Diagnostic(code="invalid_arguments", message="unterminated string",
                                                    severity="error", raw='{"city": "Par')])
    out = bad.validate(TOOLS)
    assert [e.model_dump() for e in out.errors] == [{
        "code": "invalid_json", "pointer": "", "expected": None, "got": None, "retryable": True,
        "message": "The arguments could not be read: unterminated string. Send them again as one well-formed "
                   "JSON object."}]
    assert out.diagnostics == bad.diagnostics  # the parser's account stays


def test_invalid_json_for_values_that_are_not_json():
    out = cand({"city": "Paris", "step": float("nan")}).validate(TOOLS)
    assert [(e.code, e.pointer) for e in out.errors] == [("invalid_json", "/step")]
    assert out.errors[0].message == "The arguments are not valid JSON at /step: nan is not a JSON number."
    collide = cand({"cafe\u0301": 1, "caf\u00e9": 2}, name="search_papers").validate(TOOLS)
    assert [(e.code, e.pointer) for e in collide.errors] == [("invalid_json", "/caf\u00e9")]


def test_rejected_by_the_parser_for_an_unstated_reason():
    bad = cand({"city": "Paris"}, status="rejected",
               diagnostics=[Diagnostic(code="malformed_invoke", message="no name attribute")])
    assert [(e.code, e.message) for e in bad.validate(TOOLS).errors] == [
        ("invalid_json", "The call could not be read; no name attribute. Send it again as one well-formed call.")]


def test_truncated_is_not_retryable():
    out = cand({"city": "Par"}, status="truncated").validate(TOOLS)
    assert [e.model_dump() for e in out.errors] == [{
        "code": "truncated", "pointer": "", "expected": None, "got": None, "retryable": False,
        "message": "The call was cut off before it ended (the output reached its length limit), so it was not run."}]
    assert out.to_error_result()["error"]["retryable"] is False


def test_too_large_from_the_parser_and_from_the_limits():
    from_parser = cand({"city": "Paris"}, status="rejected", diagnostics=[Diagnostic(
        code="too_large", message="the arguments exceed 10 bytes (Limits.max_argument_bytes)", severity="error")])
    assert [(e.code, e.message) for e in from_parser.validate(TOOLS).errors] == [
        ("too_large", "The call is too large: the arguments exceed 10 bytes (Limits.max_argument_bytes). "
                      "Send smaller arguments.")]
    limits = toolwire.Limits(max_argument_bytes=20)
    out = cand({"city": "Paris" * 10}).validate(TOOLS, limits=limits)
    assert [(e.code, e.message) for e in out.errors] == [
        ("too_large", "The arguments take 62 bytes, more than the limit of 20; send a smaller value.")]


def test_call_in_reasoning_stays_rejected_unless_promoted():
    inside = cand({"city": "Paris"}, source="reasoning", status="rejected",
                  diagnostics=[Diagnostic(code="call_in_reasoning", message="written inside reasoning")])
    out = inside.validate(TOOLS)
    assert [(e.code, e.retryable) for e in out.errors] == [("call_in_reasoning", True)]
    promoted = inside.validate(TOOLS, promote_reasoning_calls=True)
    assert promoted.status == "validated" and promoted.source == "reasoning"


def test_tool_choice_none_rejects_every_call():
    out = ParsedOutput(tool_calls=[cand({"city": "Paris"})]).validate(TOOLS, tool_choice="none")
    assert [e.model_dump() for e in out.tool_calls[0].errors] == [{
        "code": "tool_choice_violation", "pointer": "", "expected": "no tool call", "got": "get_weather",
        "retryable": True, "message": "Tool calls are turned off for this reply (tool_choice is 'none'). Answer "
                                      "without calling a tool."}]


@pytest.mark.parametrize("choice", ["required", "any", {"type": "any"}, {"type": "required"}])
def test_tool_choice_required_with_no_call_is_a_diagnostic(choice):
    out = ParsedOutput(content="It is sunny.").validate(TOOLS, tool_choice=choice)
    assert out.diagnostics == [Diagnostic(
        code="tool_choice_violation", severity="error",
        message="tool_choice is 'required' but the output has no tool call; call one of: get_weather, search_papers")]
    assert ParsedOutput(tool_calls=[cand({"city": "Paris"})]).validate(TOOLS, tool_choice=choice).diagnostics == []


@pytest.mark.parametrize("choice", [
    {"type": "function", "function": {"name": "search_papers"}},  # Chat Completions
    {"type": "function", "name": "search_papers"},  # Responses
    {"type": "tool", "name": "search_papers"},  # Anthropic
])
def test_tool_choice_named_rejects_other_tools(choice):
    out = ParsedOutput(tool_calls=[cand({"city": "Paris"}), cand({"query": "x"}, "search_papers", 1)]).validate(
        TOOLS, tool_choice=choice)
    assert [c.status for c in out.tool_calls] == ["rejected", "validated"]
    assert out.tool_calls[0].errors[0].model_dump() == {
        "code": "tool_choice_violation", "pointer": "", "expected": "search_papers", "got": "get_weather",
        "retryable": True, "message": "This reply must call 'search_papers' (tool_choice names it); call "
                                      "'search_papers' instead of 'get_weather'."}
    assert out.diagnostics == []
    missing = ParsedOutput(tool_calls=[cand({"city": "Paris"})]).validate(TOOLS, tool_choice=choice)
    assert [d.code for d in missing.diagnostics] == ["tool_choice_violation"]


@pytest.mark.parametrize("choice, words", [
    ({"type": "function", "function": {"name": "nope"}}, "not among the declared tools"),
    ("sometimes", "tool_choice must be"), (3, "tool_choice must be"),
])
def test_bad_tool_choice_is_an_invalid_option(choice, words):
    with pytest.raises(InvalidOption, match=words) as info:
        ParsedOutput().validate(TOOLS, tool_choice=choice)
    assert info.value.field == "tool_choice"


def test_errors_come_most_fundamental_first():
    out = cand({"dayz": 1}, name="get_weather").validate(TOOLS, tool_choice={"type": "tool", "name": "search_papers"})
    assert [e.code for e in out.errors] == ["tool_choice_violation"]  # schema noise is not reported then
    many = cand({"city": 3, "days": 0, "extra": 1}).validate(TOOLS)
    assert [(e.code, e.pointer) for e in many.errors] == [
        ("unexpected_field", "/extra"), ("type_mismatch", "/city"), ("out_of_range", "/days")]


def test_validation_never_mutates_and_adds_defaults_only_when_asked():
    args = {"city": "Caf\u0065\u0301", "opts": {"hourly": True}}
    original = cand(args, diagnostics=[Diagnostic(code="integer_from_float", message="5.0 read as 5")])
    plain = original.validate(TOOLS)
    assert plain.canonical_arguments == {"city": "Caf\u00e9", "opts": {"hourly": True}}
    assert plain.arguments == args == {"city": "Caf\u0065\u0301", "opts": {"hourly": True}}
    assert original.status == "proposed" and original.errors == [] and original.canonical_arguments is None
    assert [d.code for d in plain.diagnostics] == ["integer_from_float"]  # coercions stay visible
    filled = original.validate(TOOLS, fill_defaults=True)
    assert filled.canonical_arguments == {"city": "Caf\u00e9", "opts": {"hourly": True}, "unit": "celsius"}
    assert filled.arguments == args
    assert filled.diagnostics[-1] == Diagnostic(code="default_applied", severity="info", call_index=0,
                                                message="schema defaults added to canonical_arguments at /unit")


def test_validating_twice_gives_the_same_result():
    for args in ({"city": "Paris"}, {"city": 1}, {"zzz": 1}):
        once = cand(args).validate(TOOLS)
        assert once.validate(TOOLS) == once
    truncated = cand({}, status="truncated").validate(TOOLS)
    assert truncated.validate(TOOLS) == truncated


def test_an_output_is_validated_call_by_call_and_not_changed():
    out = ParsedOutput(content="c", reasoning="r", tool_calls=[cand({"city": "Paris"}), cand({}, index=1)])
    checked = out.validate(TOOLS)
    assert [c.status for c in checked.tool_calls] == ["validated", "rejected"]
    assert (checked.content, checked.reasoning) == ("c", "r")
    assert [c.status for c in out.tool_calls] == ["proposed", "proposed"]


def test_validators_are_compiled_once_and_cached():
    spec = ToolSpec.from_openai(WEATHER)
    assert compiled_validator(spec) is compiled_validator(spec)
    assert compiled_validator(spec) is compiled_validator(ToolSpec.from_openai(WEATHER))  # same schema
    assert compiled_validator(spec, formats=True) is not compiled_validator(spec)
    assert as_tool_set(TOOLS) is as_tool_set([dict(WEATHER), dict(SEARCH)])  # same content, same ToolSet
    tools = ToolSet(TOOLS)
    assert as_tool_set(tools) is tools and "get_weather" in tools and len(tools) == 2
    assert tools.validate(cand({"city": "Paris"})).status == "validated"
    assert tools.validate(ParsedOutput(tool_calls=[cand({})])).tool_calls[0].status == "rejected"


def test_every_vocabulary_and_functions_can_be_the_tools():
    def get_weather(city: str, days: int = 1) -> str:
        """Weather."""

    for tools in ([get_weather], [ToolSpec.from_function(get_weather)], ToolSpec.from_function(get_weather),
                  [{"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {}}}}],
                  [{"name": "get_weather", "inputSchema": {"type": "object"}}]):
        assert cand({"city": "Paris"}).validate(tools).status == "validated"
    assert [e.code for e in cand({"city": 1}).validate([get_weather]).errors] == ["type_mismatch"]


def test_a_bad_schema_is_reported_as_a_tool_definition_error():
    with pytest.raises(InvalidToolDefinition) as info:
        cand({}).validate([{"name": "get_weather", "parameters": {"type": "object", "properties": {"a": 3}}}])
    assert (info.value.tool, info.value.field) == ("get_weather", "tools[0].parameters.properties.a")


def test_missing_jsonschema_names_the_extra(monkeypatch):
    from toolwire.dispatch import validation

    monkeypatch.setitem(sys.modules, "jsonschema", None)
    validation._compile.cache_clear()
    spec = ToolSpec(name="get_weather", input_schema={"type": "object"})
    try:
        with pytest.raises(MissingExtra, match=r"pip install toolwire\[schema\]"):
            cand({}).validate([spec])
    finally:
        validation._compile.cache_clear()


def test_got_is_abbreviated_for_large_values():
    out = cand({"city": "x" * 5000}).validate(TOOLS)
    error = out.errors[0]
    assert error.code == "pattern_mismatch"
    assert error.got == "x" * 200 + "... (5,000 characters)"
    assert len(error.message) < 300


JSON_VALUES = json_values(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    st.text(max_size=6))


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(["city", "unit", "days", "tags", "step", "opts", "note", "x"]), JSON_VALUES,
                       max_size=6))
def test_any_arguments_give_validated_exactly_when_the_schema_accepts_them(args):
    import jsonschema

    out = cand(args).validate(TOOLS)
    canonical = toolwire.canonical_value(args)
    valid = jsonschema.Draft202012Validator(WEATHER["function"]["parameters"]).is_valid(canonical)
    assert out.status == ("validated" if valid else "rejected")
    assert bool(out.errors) != valid
    assert all(isinstance(e, CallError) and e.message for e in out.errors)
    assert out.arguments == args


# ---- golden DSML outputs (when the family is built)

def _dsml():
    try:
        return toolwire.get_format("deepseek_v4")
    except toolwire.UnknownFormat:
        pytest.skip("deepseek_v4 is not available in this build")


@pytest.mark.parametrize("row", golden_params("parse", "deepseek_v4"))
def test_golden_dsml_calls_validate_against_their_tools(row):
    import jsonschema

    fmt = _dsml()
    out = fmt.parse(row["model_output"], row["tools"], **row["options"]).validate(row["tools"])
    expected = row["expected"]["tool_calls"]
    assert [(c.name, c.arguments) for c in out.tool_calls if c.source == "content"] == [
        (c["name"], c["arguments"]) for c in expected]
    schemas = {t["function"]["name"]: t["function"].get("parameters") or {} for t in row["tools"] or []}
    for call in out.tool_calls:
        valid = jsonschema.Draft202012Validator(schemas[call.name]).is_valid(toolwire.canonical_value(call.arguments))
        assert call.status == ("validated" if valid else "rejected"), call.errors
        if valid:
            assert call.canonical_arguments == toolwire.canonical_value(call.arguments)
