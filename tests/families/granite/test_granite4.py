"""Granite 4 (4.1; 4.0 as ``version="4.0"``): golden render and parse vectors, the real templates on shapes the
vectors do not cover (documents, content parts, 4.0's default system turn), refusals, round trips, the
malformed-output corpus (fixtures/granite4) and linear streaming."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import support
import toolwire
from toolwire.errors import InvalidOption, InvalidRequest, UnsupportedByFormat
from toolwire.templates.granite import MARKERS
from support import golden_tests
from support.family_checks import (
    arguments, assert_linear, check_corpus_row, declared, generation, load_corpus, roundtrip, tool_names,
)

FMT = toolwire.get_format("granite4")
STOP = "<|end_of_text|>\n"


test_golden_render, test_golden_parse_oneshot, test_golden_parse_streamed = golden_tests(["granite4"])


def reference(version, messages, tools, **kw):
    kw.setdefault("add_generation_prompt", True)
    return support.reference_render(f"Granite-{version}", messages, tools, drop_none=True, **kw)


TOOLS = declared("get_weather", "search")
CONV = [
    {"role": "system", "content": [{"type": "text", "text": "Be brief."}, {"type": "image_url"},
                                   {"type": "text", "text": "Really."}]},
    {"role": "user", "content": [{"type": "text", "text": ""}, {"type": "text", "text": "Weather?"}]},
    {"role": "assistant", "content": "Checking.", "reasoning_content": "never rendered",
     "tool_calls": [{"id": "1", "type": "function",
                     "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}},
                    {"id": "2", "type": "function", "function": {"name": "search", "arguments": {"q": "ß"}}}]},
    {"role": "tool", "tool_call_id": "1", "content": "-3"},
    {"role": "tool", "tool_call_id": "2", "content": [{"type": "text", "text": "r1"}, {"type": "text", "text": "r2"}]},
    {"role": "assistant", "content": None},
    {"role": "system", "content": "later system <|end_of_text|>"},
    {"role": "user", "content": "<tool_call>"},
]
DOCS = [{"doc_id": 1, "title": "T", "text": "Ünïcode"}, {"doc_id": 2, "text": "two"}]


@pytest.mark.parametrize("version", ["4.1", "4.0"])
@pytest.mark.parametrize("cut", [1, 2, 3, 5, 6, 8])
@pytest.mark.parametrize("tools,docs", [(TOOLS, None), (None, None), (None, DOCS), (TOOLS, DOCS)])
def test_matches_the_templates(version, cut, tools, docs):
    conv = CONV[:cut]
    kw = {"documents": docs} if docs else {}
    for gen in (True, False):
        assert FMT.render(conv, tools, version=version, add_generation_prompt=gen, **kw).text == reference(
            version, conv, tools, add_generation_prompt=gen, **kw)


@pytest.mark.parametrize("version", ["4.1", "4.0"])
@pytest.mark.parametrize("conv", [
    [{"role": "user", "content": "hi"}],
    [{"role": "system", "content": ""}, {"role": "user", "content": "hi"}],
    [{"role": "tool", "content": "first"}, {"role": "user", "content": "hi"}],
])
def test_default_system_turn_only_in_40(version, conv):
    text = FMT.render(conv, None, version=version).text
    assert text == reference(version, conv, None)
    assert (text.startswith("<|start_of_role|>system")) == (version == "4.0")


def test_bad_options_and_roles_are_refused():
    with pytest.raises(InvalidOption) as err:
        FMT.render([{"role": "user", "content": "q"}], version="5")
    assert err.value.field == "version"
    with pytest.raises(InvalidOption) as err:
        FMT.render([{"role": "user", "content": "q"}], documents="not a list")
    assert err.value.field == "documents"
    with pytest.raises(UnsupportedByFormat) as err:
        FMT.render([{"role": "user", "content": "q"}, {"role": "developer", "content": "x"}])
    assert (err.value.message_index, err.value.field) == (1, "role")
    with pytest.raises(UnsupportedByFormat) as err:
        FMT.render([])
    assert err.value.field == "messages"
    with pytest.raises(InvalidRequest) as err:
        FMT.render([{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [
            {"id": "1", "type": "function", "function": {"name": "a\\b", "arguments": "{}"}}]}])
    assert (err.value.message_index, err.value.field) == (1, "tool_calls[0].function.name")


HISTORY = [{"role": "user", "content": "go"}]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(content=st.sampled_from(["", "Let me look.", " spaced \n"]),
       calls=st.lists(st.tuples(tool_names, arguments), min_size=1, max_size=3))
def test_round_trip_calls(content, calls):
    tools = declared(*{n for n, _ in calls})
    turn = {"role": "assistant", "content": content,
            "tool_calls": [{"id": str(k), "type": "function", "function": {"name": n, "arguments": a}}
                           for k, (n, a) in enumerate(calls)]}
    output = generation(FMT, HISTORY, turn, tools, STOP)
    roundtrip(FMT, output, tools, content=content, calls=[(n, a) for n, a in calls])


@settings(max_examples=40, deadline=None)
@given(content=st.text(max_size=40).filter(lambda s: "<" not in s))
def test_round_trip_answer(content):
    output = generation(FMT, HISTORY, {"role": "assistant", "content": content}, TOOLS, STOP)
    roundtrip(FMT, output, TOOLS, content=content, calls=[])


ROWS = load_corpus("granite4")


def test_the_corpus_covers_the_known_failures():
    codes = {code for row in ROWS for call in row["expected"]["calls"] for code in call["codes"]}
    codes |= {code for row in ROWS for code in row["expected"]["codes"]}  # output-level: a nameless body
    assert {"repaired_single_quotes", "repaired_python_literal", "unknown_tool", "truncated_json",
            "malformed_tool_call"} <= codes
    assert {c["status"] for row in ROWS for c in row["expected"]["calls"]} == {
        "proposed", "repaired", "rejected", "truncated"}
    # Granite 4.0 H-Small's Python-style calls (vLLM #43104) are not this format: they stay content
    assert any(row["expected"]["calls"] == [] and "(" in row["expected"]["content"] for row in ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_malformed_output(row):
    check_corpus_row(row, declared("get_weather", "search"), tuple(MARKERS.values()) + ("name", "arguments"))


def test_streaming_is_linear():
    assert_linear(FMT, '<tool_call>\n{"name": "search", "arguments": {"q": "', '"}}\n</tool_call>',
                  declared("search"))
