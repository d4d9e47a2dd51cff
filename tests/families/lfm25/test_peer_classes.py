"""Classes of LFM output that peers' parser tests pin and toolwire missed: calls written in the call block as
JSON (LFM2's JSON output mode, offered by its model card through the system prompt), one call object or an array
of them. Read as those calls (``repaired``, ``json_tool_calls``) whether or not tools are declared (the block's
markers prove calls; an undeclared name is ``rejected`` as for a Python call), at every chunking; text that is
neither stays in ``text_in_tool_call_block``."""

from __future__ import annotations

import pytest

import toolwire
from support import assert_nothing_lost, check_chunking
from toolwire.templates.lfm25 import MARKERS

FMT = toolwire.get_format("lfm25")
OPEN, CLOSE = MARKERS.CALL_OPEN, MARKERS.CALL_CLOSE
THINK, END_THINK = MARKERS.THINK_OPEN, MARKERS.THINK_CLOSE
TOOLS = [{"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {
    "dish": {"type": "string"}, "people": {"type": "integer"}}}}} for name in ("plan_meal", "list_pantry")]
STRUCTURE = (OPEN, CLOSE, THINK, END_THINK, "name", "arguments", "parameters")


def calls(out):
    return [(c.name, c.arguments, c.status, [d.code for d in c.diagnostics]) for c in out.tool_calls]


@pytest.mark.parametrize("tools", [TOOLS, None])
@pytest.mark.parametrize("body, want", [
    ('{"name": "plan_meal", "arguments": {"dish": "soup", "people": 4}}',
     [("plan_meal", {"dish": "soup", "people": 4}, [])]),
    (' [ {"name": "plan_meal", "arguments": {"dish": "stew"}}, {"name": "list_pantry", "arguments": {}} ] ',
     [("plan_meal", {"dish": "stew"}, []), ("list_pantry", {}, [])]),
    ('[{"name": "list_pantry", "parameters": {}}]', [("list_pantry", {}, ["arguments_alias_parameters"])]),
])
def test_json_calls_in_the_block_are_read_as_calls(tools, body, want):
    text = f"Planning now. {OPEN}{body}{CLOSE}\nDone."
    out = check_chunking(FMT, text, tools)
    assert out.content == "Planning now. \nDone."
    assert calls(out) == [(n, a, "repaired", ["json_tool_calls", *codes]) for n, a, codes in want]
    assert out.diagnostics == []
    assert_nothing_lost(text, out, STRUCTURE)


def test_an_undeclared_name_is_rejected_as_for_a_python_call():
    out = check_chunking(FMT, f'{OPEN}{{"name": "bake_cake", "arguments": {{}}}}{CLOSE}', TOOLS)
    assert [(c.name, c.status) for c in out.tool_calls] == [("bake_cake", "rejected")]
    assert "unknown_tool" in [d.code for d in out.tool_calls[0].diagnostics]


def test_json_calls_in_reasoning_are_reasoning_calls():
    text = f'{THINK}Let me plan. {OPEN}{{"name": "plan_meal", "arguments": {{"dish": "rice"}}}}{CLOSE}{END_THINK}Ok.'
    out = check_chunking(FMT, text, TOOLS)
    assert [(c.name, c.source, c.status) for c in out.tool_calls] == [("plan_meal", "reasoning", "rejected")]
    assert out.content == "Ok."


@pytest.mark.parametrize("body", [
    '{"dish": "soup"}',                                   # no name
    '{"name": "plan_meal", "arguments": "soup"}',        # arguments not an object
    '[{"name": "plan_meal", "arguments": {}}, 3]',       # an element that is no call
    '{"name": "plan_meal", "arguments": {"dish": ',      # cut off inside the block
    '[{"name": "plan_meal"}]',                         # no arguments
])
def test_other_json_in_the_block_stays_in_its_diagnostic(body):
    text = f"{OPEN}{body}{CLOSE}"
    out = check_chunking(FMT, text, TOOLS)
    assert out.tool_calls == []
    assert [(d.code, d.raw) for d in out.diagnostics] == [("text_in_tool_call_block", body)]


def test_a_python_call_list_is_read_as_before():
    out = check_chunking(FMT, f"{OPEN}[plan_meal(dish='soup', people=2)]{CLOSE}", TOOLS)
    assert calls(out) == [("plan_meal", {"dish": "soup", "people": 2}, "proposed", [])]


@pytest.mark.parametrize("inner", ["plan_meal(dish='soup')", '{"name": "plan_meal", "arguments": {"dish": "soup"}}'])
def test_blanks_after_the_lists_bracket_are_not_held_in_the_buffer(inner):
    """Which reading follows ``[`` waits for its first non-blank; the blanks wait aside, not in the buffer."""
    text = f"{OPEN}[{' ' * 700}{inner}]{CLOSE}"
    parser = FMT.stream(TOOLS)
    parser.feed(text[:690])
    assert len(parser._buf) < 64
    out = check_chunking(FMT, text, TOOLS)
    assert [(c.name, c.arguments) for c in out.tool_calls] == [("plan_meal", {"dish": "soup"})]
