"""Kimi K2 parsers: golden vectors (one-shot and streamed), round trip, ids, reasoning calls, linear time."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import toolwire
from toolwire.parsers.kimi import MARKERS
from support import check_golden_parse_oneshot, check_golden_parse_streamed, golden_params
from support.family_checks import (
    arguments, assert_linear, check_chunking, check_soup, declared, generation, roundtrip, soup, tool_names,
)

K2 = toolwire.get_format("kimi_k2")
THINKING = toolwire.get_format("kimi_k2_thinking")
ROWS = golden_params("parse", "kimi_k2") + golden_params("parse", "kimi_k2_thinking")
SECTION = "<|tool_calls_section_begin|>{}<|tool_calls_section_end|>"
CALL = "<|tool_call_begin|>{}<|tool_call_argument_begin|>{}<|tool_call_end|>"
TOOLS = declared("get_weather", "search")


@pytest.mark.parametrize("row", ROWS)
def test_golden_parse_oneshot(row):
    check_golden_parse_oneshot(row)


@pytest.mark.parametrize("row", ROWS)
def test_golden_parse_streamed(row):
    check_golden_parse_streamed(row)


plain_text = st.text(max_size=30).filter(lambda s: "<|" not in s and "</think>" not in s and "<think>" not in s)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(content=plain_text, reasoning=plain_text,
       calls=st.lists(st.tuples(tool_names, arguments), min_size=0, max_size=3))
def test_round_trip(content, reasoning, calls):
    tools = declared(*{name for name, _ in calls})
    tool_calls = [{"id": f"functions.{name}:{i}", "type": "function", "function": {"name": name, "arguments": args}}
                  for i, (name, args) in enumerate(calls)]
    turn = {"role": "assistant", "content": content, "reasoning_content": reasoning, "tool_calls": tool_calls or None}
    history = [{"role": "user", "content": "go"}]
    ids = [c["id"] for c in tool_calls]
    output = generation(K2, history, turn, tools, "<|im_end|>")
    roundtrip(K2, output, tools, content=content, calls=calls, ids=ids)
    # K2-Thinking keeps reasoning on a turn with calls (the current tool loop); an answer's is dropped
    output = generation(THINKING, history, turn, tools, "<|im_end|>", thinking=True)
    # the K2-Thinking prompt does not open <think> (the model writes it): the output starts in content
    roundtrip(THINKING, output, tools, content=content, reasoning=reasoning if calls else "", calls=calls, ids=ids,
              thinking=False)


def test_ids_name_the_tool_and_become_candidate_ids():
    out = check_chunking(K2, SECTION.format(CALL.format("functions.get_weather:7", '{"city": "Oslo"}')
                                            + CALL.format(" functions.search:8 ", "{}")), TOOLS)
    assert [(c.id, c.name, c.arguments, c.status) for c in out.tool_calls] == [
        ("functions.get_weather:7", "get_weather", {"city": "Oslo"}, "proposed"),
        ("functions.search:8", "search", {}, "proposed")]


def test_unknown_tool_is_rejected_not_dropped():
    out = check_chunking(K2, "Hi" + SECTION.format(CALL.format("functions.delete_all:0", '{"x": 1}')), TOOLS)
    assert out.content == "Hi"
    [call] = out.tool_calls
    assert (call.name, call.status, call.arguments, [d.code for d in call.diagnostics]) == (
        "delete_all", "rejected", {"x": 1}, ["unknown_tool"])


@pytest.mark.parametrize("promote", [False, True])
def test_call_inside_reasoning_is_reported_not_promoted(promote):
    text = "<think>maybe " + SECTION.format(CALL.format("functions.search:0", '{"q": "x"}')) + " no</think>Done."
    out = check_chunking(THINKING, text, TOOLS, thinking=True, promote_reasoning_calls=promote)
    assert (out.content, out.reasoning) == ("Done.", "maybe  no")
    [call] = out.tool_calls
    assert (call.source, call.arguments) == ("reasoning", {"q": "x"})
    assert call.status == ("proposed" if promote else "rejected")
    assert [d.code for d in call.diagnostics] == ([] if promote else ["call_in_reasoning"])


def test_marker_text_inside_a_json_string_is_string_content():
    value = "a<|tool_call_end|><|tool_calls_section_end|>b"
    import json

    out = check_chunking(K2, SECTION.format(CALL.format("functions.search:0", json.dumps({"q": value}))), TOOLS)
    assert [c.arguments for c in out.tool_calls] == [{"q": value}]
    assert out.diagnostics == []


def test_instruct_reads_think_tags_as_content():
    out = K2.parse("<think>x</think>y", TOOLS)
    assert (out.content, out.reasoning) == ("<think>x</think>y", "")


def test_streaming_is_linear_in_the_argument_size():
    before = "<|tool_calls_section_begin|><|tool_call_begin|>functions.search:0<|tool_call_argument_begin|>{\"q\": \""
    assert_linear(K2, before, '"}<|tool_call_end|><|tool_calls_section_end|>', TOOLS, unit="ab<| ")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=soup(MARKERS.values()), family=st.sampled_from(["kimi_k2", "kimi_k2_thinking"]), thinking=st.booleans())
def test_marker_soup(text, family, thinking):
    check_soup(toolwire.get_format(family), text, tuple(MARKERS.values()), thinking=thinking)
