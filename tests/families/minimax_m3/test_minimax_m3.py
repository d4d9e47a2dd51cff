"""MiniMax-M3: golden render and parse vectors, the real template on shapes the vectors do not cover (root and
developer roles, thinking modes, parts), refusals, round trips (XML-expanded nested values, typed by the schema),
the malformed-output corpus (fixtures/minimax_m3) and linear streaming."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import support
import toolwire
from toolwire.errors import InvalidOption, UnrepresentableValue, UnsupportedByFormat
from toolwire.parsers.minimax_m3 import MARKERS, NS
from support import golden_tests
from support.family_checks import (
    assert_linear, check_corpus_row, declared, generation, load_corpus, roundtrip,
)

FMT = toolwire.get_format("minimax_m3")
STOP = MARKERS["eos"] + "\n"


test_golden_render, test_golden_parse_oneshot, test_golden_parse_streamed = golden_tests(["minimax_m3"])


reference = support.reference_renderer("extra/MiniMax-M3")


TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather ☀.", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"},
                                     "opts": {"type": "object", "properties": {"deep": {"type": "boolean"}}}}}}}]
CALL = {"role": "assistant", "content": "Checking.", "reasoning_content": "Think.",
        "tool_calls": [{"id": "1", "type": "function", "function": {"name": "get_weather", "arguments":
                        '{"city": "Oslo", "days": 2, "opts": {"deep": true, "x": null}, "gone": null}'}}]}
CONV = [
    {"role": "root", "content": "Root rules."},
    {"role": "developer", "content": [{"type": "text", "text": "Be brief. "}, {"type": "image"}]},
    {"role": "user", "content": "Weather?"},
    CALL,
    {"role": "tool", "tool_call_id": "1", "content": [{"type": "text", "text": "-3"}, {"type": "video"}]},
    {"role": "tool", "tool_call_id": "1", "content": "again"},
    {"role": "assistant", "content": "<mm:think>\nsplit off\n</mm:think>\nCold."},
    {"role": "user", "content": [{"type": "text", "text": "more"}]},
]


@pytest.mark.parametrize("cut", [3, 4, 5, 6, 7, 8])
@pytest.mark.parametrize("mode", ["enabled", "disabled", "adaptive"])
def test_matches_the_template(cut, mode):
    for conv in (CONV[:cut], CONV[1:cut], CONV[2:cut]):
        for tools in (TOOLS, None):
            for gen in (True, False):
                got = FMT.render(conv, tools, thinking_mode=mode, add_generation_prompt=gen).text
                assert got == reference(conv, tools, thinking_mode=mode, add_generation_prompt=gen)


def test_thinking_maps_onto_thinking_mode():
    conv = CONV[2:3]
    assert FMT.render(conv, thinking=True).text == FMT.render(conv, thinking_mode="enabled").text
    assert FMT.render(conv, thinking=False).text == FMT.render(conv, thinking_mode="disabled").text
    assert FMT.render(conv).text == FMT.render(conv, thinking_mode="adaptive").text  # the template's default
    assert FMT.render(conv, thinking=True).opens_reasoning
    assert not FMT.render(conv, thinking_mode="adaptive").opens_reasoning
    assert FMT.render(conv, model_identity="I am X.").text == reference(conv, None, model_identity="I am X.")
    with pytest.raises(InvalidOption) as err:
        FMT.render(conv, thinking=True, thinking_mode="disabled")
    assert err.value.field == "thinking_mode"
    with pytest.raises(InvalidOption) as err:
        FMT.render(conv, thinking_mode="sometimes")
    assert err.value.field == "thinking_mode"


def _call(args):
    return [{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [
        {"id": "1", "type": "function", "function": {"name": "f", "arguments": args}}]}]


@pytest.mark.parametrize("messages,index,field,error", [
    ([{"role": "user", "content": "q"}, {"role": "tool", "content": "r"}], 1, "role", UnsupportedByFormat),
    (_call({}) + [{"role": "tool", "content": None}], 2, "content", UnsupportedByFormat),
    (_call({}) + [{"role": "tool", "content": [{"type": "input_audio"}]}], 2, "content[0]", UnsupportedByFormat),
    ([{"role": "user", "content": "q"}, {"role": "system", "content": "late"}], 1, "role", UnsupportedByFormat),
    (_call({"q": f"a{NS}b"}), 1, "tool_calls[0].function.arguments", UnrepresentableValue),
    (_call({"a<b": 1}), 1, "tool_calls[0].function.arguments", UnrepresentableValue),
    (_call({"l": [1, None]}), 1, "tool_calls[0].function.arguments", UnrepresentableValue),
])
def test_refusals_name_the_field(messages, index, field, error):
    with pytest.raises(error) as err:
        FMT.render(messages, TOOLS)
    assert (err.value.message_index, err.value.field) == (index, field)


def test_none_valued_arguments_are_left_out_as_the_template_does():
    text = FMT.render(_call({"a": None, "b": {"c": None, "d": 1}}), None).text
    assert f"{NS}<b>{NS}<d>1{NS}</d>{NS}</b>" in text and "<a>" not in text and "<c>" not in text


SCHEMA = {"type": "object", "properties": {
    "s": {"type": "string"}, "n": {"type": "integer"}, "x": {"type": "number"}, "b": {"type": "boolean"},
    "l": {"type": "array", "items": {"type": "integer"}},
    "o": {"type": "object", "properties": {"t": {"type": "string"}, "m": {"type": "array",
                                                                      "items": {"type": "string"}}}}}}
TYPED = [{"type": "function", "function": {"name": "f", "parameters": SCHEMA}}]
_text = st.text(max_size=20).filter(lambda s: NS not in s)
typed_args = st.fixed_dictionaries({}, optional={
    "s": _text, "n": st.integers(), "x": st.floats(allow_nan=False, allow_infinity=False), "b": st.booleans(),
    "l": st.lists(st.integers(), max_size=3),
    "o": st.fixed_dictionaries({}, optional={"t": _text, "m": st.lists(_text, min_size=1, max_size=3)}),
})
HISTORY = [{"role": "user", "content": "go"}]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(content=_text.filter(lambda s: "mm:think" not in s and "[e~[" not in s),
       calls=st.lists(typed_args, min_size=1, max_size=3))
def test_round_trip_typed_calls(content, calls):
    turn = {"role": "assistant", "content": content,
            "tool_calls": [{"id": str(k), "type": "function", "function": {"name": "f", "arguments": a}}
                           for k, a in enumerate(calls)]}
    output = generation(FMT, HISTORY, turn, TYPED, STOP, thinking=False)
    assert not output.startswith(MARKERS["think_close"])  # the prompt (thinking off) wrote it
    roundtrip(FMT, output, TYPED, content=content, calls=[("f", a) for a in calls], thinking=False)


@settings(max_examples=40, deadline=None)
@given(content=_text.filter(lambda s: "mm:think" not in s and "[e~[" not in s and "]~b]" not in s),
       reasoning=_text.filter(lambda s: s and "mm:think" not in s and "[e~[" not in s))
def test_round_trip_answer_with_reasoning(content, reasoning):
    turn = {"role": "assistant", "content": content, "reasoning_content": reasoning}
    output = generation(FMT, HISTORY, turn, TYPED, STOP, thinking=True)
    assert output.startswith(reasoning + MARKERS["think_close"])  # the prompt opened <mm:think>
    roundtrip(FMT, output, TYPED, content=content, reasoning=reasoning, calls=[], thinking=True)


ROWS = load_corpus("minimax_m3")


def test_the_corpus_covers_the_known_failures():
    codes = {code for row in ROWS for call in row["expected"]["calls"] for code in call["codes"]}
    assert {"m2_parameter_tag", "unclosed_invoke", "mismatched_close", "truncated", "unknown_tool",
            "call_in_reasoning"} <= codes
    assert {"unclosed_block", "stop_token_in_output", "truncated_call_header"} <= {
        code for row in ROWS for code in row["expected"]["codes"]}


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_malformed_output(row):
    check_corpus_row(row, declared("get_weather", "search"), tuple(MARKERS.values()) + ("invoke", "name", "item"))


def test_values_are_typed_by_the_schema():
    out = FMT.parse(f'{NS}<tool_call>{NS}<invoke name="f">{NS}<n> 12 {NS}</n>{NS}<s>007{NS}</s>{NS}<l>{NS}</l>'
                    f'{NS}<o>{NS}<m>{NS}<item> a {NS}</item>{NS}</m>{NS}</o>{NS}<n2>1{NS}</n2>{NS}</invoke>{NS}</tool_call>',
                    TYPED)
    assert out.tool_calls[0].arguments == {"n": 12, "s": "007", "l": [], "o": {"m": [" a "]}, "n2": "1"}
    assert out.tool_calls[0].status == "proposed" and not out.codes()
    bad = FMT.parse(f'{NS}<tool_call>{NS}<invoke name="f">{NS}<n>007{NS}</n>{NS}</invoke>{NS}</tool_call>', TYPED)
    assert bad.tool_calls[0].arguments == {"n": "007"} and bad.codes() == ["value_type_mismatch"]


def test_streaming_is_linear():
    assert_linear(FMT, f'{NS}<tool_call>\n{NS}<invoke name="search">{NS}<q>', f"{NS}</q>{NS}</invoke>\n{NS}</tool_call>",
                  declared("search"))
    assert_linear(FMT, "", "")
    assert_linear(FMT, "", "</mm:think>", thinking=True)


def test_the_prefix_from_ordinary_tokens_inside_a_value_stays_in_it():
    from tokens.test_token_input import SYNTHETIC_SPECIALS, _ids, feed_ids
    from toolwire.tokenize import byte_tokenizer

    tok = byte_tokenizer(SYNTHETIC_SPECIALS["minimax_m3"])
    before, after = f'{NS}<tool_call>{NS}<invoke name="search">{NS}<q>', f"{NS}</q>{NS}</invoke>{NS}</tool_call>"
    value = f"x {NS}</q>{NS}</invoke> y"
    out = feed_ids(FMT, _ids(tok, (before, True), (value, False), (after, True)), declared("search"), tok)
    assert [(c.name, c.arguments, c.status) for c in out.tool_calls] == [("search", {"q": value}, "proposed")]
    as_text = FMT.parse(before + value + after, declared("search"))  # as text, the prefix is structure
    assert as_text.tool_calls[0].arguments != {"q": value}


@pytest.mark.parametrize("depth,status", [(2, "proposed"), (1, "rejected")])
def test_nesting_past_the_limit_is_too_large(depth, status):
    call = f'{NS}<tool_call>{NS}<invoke name="store">{NS}<items>{{}}{NS}</items>{NS}</invoke>{NS}</tool_call>'
    out = FMT.parse(call.format(f"{NS}<item>1{NS}</item>"), declared("store"), limits=toolwire.Limits(max_depth=depth))
    assert [c.status for c in out.tool_calls] == [status]
    deep = f"{NS}<item>" * 100_000 + f"{NS}</item>" * 100_000
    out = FMT.parse(call.format(deep), declared("store"))
    assert [(c.status, [d.code for d in c.diagnostics]) for c in out.tool_calls] == [("rejected", ["too_large"])]
