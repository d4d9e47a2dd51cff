"""Gemma 4 grammar (toolwire/grammar/families/gemma.py): calls in Gemma's object notation. Wire strings written
by hand from the format (and the template's dictsorted keys)."""

from __future__ import annotations

import pytest

import toolwire
from toolwire.grammar.matchers import Matcher

SCHEMA = {"type": "object", "properties": {
    "unit": {"enum": ["c", "f"]}, "City": {"type": "string"}, "days": {"type": "integer", "minimum": 1},
    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
    "opts": {"type": "object", "properties": {"fast": {"type": "boolean"}, "note": {"type": ["string", "null"]}}}},
    "required": ["City"]}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}]
Q = '<|"|>'


def call(body: str) -> str:
    return f"<|tool_call>call:get_weather{{{body}}}<tool_call|>"


@pytest.mark.parametrize("target", ["llguidance", "gbnf"])
def test_object_notation_from_the_schema(target):
    fmt = toolwire.get_format("gemma4")
    m = Matcher(fmt.grammar(TOOLS, target=target, tool_choice="required"))
    full = (f"City:{Q}Oslo, {{x}}\n{Q},days:3,opts:{{fast:true,note:null}},tags:[{Q}a{Q},{Q}b{Q}],unit:{Q}c{Q}")
    assert m.accepts(call(full)) and m.accepts(call(f"City:{Q}Oslo{Q}"))
    parsed = fmt.parse(call(full), TOOLS)
    assert parsed.tool_calls[0].status == "proposed"
    assert parsed.tool_calls[0].arguments == {"City": "Oslo, {x}\n", "days": 3, "opts": {"fast": True, "note": None},
                                              "tags": ["a", "b"], "unit": "c"}
    assert not m.accepts(call(f"days:3,City:{Q}Oslo{Q}"))  # keys dictsorted (case-insensitively), as the template
    assert not m.accepts(call("days:3"))  # City is required
    assert not m.accepts(call(f"City:{Q}Oslo{Q},days:0"))  # minimum
    assert not m.accepts(call(f"City:{Q}Oslo{Q},tags:[{Q}a{Q},{Q}b{Q},{Q}c{Q}]"))  # maxItems
    assert not m.accepts(call(f'City:"Oslo"'))  # a JSON string is a variant the parser repairs
    assert not m.accepts(call(f"City:{Q}a<tool_call|>b{Q}"))  # a string never spells a call marker


@pytest.mark.parametrize("target", ["llguidance", "gbnf"])
def test_tool_choice_and_own_reasoning(target):
    fmt = toolwire.get_format("gemma4")
    text = "<|channel>thought\nCheck it.\n<channel|>" + call(f"City:{Q}Oslo{Q}")
    auto, none = (Matcher(fmt.grammar(TOOLS, target=target, tool_choice=c)) for c in ("auto", "none"))
    assert auto.accepts(text) and auto.accepts("Oslo is sunny.")
    assert none.accepts("Oslo is sunny.") and not none.accepts(text)
    assert not none.accepts("Hi <|tool_response> x")  # the parser stops at a tool response
