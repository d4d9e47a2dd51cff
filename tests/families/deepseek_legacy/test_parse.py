"""DeepSeek V3.1 / R1 parsers: golden vectors (one-shot and streamed), round trip, reasoning, linear time."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import toolwire
from toolwire.parsers.deepseek_legacy import MARKERS
from support import check_golden_parse_oneshot, check_golden_parse_streamed, golden_params
from support.family_checks import (
    arguments, assert_linear, check_chunking, check_soup, declared, generation, roundtrip, soup, tool_names,
)

V31 = toolwire.get_format("deepseek_v31")
R1 = toolwire.get_format("deepseek_r1")
ROWS = golden_params("parse", "deepseek_v31") + golden_params("parse", "deepseek_r1")
EOS = "<｜end▁of▁sentence｜>"
TOOLS = declared("get_weather", "search")


@pytest.mark.parametrize("row", ROWS)
def test_golden_parse_oneshot(row):
    check_golden_parse_oneshot(row)


@pytest.mark.parametrize("row", ROWS)
def test_golden_parse_streamed(row):
    check_golden_parse_streamed(row)


plain_text = st.text(max_size=30).filter(lambda s: "<｜" not in s and "think>" not in s)
call_lists = st.lists(st.tuples(tool_names, arguments), min_size=0, max_size=3)


def _turn(content, calls, as_string=False):
    tool_calls = [{"id": f"c{i}", "type": "function", "function": {
        "name": name, "arguments": json.dumps(args) if as_string else args}} for i, (name, args) in enumerate(calls)]
    return {"role": "assistant", "content": content, "reasoning_content": "dropped in history",
            "tool_calls": tool_calls or None}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(content=plain_text, calls=call_lists)
def test_v31_round_trip(content, calls):
    tools = declared(*{name for name, _ in calls})
    history = [{"role": "user", "content": "go"}]
    output = generation(V31, history, _turn(content, calls), tools, EOS)
    roundtrip(V31, output, tools, content=content, calls=calls)
    # thinking: the prompt opened <think>; history turns render an empty block, so the output starts with </think>
    roundtrip(V31, "</think>" + output, tools, content=content, calls=calls, thinking=True)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(content=plain_text, calls=call_lists, as_string=st.booleans())
def test_r1_round_trip(content, calls, as_string):
    tools = declared(*{name for name, _ in calls})
    history = [{"role": "user", "content": "go"}]
    # R1's generation prompt opens <think>\n, which its history turns do not have: cut after <｜Assistant｜>
    prompt = R1.render(history, tools, add_generation_prompt=False).text + "<｜Assistant｜>"
    full = R1.render(history + [_turn(content, calls, as_string)], tools, add_generation_prompt=False).text
    assert full.startswith(prompt) and full.endswith(EOS)
    output = full[len(prompt):-len(EOS)]
    roundtrip(R1, output, tools, content=content, calls=calls, thinking=False)
    roundtrip(R1, "reasoning\n</think>\n\n" + output, tools, content="\n\n" + content, reasoning="reasoning\n",
              calls=calls, thinking=True)


def test_v31_thinking_reads_reasoning_until_think_close():
    text = ("plan it</think>Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>search<｜tool▁sep｜>{\"q\": \"a\"}"
            "<｜tool▁call▁end｜><｜tool▁calls▁end｜>")
    out = check_chunking(V31, text, TOOLS, thinking=True)
    assert (out.reasoning, out.content) == ("plan it", "Sure.")
    assert [(c.id, c.name, c.arguments, c.status) for c in out.tool_calls] == [
        ("call_0", "search", {"q": "a"}, "proposed")]


@pytest.mark.parametrize("promote", [False, True])
def test_call_inside_reasoning_is_reported_not_promoted(promote):
    text = ("hmm<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>search<｜tool▁sep｜>{}<｜tool▁call▁end｜>"
            "<｜tool▁calls▁end｜></think>ok")
    out = check_chunking(V31, text, TOOLS, thinking=True, promote_reasoning_calls=promote)
    assert (out.reasoning, out.content) == ("hmm", "ok")
    [call] = out.tool_calls
    assert (call.source, call.status) == ("reasoning", "proposed" if promote else "rejected")


def test_unknown_tool_is_rejected_not_dropped():
    text = ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>rm_rf\n```json\n{\"path\": \"/\"}\n```"
            "<｜tool▁call▁end｜><｜tool▁calls▁end｜>")
    out = check_chunking(R1, text, TOOLS, thinking=False)
    [call] = out.tool_calls
    assert (call.name, call.status, call.arguments, [d.code for d in call.diagnostics]) == (
        "rm_rf", "rejected", {"path": "/"}, ["unknown_tool"])


def test_r1_fence_is_format_not_repair():
    text = ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n```json\n{\"q\": 1}\n```"
            "<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{}\n```"
            "<｜tool▁call▁end｜><｜tool▁calls▁end｜>")
    out = check_chunking(R1, text, TOOLS, thinking=False)
    assert [(c.name, c.arguments, c.status, c.diagnostics) for c in out.tool_calls] == [
        ("search", {"q": 1}, "proposed", []), ("get_weather", {}, "proposed", [])]
    assert out.diagnostics == []


@pytest.mark.parametrize("fmt,before,after", [
    (V31, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>search<｜tool▁sep｜>{\"q\": \"",
     "\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
    (R1, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n```json\n{\"q\": \"",
     "\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
], ids=["v31", "r1"])
def test_streaming_is_linear_in_the_argument_size(fmt, before, after):
    assert_linear(fmt, before, after, TOOLS, unit="ab<｜ ")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=soup(MARKERS.values()), family=st.sampled_from(["deepseek_v31", "deepseek_r1"]), thinking=st.booleans())
def test_marker_soup(text, family, thinking):
    check_soup(toolwire.get_format(family), text, tuple(MARKERS.values()) + ("function", "json"), thinking=thinking)
