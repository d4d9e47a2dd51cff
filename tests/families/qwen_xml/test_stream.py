"""Streaming behaviour of the shared XML-call parser: what is emitted when, what is held back, linear cost."""

from __future__ import annotations

import json

import pytest

import toolwire
from support.xml_calls import START_TOOLS, check_truncated_header, check_truncated_over_limit, corpus_tools
from support import assert_events_consistent, counting_scans, stream_parse

TOOLS = corpus_tools("qwen_xml")
CODER = toolwire.get_format("qwen3_coder")
QWEN35 = toolwire.get_format("qwen35")
SEED = toolwire.get_format("seed_oss")


def fragments(events):
    return [e.fragment for e in events if e.type == "arguments"]


def test_string_values_stream_holding_back_only_a_closing_tag_prefix_and_one_newline():
    p = CODER.stream(TOOLS)
    ev = p.feed("<tool_call>\n<function=write_file>\n<parameter=content>\nhello wor")
    assert [e.type for e in ev] == ["tool_call_started", "arguments", "arguments", "arguments"]
    assert fragments(ev) == ['{"content": ', '"', "hello wor"]
    assert fragments(p.feed("ld\n</para")) == ["ld"]          # "\n</para" may be framing + closing tag
    assert fragments(p.feed("meter>\n")) == []                 # a closing tag, unconfirmed until what follows
    ev = p.feed("<parameter=path>\na.py\n</parameter>\n</function>\n</tool_call>")
    assert fragments(ev) == ['"', ', "path": ', '"', "a.py", '"', "}"]
    assert ev[-1].type == "tool_call_finished"
    assert ev[-1].candidate.arguments == {"content": "hello world", "path": "a.py"}
    assert p.finish().tool_calls[0].raw_arguments == (
        "\n<parameter=content>\nhello world\n</parameter>\n<parameter=path>\na.py\n</parameter>\n")


def test_a_rejected_closing_tag_is_streamed_as_value_text():
    p = CODER.stream(TOOLS)
    p.feed("<tool_call>\n<function=write_file>\n<parameter=content>\nx\n</parameter>")
    assert fragments(p.feed(" ")) == []                        # whitespace: still undecided
    assert fragments(p.feed("y")) == [json.dumps("\n</parameter> ")[1:-1], "y"]
    p.feed("\n</parameter>\n</function>\n</tool_call>")
    assert p.finish().tool_calls[0].arguments == {"content": "x\n</parameter> y"}


def test_typed_values_are_sent_when_complete():
    p = CODER.stream(TOOLS)
    assert fragments(p.feed("<tool_call>\n<function=get_weather>\n<parameter=days>\n1")) == []
    assert fragments(p.feed("2\n</parameter>\n<")) == []
    assert fragments(p.feed("/function>")) == ['{"days": ', "12", "}"]


def test_reasoning_and_content_hold_back_only_framing_newlines():
    p = QWEN35.stream(TOOLS, thinking=True)
    assert [(e.type, e.text) for e in p.feed("abc\n")] == [("reasoning", "abc")]
    assert [(e.type, e.text) for e in p.feed("</think>\n\nHi\n")] == [("content", "Hi")]
    assert p.feed("\n<tool_") == []
    assert [e.type for e in p.feed("call>\n<function=list_projects>")] == ["tool_call_started"]
    out = p.finish()
    assert (out.reasoning, out.content, out.tool_calls[0].status) == ("abc", "Hi", "truncated")


def test_promoted_reasoning_call_keeps_its_source():
    out = QWEN35.parse("<tool_call>\n<function=list_projects>\n</function>\n</tool_call>\n</think>\n\n", TOOLS,
                       thinking=True, promote_reasoning_calls=True)
    assert [(c.name, c.status, c.source) for c in out.tool_calls] == [("list_projects", "proposed", "reasoning")]


@pytest.mark.parametrize("fmt,opening,closing", [
    (CODER, "<tool_call>\n<function=write_file>\n<parameter=content>\n", "\n</parameter>\n</function>\n</tool_call>"),
    (SEED, "<seed:tool_call>\n<function=write_file>\n<parameter=content>", "</parameter>\n</function>\n</seed:tool_call>"),
])
def test_buffer_stays_bounded_and_scanning_is_linear(fmt, opening, closing):
    """A 64k value in 4-char deltas: the parser keeps only a short tail and scans each character a bounded
    number of times (no re-parse of the buffer per delta)."""
    unit = "ab</par\n\n</parameter x\n"                     # near-miss closing tags and newlines
    value = (unit * (65536 // len(unit) + 1))[:65536]
    text = opening + value + closing
    with counting_scans() as scanned:
        p = fmt.stream(TOOLS)
        events = []
        longest = 0
        for i in range(0, len(text), 4):
            events.extend(p.feed(text[i:i + 4]))
            longest = max(longest, len(p._buf))
        events.extend(p.flush())
        out = p.finish()
    assert out.tool_calls[0].arguments == {"content": value}
    assert_events_consistent(out, events)
    assert longest <= 32
    assert scanned[0] <= 5 * len(text)


def test_one_character_feeds_equal_one_shot_for_a_long_value():
    text = "<tool_call>\n<function=write_file>\n<parameter=content>\n" + "x\n" * 3000 + "\n</parameter>\n</function>\n</tool_call>"
    result, events = stream_parse(CODER, text, tools=TOOLS)
    assert result == CODER.parse(text, TOOLS)
    assert_events_consistent(result, events)
    assert result.tool_calls[0].arguments["content"] == "x\n" * 3000


@pytest.mark.parametrize("family, output, header", [
    ("qwen3_coder", "Hi\n\n<tool_call>\n<function=get_wea", "<tool_call>\n<function=get_wea"),
    ("qwen35", "<tool_call>\n<func", "<tool_call>\n<func"),
    ("qwen36", "<tool_call>\n<function=", "<tool_call>\n<function="),
    ("seed_oss", "<seed:tool_call>\n<function=get_wea", "<seed:tool_call>\n<function=get_wea"),
])
def test_output_ending_inside_a_call_header_starts_no_call(family, output, header):
    check_truncated_header(family, output, header)


@pytest.mark.parametrize("family, output", [
    ("qwen35", "<tool_call>\n<function=get_weather>\n<parameter=city>\n" + "x" * 100),
    ("seed_oss", "<seed:tool_call>\n<function=get_weather>\n<parameter=city>" + "x" * 100),
])
def test_truncated_over_limit_value_is_truncated(family, output):
    check_truncated_over_limit(family, output)


def test_bare_function_header_at_the_end_is_content():
    out = toolwire.get_format("qwen35").parse("See <function=get_wea", START_TOOLS, thinking=False)
    assert (out.content, out.tool_calls, out.diagnostics, out.truncated) == ("See <function=get_wea", [], [], False)


@pytest.mark.parametrize("family", ["qwen3_coder", "qwen35", "qwen36"])
def test_bare_function_from_ordinary_token_ids_is_text(family):
    """From token ids a call needs its control-token marker: ``<function=`` holds none, so a bare call written
    in ordinary tokens stays content (in text it is a ``missing_call_wrapper`` repair)."""
    from support import REAL, require_shared
    from toolwire.tokenize import load_tokenizer, vocabulary

    require_shared()
    pytest.importorskip("tokenizers")
    folder = REAL / "tokenizers" / "Qwen3"
    if not folder.exists():
        pytest.skip(f"{folder} is absent")
    tok = load_tokenizer(str(folder))
    text = "<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n</function>"
    fmt = toolwire.get_format(family)
    assert fmt.parse(text, START_TOOLS, thinking=False).tool_calls[0].status == "repaired"
    parser = fmt.stream(START_TOOLS, tokenizer=tok, thinking=False)
    parser.feed(ids=vocabulary(tok).encode_plain(text))
    out = parser.finish()
    assert (out.content, out.tool_calls) == (text, [])
