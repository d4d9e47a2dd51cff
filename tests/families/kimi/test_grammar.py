"""Kimi K2 grammars (toolwire/grammar/families/marker_json.py): ``functions.NAME:N`` call ids inside the section.
Wire strings written by hand from the format."""

from __future__ import annotations

import pytest

import toolwire
from toolwire.grammar.matchers import Matcher

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}}]


def section(*calls: str) -> str:
    return "<|tool_calls_section_begin|>" + "".join(calls) + "<|tool_calls_section_end|>"


def call(call_id: str, args: str) -> str:
    return f"<|tool_call_begin|>{call_id}<|tool_call_argument_begin|>{args}<|tool_call_end|>"


@pytest.mark.parametrize("target", ["llguidance", "gbnf"])
@pytest.mark.parametrize("name", ["kimi_k2", "kimi_k2_thinking"])
def test_call_ids_are_functions_name_index(name, target):
    m = Matcher(toolwire.get_format(name).grammar(TOOLS, target=target, tool_choice="required"))
    assert m.accepts(section(call("functions.get_weather:0", '{"city": "Oslo"}'), call("functions.now:17", "{}")))
    assert not m.accepts(section(call("functions.get_weather:x", '{"city": "Oslo"}')))  # the index is a number
    assert not m.accepts(section(call("get_weather:0", '{"city": "Oslo"}')))  # a variant the parser repairs
    assert not m.accepts(section(call("functions.clock:0", "{}")))  # an undeclared tool


@pytest.mark.parametrize("target", ["llguidance", "gbnf"])
def test_tool_choice_modes(target):
    fmt = toolwire.get_format("kimi_k2")
    text = "Let me look." + section(call("functions.now:0", "{}"))
    auto, none, named = (Matcher(fmt.grammar(TOOLS, target=target, tool_choice=c))
                         for c in ("auto", "none", {"name": "get_weather"}))
    assert auto.accepts(text) and auto.accepts("Hi.")
    assert none.accepts("Hi.") and not none.accepts(text)
    assert not named.accepts(section(call("functions.now:0", "{}")))
    assert named.accepts(section(call("functions.get_weather:3", '{"city": "Oslo"}')))
    assert not none.accepts("x <|tool_call_begin|> y")  # a call opener outside the section is never text
