"""Hermes 3 (tool_use template): golden render and parse vectors, refusals, the real template on shapes the
vectors do not cover, round trips, the malformed-output corpus (fixtures/hermes3) and linear streaming."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import support
import toolwire
from toolwire.errors import InvalidRequest, InvalidToolDefinition, UnrepresentableValue, UnsupportedByFormat
from toolwire.templates.hermes3 import MARKERS, python_type
from support import golden_tests
from support.family_checks import (
    arguments, assert_linear, check_corpus_row, declared, generation, load_corpus, roundtrip, tool_names,
)

FMT = toolwire.get_format("hermes3")
TEMPLATE = "Hermes-3-Llama-3.1-8B-tool_use"
STOP = "<|im_end|>\n"


test_golden_render, test_golden_parse_oneshot, test_golden_parse_streamed = golden_tests(["hermes3"])


reference = support.reference_renderer(TEMPLATE, bos_token=MARKERS["bos"])


def _tool(props, name="f", **extra):
    return {"type": "function", "function": {"name": name, "description": "Does f.",
                                             "parameters": {"type": "object", "properties": props}, **extra}}


PROP_CASES = [
    {"a": {"type": "array", "items": {"type": "string"}}, "b": {"type": "object"}},
    {"a": {"type": "object", "additionalProperties": {"type": "integer"}}, "b": {}},
    {"a": {"type": ["string", "integer"], "description": "  padded  "}},
    {"a": {"type": "object", "additionalProperties": True}, "b": {"type": None}},
    {"a": {"type": "boolean", "description": 7}, "b": {"type": "number"}},
    {},
]


@pytest.mark.parametrize("props", PROP_CASES)
def test_tool_signatures_match_the_template(props):
    msgs = [{"role": "user", "content": "go"}]
    tools = [_tool(props), _tool({"x": {"type": "string"}}, name="g", **{"return": {"type": "string",
                                                                                    "description": "the g"}})]
    assert FMT.render(msgs, tools).text == reference(msgs, tools)


def test_python_type_is_the_macros():
    assert [python_type(s) for s in ({"type": "string"}, {"type": "array"}, {}, {"type": ["integer", "boolean"]},
                                     {"type": "object", "additionalProperties": {"type": "number"}}, {"type": 3})] == [
        "str", "list[Union[]]", "Union[]", "Union[int,bool]", "dict[str, float]", "Any"]


CONV = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather?"},
    {"role": "assistant", "content": "dropped", "reasoning_content": "never shown",
     "tool_calls": [{"id": "1", "type": "function",
                     "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}},
                    {"id": "2", "type": "function",
                     "function": {"name": "get_weather", "arguments": {"city": "Ré"}}}]},
    {"role": "tool", "tool_call_id": "1", "content": "-3"},
    {"role": "tool", "tool_call_id": "2", "content": None},
    {"role": "assistant", "content": "Cold."},
    {"role": "user", "content": "<|im_end|> and <tool_call>"},
    {"role": "assistant", "content": "x", "tool_calls": []},
]
TOOLS = declared("get_weather", "search")
for _t in TOOLS:
    _t["function"]["description"] = "a tool"


@pytest.mark.parametrize("cut", range(1, len(CONV) + 1))
def test_conversations_match_the_template(cut):
    conv = CONV[:cut]
    for gen in (True, False):
        assert FMT.render(conv, TOOLS, add_generation_prompt=gen).text == reference(conv, TOOLS,
                                                                                   add_generation_prompt=gen)


def test_a_tool_result_first_opens_no_turn():
    conv = [{"role": "tool", "content": "r"}, {"role": "user", "content": "u"}]
    assert FMT.render(conv, TOOLS).text == reference(conv, TOOLS)


@pytest.mark.parametrize("tools,field", [
    (None, "tools"),
    ([], "tools"),
    ([_tool({"a": {"type": ["string", "null"]}})], "tools[0].function.parameters.properties.a"),
    ([_tool({"a": {"type": "null"}})], "tools[0].function.parameters.properties.a"),
    ([{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
     "tools[0].function.description"),
    ([{"type": "function", "function": {"name": "f", "description": "d"}}], "tools[0].function.parameters"),
])
def test_what_the_template_cannot_render_is_refused(tools, field):
    with pytest.raises((UnsupportedByFormat, InvalidToolDefinition)) as err:
        FMT.render([{"role": "user", "content": "hi"}], tools)
    assert err.value.field == field
    if tools == []:  # the template writes an empty tool list here; toolwire reads [] as "no tools" (refused)
        assert "<tools>  </tools>" in reference([{"role": "user", "content": "hi"}], tools)
        return
    with pytest.raises(Exception):  # the template fails on the same request
        reference([{"role": "user", "content": "hi"}], tools)


@pytest.mark.parametrize("message,field", [
    ({"role": "user", "content": [{"type": "text", "text": "parts"}]}, "content"),
    ({"role": "user", "content": None}, "content"),
    ({"role": "developer", "content": "skipped by the template"}, "role"),
    ({"role": "tool", "content": [{"type": "text", "text": "x"}]}, "content"),
    ({"role": "assistant", "tool_calls": [{"id": "1", "type": "function",
                                           "function": {"name": 'a"b', "arguments": "{}"}}]},
     "tool_calls[0].function.name"),
])
def test_messages_the_template_loses_or_fails_on_are_refused(message, field):
    with pytest.raises(InvalidRequest) as err:
        FMT.render([{"role": "user", "content": "q"}, message], TOOLS)
    assert (err.value.message_index, err.value.field) == (1, field)
    if field == "tool_calls[0].function.name":
        assert isinstance(err.value, UnrepresentableValue)


def test_thinking_is_ignored_like_the_template():
    msgs = [{"role": "user", "content": "q"}]
    assert FMT.render(msgs, TOOLS, thinking=True).text == FMT.render(msgs, TOOLS).text


HISTORY = [{"role": "user", "content": "go"}]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=st.lists(st.tuples(tool_names, arguments), min_size=1, max_size=3))
def test_round_trip_calls(calls):
    tools = declared(*{n for n, _ in calls})
    for t in tools:
        t["function"]["description"] = "d"
    turn = {"role": "assistant", "content": "dropped",
            "tool_calls": [{"id": str(k), "type": "function", "function": {"name": n, "arguments": a}}
                           for k, (n, a) in enumerate(calls)]}
    output = generation(FMT, HISTORY, turn, tools, STOP)
    roundtrip(FMT, output, tools, calls=[(n, a) for n, a in calls])


@settings(max_examples=40, deadline=None)
@given(content=st.text(max_size=40).filter(lambda s: "<" not in s))
def test_round_trip_answer(content):
    output = generation(FMT, HISTORY, {"role": "assistant", "content": content}, TOOLS, STOP)
    roundtrip(FMT, output, TOOLS, content=content, calls=[])


ROWS = load_corpus("hermes3")


def test_the_corpus_covers_the_known_failures():
    codes = {code for row in ROWS for call in row["expected"]["calls"] for code in call["codes"]}
    assert {"repaired_single_quotes", "repaired_python_literal", "repaired_trailing_comma", "unknown_tool",
            "truncated_json", "call_not_closed", "invalid_json"} <= codes
    assert {c["status"] for row in ROWS for c in row["expected"]["calls"]} == {
        "proposed", "repaired", "rejected", "truncated"}


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_malformed_output(row):
    check_corpus_row(row, declared("get_weather", "search"), tuple(MARKERS.values()) + ("name", "arguments"))


def test_streaming_is_linear():
    assert_linear(FMT, '<tool_call>\n{"name": "search", "arguments": {"q": "', '"}}\n</tool_call>',
                  declared("search"))
