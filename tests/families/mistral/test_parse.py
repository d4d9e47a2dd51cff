"""Mistral Small 3.2 parser: golden vectors (one-shot and streamed), round trip with ids, call boundaries."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import toolwire
from toolwire.parsers.mistral import MARKERS
from support import check_golden_parse_oneshot, check_golden_parse_streamed, golden_params
from support.family_checks import (
    arguments, assert_linear, check_chunking, check_soup, declared, generation, roundtrip, soup, tool_names,
)

MISTRAL = toolwire.get_format("mistral_small32")
ROWS = golden_params("parse", "mistral_small32")
TOOLS = declared("get_weather", "search")
HISTORY = [{"role": "user", "content": "go"}]


@pytest.mark.parametrize("row", ROWS)
def test_golden_parse_oneshot(row):
    check_golden_parse_oneshot(row)


@pytest.mark.parametrize("row", ROWS)
def test_golden_parse_streamed(row):
    check_golden_parse_streamed(row)


call_ids = st.from_regex(r"[A-Za-z0-9]{9}", fullmatch=True)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=st.lists(st.tuples(tool_names, arguments, call_ids), min_size=1, max_size=3))
def test_round_trip_calls(calls):
    tools = declared(*{name for name, _, _ in calls})
    turn = {"role": "assistant", "content": "dropped by the template", "tool_calls": [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": args}} for name, args, cid in calls]}
    output = generation(MISTRAL, HISTORY, turn, tools, "</s>", current_date="2026-01-02")
    roundtrip(MISTRAL, output, tools, calls=[(n, a) for n, a, _ in calls], ids=[c for _, _, c in calls])


@settings(max_examples=60, deadline=None)
@given(content=st.text(max_size=40).filter(lambda s: "[TOOL_CALLS]" not in s))
def test_round_trip_answer(content):
    output = generation(MISTRAL, HISTORY, {"role": "assistant", "content": content}, TOOLS, "</s>",
                        current_date="2026-01-02")
    roundtrip(MISTRAL, output, TOOLS, content=content, calls=[])


def test_calls_without_ids_get_renderable_ones():
    out = check_chunking(MISTRAL, 'Ok.[TOOL_CALLS]search[ARGS]{"q": [1, {"a": "]}"}]} [TOOL_CALLS]get_weather[ARGS]{}',
                         TOOLS)
    assert out.content == "Ok."
    assert [(c.id, c.name, c.arguments, c.status) for c in out.tool_calls] == [
        ("call00000", "search", {"q": [1, {"a": "]}"}]}, "proposed"), ("call00001", "get_weather", {}, "proposed")]
    prompt = MISTRAL.render(HISTORY + [{"role": "assistant", "tool_calls": [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
        for c in out.tool_calls]}], TOOLS, current_date="2026-01-02")
    assert "[CALL_ID]call00001[ARGS]{}</s>" in prompt.text


def test_text_after_a_call_is_content():
    out = check_chunking(MISTRAL, '[TOOL_CALLS]search[CALL_ID]abcdefghi[ARGS]{"q": "x"}\nDone.', TOOLS)
    assert out.content == "\nDone."
    assert [(c.id, c.arguments) for c in out.tool_calls] == [("abcdefghi", {"q": "x"})]


def test_unknown_tool_is_rejected_not_dropped():
    out = check_chunking(MISTRAL, '[TOOL_CALLS]drop_table[CALL_ID]abcdefghi[ARGS]{"t": "users"}', TOOLS)
    [call] = out.tool_calls
    assert (call.name, call.status, call.arguments, [d.code for d in call.diagnostics]) == (
        "drop_table", "rejected", {"t": "users"}, ["unknown_tool"])


def test_streaming_is_linear_in_the_argument_size():
    assert_linear(MISTRAL, '[TOOL_CALLS]search[ARGS]{"q": "', '"}', TOOLS, unit="a[TOOL ")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=soup(MARKERS.values()))
def test_marker_soup(text):
    check_soup(MISTRAL, text, tuple(MARKERS.values()))
