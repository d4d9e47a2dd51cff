"""DeepSeek DSML stream parser: golden vectors (one-shot and streamed at any chunking), the malformed-output
corpus in ``fixtures/dsml/``, truncation at every position of a real call, streaming and linear time."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import toolwire
from support import (
    assert_events_consistent, check_chunking, check_golden_parse_oneshot, check_golden_parse_streamed, counting_scans,
    every_split, full_state, golden_params, random_chunks, stream_parse, summary,
)
from toolwire.output import ArgumentsDelta

FAMILIES = ("deepseek_v32", "deepseek_v4", "deepseek_v41")
FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "dsml"
CORPUS = [json.loads(line) for line in (FIXTURES / "malformed.jsonl").read_text(encoding="utf-8").splitlines() if line]
TRUNCATION = json.loads((FIXTURES / "truncation.json").read_text(encoding="utf-8"))


def tools_for(names):
    if names is None:
        return None
    return [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in names]


def result(out: toolwire.ParsedOutput) -> dict:
    """The exact comparable result: text fields, every call with status and source, all codes."""
    return {
        "content": out.content, "reasoning": out.reasoning,
        "tool_calls": [{"name": c.name, "arguments": c.arguments, "status": c.status, "source": c.source}
                       for c in out.tool_calls],
        "codes": out.codes(), "truncated": out.truncated,
    }


def splits_of(text: str, seed: int = 0) -> list[list[str]]:
    """1-char feeds, then every two-piece split (outputs up to 600 characters) or 40 random splittings."""
    if len(text) <= 600:
        return [list(text), *every_split(text)]
    return [list(text)] + [random_chunks(text, random.Random(seed + n), 64) for n in range(40)]


def assert_chunking_invariant(fmt, text, tools=None, *, seed=0, **kw):
    """1-char feeds, every two-piece split (short outputs) or random splits (long ones): all equal one-shot."""
    return check_chunking(fmt, text, tools, splits=splits_of(text, seed), **kw)


# ---- golden vectors

def _golden_rows():
    for fam in FAMILIES:
        yield from golden_params("parse", fam)


@pytest.mark.parametrize("row", list(_golden_rows()))
def test_golden_parse_one_shot(row):
    check_golden_parse_oneshot(row)


@pytest.mark.parametrize("row", list(_golden_rows()))
def test_golden_parse_streamed(row):
    check_golden_parse_streamed(row, splits_of(row["model_output"]))


# ---- the malformed-output corpus

@pytest.mark.parametrize("case", CORPUS, ids=[c["case"] for c in CORPUS])
def test_malformed_corpus(case):
    fmt = toolwire.get_format(case["family"])
    kw = {"thinking": case["thinking"]}
    if case.get("promote_reasoning_calls"):
        kw["promote_reasoning_calls"] = True
    tools = tools_for(case["tools"])
    out = assert_chunking_invariant(fmt, case["model_output"], tools, **kw)
    assert result(out) == case["expected"]
    raws = [(d.code, d.raw) for d in out.diagnostics] + [(d.code, d.raw) for c in out.tool_calls for d in c.diagnostics]
    for code, raw in case.get("diag_raw", {}).items():
        assert (code, raw) in raws
    if "raw_arguments" in case:
        assert [c.raw_arguments for c in out.tool_calls] == case["raw_arguments"]


def _truncation_expectation(index: int, k: int, piece: str) -> dict:
    table = TRUNCATION["expect"][index]
    key = str(k) if str(k) in table else "2+" if k >= 2 and "2+" in table else "1+" if k >= 1 and "1+" in table else "*"
    return json.loads(json.dumps(table[key]).replace("$part", json.dumps(piece[:k])[1:-1]))


@pytest.mark.parametrize("family", FAMILIES)
def test_truncation_at_every_position_of_a_real_call(family):
    fmt = toolwire.get_format(family)
    pieces = [p["text"] if "text" in p else fmt.markers[p["marker"]] for p in TRUNCATION["pieces"]]
    tools = tools_for(TRUNCATION["tools"])
    full = "".join(pieces)
    start = 0
    checked = 0
    for index, piece in enumerate(pieces):
        for k in range(len(piece)):
            prefix = full[:start + k]
            want = _truncation_expectation(index, k, piece)
            expected = {"content": want["content"], "reasoning": want["reasoning"],
                        "tool_calls": [{**c, "source": "content"} for c in want["calls"]],
                        "codes": want["codes"], "truncated": want["truncated"]}
            assert result(fmt.parse(prefix, tools, thinking=True)) == expected, (index, k, prefix)
            assert result(stream_parse(fmt, prefix, tools=tools, thinking=True)[0]) == expected, (index, k, prefix)
            checked += 1
        start += len(piece)
    out = fmt.parse(full, tools, thinking=True)
    want = TRUNCATION["full"]
    assert summary(out) == {"content": want["content"], "reasoning": want["reasoning"],
                            "tool_calls": [{"name": c["name"], "arguments": c["arguments"]} for c in want["calls"]]}
    assert out.codes() == [] and not out.truncated
    assert checked == len(full)


# ---- rules of the issue, one by one

V4 = "deepseek_v4"
BLOCK = "\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"search\">\n{params}\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>"


def _param(key, value, string="true"):
    attr = "" if string is None else f' string="{string}"'
    return f'<｜DSML｜parameter name="{key}"{attr}>{value}</｜DSML｜parameter>'


def test_string_true_values_are_byte_exact():
    value = "  &amp; \\n \"quoted\" \t\r\n <b>x</b> \\u003c  "
    out = toolwire.get_format(V4).parse(BLOCK.format(params=_param("q", value)))
    assert out.tool_calls[0].arguments == {"q": value}


def test_string_false_integers_are_exact_beyond_int64():
    out = toolwire.get_format(V4).parse(BLOCK.format(params=_param("n", str(2**64 + 1), "false")))
    assert out.tool_calls[0].arguments == {"n": 2**64 + 1}
    assert out.tool_calls[0].arguments_json() == f'{{"n": {2**64 + 1}}}'


def test_missing_string_attribute_is_json_if_it_parses_else_text():
    out = toolwire.get_format(V4).parse(BLOCK.format(params=_param("a", "[1, 2]", None) + "\n" + _param("b", "x y", None)))
    call = out.tool_calls[0]
    assert call.arguments == {"a": [1, 2], "b": "x y"}
    assert [d.code for d in call.diagnostics] == ["missing_string_attribute", "missing_string_attribute"]


def test_the_blank_line_before_the_block_belongs_to_the_block():
    out = toolwire.get_format(V4).parse("Text.\n" + BLOCK.format(params=_param("q", "a")))
    assert out.content == "Text.\n"
    assert out.codes() == []


def test_unknown_tool_is_rejected_never_dropped():
    out = toolwire.get_format(V4).parse(BLOCK.format(params=_param("q", "a")), tools_for(["other"]))
    (call,) = out.tool_calls
    assert (call.name, call.status, call.arguments) == ("search", "rejected", {"q": "a"})
    assert [d.code for d in call.diagnostics] == ["unknown_tool"]


def test_calls_get_stable_ids_and_raw_text():
    out = toolwire.get_format(V4).parse(BLOCK.format(params=_param("q", "a")))
    (call,) = out.tool_calls
    assert call.id == "call_0"
    assert call.raw_arguments == "\n" + _param("q", "a") + "\n"


# ---- streaming

def test_string_values_stream_before_the_close_tag():
    fmt = toolwire.get_format(V4)
    parser = fmt.stream()
    head = "\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"write\">\n<｜DSML｜parameter name=\"text\" string=\"true\">"
    events = parser.feed(head)
    assert [e.type for e in events] == ["tool_call_started", "arguments", "arguments"]
    assert "".join(e.fragment for e in events if isinstance(e, ArgumentsDelta)) == '{"text": "'
    events = parser.feed('line "one"\n')
    assert [e.fragment for e in events] == ['line \\"one\\"\\n']
    # only what could still start the closing tag is held back
    events = parser.feed("a</｜DSML｜para")
    assert [e.fragment for e in events] == ["a"]
    events = parser.feed("b")  # not the closing tag after all: released
    assert [e.fragment for e in events] == ["</｜DSML｜parab"]
    parser.feed("</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>")
    out = parser.finish()
    assert out.tool_calls[0].arguments == {"text": 'line "one"\na</｜DSML｜parab'}


def test_content_streams_without_waiting_and_holds_back_only_a_marker_prefix():
    parser = toolwire.get_format(V4).stream()
    assert [(e.type, e.text) for e in parser.feed("Hello")] == [("content", "Hello")]
    assert [(e.type, e.text) for e in parser.feed(" world\n")] == [("content", " world")]
    assert [(e.type, e.text) for e in parser.feed("x")] == [("content", "\nx")]


def test_reasoning_then_content_with_thinking():
    parser = toolwire.get_format(V4).stream(thinking=True)
    assert [(e.type, e.text) for e in parser.feed("I think</thi")] == [("reasoning", "I think")]
    assert [(e.type, e.text) for e in parser.feed("nk>Answer")] == [("content", "Answer")]


@pytest.mark.parametrize("family", FAMILIES)
def test_streaming_is_linear_and_the_buffer_stays_small(family):
    """Each character is scanned a bounded number of times, whatever the value's length."""
    fmt = toolwire.get_format(family)
    m = fmt.markers
    value = "lorem </ipsum> " * 4000
    text = (f"\n\n{m['tool_calls_open']}\n{m['invoke_open']}write\">\n{m['parameter_open']}text\" string=\"true\">"
            f"{value}{m['parameter_close']}\n{m['invoke_close']}\n{m['tool_calls_close']}")
    with counting_scans() as scanned:
        parser = fmt.stream()
        longest = 0
        for i in range(0, len(text), 4):
            parser.feed(text[i:i + 4])
            longest = max(longest, len(parser._buf))
        out = parser.finish()
    assert out.tool_calls[0].arguments == {"text": value}
    assert longest < 2 * len(m["parameter_close"])
    assert scanned[0] < 4 * len(text)


# ---- bad input never crashes

_PIECES = st.sampled_from([
    "\n\n", "\n", "<｜DSML｜tool_calls>", "</｜DSML｜tool_calls>", '<｜DSML｜invoke name="', "</｜DSML｜invoke>",
    '<｜DSML｜parameter name="', "</｜DSML｜parameter>", '" string="true">', '" string="false">', '">', "</think>",
    "<｜DSML｜tool>", "search", "get_weather", "1", "[", '"', "<", ">", "x y", "｜DSML｜", "</｜DSML｜para",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=30), st.booleans(), st.booleans(), st.randoms(use_true_random=False))
def test_any_output_parses_the_same_one_shot_and_streamed(pieces, thinking, with_tools, rnd):
    text = "".join(pieces)
    fmt = toolwire.get_format(V4)
    tools = tools_for(["search"]) if with_tools else None
    one = fmt.parse(text, tools, thinking=thinking)
    res, events = stream_parse(fmt, text, random_chunks(text, rnd, 5), tools=tools, thinking=thinking)
    assert full_state(res) == full_state(one)
    assert_events_consistent(res, events)
    # truncated output never yields a complete-looking call at the end
    if one.truncated and one.tool_calls and one.codes()[-1] == "truncated_call":
        assert one.tool_calls[-1].status == "truncated"
