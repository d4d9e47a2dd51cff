"""Classes of Mistral-family output that peers' parser tests pin and toolwire missed for Ministral 3: the calls
written after ``[TOOL_CALLS]`` as a JSON array of call objects (the format before tokenizer v11, which vLLM's
Mistral tests pin and Mistral checkpoints of that time write). Read as for Mistral Small 3.2 (``repaired``,
``json_array_calls``), one-shot and at every chunking; before, the complete call was a truncated header."""

from __future__ import annotations

import pytest

import toolwire
from support import check_chunking
from toolwire.parsers.ministral import MARKERS

FMT = toolwire.get_format("ministral3")
SMALL = toolwire.get_format("mistral_small32")
CALLS, THINK, END = MARKERS["tool_calls"], MARKERS["think_open"], MARKERS["think_close"]
TOOLS = [{"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {
    "lane": {"type": "string"}, "speed": {"type": "number"}}}}} for name in ("set_lane", "stop_all")]


def calls(out):
    return [(c.name, c.arguments, c.status, [d.code for d in c.diagnostics]) for c in out.tool_calls]


@pytest.mark.parametrize("tools", [TOOLS, None])
@pytest.mark.parametrize("gap", ["", " "])
def test_a_json_array_of_calls_after_the_marker_is_read_as_those_calls(tools, gap):
    text = f'Switching.{CALLS}{gap}[{{"name": "set_lane", "arguments": {{"lane": "B", "speed": 2.5}}}}, ' \
           f'{{"arguments": {{}}, "name": "stop_all"}}]'
    out = check_chunking(FMT, text, tools)
    assert out.content == "Switching."
    assert calls(out) == [("set_lane", {"lane": "B", "speed": 2.5}, "repaired", ["json_array_calls"]),
                          ("stop_all", {}, "repaired", ["json_array_calls"])]
    assert not out.truncated
    assert calls(out) == calls(SMALL.parse(text, tools))  # as Mistral Small 3.2 reads it


def test_after_reasoning_too():
    text = f'{THINK}Lane B is free.{END}{CALLS}[{{"name": "set_lane", "arguments": {{"lane": "B"}}}}]'
    out = check_chunking(FMT, text, TOOLS)
    assert (out.reasoning, out.content) == ("Lane B is free.", "")
    assert calls(out) == [("set_lane", {"lane": "B"}, "repaired", ["json_array_calls"])]


def test_an_array_that_is_no_call_list_keeps_its_text():
    text = f'{CALLS}[1, 2, 3]'
    out = check_chunking(FMT, text, TOOLS)
    assert out.tool_calls == []
    assert any("[1, 2, 3]" in (d.raw or "") for d in out.diagnostics) or "[1, 2, 3]" in out.content
