"""A class of real Kimi K2 output that peers' tests and public reports showed toolwire reading wrong (inputs written
here, in this project's own words and values).

A call id that names no tool: a bare counter (``<|tool_call_begin|>3<|tool_call_argument_begin|>{...}``) or a
client's id copied from the history the chat template renders verbatim (``call_7``, ``toolu_01…``, a UUID). The
call was kept, but as a call of the undeclared tool ``"3"`` / ``"call_7"`` (``rejected``), so a request whose
arguments name the tool beyond doubt lost its call. Now, with tools declared, the arguments pick the one declared
tool they fit (``drift_call_id_names_no_tool``, ``repaired``); fail-closed otherwise (the previous reading, with an
``info`` note saying why), stream and one-shot alike.
"""

from __future__ import annotations

import pytest

import toolwire
from support import check_chunking
from toolwire.families.kimi import MARKERS as M


def tool(name, props, required=()):
    return {"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": props, "required": list(required)}}}


S = {"type": "string"}
OPEN_FILE = tool("open_file", {"file": S, "lines": {"type": "integer"}}, ["file"])
SAVE_FILE = tool("save_file", {"file": S, "text": S}, ["file", "text"])
FIND = tool("find_text", {"needle": S, "folder": S}, ["needle"])
GREP = tool("grep_text", {"needle": S, "folder": S, "mode": S}, ["needle"])
TOOLS = [OPEN_FILE, SAVE_FILE, FIND, GREP]


def section(*calls, before="Looking."):
    body = "".join(f"{M.CALL_BEGIN}{cid}{M.ARGUMENT_BEGIN}{args}{M.CALL_END}" for cid, args in calls)
    return f"{before}{M.SECTION_BEGIN}{body}{M.SECTION_END}"


def calls(out):
    return [(c.id, c.name, c.arguments, c.status, sorted(d.code for d in c.diagnostics if d.severity != "info"))
            for c in out.tool_calls]


@pytest.mark.parametrize("family", ["kimi_k2", "kimi_k2_thinking"])
@pytest.mark.parametrize("call_id", ["3", "call_7", "toolu_01QzxWv8", "9a1c2b3d-0e4f-4a5b-8c6d-7e8f9a0b1c2d"])
def test_an_id_that_names_no_tool_is_read_by_the_tool_its_arguments_fit(family, call_id):
    fmt = toolwire.get_format(family)
    text = section((call_id, '{"file": "notes.md", "lines": 40}'))
    if family == "kimi_k2_thinking":
        text = "Plan.</think>" + text
    out = check_chunking(fmt, text, TOOLS, thinking=family == "kimi_k2_thinking")
    assert calls(out) == [(call_id, "open_file", {"file": "notes.md", "lines": 40}, "repaired",
                           ["drift_call_id_names_no_tool"])]
    assert out.tool_calls[0].diagnostics[0].raw == call_id
    assert out.content == "Looking."


def test_each_call_of_a_section_is_read_by_its_own_arguments():
    fmt = toolwire.get_format("kimi_k2")
    text = section(("call_1", '{"file": "a.txt", "text": "hi"}'), ("functions.open_file:2", '{"file": "b.txt"}'),
                   ("4", '{"needle": "todo", "mode": "count"}'))
    out = check_chunking(fmt, text, TOOLS)
    assert [(c.name, c.status) for c in out.tool_calls] == [
        ("save_file", "repaired"), ("open_file", "proposed"), ("grep_text", "repaired")]
    assert [c.index for c in out.tool_calls] == [0, 1, 2]


@pytest.mark.parametrize("args, why", [
    ('{"needle": "todo", "folder": "src"}', "fits two tools"),
    ('{"file": "a.txt", "colour": "red"}', "an undeclared key"),
    ('{"lines": 3}', "a required key missing"),
    ('{"file": 7}', "a wrong type"),
    ('{"file": "a.txt"', "not complete JSON"),
    ('["a.txt"]', "not an object"),
])
def test_arguments_that_do_not_name_one_tool_leave_the_call_as_it_was(args, why):
    """Fail-closed: the call keeps the name its id gave it (an unknown tool, ``rejected``), as before this
    recovery, and an ``info`` note says why it was not taken."""
    fmt = toolwire.get_format("kimi_k2")
    out = check_chunking(fmt, section(("call_7", args)), TOOLS)
    (call,) = out.tool_calls
    assert (call.name, call.status) == ("call_7", "rejected")
    notes = [d for d in call.diagnostics if d.code == "drift_call_id_names_no_tool"]
    assert [d.severity for d in notes] == ["info"]


@pytest.mark.parametrize("call_id", ["functions.close_file:0", "close_file:0", "functionsclose5"])
def test_an_id_that_names_a_tool_is_never_renamed_by_its_arguments(call_id):
    """An id that spells a tool (even an undeclared one) is the model's choice: it stays that call."""
    fmt = toolwire.get_format("kimi_k2")
    out = fmt.parse(section((call_id, '{"file": "notes.md"}')), TOOLS)
    (call,) = out.tool_calls
    assert call.name != "open_file" and call.status == "rejected"
    assert "drift_call_id_names_no_tool" not in [d.code for d in call.diagnostics]


def test_without_tools_nothing_is_inferred():
    fmt = toolwire.get_format("kimi_k2")
    out = check_chunking(fmt, section(("3", '{"file": "notes.md"}')))
    (call,) = out.tool_calls
    assert (call.name, call.status) == ("3", "rejected")
    assert "drift_call_id_names_no_tool" not in [d.code for d in call.diagnostics]


def test_an_output_that_ends_inside_such_a_call_is_a_truncated_call_as_before():
    fmt = toolwire.get_format("kimi_k2")
    text = section(("3", '{"file": "notes.md"}'))
    cut = text[:text.index('.md"') + 2]
    out = check_chunking(fmt, cut, TOOLS)
    (call,) = out.tool_calls
    assert (call.name, call.status, out.truncated) == ("3", "truncated", True)


def test_the_call_waits_for_its_arguments_before_it_starts():
    """Its name is known only when its arguments are complete: no event before, all at once then."""
    fmt = toolwire.get_format("kimi_k2")
    text = section(("3", '{"file": "notes.md"}'))
    parser = fmt.stream(TOOLS)
    head, tail = text.split('"notes.md"}')
    assert [e.type for e in parser.feed(head + '"notes.md"')] == ["content"]
    events = parser.feed("}" + tail)
    assert events[0].type == "tool_call_started" and events[0].name == "open_file"
    assert [e.type for e in events][-1] == "tool_call_finished"
