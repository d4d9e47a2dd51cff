"""gpt_oss malformed channel sequences: the fixtures/harmony corpus (exact results, one-shot, streamed and as
token ids) and random marker soup (never raises; streamed, one-shot and token ids agree)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import toolwire
from support import (assert_events_consistent, check_chunking, counting_scans, every_split, full_state,
                     stream_parse)
from support.harmony_oracles import tiktoken_encoding

FMT = toolwire.get_format("gpt_oss")
CORPUS = Path(__file__).resolve().parents[3] / "fixtures" / "harmony" / "malformed.jsonl"
CASES = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def _tools(names):
    return [{"type": "function", "function": {"name": n, "description": n}} for n in names or []]


def _check(out, expected: dict) -> None:
    assert (out.content, out.reasoning, out.truncated) == (
        expected["content"], expected["reasoning"], expected["truncated"])
    assert [[d.code, d.raw] for d in out.diagnostics] == expected["diagnostics"]
    assert len(out.tool_calls) == len(expected["calls"])
    for call, want in zip(out.tool_calls, expected["calls"]):
        assert (call.name, call.status, call.source, call.arguments) == (
            want["name"], want["status"], want["source"], want["arguments"])
        assert set(want["codes_include"]) <= {d.code for d in call.diagnostics}


def _ids_parse(text: str, tools, **options):
    enc = tiktoken_encoding()
    parser = FMT.stream(tools, encoding=enc, **options)
    events = parser.feed(ids=enc.encode(text, allowed_special="all")) + parser.flush()
    result = parser.finish()
    assert_events_consistent(result, events)
    return result


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_corpus_case(case):
    tools = _tools(case["tools"])
    text = case["output"]
    options = case.get("options", {})
    out = check_chunking(FMT, text, tools, splits=[list(text), *every_split(text)], **options)
    _check(out, case["expected"])
    assert full_state(_ids_parse(text, tools, **options)) == full_state(out)


def test_corpus_is_not_trivial():
    codes = {d[0] for c in CASES for d in c["expected"]["diagnostics"]}
    assert {"missing_end", "missing_start", "missing_header", "malformed_header", "unexpected_role",
            "stray_marker", "text_between_messages", "truncated_header", "missing_channel",
            "unknown_channel"} <= codes


_PIECES = st.sampled_from(list(FMT.markers.values()) + [
    "assistant", "user", "functions.get_weather", " to=functions.get_weather", " to=assistant", "analysis",
    "final", "commentary", " json", " <|constrain|>json", "{", "}", '"city"', ": ", '"Oslo"', ", ", "\n", " ",
    "hello", "<|", "|>", "<|end", "to=", "[1, 2]", "true", "\\", '"'])
SOUP = st.lists(_PIECES | st.text(max_size=5), max_size=40).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SOUP, st.integers(1, 7))
def test_marker_soup_never_raises_and_streams_like_one_shot(text, size):
    tools = _tools(["get_weather"])
    one_shot = FMT.parse(text, tools)
    chunks = [text[i:i + size] for i in range(0, len(text), size)]
    result, events = stream_parse(FMT, text, chunks, tools=tools)
    assert full_state(result) == full_state(one_shot)
    assert_events_consistent(result, events)
    assert full_state(_ids_parse(text, tools)) == full_state(one_shot)
    for call in one_shot.tool_calls:
        assert call.status in ("proposed", "repaired", "rejected", "truncated")


def test_streaming_cost_is_linear():
    """1-char feeds of 32x more output scan each character a bounded number of times: nothing is re-parsed per
    delta (counted, not timed; the per-delta CPU cost is bench/bench_harmony.py's table)."""
    def output(n):
        return ("<|channel|>analysis<|message|>" + "think " * n + "<|end|><|start|>assistant to=functions.get_weather"
                '<|channel|>commentary json<|message|>{"city": "' + "x" * (6 * n) + '"}')

    for n in (200, 6400):
        text = output(n)
        with counting_scans(json_scanner=True) as scanned:
            parser = FMT.stream(_tools(["get_weather"]))
            for ch in text:
                parser.feed(ch)
            parser.finish()
        assert scanned[0] <= 2 * len(text) + 1_000, (n, scanned[0], len(text))
