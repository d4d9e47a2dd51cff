"""Llama grammars (toolwire/grammar/families/llama.py): the reply is a call object (3.1 / 3.2) or a
``<|python_start|>`` block and call objects (4), or text. Wire strings written by hand from the formats."""

from __future__ import annotations

import pytest

import toolwire
from toolwire.grammar.matchers import Matcher

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}}]
CALL = '{"name": "get_weather", "parameters": {"city": "Oslo"}}'
NOW = '{"name": "now", "parameters": {}}'


@pytest.mark.parametrize("target", ["llguidance", "gbnf"])
@pytest.mark.parametrize("name", ["llama31", "llama32"])
def test_llama3_reply_is_one_call_or_text(name, target):
    fmt = toolwire.get_format(name)
    auto, required, none, named = (Matcher(fmt.grammar(TOOLS, target=target, tool_choice=c))
                                   for c in ("auto", "required", "none", {"name": "now"}))
    assert required.accepts(CALL) and not required.accepts("It is sunny.")
    assert not required.accepts("Sure: " + CALL)  # text before it would make the call content
    assert not required.accepts(CALL + " Done.")
    assert auto.accepts(CALL) and auto.accepts("It is sunny.")
    assert none.accepts("It is sunny.") and not none.accepts(CALL)
    assert named.accepts(NOW) and not named.accepts(CALL)
    assert not none.accepts("<|python_tag|>brave_search.call(query=\"x\")")  # built-in calls are not written


@pytest.mark.parametrize("target", ["llguidance", "gbnf"])
def test_llama4_block_then_calls(target):
    fmt = toolwire.get_format("llama4")
    required = Matcher(fmt.grammar(TOOLS, target=target, tool_choice="required"))
    assert required.accepts("<|python_start|><|python_end|>" + CALL)
    assert required.accepts("<|python_start|>Checking both.<|python_end|>" + CALL + NOW)
    assert not required.accepts(CALL)  # the template always writes the block
    assert not required.accepts("<|python_start|>" + CALL + "<|python_end|>")  # calls inside it: a repaired variant
    auto = Matcher(fmt.grammar(TOOLS, target=target))
    assert auto.accepts("It is sunny.") and not required.accepts("Sure. <|python_start|><|python_end|>" + CALL)
