"""toolwire.integrations.wire_policy: the fail-closed stream an engine adapter puts on the wire (no engine needed).

Expected values are written by hand from the wire format, or taken from the golden vectors' outputs (the text
the model wrote), never from the stream under test."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings, strategies as st

import toolwire
from support import GOLDEN, require_shared
from toolwire.integrations.engine_stream import ReasoningSplitter
from toolwire.integrations.wire_policy import FailClosedStream

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
GOOD = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
UNKNOWN = '<tool_call>\n{"name": "get_wether", "arguments": {"city": "Paris"}}\n</tool_call>'
NOT_JSON = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {city: 'Paris'}}\n</tool_call>"
CUT = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par'


def run(output: str, size: int, declared=("get_weather",), family: str = "qwen3", tools=TOOLS, **options):
    stream = FailClosedStream(family, tools, declared=declared, **options)
    folds = [stream.feed(output[i:i + size]) for i in range(0, len(output), size)] + [stream.flush()]
    calls: dict[int, dict] = {}
    for fold in folds:
        for piece in fold.calls:
            call = calls.setdefault(piece.index, {"ids": [], "name": None, "arguments": ""})
            if piece.id:
                call["ids"].append(piece.id)
            call["name"] = call["name"] or piece.name
            call["arguments"] += piece.arguments
    return stream, "".join(f.content for f in folds), "".join(f.reasoning for f in folds), calls


@pytest.mark.parametrize("size", [1, 3, 1000])
def test_a_usable_call_goes_through_with_one_id(size):
    stream, content, _, calls = run("Sure. " + GOOD, size)
    assert content == "Sure. " and list(calls) == [0]
    assert calls[0]["name"] == "get_weather" and json.loads(calls[0]["arguments"]) == {"city": "Paris"}
    assert len(calls[0]["ids"]) == 1 and stream.unusable == []
    assert [c.id for c in stream.parsed.tool_calls] == calls[0]["ids"]  # the same id in parsed and on the wire
    assert [c.id for c in stream.usable_calls] == calls[0]["ids"]


@pytest.mark.parametrize("size", [1, 3, 1000])
def test_an_undeclared_tool_never_starts_and_its_text_stays(size):
    stream, content, _, calls = run("Sure. " + UNKNOWN + " Done.", size)
    assert calls == {} and content == "Sure. " + UNKNOWN + " Done."
    (entry,) = stream.unusable
    assert entry.as_dict() == {"index": None, "id": stream.parsed.tool_calls[0].id, "name": "get_wether",
                               "status": "undeclared", "codes": ["unknown_tool"]}
    assert entry.text == UNKNOWN


@pytest.mark.parametrize("case, output, status", [("not JSON", NOT_JSON, "rejected"), ("cut off", CUT, "truncated")])
@pytest.mark.parametrize("size", [1, 3, 1000])
def test_a_started_call_that_ends_unusable_never_has_complete_arguments(case, output, status, size):
    stream, content, _, calls = run(output, size)
    (call,) = calls.values()
    with pytest.raises(ValueError):
        json.loads(call["arguments"])
    assert content == output  # its text goes to the content
    (entry,) = stream.unusable
    assert (entry.index, entry.status, entry.id) == (0, status, call["ids"][0])
    assert stream.usable_calls == []


def test_no_tools_and_tool_choice_none_declare_nothing():
    for declared in ((), frozenset()):
        _, content, _, calls = run("Sure. " + GOOD, 4, declared=declared)
        assert calls == {} and content == "Sure. " + GOOD
    _, content, _, calls = run("Sure. " + GOOD, 4, declared=None)  # None: every name, as toolwire's parse
    assert list(calls) == [0] and content == "Sure. "


def test_a_mixed_output_keeps_the_good_call_and_the_text_of_the_bad_one():
    output = "<think>hmm</think>\n\nA " + UNKNOWN + "\n" + GOOD + " done"
    for size in (1, 5, 1000):
        stream, content, reasoning, calls = run(output, size)
        assert reasoning == "hmm" and content == "A " + UNKNOWN + " done"
        assert [c["name"] for c in calls.values()] == ["get_weather"]
        assert [u.status for u in stream.unusable] == ["undeclared"]


def _strip(text: str) -> str:
    return re.sub(r"\s", "", text)


CONTENT_FRAMING = {"llama4": "<|python_start|> ... <|python_end|> around content",
                   "kimi_k3": "the response channel's <|open|>response<|sep|> ... <|close|>",
                   "gpt_oss": "harmony channels"}
"""Families whose content has framing of its own (dropped by the parser, so not in the call's text either)."""


def test_no_declared_tool_keeps_every_golden_output_as_text():
    """Every golden output with calls, no tool declared: no call on the wire, and the content is the output after
    the reasoning block as the model wrote it (whitespace aside: the framing between text and a call is the
    call's text), at 1- and 7-character deltas."""
    require_shared()
    checked = 0
    for path in sorted((GOLDEN / "parse").glob("*.jsonl")):
        family = path.stem
        if family not in toolwire.formats() or family in CONTENT_FRAMING:
            continue
        for line in path.open(encoding="utf-8"):
            row = json.loads(line)
            if not row["expected"]["tool_calls"]:
                continue
            thinking = bool(row.get("prompt_opens_reasoning", row["options"].get("thinking", False)))
            splitter = ReasoningSplitter(family, thinking=thinking)
            reasoning, rest = splitter.feed(row["model_output"])
            more, tail = splitter.flush()
            for size in (1, 7):
                stream, content, got_reasoning, calls = run(row["model_output"], size, declared=(), family=family,
                                                            tools=row["tools"], thinking=thinking)
                assert calls == {}, row["id"]
                assert got_reasoning == stream.parsed.reasoning, row["id"]
                assert _strip(content) == _strip((rest or "") + (tail or "")), (row["id"], size)
                assert len(stream.unusable) == len([c for c in stream.parsed.tool_calls if c.source == "content"])
                checked += 1
    assert checked > 1000


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=40))
def test_the_same_wire_at_every_chunking(sizes):
    output = "Let me see. " + UNKNOWN + "\n" + GOOD + "\nAnd " + NOT_JSON
    pieces, at = [], 0
    for size in sizes * (len(output) // sum(sizes) + 1):
        if at >= len(output):
            break
        pieces.append(output[at:at + size])
        at += size
    stream = FailClosedStream("qwen3", TOOLS, declared=["get_weather"])
    folds = [stream.feed(p) for p in pieces] + [stream.flush()]
    content = "".join(f.content for f in folds)
    whole, whole_content, _, _ = run(output, 10_000)
    assert content == whole_content == "Let me see. " + UNKNOWN + "\nAnd " + NOT_JSON
    assert [(u.status, u.name) for u in stream.unusable] == [(u.status, u.name) for u in whole.unusable]
