"""Llama 4: golden render and parse vectors, the real template on shapes the vectors do not cover (tools in the
system turn, images, roles), refusals, round trips (content inside ``<|python_start|>`` and back-to-back calls),
the malformed-output corpus (fixtures/llama4) and linear streaming."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import support
import toolwire
from toolwire.errors import InvalidRequest, UnsupportedByFormat
from toolwire.parsers.llama4 import MARKERS
from support import golden_tests
from support.family_checks import (
    arguments, assert_linear, check_corpus_row, declared, generation, load_corpus, roundtrip, tool_names,
)

FMT = toolwire.get_format("llama4")
STOP = "<|eot|>"


test_golden_render, test_golden_parse_oneshot, test_golden_parse_streamed = golden_tests(["llama4"])


reference = support.reference_renderer("Llama-4-transformers-default", bos_token=MARKERS["bos"], eos_token=STOP)


TOOLS = declared("get_weather", "search")
CONV = [
    {"role": "system", "content": [{"type": "text", "text": "  Be brief.  "}]},
    {"role": "user", "content": " Weather in Oslo? "},
    {"role": "assistant", "content": [{"type": "text", "text": "Checking "}, {"type": "text", "text": "both."}],
     "reasoning_content": "never rendered",
     "tool_calls": [{"id": "1", "type": "function",
                     "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}},
                    {"id": "2", "type": "function", "function": {"name": "search", "arguments": {"q": "ø"}}}]},
    {"role": "tool", "tool_call_id": "1", "content": "-3 °C"},
    {"role": "ipython", "content": [{"type": "text", "text": "r"}]},
    {"role": "assistant", "content": " Cold. "},
    {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "and this <|eot|>?"}]},
    {"role": "critic", "content": "custom role"},
]


@pytest.mark.parametrize("in_user", [True, False])
@pytest.mark.parametrize("cut", [2, 3, 5, 6, 8])
def test_matches_the_template(in_user, cut):
    conv = CONV[:cut]
    for tools in (TOOLS, None):
        for gen in (True, False):
            got = FMT.render(conv, tools, tools_in_user_message=in_user, add_generation_prompt=gen).text
            assert got == reference(conv, tools, tools_in_user_message=in_user, add_generation_prompt=gen)


def test_without_a_system_message_there_is_no_system_turn():
    conv = CONV[1:3]
    text = FMT.render(conv, TOOLS).text
    assert text == reference(conv, TOOLS) and "system" not in text


@pytest.mark.parametrize("messages,tools,index,field", [
    ([{"role": "system", "content": "s"}], TOOLS, None, "messages"),
    ([{"role": "user", "content": "q"}, {"role": "tool", "content": None}], None, 1, "content"),
    ([{"role": "system", "content": [{"type": "image"}, {"type": "text", "text": "s"}]}], None, 0, "content"),
    ([{"role": "user", "content": [{"type": "text", "text": "q"}]}], TOOLS, 0, "content"),
    ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "x", "tool_calls": []}], None, 1,
     "tool_calls"),
    ([{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [
        {"id": "1", "type": "function", "function": {"name": 'a"', "arguments": "{}"}}]}], None, 1,
     "tool_calls[0].function.name"),
])
def test_refusals_name_the_field(messages, tools, index, field):
    with pytest.raises(InvalidRequest) as err:
        FMT.render(messages, tools)
    assert (err.value.message_index, err.value.field) == (index, field)
    if field != "tool_calls[0].function.name":
        assert isinstance(err.value, UnsupportedByFormat)


HISTORY = [{"role": "user", "content": "go"}]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(content=st.text(max_size=30).filter(lambda s: "<|" not in s),
       calls=st.lists(st.tuples(tool_names, arguments), min_size=1, max_size=3))
def test_round_trip_calls(content, calls):
    tools = declared(*{n for n, _ in calls})
    turn = {"role": "assistant", "content": content,
            "tool_calls": [{"id": str(k), "type": "function", "function": {"name": n, "arguments": a}}
                           for k, (n, a) in enumerate(calls)]}
    output = generation(FMT, HISTORY, turn, tools, STOP)
    assert output.startswith(MARKERS["python_start"] + content + MARKERS["python_end"])
    if content.lstrip().startswith("{"):
        return  # content that is itself JSON at the block's start is read as a possible call (the variant)
    roundtrip(FMT, output, tools, content=content, calls=[(n, a) for n, a in calls])


@settings(max_examples=40, deadline=None)
@given(content=st.text(max_size=40).filter(lambda s: "<|" not in s and not s.strip().startswith("{")))
def test_round_trip_answer(content):
    output = generation(FMT, HISTORY, {"role": "assistant", "content": content}, TOOLS, STOP)
    roundtrip(FMT, output, TOOLS, content=content, calls=[])


ROWS = load_corpus("llama4")


def test_the_corpus_covers_the_known_failures():
    codes = {code for row in ROWS for call in row["expected"]["calls"] for code in call["codes"]}
    assert {"calls_in_python_block", "unexpected_keys", "repaired_python_literal", "unknown_tool",
            "truncated"} <= codes
    assert {c["status"] for row in ROWS for c in row["expected"]["calls"]} == {
        "proposed", "repaired", "rejected", "truncated"}
    assert {"python_block_not_closed"} <= {code for row in ROWS for code in row["expected"]["codes"]}


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_malformed_output(row):
    check_corpus_row(row, declared("get_weather", "search"), tuple(MARKERS.values()) + ("name", "parameters"))


def test_streaming_is_linear():
    assert_linear(FMT, '<|python_start|><|python_end|>{"name": "search", "parameters": {"q": "', '"}}',
                  declared("search"))
    assert_linear(FMT, "<|python_start|>", "<|python_end|>")  # a long content block


@pytest.mark.parametrize("after", ["<|python_end|>Done.", '{"name": "search", "parameters": {"q": "x"}}<|python_end|>'])
def test_blanks_after_python_start_are_read_once(after):
    """Issue 33 N8: blanks right after ``<|python_start|>`` (calls may still start there) stayed in the buffer
    and were scanned again at every delta (40k blanks in 64-character deltas: quadratic). They are now read
    once and kept apart, so the buffer stays as small as a marker; the result is the one-shot one."""
    text = "<|python_start|>" + " \n" * 20_000 + after
    parser = FMT.stream(declared("search"))
    longest = 0
    for i in range(0, len(text), 64):
        parser.feed(text[i:i + 64])
        longest = max(longest, len(parser._buf))
    parser.flush()
    assert parser.finish() == FMT.parse(text, declared("search"))
    assert longest <= 64 + len(MARKERS["python_end"])


def test_python_tag_is_text_for_llama4():
    """Found by the issue 33 fuzz generators: Llama 4's vocabulary has no ``<|python_tag|>`` (it is Llama 3.1's),
    so written in a Llama 4 output it is text, not the built-in call tag that swallowed it into a
    ``code_interpreter`` call."""
    text = "<|python_tag|>It is 18 °C in Paris."
    out = FMT.parse(text, TOOLS)
    assert (out.content, out.tool_calls) == (text, [])
    assert [c.name for c in toolwire.get_format("llama31").parse(text, TOOLS).tool_calls] == ["code_interpreter"]
