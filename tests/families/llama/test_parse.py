"""Llama 3.1 parser: golden vectors (one-shot and streamed), round trip (JSON and built-in calls), shapes."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import toolwire
from toolwire.parsers.llama import MARKERS
from support import check_golden_parse_oneshot, check_golden_parse_streamed, golden_params
from support.family_checks import (
    arguments, assert_linear, check_chunking, check_soup, declared, generation, roundtrip, soup, tool_names,
)

LLAMA = toolwire.get_format("llama31")
ROWS = golden_params("parse", "llama31")
TOOLS = declared("get_weather", "search")


@pytest.mark.parametrize("row", ROWS)
def test_golden_parse_oneshot(row):
    check_golden_parse_oneshot(row)


@pytest.mark.parametrize("row", ROWS)
def test_golden_parse_streamed(row):
    check_golden_parse_streamed(row)


HISTORY = [{"role": "user", "content": "go"}]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=tool_names, args=arguments)
def test_round_trip_json_call(name, args):
    tools = declared(name)
    turn = {"role": "assistant", "content": "dropped by the template",
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": name, "arguments": args}}]}
    output = generation(LLAMA, HISTORY, turn, tools, "<|eot_id|>")
    roundtrip(LLAMA, output, tools, calls=[(name, args)])


@settings(max_examples=60, deadline=None)
@given(content=st.text(max_size=40).filter(lambda s: "<|" not in s and not s.strip().startswith("{")))
def test_round_trip_answer(content):
    turn = {"role": "assistant", "content": content}
    output = generation(LLAMA, HISTORY, turn, TOOLS, "<|eot_id|>")
    roundtrip(LLAMA, output, TOOLS, content=content.strip(), calls=[])


builtin_values = st.text(max_size=20).filter(lambda s: '"' not in s)


@settings(max_examples=60, deadline=None)
@given(args=st.dictionaries(st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True), builtin_values, max_size=3))
def test_round_trip_builtin_call(args):
    turn = {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {
        "name": "brave_search", "arguments": args}}]}
    output = generation(LLAMA, HISTORY, turn, None, "<|eom_id|>", builtin_tools=["brave_search"])
    assert output.startswith("<|python_tag|>brave_search.call(")
    roundtrip(LLAMA, output, None, calls=[("brave_search", args)], builtin_tools=["brave_search"])


def test_other_shapes_of_a_call_object():
    out = check_chunking(LLAMA, '{"parameters": {"city": "Oslo"}, "name": "get_weather"}', TOOLS)
    assert [(c.name, c.arguments, c.status) for c in out.tool_calls] == [("get_weather", {"city": "Oslo"}, "proposed")]
    out = check_chunking(LLAMA, ' {"name": "search", "arguments": {"q": 1}} ; {"name": "get_weather", '
                                '"parameters": {}}', TOOLS)
    assert [(c.name, c.arguments, c.status) for c in out.tool_calls] == [
        ("search", {"q": 1}, "proposed"), ("get_weather", {}, "proposed")]
    assert [d.code for d in out.tool_calls[0].diagnostics] == ["arguments_key"]
    assert out.content == ""


def test_json_that_is_not_a_call_is_content():
    for text in ('{"answer": 42}', '  {"name": 3, "parameters": {}}  tail', '{"name": "search"} and more', "{oops"):
        out = check_chunking(LLAMA, text, TOOLS)
        assert (out.content, out.tool_calls, out.diagnostics) == (text, [], [])


def test_unknown_tool_is_rejected_not_dropped():
    out = check_chunking(LLAMA, '{"name": "wipe_disk", "parameters": {"disk": "sda"}}', TOOLS)
    [call] = out.tool_calls
    assert (call.name, call.status, call.arguments, [d.code for d in call.diagnostics]) == (
        "wipe_disk", "rejected", {"disk": "sda"}, ["unknown_tool"])


def test_python_tag_code_is_code_interpreter():
    out = check_chunking(LLAMA, "<|python_tag|>print(2 + 2)", TOOLS, builtin_tools=["code_interpreter"])
    [call] = out.tool_calls
    assert (call.name, call.arguments, call.status) == ("code_interpreter", {"code": "print(2 + 2)"}, "proposed")
    assert [d.code for d in call.diagnostics] == ["python_code"]


def test_streaming_is_linear_in_the_argument_size():
    assert_linear(LLAMA, '{"name": "search", "parameters": {"q": "', '"}}', TOOLS, unit='ab{ "')


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=soup(list(MARKERS.values()) + ['{"name": "search", "parameters": ', '"name"', '"parameters"']))
def test_marker_soup(text):
    check_soup(LLAMA, text, tuple(MARKERS.values()) + ("name", "parameters", "arguments"))
