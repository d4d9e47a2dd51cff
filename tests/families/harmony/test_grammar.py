"""gpt-oss harmony grammar (toolwire/grammar/families/harmony.py): the whole output as messages. Wire strings
written by hand from the harmony format (docs/harmony.md)."""

from __future__ import annotations

import pytest

import toolwire
from toolwire.grammar.matchers import Matcher

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}}]
ANALYSIS = "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant"
HEADERS = [" to=functions.get_weather<|channel|>commentary json<|message|>",
           " to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>",
           "<|channel|>commentary to=functions.get_weather json<|message|>",
           "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"]
ARGS = '{"city": "Oslo"}'
FINAL = "<|channel|>final<|message|>It is sunny."


@pytest.mark.parametrize("target", ["llguidance", "gbnf"])
def test_calls_in_each_header_spelling_and_tool_choice(target):
    fmt = toolwire.get_format("gpt_oss")
    auto, required, none, named = (Matcher(fmt.grammar(TOOLS, target=target, tool_choice=c))
                                   for c in ("auto", "required", "none", {"name": "now"}))
    for header in HEADERS:
        assert fmt.parse(ANALYSIS + header + ARGS, TOOLS).tool_calls[0].status == "proposed"
        assert required.accepts(ANALYSIS + header + ARGS) and required.accepts(header + ARGS)
        assert auto.accepts(ANALYSIS + header + ARGS) and not none.accepts(header + ARGS)
        assert not named.accepts(header + ARGS)
    assert auto.accepts(ANALYSIS + FINAL) and none.accepts(FINAL) and not required.accepts(ANALYSIS + FINAL)
    assert named.accepts(' to=functions.now<|channel|>commentary json<|message|>{}')
    assert not auto.accepts("It is sunny.")  # headerless text is a parser problem (missing_header)
    assert not auto.accepts(ANALYSIS.replace("weather.", "weather <|channel|>") + FINAL)  # text spells no marker
    assert not required.accepts(HEADERS[0] + ARGS + "<|call|>")  # <|call|> is the stop token, not grammar text
