"""Mistral grammars (toolwire/grammar/families/marker_json.py): ``[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{json}`` (Small
3.2) and ``[TOOL_CALLS]NAME[ARGS]{json}`` (Ministral 3). Wire strings written by hand from the formats."""

from __future__ import annotations

import pytest

import toolwire
from toolwire.grammar.matchers import Matcher

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


@pytest.mark.parametrize("target", ["llguidance", "gbnf"])
def test_small32_call_ids_are_nine_letters_or_digits(target):
    m = Matcher(toolwire.get_format("mistral_small32").grammar(TOOLS, target=target, tool_choice="required"))
    assert m.accepts('[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Oslo"}')
    assert m.accepts('[TOOL_CALLS]get_weather[CALL_ID]a00000001[ARGS]{"city": "Oslo"}'
                     '[TOOL_CALLS]get_weather[CALL_ID]a00000002[ARGS]{"city": "Rome"}')
    assert not m.accepts('[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4[ARGS]{"city": "Oslo"}')  # eight
    assert not m.accepts('[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4-[ARGS]{"city": "Oslo"}')
    assert not m.accepts('[TOOL_CALLS]get_weather[ARGS]{"town": "Oslo"}')


@pytest.mark.parametrize("target", ["llguidance", "gbnf"])
def test_ministral3_reasoning_then_calls(target):
    fmt = toolwire.get_format("ministral3")
    required = Matcher(fmt.grammar(TOOLS, target=target, tool_choice="required", thinking=True))
    assert required.accepts('Look it up.[/THINK][TOOL_CALLS]get_weather[ARGS]{"city": "Oslo"}')
    assert not required.accepts('Look it up.[/THINK]Oslo is nice.')
    assert not required.accepts('[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Oslo"}')  # no ids
    none = Matcher(fmt.grammar(TOOLS, target=target, tool_choice="none"))
    assert none.accepts("[THINK]hm[/THINK]Oslo is nice.") and not none.accepts('[TOOL_CALLS]get_weather[ARGS]{}')
