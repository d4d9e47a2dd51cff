"""Kimi K3: golden render and parse vectors, the real template on shapes the vectors do not cover (names,
tool-result ordering, effort, tool_choice, images), refusals, round trips (typed XTML arguments), the
malformed-output corpus (fixtures/kimi_k3) and linear streaming."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import support
import toolwire
from toolwire.errors import InvalidOption, UnrepresentableValue, UnsupportedByFormat
from toolwire.parsers.kimi_k3 import MARKERS, STRUCTURE
from support import golden_tests
from support.family_checks import (
    arguments, assert_linear, check_corpus_row, declared, generation, load_corpus, roundtrip, tool_names,
)

FMT = toolwire.get_format("kimi_k3")
O, C, S = MARKERS["open"], MARKERS["close"], MARKERS["sep"]
STOP = C + "message" + S + MARKERS["end"]


test_golden_render, test_golden_parse_oneshot, test_golden_parse_streamed = golden_tests(["kimi_k3"])


reference = support.reference_renderer("extra/Kimi-K3")


TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "W", "parameters": {
    "type": "object", "properties": {"City": {"type": "string"}, "a": {"type": "integer"}}}}},
         {"type": "function", "function": {"name": "ping"}}]
CALLS = {"role": "assistant", "content": [{"type": "text", "text": "Checking "}, {"type": "image"}],
         "reasoning_content": "Think.", "name": "bot",
         "tool_calls": [{"id": "a", "type": "function", "function": {"name": "get_weather", "arguments":
                         '{"City": "O\\"slo & co", "a": 1, "n": null, "o": {"x": [1, 2.5]}, "t": true}'}},
                        {"id": "b", "type": "function", "function": {"name": "ping", "arguments": "{}"}}]}
CONV = [
    {"role": "system", "content": "Sys.", "name": "ops"},
    {"role": "user", "content": [{"type": "text", "text": "Hi "}, {"type": "image_url"}], "name": "ann"},
    CALLS,
    {"role": "tool", "tool_call_id": "b", "content": "pong"},
    {"role": "tool", "tool_call_id": "a", "content": [{"type": "text", "text": "-3"}]},
    {"role": "assistant", "content": "Cold.", "reasoning_content": "  "},
    {"role": "user", "content": "bye"},
]


@pytest.mark.parametrize("cut", [2, 3, 5, 6, 7])
@pytest.mark.parametrize("thinking", [False, True])
def test_matches_the_template(cut, thinking):
    conv = CONV[:cut]
    for tools in (TOOLS, None):
        for gen in (True, False):
            got = FMT.render(conv, tools, thinking=thinking, add_generation_prompt=gen).text
            assert got == reference(conv, tools, thinking=thinking, add_generation_prompt=gen)


def test_unmatched_results_keep_their_order_and_are_named_by_position():
    conv = CONV[:3] + [{"role": "tool", "tool_call_id": "zz", "content": "x"}, {"role": "tool", "content": "y"}]
    assert FMT.render(conv, TOOLS, thinking=False).text == reference(conv, TOOLS, thinking=False)


@pytest.mark.parametrize("effort", ["low", "high", "max"])
def test_effort_and_its_template_name(effort):
    conv = CONV[1:2]
    got = FMT.render(conv, TOOLS, thinking=True, reasoning_effort=effort).text
    assert got == reference(conv, TOOLS, thinking=True, thinking_effort=effort)
    assert got == FMT.render(conv, TOOLS, thinking=True, thinking_effort=effort).text
    with pytest.raises(InvalidOption) as err:
        FMT.render(conv, TOOLS, thinking=True, reasoning_effort="medium")
    assert err.value.field == "reasoning_effort"


@pytest.mark.parametrize("choice", ["required", "none", "auto"])
def test_tool_choice(choice):
    conv = CONV[1:2]
    assert FMT.render(conv, TOOLS, tool_choice=choice, thinking=False).text == reference(conv, TOOLS, thinking=False,
                                                                         tool_choice=choice)


@pytest.mark.parametrize("messages,index,field,error", [
    ([{"role": "developer", "content": "d"}], 0, "role", UnsupportedByFormat),
    ([{"role": "user", "content": "q"}, {"role": "tool", "content": "r"}], 1, "tool_call_id", UnsupportedByFormat),
    ([{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [
        {"id": "1", "type": "function", "function": {"name": "f", "arguments": {"q": f"a{C}argument{S}"}}}]}], 1,
     "tool_calls[0].function.arguments", UnrepresentableValue),
])
def test_refusals_name_the_field(messages, index, field, error):
    with pytest.raises(error) as err:
        FMT.render(messages, TOOLS)
    assert (err.value.message_index, err.value.field) == (index, field)


HISTORY = [{"role": "user", "content": "go"}]
_plain = st.text(max_size=30).filter(lambda s: not any(m in s for m in STRUCTURE))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(content=_plain, calls=st.lists(st.tuples(tool_names, arguments), min_size=1, max_size=3),
       thinking=st.booleans())
def test_round_trip_calls(content, calls, thinking):
    tools = declared(*{n for n, _ in calls})
    turn = {"role": "assistant", "content": content, "reasoning_content": "r",
            "tool_calls": [{"id": str(k), "type": "function", "function": {"name": n, "arguments": a}}
                           for k, (n, a) in enumerate(calls)]}
    try:
        output = generation(FMT, HISTORY, turn, tools, STOP, thinking=thinking)
    except UnrepresentableValue:
        assume(False)
    roundtrip(FMT, output, tools, content=content, reasoning="r" if thinking else "",
              calls=[(n, a) for n, a in calls], thinking=thinking)


ROWS = load_corpus("kimi_k3")


def test_the_corpus_covers_the_known_failures():
    codes = {code for row in ROWS for call in row["expected"]["calls"] for code in call["codes"]}
    assert {"value_type_mismatch", "unclosed_call", "truncated", "unknown_tool", "call_in_reasoning"} <= codes
    assert {"stop_token_in_output", "truncated_call_header", "missing_response_open", "malformed_tag",
            "duplicate_reasoning_open"} <= {code for row in ROWS for code in row["expected"]["codes"]}


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_malformed_output(row):
    check_corpus_row(row, declared("get_weather", "search"),
                     tuple(MARKERS.values()) + ("think", "response", "tools", "call", "argument", "message", "json"))


def test_streaming_is_linear():
    assert_linear(FMT, f'{C}response{S}{O}tools{S}{O}call tool="search" index="1"{S}{O}argument key="q" type="string"{S}',
                  f"{C}argument{S}{C}call{S}{C}tools{S}{C}message{S}", declared("search"))
    assert_linear(FMT, "", f"{C}response{S}")
    assert_linear(FMT, "", f"{C}think{S}", thinking=True)
