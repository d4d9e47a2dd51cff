"""DeepSeek DSML round trip: ``parse(render(assistant turn)) == turn`` for every value the format can carry.

The model output of a turn is what the reference's own derivation gives: the prompt with the assistant turn
minus the prompt without it, less the stop token. Values the format cannot carry as-is (a string holding the
parameter's closing tag) must come back intact through the escaped ``string="false"`` form."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import toolwire
from support import assert_events_consistent, full_state, json_values, random_chunks, stream_parse
from toolwire.errors import UnrepresentableValue

FAMILIES = ("deepseek_v32", "deepseek_v4", "deepseek_v41")
EOS = "<｜end▁of▁sentence｜>"
TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
         for n in ("get_weather", "search", "write_file")]

_MARKUP = ["</｜DSML｜parameter>", "</｜DSML｜ parameter>", "<｜DSML｜invoke name=\"x\">", "</｜DSML｜tool_calls>",
           "<｜DSML｜ calls>", "</think>", "<think>", "<tool_result>", "&amp;", "<b>", "\\u003c", '"', "\\", "｜DSML｜",
           "</｜DSML｜para", "<", ">", "\n\n", "\r\n", "\t", " ", "   "]
_strings = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=" \t\n\r", min_size=1, max_size=6),  # whitespace only
    st.lists(st.one_of(st.sampled_from(_MARKUP), st.text(max_size=5)), max_size=8).map("".join),
)
_numbers = st.one_of(
    st.integers(), st.integers(min_value=-(2**200), max_value=2**200), st.sampled_from([2**63, 2**64 + 1, -(2**63) - 1]),
    st.floats(allow_nan=False, allow_infinity=False),
)
_scalars = st.one_of(st.none(), st.booleans(), _numbers, _strings)
_json = json_values(_scalars, _strings)
_keys = st.text(max_size=12).filter(lambda k: not any(c in k for c in '"<>\n'))
_arguments = st.dictionaries(_keys, _json, max_size=5)
_calls = st.lists(st.tuples(st.sampled_from([t["function"]["name"] for t in TOOLS]), _arguments), min_size=0, max_size=3)


def _free_text(family: str) -> st.SearchStrategy[str]:
    """Content/reasoning text: anything that does not spell the family's own markers, nor the end-of-turn token
    (stripped, ``stop_token_in_output``), nor start with ``<think>`` (a repeated opener, dropped)."""
    fmt = toolwire.get_format(family)
    reserved = ("</think>", fmt.markers["tool_calls_open"], "｜DSML｜", EOS)
    return st.one_of(st.text(max_size=30), st.lists(st.sampled_from(_MARKUP[5:]), max_size=6).map("".join)).filter(
        lambda t: not any(r in t for r in reserved) and not t.lstrip(" \t\n\r").startswith("<think>"))


def model_output(family: str, turn: dict, thinking: bool) -> str:
    """What the model generates for ``turn``: render with it minus render without it, minus EOS."""
    fmt = toolwire.get_format(family)
    history = [{"role": "system", "content": "sys"}, {"role": "user", "content": "go"}]
    opts = {"thinking": thinking}
    prompt = fmt.render(history, TOOLS, **opts).text
    full = fmt.render(history + [turn], TOOLS, **opts).text
    assert full.startswith(prompt) and full.endswith(EOS)
    return full[len(prompt):-len(EOS)]


def check_round_trip(family: str, content: str, reasoning: str, calls: list, thinking: bool, rnd: random.Random):
    turn = {"role": "assistant", "content": content, "tool_calls": [
        {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
        for i, (n, a) in enumerate(calls)]}
    if thinking:
        turn["reasoning_content"] = reasoning
    text = model_output(family, turn, thinking)
    fmt = toolwire.get_format(family)
    out = fmt.parse(text, TOOLS, thinking=thinking)
    assert out.content == content
    assert out.reasoning == (reasoning if thinking else "")
    assert [(c.name, c.arguments) for c in out.tool_calls] == [(n, a) for n, a in calls]
    assert all(c.status == "proposed" and c.source == "content" for c in out.tool_calls)
    assert set(out.codes()) <= {"markup_in_value"} and not out.truncated
    # types survive exactly (True is not 1, 1.0 is not 1)
    assert json.dumps([c.arguments for c in out.tool_calls]) == json.dumps([a for _, a in calls])
    res, events = stream_parse(fmt, text, random_chunks(text, rnd, 7), tools=TOOLS, thinking=thinking)
    assert full_state(res) == full_state(out)
    assert_events_consistent(res, events)


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), thinking=st.booleans(), calls=_calls, rnd=st.randoms(use_true_random=False))
def test_round_trip(family, data, thinking, calls, rnd):
    content = data.draw(_free_text(family), label="content")
    reasoning = data.draw(_free_text(family), label="reasoning") if thinking else ""
    if thinking and family == "deepseek_v32" and not (reasoning or calls):
        reasoning = "r"  # V3.2 refuses a thinking turn with neither reasoning nor calls
    check_round_trip(family, content, reasoning, calls, thinking, rnd)


@pytest.mark.parametrize("family", FAMILIES)
def test_closing_tag_in_a_string_round_trips_through_escaped_json(family):
    close = toolwire.get_format(family).markers["parameter_close"]
    value = f"before {close} after <tag>"
    turn = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "write_file", "arguments": json.dumps({"text": value})}}]}
    text = model_output(family, turn, False)
    assert 'string="false">"before \\u003c/' in text
    assert text.count(close) == 1
    check_round_trip(family, "", "", [("write_file", {"text": value})], False, random.Random(0))


@pytest.mark.parametrize("name", ['a"b', "a<b", "a>b", "a\nb"])
def test_names_that_would_end_the_tag_are_refused(name):
    turn = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "search", "arguments": json.dumps({name: 1})}}]}
    with pytest.raises(UnrepresentableValue) as err:
        toolwire.get_format("deepseek_v4").render([{"role": "user", "content": "q"}, turn])
    assert err.value.message_index == 1
