"""GLM stream parsers: round trip (hypothesis), the closing-tag rule, streaming of values, names, reasoning
calls, truncation, the malformed-output corpus (fixtures/glm) and linear-time streaming."""

from __future__ import annotations

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

FAMILIES = ("glm45", "glm46", "glm47")
# independent statement of when a GLM value cannot be written as is (see docs/xml-values.md)
AMBIGUOUS = re.compile(r"</arg_value>[ \t\r\n]*(<arg_key>|</tool_call>|<tool_call>)|</tool_call>[ \t\r\n]*<tool_call>")
MARKUP_FREE = without("<tool_call>", "<think>", "</think>")


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_round_trip(family, data):
    """parse(render(assistant turn)) == the turn, for every JSON type, typed by the tool schema."""
    fmt = toolwire.get_format(family)
    thinking = data.draw(st.booleans(), label="thinking")
    call_list = data.draw(calls, label="calls")
    assume(consistent_types(call_list))
    content = data.draw(strings.filter(MARKUP_FREE), label="content")
    if not thinking:
        reasoning = ""
    elif family == "glm47":
        reasoning = data.draw(strings.filter(MARKUP_FREE).filter(bool), label="reasoning")
    else:
        reasoning = data.draw(strings.filter(MARKUP_FREE), label="reasoning")
    turn = {"role": "assistant", "content": content, "reasoning_content": reasoning,
            "tool_calls": [{"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": a}}
                           for i, (n, a) in enumerate(call_list)]}
    tools = merged_tools(call_list)
    try:
        output = turn_output(fmt, [{"role": "user", "content": "go"}], turn, tools, thinking=thinking)
    except UnrepresentableValue as exc:
        _, _, key = exc.field.partition(".arguments.")
        call = int(exc.field.split("[")[1].split("]")[0])
        value = call_list[call][1][key]
        assert AMBIGUOUS.search(value if isinstance(value, str) else __import__("json").dumps(value, ensure_ascii=False))
        assume(False)
    opened = fmt.render([{"role": "user", "content": "go"}], tools, thinking=thinking).opens_reasoning
    out = check_chunking(fmt, output, tools, thinking=opened, exhaustive=False)
    assert summary(out) == {"content": content.strip(), "reasoning": reasoning.strip(),
                            "tool_calls": [{"name": n, "arguments": a} for n, a in call_list]}
    assert all(c.status == "proposed" and not c.diagnostics for c in out.tool_calls)
    # content that looks like a drifted call (an undeclared name) may carry an info note; nothing else
    assert not [d for d in out.diagnostics if d.severity != "info"] and not out.truncated


@pytest.mark.parametrize("row", load_corpus("glm"))
def test_malformed_corpus(row):
    check_corpus_case(row)


WRITE = [{"type": "function", "function": {"name": "write_file", "parameters": {"type": "object", "properties": {
    "content": {"type": "string"}, "mode": {"type": "integer"}, "meta": {"type": "object"}}}}}]


def test_string_values_stream_as_they_arrive_holding_back_only_a_closer_prefix():
    parser = toolwire.get_format("glm47").stream(WRITE, thinking=False)
    opened = parser.feed("<tool_call>write_file<arg_key>content</arg_key><arg_value>")
    assert "".join(e.fragment for e in opened if isinstance(e, ArgumentsDelta)) == '{"content": "'
    first = parser.feed("line one\nline two</arg_")
    assert "".join(e.fragment for e in first if isinstance(e, ArgumentsDelta)) == "line one\\nline two"
    held = parser.feed("value> still text")  # not followed by a structural marker: value text
    assert "".join(e.fragment for e in held if isinstance(e, ArgumentsDelta)) == "</arg_value> still text"
    undecided = parser.feed("</arg_value>  ")  # a follower may still come: held back
    assert [e for e in undecided if isinstance(e, ArgumentsDelta)] == []
    closing = parser.feed("<arg_key>mode</arg_key><arg_value>4")
    assert "".join(e.fragment for e in closing if isinstance(e, ArgumentsDelta)) == '"'  # typed values wait
    done = parser.feed("2</arg_value><arg_key>meta</arg_key><arg_value>{\"a\": [1]}</arg_value></tool_call>")
    assert "".join(e.fragment for e in done if isinstance(e, ArgumentsDelta)) == ', "mode": 42, "meta": {"a": [1]}}'
    out = parser.finish()
    assert out.tool_calls[0].arguments == {"content": "line one\nline two</arg_value> still text", "mode": 42,
                                           "meta": {"a": [1]}}


@pytest.mark.parametrize("family", FAMILIES)
def test_closing_tag_rule_table(family):
    fmt = toolwire.get_format(family)
    nl = "" if family == "glm47" else "\n"
    for value in ["</arg_value>", "a</arg_value>b", "a</arg_value> </arg_value>", "</arg_value>x<arg_key", "</tool_call>",
                  "x</tool_call>y", "</arg_key><arg_value>", "<tool_call>", "  "]:
        text = (f"{nl}<tool_call>write_file{nl}<arg_key>content</arg_key>{nl}<arg_value>{value}</arg_value>{nl}"
                "</tool_call>")
        out = check_chunking(fmt, text, WRITE, thinking=False)
        assert out.tool_calls[0].arguments == {"content": value}, value
        assert out.tool_calls[0].status == "proposed"


@pytest.mark.parametrize("family", FAMILIES)
def test_calls_in_reasoning_are_reported_not_promoted_unless_asked(family):
    fmt = toolwire.get_format(family)
    call = "<tool_call>write_file<arg_key>mode</arg_key><arg_value>1</arg_value></tool_call>"
    text = f"thinking {call}</think>answer" if family == "glm47" else f"\n<think>thinking {call}</think>\nanswer"
    opened = family == "glm47"  # the GLM-4.5 / 4.6 prompt never opens <think>; the model writes it
    out = check_chunking(fmt, text, WRITE, thinking=opened)
    (cand,) = out.tool_calls
    assert (cand.source, cand.status, cand.arguments) == ("reasoning", "rejected", {"mode": 1})
    assert [d.code for d in cand.diagnostics] == ["call_in_reasoning"]
    assert (out.reasoning, out.content) == ("thinking ", "answer")
    promoted = fmt.parse(text, WRITE, thinking=opened, promote_reasoning_calls=True)
    assert promoted.tool_calls[0].status == "proposed" and promoted.tool_calls[0].source == "reasoning"


def test_glm45_newline_after_name_is_framing_and_glm47_newline_is_a_repair():
    text45 = "\n<tool_call>write_file\n<arg_key>mode</arg_key>\n<arg_value>1</arg_value>\n</tool_call>"
    out = toolwire.get_format("glm45").parse(text45, WRITE)
    assert out.tool_calls[0].status == "proposed" and out.tool_calls[0].name == "write_file"
    out = toolwire.get_format("glm47").parse(text45.lstrip("\n"), WRITE, thinking=False)
    assert out.tool_calls[0].status == "repaired" and out.tool_calls[0].name == "write_file"
    assert "tool_name_newline" in out.codes()


def test_glm45_think_is_reasoning_only_at_the_start():
    out = toolwire.get_format("glm45").parse("\nSee <think>this</think> tag.")
    assert (out.content, out.reasoning) == ("See <think>this tag.", "")  # a closer in content: dropped, diagnosed
    assert [(d.code, d.raw) for d in out.diagnostics] == [("reasoning_close_in_content", "</think>")]
    out = toolwire.get_format("glm45").parse("\n<think>a\nb</think>\n\nc")
    assert (out.content, out.reasoning) == ("\nc", "a\nb")


# ---- linear time: bounded scanning and buffering while one value grows to 64k characters

def test_streaming_cost_is_linear_in_output():
    for family in FAMILIES:
        fmt = toolwire.get_format(family)
        head = "<tool_call>write_file<arg_key>content</arg_key><arg_value>"
        body = ("x = '</arg_value>' if a < b else </arg_\n" * 1700)[:65536]
        text = head + body + "</arg_value></tool_call>"
        with counting_scans() as scanned:
            parser = fmt.stream(WRITE, thinking=False)
            biggest = 0
            for i in range(0, len(text), 7):
                parser.feed(text[i:i + 7])
                biggest = max(biggest, len(parser._buf))
            out = parser.finish()
        assert out.tool_calls[0].arguments["content"] == body
        assert biggest <= 32, "the parser keeps only a bounded tail"
        assert scanned[0] <= 4 * len(text), f"scanned {scanned[0]} characters for a {len(text)}-character output"


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_marker_soup_never_crashes_and_loses_nothing(family, data):
    fmt = toolwire.get_format(family)
    text = data.draw(marker_soup(fmt.markers.values()), label="output")
    tools = data.draw(st.sampled_from([None, WRITE, GET_WEATHER]), label="tools")
    check_fuzz(fmt, text, tools, thinking=data.draw(st.booleans(), label="thinking"))


GET_WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
    "city": {"type": "string"}, "days": {"type": "integer"}}}}}]


# ---- where parsing starts: the prompt's own state (tails read off the reference templates by hand)

from support.xml_calls import AFTER_TOOL, AFTER_USER, check_start_state  # noqa: E402


@pytest.mark.parametrize("history", [AFTER_USER, AFTER_TOOL], ids=["after_user", "after_tool_result"])
@pytest.mark.parametrize("family, thinking, tail, opened", [
    ("glm45", True, "<|assistant|>", False), ("glm45", False, "<|assistant|>\n<think></think>", False),
    ("glm46", True, "<|assistant|>", False), ("glm46", False, "<|assistant|>\n<think></think>", False),
    ("glm47", True, "<|assistant|><think>", True), ("glm47", False, "<|assistant|></think>", False),
])
def test_parsing_starts_where_the_prompt_left_off(family, thinking, tail, opened, history):
    if family == "glm47":
        check_start_state(family, thinking, history, tail, "R</think>C", opened, ("R", "C"), ("", "RC"))
    else:  # 4.5 / 4.6: a framing newline first; the closer's own framing newline after it
        check_start_state(family, thinking, history, tail, "\nR</think>\nC", opened, ("R", "C"), ("", "R\nC"))


def test_glm45_own_think_opens_reasoning_in_content_mode():
    out = toolwire.get_format("glm45").parse("\n<think>R</think>\nC", thinking=False)
    assert (out.reasoning, out.content, out.diagnostics) == ("R", "C", [])


from support.xml_calls import check_truncated_header, check_truncated_over_limit  # noqa: E402


@pytest.mark.parametrize("family, output, header", [
    ("glm45", "\n<tool_call>get_wea", "<tool_call>get_wea"), ("glm47", "<tool_call>get_wea", "<tool_call>get_wea"),
    ("glm47", "<tool_call>", "<tool_call>"),
])
def test_output_ending_inside_a_call_header_starts_no_call(family, output, header):
    check_truncated_header(family, output, header)


def test_truncated_over_limit_value_is_truncated():
    check_truncated_over_limit("glm47", "<tool_call>get_weather<arg_key>city</arg_key><arg_value>" + "x" * 100)
