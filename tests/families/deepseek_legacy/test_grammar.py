"""DeepSeek V3.1 / R1 grammars (toolwire/grammar/families/marker_json.py). Wire strings are written here by
hand from the formats (the R1 ones also checked against what the R1 template renders), not produced by the
grammar code. R1's golden vectors hold no call, so R1 is certified on these outputs."""

from __future__ import annotations

import pytest

import toolwire
from toolwire.grammar.matchers import Matcher

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}}]
V31_CALL = ('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Oslo", "days": 2}'
            '<｜tool▁call▁end｜><｜tool▁calls▁end｜>')
R1_CALL = ('<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Oslo"}\n```<｜tool▁call▁end｜>')
R1_NOW = '<｜tool▁call▁begin｜>function<｜tool▁sep｜>now\n```json\n{}\n```<｜tool▁call▁end｜>'
R1_OUTPUTS = [
    "<｜tool▁calls▁begin｜>" + R1_CALL + "<｜tool▁calls▁end｜>",
    "Let me check.<｜tool▁calls▁begin｜>" + R1_CALL + "<｜tool▁calls▁end｜>",
    "<｜tool▁calls▁begin｜>" + R1_NOW + "<｜tool▁calls▁end｜>",
    "<｜tool▁calls▁begin｜>" + R1_CALL + "\n" + R1_NOW + "<｜tool▁calls▁end｜>",  # two calls, as the template writes them
]


@pytest.mark.parametrize("target", ["llguidance", "gbnf"])
def test_v31_call_section(target):
    fmt = toolwire.get_format("deepseek_v31")
    required = Matcher(fmt.grammar(TOOLS, target=target, tool_choice="required"))
    assert required.accepts(V31_CALL) and required.accepts(V31_CALL.replace("<｜tool▁calls▁end｜>", "") +
                                                           '<｜tool▁call▁begin｜>now<｜tool▁sep｜>{}<｜tool▁call▁end｜>'
                                                           '<｜tool▁calls▁end｜>')
    assert not required.accepts("Hi.")
    assert not required.accepts(V31_CALL.replace('"days": 2', '"days": "two"'))  # the schema holds
    none = Matcher(fmt.grammar(TOOLS, target=target, tool_choice="none"))
    assert none.accepts("Hi.") and not none.accepts(V31_CALL)
    auto = Matcher(fmt.grammar(TOOLS, target=target))
    assert auto.accepts("Sure. " + V31_CALL)
    # a call opener outside the section is read by the parser as a call: free text never spells one (a lazy
    # GBNF grammar constrains text only from its trigger on, so this is checked where the grammar applies)
    assert not none.accepts("a <｜tool▁call▁begin｜> b")


def test_r1_wire_is_what_the_template_renders():
    fmt = toolwire.get_format("deepseek_r1")
    messages = [{"role": "user", "content": "weather?"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}},
                    {"id": "c2", "type": "function", "function": {"name": "now", "arguments": "{}"}}]}]
    text = fmt.render(messages, TOOLS).text
    assert "<｜tool▁calls▁begin｜>" + R1_CALL + "\n" + R1_NOW + "<｜tool▁calls▁end｜>" in text


@pytest.mark.parametrize("target", ["llguidance", "gbnf"])
def test_r1_outputs_parse_as_proposed_and_are_accepted(target):
    fmt = toolwire.get_format("deepseek_r1")
    for output in R1_OUTPUTS:
        parsed = fmt.parse(output, TOOLS, thinking=False)
        assert parsed.tool_calls and all(c.status == "proposed" for c in parsed.tool_calls)
        assert Matcher(fmt.grammar(TOOLS, target=target, thinking=False)).accepts(output)
        assert Matcher(fmt.grammar(TOOLS, target=target, tool_choice="required", thinking=False)).accepts(output) is \
            output.startswith("<｜tool▁calls▁begin｜>")  # required: the answer starts with the calls
    named = Matcher(fmt.grammar(TOOLS, target=target, tool_choice={"name": "now"}, thinking=False))
    assert named.accepts(R1_OUTPUTS[2]) and not named.accepts(R1_OUTPUTS[0])
    # the fence is part of the wire: a bare JSON body is refused
    assert not Matcher(fmt.grammar(TOOLS, target=target, thinking=False)).accepts(R1_OUTPUTS[0].replace("\n```json\n", ""))
