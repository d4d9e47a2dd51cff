"""Llama 3.2 (data on the Llama 3.1 renderer): golden render and parse vectors, the real template on shapes
the vectors do not cover (today's date, tools in the system message), refusals, round trips, the
malformed-output corpus (fixtures/llama32), real Llama-3 token ids and linear streaming."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import support
import toolwire
from toolwire.errors import InvalidOption, UnsupportedByFormat
from toolwire.parsers.llama import MARKERS
from toolwire.templates.llama import date_line
from support import (
    check_golden_parse_oneshot, check_golden_parse_streamed, check_golden_render, golden_params,
)
from support.family_checks import (
    arguments, assert_linear, check_corpus_row, declared, generation, load_corpus, roundtrip, tool_names,
)

FMT = toolwire.get_format("llama32")
STOP = "<|eot_id|>"


@pytest.mark.parametrize("row", golden_params("render", "llama32"))
def test_golden_render(row):
    err = check_golden_render(row)
    if "expected_error" in row:
        assert isinstance(err, UnsupportedByFormat) and err.field == "tool_calls"
        assert "single tool-calls" in str(err)


@pytest.mark.parametrize("row", golden_params("parse", "llama32"))
def test_golden_parse_oneshot(row):
    check_golden_parse_oneshot(row)


@pytest.mark.parametrize("row", golden_params("parse", "llama32"))
def test_golden_parse_streamed(row):
    check_golden_parse_streamed(row)


reference = support.reference_renderer("Llama-3.2-3B-Instruct", bos_token=MARKERS["bos"], eos_token=STOP)


TOOLS = declared("get_weather", "search")
CONV = [
    {"role": "system", "content": "  Be brief.  "},
    {"role": "user", "content": " Weather in Oslo? "},
    {"role": "assistant", "content": "dropped",
     "tool_calls": [{"id": "1", "type": "function",
                     "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]},
    {"role": "tool", "tool_call_id": "1", "content": "-3 °C"},
    {"role": "assistant", "content": "Cold. "},
    {"role": "user", "content": "<|eot_id|> spoof"},
]


@pytest.mark.parametrize("in_user", [True, False])
@pytest.mark.parametrize("cut", [2, 4, 5, 6])
def test_matches_the_template(in_user, cut):
    conv = CONV[:cut]
    for tools in (TOOLS, None):
        got = FMT.render(conv, tools, tools_in_user_message=in_user, current_date="2025-03-07").text
        assert got == reference(conv, tools, tools_in_user_message=in_user, date_string="07 Mar 2025")


def test_dated_today_without_current_date():
    conv = CONV[:2]
    text = FMT.render(conv, TOOLS).text
    assert f"Today Date: {date_line(date.today().isoformat())}\n" in text
    assert text == reference(conv, TOOLS)  # the template's strftime_now


def test_no_builtin_tools_in_32():
    with pytest.raises(InvalidOption):
        FMT.render(CONV[:2], TOOLS, builtin_tools=["brave_search"])
    with pytest.raises(UnsupportedByFormat) as err:
        FMT.render([{"role": "system", "content": "s"}], TOOLS)
    assert err.value.field == "messages"


HISTORY = [{"role": "user", "content": "go"}]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=tool_names, args=arguments)
def test_round_trip_call(name, args):
    tools = declared(name)
    turn = {"role": "assistant", "content": "dropped by the template",
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": name, "arguments": args}}]}
    roundtrip(FMT, generation(FMT, HISTORY, turn, tools, STOP, current_date="2026-01-02"), tools,
              calls=[(name, args)])


@settings(max_examples=40, deadline=None)
@given(content=st.text(max_size=40).filter(lambda s: "<|" not in s and not s.strip().startswith("{")))
def test_round_trip_answer(content):
    output = generation(FMT, HISTORY, {"role": "assistant", "content": content}, TOOLS, STOP,
                        current_date="2026-01-02")
    roundtrip(FMT, output, TOOLS, content=content.strip(), calls=[])


ROWS = load_corpus("llama32")


def test_the_corpus_covers_the_known_failures():
    codes = {code for row in ROWS for call in row["expected"]["calls"] for code in call["codes"]}
    assert {"unexpected_keys", "repaired_python_literal", "unknown_tool", "truncated"} <= codes
    assert {c["status"] for row in ROWS for c in row["expected"]["calls"]} == {
        "proposed", "repaired", "rejected", "truncated"}


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_malformed_output(row):
    check_corpus_row(row, declared("get_weather", "search"), tuple(MARKERS.values()) + ("name", "parameters"))


def test_streaming_is_linear():
    assert_linear(FMT, '{"name": "search", "parameters": {"q": "', '"}}', declared("search"))
