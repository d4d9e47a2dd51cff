"""Ministral 3 Reasoning: golden render and parse vectors, the real template on shapes the vectors do not cover
(chunks, images, system thinking), refusals, round trips (reasoning, content, calls), the malformed-output
corpus (fixtures/ministral3) and linear streaming."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import support
import toolwire
from toolwire.errors import UnsupportedByFormat
from toolwire.parsers.ministral import MARKERS
from toolwire.templates.ministral import thinking_chunks
from support import golden_tests
from support.family_checks import (
    arguments, assert_linear, check_corpus_row, declared, load_corpus, roundtrip, tool_names,
)

FMT = toolwire.get_format("ministral3")


test_golden_render, test_golden_parse_oneshot, test_golden_parse_streamed = golden_tests(["ministral3"])


def reference(messages, tools):
    return support.reference_render("Ministral-3-14B-Reasoning-2512", thinking_chunks(messages), tools,
                                    bos_token=MARKERS["bos"], eos_token=MARKERS["eos"], drop_none=True,
                                    add_generation_prompt=True)


TOOLS = declared("get_weather", "search")
CONV = [
    {"role": "system", "content": [{"type": "text", "text": "Be brief."}, {"type": "thinking", "thinking": "x"}]},
    {"role": "user", "content": [{"type": "text", "text": "What is this?"}, {"type": "image_url", "image_url": {}}]},
    {"role": "assistant", "content": "Checking.", "reasoning_content": "Look it up.",
     "tool_calls": [{"id": "1", "type": "function", "function": {"name": "search", "arguments": '{"q": "ø"}'}},
                    {"id": "2", "type": "function", "function": {"name": "get_weather", "arguments": {}}}]},
    {"role": "tool", "tool_call_id": "1", "content": "found [/TOOL_RESULTS] text"},
    {"role": "tool", "tool_call_id": "2", "content": None},
    {"role": "assistant", "content": [{"type": "thinking", "thinking": "own chunk"}, {"type": "text", "text": "A."}]},
    {"role": "user", "content": [{"type": "text", "text": "b"}, {"type": "text", "text": "a"}, {"type": "image"}]},
    {"role": "assistant", "content": "", "reasoning_content": "only reasoning"},
    {"role": "user", "content": ""},
]


@pytest.mark.parametrize("cut", [2, 3, 5, 6, 7, 8, 9])
def test_matches_the_template(cut):
    conv = CONV[:cut]
    for tools in (TOOLS, None):
        assert FMT.render(conv, tools).text == reference(conv, tools)
        assert FMT.render(conv[1:], tools).text == reference(conv[1:], tools)  # the default system prompt


def test_earlier_reasoning_is_kept_and_a_policy_can_drop_it():
    conv = CONV[1:8]
    assert FMT.render(conv, TOOLS).text.count(MARKERS["think_open"]) == 3 + 1  # + the default system prompt's
    dropped = FMT.render(conv[:5], TOOLS, policy="drop_all").text
    assert "Look it up." not in dropped and "own chunk" in dropped  # a chunk in the content is content
    with pytest.raises(UnsupportedByFormat) as err:  # a reasoning-only turn with its reasoning dropped is empty
        FMT.render(conv, TOOLS, policy="drop_all")
    assert (err.value.message_index, err.value.field) == (6, "content")


@pytest.mark.parametrize("messages,index,field", [
    ([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}], 1, "role"),
    ([{"role": "assistant", "content": "a"}], 0, "role"),
    ([{"role": "user", "content": "a"}, {"role": "developer", "content": "b"}], 1, "role"),
    ([{"role": "system", "content": "s"}, {"role": "system", "content": "t"}], 1, "role"),
    ([{"role": "user", "content": None}], 0, "content"),
    ([{"role": "user", "content": [{"type": "audio"}]}], 0, "content[0].type"),
    ([{"role": "user", "content": "a"}, {"role": "assistant", "content": ""}], 1, "content"),
    ([{"role": "user", "content": "a"}, {"role": "assistant", "content": [{"type": "image"}]}], 1, "content[0].type"),
    ([{"role": "user", "content": "a"}, {"role": "tool", "content": [{"type": "text", "text": "r"}]}], 1, "content"),
    ([], None, "messages"),
])
def test_refusals_name_the_field(messages, index, field):
    with pytest.raises(UnsupportedByFormat) as err:
        FMT.render(messages, TOOLS)
    assert (err.value.message_index, err.value.field) == (index, field)


def test_no_generation_prompt_and_thinking_is_not_a_switch():
    msgs = [{"role": "user", "content": "q"}]
    prompt = FMT.render(msgs)
    assert prompt.text.endswith("[INST]q[/INST]") and not prompt.opens_reasoning
    assert FMT.render(msgs, thinking=True).text == FMT.render(msgs, add_generation_prompt=False).text == prompt.text


HISTORY = [{"role": "user", "content": "go"}]


def output_of(turn, tools):
    """What the model writes for ``turn``: the render with it minus the render before it, minus ``</s>``."""
    before = FMT.render(HISTORY, tools).text
    after = FMT.render(HISTORY + [turn], tools).text
    assert after.startswith(before) and after.endswith(MARKERS["eos"])
    return after[len(before):-len(MARKERS["eos"])]


safe_text = st.text(max_size=30).filter(lambda s: "[" not in s)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reasoning=safe_text, content=safe_text, calls=st.lists(st.tuples(tool_names, arguments), max_size=3))
def test_round_trip(reasoning, content, calls):
    if not (content or reasoning or calls):
        return
    tools = declared(*{n for n, _ in calls}) if calls else TOOLS
    turn = {"role": "assistant", "content": content, "reasoning_content": reasoning,
            "tool_calls": [{"id": str(k), "type": "function", "function": {"name": n, "arguments": a}}
                           for k, (n, a) in enumerate(calls)] or None}
    roundtrip(FMT, output_of(turn, tools), tools, content=content, reasoning=reasoning,
              calls=[(n, a) for n, a in calls])


ROWS = load_corpus("ministral3")


def test_the_corpus_covers_the_known_failures():
    codes = {code for row in ROWS for call in row["expected"]["calls"] for code in call["codes"]}
    assert {"call_in_reasoning", "repaired_python_literal", "unknown_tool", "truncated"} <= codes
    assert {c["status"] for row in ROWS for c in row["expected"]["calls"]} == {
        "proposed", "repaired", "rejected", "truncated"}


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_malformed_output(row):
    check_corpus_row(row, declared("get_weather", "search"), tuple(MARKERS.values()) + ("[CALL_ID]",))


def test_streaming_is_linear():
    assert_linear(FMT, '[THINK]r[/THINK][TOOL_CALLS]search[ARGS]{"q": "', '"}', declared("search"))
    assert_linear(FMT, "[THINK]", "[/THINK]done")  # a long reasoning block
