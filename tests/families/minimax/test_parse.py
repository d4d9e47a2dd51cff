"""MiniMax-M2 stream parser: round trip (hypothesis), the closing-tag rule, streaming of values, reasoning
calls, the malformed-output corpus (fixtures/minimax) and linear-time streaming."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import toolwire
from toolwire.errors import UnrepresentableValue
from toolwire.output import ArgumentsDelta
from support import counting_scans, summary
from support.typed_xml_args import (
    calls, check_chunking, check_corpus_case, check_fuzz, consistent_types, load_corpus, marker_soup, merged_tools,
    strings, turn_output, without,
)

MM = toolwire.get_format("minimax_m2")
# independent statement of when a MiniMax value cannot be written as is (see docs/xml-values.md)
AMBIGUOUS = re.compile(r'</parameter>[ \t\r\n]*(<parameter name="|</invoke>|<invoke name="|</minimax:tool_call>)'
                       r'|</invoke>[ \t\r\n]*(<invoke name="|</minimax:tool_call>)')


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(call_list=calls, content=strings.filter(without("<minimax:tool_call>", "</think>")),
       reasoning=strings.filter(without("</think>", "<minimax:tool_call>")).filter(bool)
       .filter(lambda r: not r.lstrip(" \t\r\n").startswith("<think>")))  # a repeated opener is dropped
def test_round_trip(call_list, content, reasoning):
    """parse(render(assistant turn)) == the turn: content and reasoning unstripped, values typed by schema."""
    assume(consistent_types(call_list))
    turn = {"role": "assistant", "content": content, "reasoning_content": reasoning,
            "tool_calls": [{"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": a}}
                           for i, (n, a) in enumerate(call_list)]}
    tools = merged_tools(call_list)
    try:
        output = turn_output(MM, [{"role": "user", "content": "go"}], turn, tools, thinking=True)
    except UnrepresentableValue as exc:
        _, _, key = exc.field.partition(".arguments.")
        value = call_list[int(exc.field.split("[")[1].split("]")[0])][1][key]
        assert AMBIGUOUS.search(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
        assume(False)
    out = check_chunking(MM, output, tools, thinking=True, exhaustive=False)
    assert summary(out) == {"content": content, "reasoning": reasoning,
                            "tool_calls": [{"name": n, "arguments": a} for n, a in call_list]}
    assert all(c.status == "proposed" and not c.diagnostics for c in out.tool_calls)
    # content that looks like a drifted call (an undeclared name) may carry an info note; nothing else
    assert not [d for d in out.diagnostics if d.severity != "info"] and not out.truncated


@pytest.mark.parametrize("row", load_corpus("minimax"))
def test_malformed_corpus(row):
    check_corpus_case(row)


WRITE = [{"type": "function", "function": {"name": "write_file", "parameters": {"type": "object", "properties": {
    "content": {"type": "string"}, "mode": {"type": "integer"}}}}}]
HEAD = 'r\n</think>\n\n<minimax:tool_call>\n<invoke name="write_file">\n'


def _fragments(events) -> str:
    return "".join(e.fragment for e in events if isinstance(e, ArgumentsDelta))


def test_string_values_stream_as_they_arrive_holding_back_only_a_closer_prefix():
    parser = MM.stream(WRITE, thinking=True)
    assert _fragments(parser.feed(HEAD + '<parameter name="content">')) == '{"content": "'
    assert _fragments(parser.feed("a\tb</param")) == "a\\tb"
    assert _fragments(parser.feed("eter>!")) == "</parameter>!"
    assert _fragments(parser.feed("</parameter>\n")) == ""  # undecided: a follower may come
    assert _fragments(parser.feed('<parameter name="mode">1')) == '"'  # closed; typed values wait
    assert _fragments(parser.feed("0</parameter>\n</invoke>\n</minimax:tool_call>")) == ', "mode": 10}'
    assert parser.finish().tool_calls[0].arguments == {"content": "a\tb</parameter>!", "mode": 10}


def test_closing_tag_rule_table():
    for value in ["</parameter>", "a</parameter>b", "</parameter> </parameter>", "</invoke>", "x</invoke>y",
                  "</minimax:tool_call>", '<parameter name="k">', "\n", '">']:
        text = HEAD + f'<parameter name="content">{value}</parameter>\n</invoke>\n</minimax:tool_call>'
        out = check_chunking(MM, text, WRITE, thinking=True)
        assert out.tool_calls[0].arguments == {"content": value}, value
        assert out.tool_calls[0].status == "proposed"


def test_reasoning_framing_is_exact():
    out = MM.parse("\n a \n\n</think>\n\n\n b \n", thinking=True)
    assert (out.reasoning, out.content) == ("\n a \n", "\n b \n")


def test_promote_reasoning_calls():
    text = 'x<minimax:tool_call>\n<invoke name="write_file">\n</invoke>\n</minimax:tool_call>\n</think>\n\ny'
    out = MM.parse(text, WRITE, thinking=True, promote_reasoning_calls=True)
    assert [(c.source, c.status) for c in out.tool_calls] == [("reasoning", "proposed")]
    assert (out.reasoning, out.content) == ("x", "y")


def test_streaming_cost_is_linear_in_output():
    body = ("<p>x</parameter> y </invoke>z </param\n" * 1800)[:65536]
    text = HEAD + '<parameter name="content">' + body + "</parameter>\n</invoke>\n</minimax:tool_call>"
    with counting_scans() as scanned:
        parser = MM.stream(WRITE, thinking=True)
        biggest = 0
        for i in range(0, len(text), 5):
            parser.feed(text[i:i + 5])
            biggest = max(biggest, len(parser._buf))
        out = parser.finish()
    assert out.tool_calls[0].arguments["content"] == body
    assert biggest <= 32
    assert scanned[0] <= 4 * len(text)


GET_WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
    "city": {"type": "string"}, "days": {"type": "integer"}}}}}]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=marker_soup(MM.markers.values()), tools=st.sampled_from([None, WRITE, GET_WEATHER]))
def test_marker_soup_never_crashes_and_loses_nothing(text, tools):
    check_fuzz(MM, text, tools)


# ---- where parsing starts: the MiniMax prompt always opens <think>; thinking=False still starts in content

from support.xml_calls import AFTER_TOOL, AFTER_USER, check_start_state  # noqa: E402


@pytest.mark.parametrize("history", [AFTER_USER, AFTER_TOOL], ids=["after_user", "after_tool_result"])
@pytest.mark.parametrize("thinking", [True, False])
def test_parsing_starts_where_the_prompt_left_off(thinking, history):
    check_start_state("minimax_m2", thinking, history, "]~b]ai\n<think>\n", "R\n</think>\n\nC", True, ("R", "C"),
                      ("", ""))


def test_thinking_false_starts_in_content():
    out = MM.parse("R\n</think>\n\nC", thinking=False)
    assert (out.reasoning, out.content) == ("", "R\n\n\nC")
    assert [(d.code, d.raw) for d in out.diagnostics] == [("reasoning_close_in_content", "</think>")]


from support.xml_calls import check_truncated_header, check_truncated_over_limit  # noqa: E402


@pytest.mark.parametrize("output, header", [
    ('<minimax:tool_call>\n<invoke name="get', '<minimax:tool_call>\n<invoke name="get'),
    ("<minimax:tool_call>\n<inv", "<minimax:tool_call>\n<inv"),
])
def test_output_ending_inside_a_call_header_starts_no_call(output, header):
    check_truncated_header("minimax_m2", output, header)


def test_truncated_over_limit_value_is_truncated():
    check_truncated_over_limit("minimax_m2", '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">'
                               + "x" * 100)
