"""The shared drift-recovery checks (parsers/engine/drift.py): what "unambiguous given the declared tools" means."""

import pytest

from toolwire.parsers.engine.drift import DRIFT_CODES, DeclaredTools, Drift, drift_class, drift_diagnostic, register

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"]}}},
    {"type": "function", "function": {"name": "get_weather_history", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "year": {"type": "integer"}},
        "required": ["city", "year"]}}},
    {"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}}},
]


def test_no_declared_tools_means_no_recovery_context():
    assert DeclaredTools.of(None) is None
    assert DeclaredTools.of([]) is None


@pytest.mark.parametrize("written, expected", [
    ("get_weather", "get_weather"), ("get_weather \n", "get_weather"), (" ping", "ping"),
    ("get_weathr", None), ("", None), ("GET_WEATHER", None)])
def test_resolve_name(written, expected):
    assert DeclaredTools.of(TOOLS).resolve_name(written) == expected


@pytest.mark.parametrize("text, expected", [
    ("get_weathercity", ("get_weather", "city")),
    ("get_weatherdays\": 3", ("get_weather", "days\": 3")),
    ("get_weather_historyyear", ("get_weather_history", "year")),
    ("get_weatherwind", None),          # not a parameter of get_weather
    ("pingcity", None),                 # ping declares no parameters
    ("get_weather", None),              # nothing glued
])
def test_split_glued(text, expected):
    assert DeclaredTools.of(TOOLS).split_glued(text) == expected


def test_split_glued_refuses_two_readings():
    tools = DeclaredTools.of([
        {"name": "get", "parameters": {"properties": {"weathercity": {}}}},
        {"name": "get_weather", "parameters": {"properties": {"city": {}}}}])
    assert tools.split_glued("getweathercity") == ("get", "weathercity")
    two = DeclaredTools.of([
        {"name": "ab", "parameters": {"properties": {"cd": {}}}},
        {"name": "abc", "parameters": {"properties": {"d": {}}}}])
    assert two.split_glued("abcd") is None


@pytest.mark.parametrize("name, args, fits", [
    ("get_weather", {"city": "Paris"}, True),
    ("get_weather", {"city": "Paris", "days": 3}, True),
    ("get_weather", {"days": 3}, False),                      # required city missing
    ("get_weather", {"city": "Paris", "wind": 1}, False),      # undeclared key
    ("get_weather", {"city": 3}, False),                       # wrong type
    ("get_weather", ["Paris"], False),                         # not an object
    ("unknown", {"city": "Paris"}, False),
    ("ping", {}, True),
])
def test_arguments_fit(name, args, fits):
    assert DeclaredTools.of(TOOLS).arguments_fit(name, args) is fits


def test_a_tool_without_parameters_listed_fits_any_object():
    tools = DeclaredTools.of([{"name": "free"}])
    assert tools.arguments_fit("free", {"anything": [1]})


def test_unique_fit_names_the_tool_only_when_one_schema_fits():
    tools = DeclaredTools.of(TOOLS)
    assert tools.unique_fit({"city": "Paris", "days": 2}) == "get_weather"
    assert tools.unique_fit({"city": "Paris", "year": 1999}) == "get_weather_history"
    assert tools.unique_fit({"city": "Paris"}) == "get_weather"      # history requires year
    assert tools.unique_fit({"q": 1}) is None


def test_codes_belong_to_one_class_and_name_it():
    register(Drift.DAMAGED_NAME, "test_only_glued_name")
    register(Drift.DAMAGED_NAME, "test_only_glued_name")             # idempotent
    with pytest.raises(ValueError, match="test_only_glued_name"):
        register(Drift.MISSING_MARKERS, "test_only_glued_name")
    diag = drift_diagnostic("test_only_glued_name", "name glued to 'city'", raw="get_weathercity")
    assert diag.message.startswith("damaged_name: ") and diag.raw == "get_weathercity"
    assert drift_class(diag) is Drift.DAMAGED_NAME
    del DRIFT_CODES["test_only_glued_name"]
