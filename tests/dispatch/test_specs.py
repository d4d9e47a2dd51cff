"""ToolSpec: built from OpenAI, Anthropic and MCP definitions and from Python functions; malformed
definitions raise errors naming the tool and the field."""

from __future__ import annotations

import enum
from typing import Annotated, Literal, Optional

import pytest
from pydantic import BaseModel

import toolwire
from toolwire.errors import InvalidToolDefinition
from toolwire.dispatch.specs import ToolSpec, tool_specs

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def test_from_openai_chat_completions_shape():
    spec = ToolSpec.from_openai({"type": "function", "function": {
        "name": "get_weather", "description": "Weather now.", "parameters": SCHEMA, "strict": True}})
    assert spec == ToolSpec(name="get_weather", description="Weather now.", input_schema=SCHEMA, strict=True)
    assert spec.side_effect == "irreversible" and spec.version is None and spec.timeout_ms is None


def test_from_openai_flat_bare_and_model_shapes_agree():
    nested = ToolSpec.from_openai({"type": "function", "function": {"name": "f", "parameters": SCHEMA}})
    flat = ToolSpec.from_openai({"type": "function", "name": "f", "parameters": SCHEMA})
    bare = ToolSpec.from_openai({"name": "f", "parameters": SCHEMA})
    model = ToolSpec.from_openai(toolwire.Tool.model_validate({"type": "function", "function": {"name": "f",
                                                                                                "parameters": SCHEMA}}))
    assert nested == flat == bare == model


def test_openai_without_parameters_takes_no_arguments():
    spec = ToolSpec.from_openai({"type": "function", "function": {"name": "now"}})
    assert spec.input_schema == {"type": "object", "properties": {}}


def test_overrides_set_version_side_effect_and_timeout():
    spec = ToolSpec.from_openai({"name": "f", "parameters": SCHEMA}, version="2", side_effect="none", timeout_ms=500)
    assert (spec.version, spec.side_effect, spec.timeout_ms) == ("2", "none", 500)


def test_from_anthropic():
    spec = ToolSpec.from_anthropic({"name": "get_weather", "description": "d", "input_schema": SCHEMA,
                                    "cache_control": {"type": "ephemeral"}})
    assert spec == ToolSpec(name="get_weather", description="d", input_schema=SCHEMA)


@pytest.mark.parametrize("annotations, side_effect", [
    (None, "irreversible"),  # MCP: destructiveHint defaults to true
    ({"readOnlyHint": True}, "none"),
    ({"readOnlyHint": True, "destructiveHint": True}, "none"),
    ({"readOnlyHint": False}, "irreversible"),
    ({"destructiveHint": True}, "irreversible"),
    ({"destructiveHint": False}, "reversible"),
    ({"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True}, "reversible"),
])
def test_from_mcp_maps_annotations_to_side_effect(annotations, side_effect):
    definition = {"name": "rm", "description": "Remove.", "inputSchema": SCHEMA,
                  "outputSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}
    if annotations is not None:
        definition["annotations"] = annotations
    spec = ToolSpec.from_mcp(definition)
    assert spec.side_effect == side_effect
    assert spec.output_schema == {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    assert spec.input_schema == SCHEMA and spec.description == "Remove."


def test_round_trips_through_each_vocabulary():
    spec = ToolSpec(name="rm", description="Remove.", input_schema=SCHEMA,
                    output_schema={"type": "object"}, side_effect="reversible")
    assert ToolSpec.from_mcp(spec.to_mcp()) == spec
    assert ToolSpec.from_openai(spec.to_openai(), side_effect="reversible",
                                output_schema={"type": "object"}) == spec
    assert ToolSpec.from_anthropic(spec.to_anthropic(), side_effect="reversible",
                                   output_schema={"type": "object"}) == spec
    for definition in (spec.to_mcp(), spec.to_openai(), spec.to_anthropic()):
        assert ToolSpec.from_definition(definition).name == "rm"
    assert ToolSpec.from_definition(spec) is spec


class Unit(enum.Enum):
    C = "celsius"
    F = "fahrenheit"


class Place(BaseModel):
    city: str
    country: Optional[str] = None


def forecast(place: Place, days: int, unit: Unit = Unit.C, hourly: bool = False, home: Optional[Place] = None,
             tags: Optional[list[str]] = None, mode: Literal["fast", "exact"] = "fast",
             note: Annotated[str, "free text for the forecaster"] = "") -> dict[str, float]:
    """Forecast the weather
    for a place.

    Longer explanation that is not part of the description.

    Args:
        place: Where to look.
        days (int): How many days,
            from 1 to 14.
        hourly: One value per hour.

    Returns:
        Temperatures by day.
    """


def test_from_function_builds_the_schema_from_hints_and_docstring():
    spec = ToolSpec.from_function(forecast, version="1", timeout_ms=2000)
    assert spec.name == "forecast"
    assert spec.description == "Forecast the weather for a place."
    assert spec.version == "1" and spec.timeout_ms == 2000 and spec.side_effect == "irreversible"
    schema = spec.input_schema
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["required"] == ["place", "days"]
    props = schema["properties"]
    assert list(props) == ["place", "days", "unit", "hourly", "home", "tags", "mode", "note"]
    assert props["place"]["type"] == "object" and props["place"]["required"] == ["city"]
    assert props["place"]["description"] == "Where to look."
    assert props["home"] == {"anyOf": [{"$ref": "#/$defs/Place"}, {"type": "null"}], "default": None}
    assert schema["$defs"]["Place"]["required"] == ["city"]  # nested $defs are hoisted to the root
    assert props["days"] == {"type": "integer", "description": "How many days, from 1 to 14."}
    assert props["unit"] == {"enum": ["celsius", "fahrenheit"], "title": "Unit", "type": "string",
                             "default": "celsius"}
    assert props["hourly"] == {"type": "boolean", "description": "One value per hour.", "default": False}
    assert props["tags"] == {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}],
                             "default": None}
    assert props["mode"] == {"enum": ["fast", "exact"], "type": "string", "default": "fast"}
    assert props["note"] == {"type": "string", "description": "free text for the forecaster", "default": ""}
    assert spec.output_schema == {"type": "object", "additionalProperties": {"type": "number"}}


def test_from_function_schema_validates_calls():
    spec = ToolSpec.from_function(forecast)
    ok = toolwire.ToolCallCandidate(index=0, id="c", name="forecast", arguments={
        "place": {"city": "Oslo"}, "days": 3, "unit": "fahrenheit", "home": {"city": "Bergen"}})
    assert ok.validate([spec]).status == "validated"
    bad = ok.model_copy(update={"arguments": {"place": {}, "days": "3", "unit": "kelvin", "home": {"town": "x"}}})
    assert [(e.code, e.pointer) for e in bad.validate([spec]).errors] == [
        ("missing_required", "/home/city"), ("missing_required", "/place/city"), ("type_mismatch", "/days"),
        ("enum_mismatch", "/unit")]


def sphinx_style(query: str, limit: int = 10) -> list:
    """Search the index.

    :param query: What to look for.
    :param int limit: At most this many hits.
    """


def numpy_style(query: str, limit: int = 10) -> None:
    """Search the index.

    Parameters
    ----------
    query : str
        What to look for.
    limit : int
        At most this many
        hits.
    """


@pytest.mark.parametrize("fn", [sphinx_style, numpy_style])
def test_docstring_styles(fn):
    spec = ToolSpec.from_function(fn)
    assert spec.description == "Search the index."
    assert spec.input_schema["properties"]["query"]["description"] == "What to look for."
    assert spec.input_schema["properties"]["limit"]["description"] == "At most this many hits."
    assert spec.input_schema["properties"]["limit"]["default"] == 10


def test_function_without_return_hint_or_returning_none_has_no_output_schema():
    assert ToolSpec.from_function(numpy_style).output_schema is None

    def no_hint(x: int):
        return x

    assert ToolSpec.from_function(no_hint).output_schema is None
    assert ToolSpec.from_function(no_hint, name="renamed", description="d").name == "renamed"


def _needs_hint(x, y: int):
    pass


def _varargs(*args: int):
    pass


def _kwargs(**kw: int):
    pass


def _positional(x: int, /):
    pass


def _unknown_type(x: "NoSuchType"):  # noqa: F821
    pass


class Opaque:
    pass


def _opaque(x: Opaque):
    pass


@pytest.mark.parametrize("fn, field, words", [
    (_needs_hint, "parameters.x", "has no type hint"),
    (_varargs, "parameters.args", "variadic positional"),
    (_kwargs, "parameters.kw", "variadic keyword"),
    (_positional, "parameters.x", "positional-only"),
    (_unknown_type, "parameters", "cannot read the signature or type hints"),
    (_opaque, "parameters.x", "has no JSON Schema"),
])
def test_malformed_functions_name_tool_and_field(fn, field, words):
    with pytest.raises(InvalidToolDefinition) as info:
        ToolSpec.from_function(fn)
    assert info.value.tool == fn.__name__ and info.value.field == field
    assert words in info.value.detail and str(info.value).startswith(f"tool {fn.__name__!r} {field}: ")


def test_not_a_function():
    with pytest.raises(InvalidToolDefinition, match="expected a function"):
        ToolSpec.from_function(42)


@pytest.mark.parametrize("build, definition, tool, field", [
    (ToolSpec.from_openai, {"type": "function", "function": {"parameters": SCHEMA}}, None, "function.name"),
    (ToolSpec.from_openai, {"type": "function", "function": {"name": ""}}, None, "function.name"),
    (ToolSpec.from_openai, {"type": "function", "function": {"name": "f", "description": 3}}, "f",
     "function.description"),
    (ToolSpec.from_openai, {"type": "function", "function": {"name": "f", "parameters": []}}, "f",
     "function.parameters"),
    (ToolSpec.from_openai, {"type": "function", "function": {"name": "f", "parameters": {"type": "array"}}}, "f",
     "function.parameters.type"),
    (ToolSpec.from_openai, {"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"a": {"type": "strin"}}}}}, "f", "function.parameters.properties.a.type"),
    (ToolSpec.from_openai, {"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": []}}}, "f", "function.parameters.properties"),
    (ToolSpec.from_openai, {"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "required": "a"}}}, "f", "function.parameters.required"),
    (ToolSpec.from_openai, {"type": "function", "function": "f"}, None, "function"),
    (ToolSpec.from_openai, {"type": "web_search", "function": {"name": "f"}}, "f", "type"),
    (ToolSpec.from_openai, {"name": "f", "parameters": {"type": "object", "minProperties": -1}}, "f",
     "parameters.minProperties"),
    (ToolSpec.from_anthropic, {"name": "f"}, "f", "input_schema"),
    (ToolSpec.from_anthropic, {"name": 7, "input_schema": SCHEMA}, None, "name"),
    (ToolSpec.from_mcp, {"name": "f"}, "f", "inputSchema"),
    (ToolSpec.from_mcp, {"name": "f", "inputSchema": "x"}, "f", "inputSchema"),
    (ToolSpec.from_mcp, {"name": "f", "inputSchema": SCHEMA, "outputSchema": 3}, "f", "outputSchema"),
    (ToolSpec.from_mcp, {"name": "f", "inputSchema": SCHEMA, "outputSchema": {"type": "nope"}}, "f",
     "outputSchema.type"),
    (ToolSpec.from_mcp, {"name": "f", "inputSchema": SCHEMA, "annotations": []}, "f", "annotations"),
    (ToolSpec.from_mcp, {"name": "f", "inputSchema": SCHEMA, "annotations": {"readOnlyHint": "yes"}}, "f",
     "annotations.readOnlyHint"),
])
def test_malformed_definitions_name_tool_and_field(build, definition, tool, field):
    with pytest.raises(InvalidToolDefinition) as info:
        build(definition)
    assert (info.value.tool, info.value.field) == (tool, field)
    assert info.value.code == "invalid_tool_definition"


@pytest.mark.parametrize("overrides, field", [
    ({"side_effect": "maybe"}, "side_effect"), ({"timeout_ms": 0}, "timeout_ms"), ({"timeout_ms": True}, "timeout_ms"),
    ({"version": 2}, "version"),
])
def test_bad_overrides_name_the_field(overrides, field):
    with pytest.raises(InvalidToolDefinition) as info:
        ToolSpec.from_anthropic({"name": "f", "input_schema": SCHEMA}, **overrides)
    assert (info.value.tool, info.value.field) == ("f", field)


def test_not_a_definition():
    with pytest.raises(InvalidToolDefinition, match="expected a tool definition object, got int"):
        ToolSpec.from_definition(3)


def test_tool_specs_accepts_mixed_vocabularies_and_refuses_duplicates():
    specs = tool_specs([{"type": "function", "function": {"name": "a"}}, {"name": "b", "input_schema": SCHEMA},
                        {"name": "c", "inputSchema": SCHEMA}, sphinx_style])
    assert list(specs) == ["a", "b", "c", "sphinx_style"]
    assert tool_specs(None) == {} and tool_specs(specs) == specs
    with pytest.raises(InvalidToolDefinition) as info:
        tool_specs([{"name": "a"}, {"name": "a", "input_schema": SCHEMA}])
    assert (info.value.tool, info.value.field) == ("a", "tools[1].name")
    with pytest.raises(InvalidToolDefinition) as info:
        tool_specs([{"name": "a"}, {"name": "b", "parameters": {"type": "array"}}])
    assert (info.value.tool, info.value.field) == ("b", "tools[1].parameters.type")


def test_specs_are_immutable():
    spec = ToolSpec(name="f")
    with pytest.raises(Exception):
        spec.name = "g"
