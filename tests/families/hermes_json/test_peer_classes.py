"""Classes of real Qwen output that peers' parser tests pin and toolwire missed.

Qwen2.5-Coder writes its calls inside ``<tools>`` … ``</tools>``, the wrapper the prompt puts around the tool list,
instead of ``<tool_call>`` (vLLM keeps a parser, ``qwen2_5_coder``, for that alone). With tools declared, a call
object or an array of them written there, each naming a declared tool with fitting arguments, is read as those
calls (``repaired``, ``missing_call_wrapper``, the wrapper's text in the diagnostic); anything else stays content as
written, and without tools nothing is recovered (docs/variants.md, "Drift recovery"). Every case is checked at
every chunking."""

from __future__ import annotations

import pytest

import toolwire
from support import REAL, require_shared
from support.hermes_json import FAMILIES, check_chunking

TOOLS = [{"type": "function", "function": {"name": name, "parameters": {
    "type": "object", "properties": props, "required": list(props)[:1]}}}
    for name, props in (("fetch_tide", {"harbour": {"type": "string"}, "hours": {"type": "integer"}}),
                        ("list_boats", {}))]


def calls(out):
    return [(c.name, c.arguments, c.status, [d.code for d in c.diagnostics]) for c in out.tool_calls]


WRAPPED = "missing_call_wrapper"


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("output, content, want", [
    ('<tools>\n{"name": "fetch_tide", "arguments": {"harbour": "Brest", "hours": 6}}\n</tools>', "",
     [("fetch_tide", {"harbour": "Brest", "hours": 6})]),
    ('<tools>{"name": "fetch_tide", "parameters": {"harbour": "Cork"}}</tools>', "",
     [("fetch_tide", {"harbour": "Cork"})]),
    ('Checking the tide.\n<tools>\n[\n  {"name": "fetch_tide", "arguments": {"harbour": "Vigo"}},\n'
     '  {"name": "list_boats", "arguments": {}}\n]\n</tools>', "Checking the tide.\n",
     [("fetch_tide", {"harbour": "Vigo"}), ("list_boats", {})]),
    ('<tools>{"name": "list_boats", "arguments": {}}</tools>\n<tools>{"name": "fetch_tide", "arguments": '
     '{"harbour": "Oban"}}</tools> Back soon.', "\n Back soon.",
     [("list_boats", {}), ("fetch_tide", {"harbour": "Oban"})]),
    ('<tools>\n  {  "name" : "fetch_tide" , "arguments" : { "harbour" : "a <b> & \\"c\\"" } }  ', "",  # never closed
     [("fetch_tide", {"harbour": 'a <b> & "c"'})]),
])
def test_calls_inside_the_tool_list_wrapper_are_read_as_calls(family, output, content, want):
    out = check_chunking(toolwire.get_format(family), output, TOOLS, thinking=False)
    assert out.content == content
    assert calls(out) == [(name, args, "repaired", [WRAPPED]) for name, args in want]
    assert all(d.raw.startswith("<tools>") for c in out.tool_calls for d in c.diagnostics)
    assert out.diagnostics == []


@pytest.mark.parametrize("output, refused", [
    ('<tools>{"name": "sink_boat", "arguments": {}}</tools>', True),               # an undeclared tool
    ('<tools>{"name": "fetch_tide", "arguments": {"hours": "six"}}</tools>', True),  # arguments off-schema
    ('<tools>[{"name": "list_boats", "arguments": {}}, {"name": "nope", "arguments": {}}]</tools>', True),
    ('<tools>{"name": "list_boats", "arguments": {}, "id": 3}</tools>', True),      # not a call object
    ('<tools>[]</tools>', True),
    ('<tools>{"name": "list_boats", "arguments": {}} and then</tools>', False),     # text after the value
    ("The prompt lists them in <tools></tools> tags.", False),                      # prose
    ('<tools>{"name": "list_boats", "arguments": {broken}</tools>', False),         # not JSON
    ('<tools>{"name": "list_boats", "arguments": {', False),                        # cut off
])
def test_anything_else_in_the_wrapper_stays_content_as_written(output, refused):
    out = check_chunking(toolwire.get_format("qwen25"), output, TOOLS)
    assert out.tool_calls == []
    assert out.content == output
    assert [(d.code, d.severity) for d in out.diagnostics] == ([(WRAPPED, "info")] if refused else [])


def test_without_declared_tools_nothing_is_recovered():
    output = '<tools>{"name": "list_boats", "arguments": {}}</tools>'
    out = check_chunking(toolwire.get_format("qwen25"), output, None)
    assert (out.content, out.tool_calls, out.diagnostics) == (output, [], [])


def test_a_real_tool_call_after_the_wrapper_is_still_read():
    output = ('<tools>{"name": "list_boats", "arguments": {}}</tools>\n<tool_call>\n'
              '{"name": "fetch_tide", "arguments": {"harbour": "Hull"}}\n</tool_call>')
    out = check_chunking(toolwire.get_format("qwen3"), output, TOOLS, thinking=False)
    assert calls(out) == [("list_boats", {}, "repaired", [WRAPPED]),
                          ("fetch_tide", {"harbour": "Hull"}, "proposed", [])]


def test_from_token_ids_the_wrapper_is_text():
    """As for every missing_call_wrapper reading: fed ids, a call needs its control-token opener."""
    require_shared()
    pytest.importorskip("tokenizers")
    from toolwire.tokenize import load_tokenizer, vocabulary
    tok = load_tokenizer(str(REAL / "tokenizers" / "Qwen3"))
    output = '<tools>{"name": "list_boats", "arguments": {}}</tools> ok'
    fmt = toolwire.get_format("qwen3")
    parser = fmt.stream(TOOLS, tokenizer=tok, thinking=False)
    for i in vocabulary(tok).encode(output):
        parser.feed(ids=[i])
    out = parser.finish()
    assert (out.content, out.tool_calls) == (output, [])
