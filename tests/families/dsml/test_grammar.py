"""DeepSeek DSML grammars (toolwire/grammar/families/invoke_blocks.py). Wire strings written by hand from the DSML format."""

from __future__ import annotations

import pytest

import toolwire
from toolwire.grammar.matchers import Matcher

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"},
                                     "unit": {"enum": ["c", "f"]}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}}]
D = "｜DSML｜"


def block(version_block: str, *invokes: str, dsml: str = D) -> str:
    return f"\n\n<{dsml}{version_block}>\n" + "\n".join(invokes) + f"\n</{dsml}{version_block}>"


def invoke(name: str, *params: str, dsml: str = D) -> str:
    return f'<{dsml}invoke name="{name}">\n' + "".join(p + "\n" for p in params) + f"</{dsml}invoke>"


def param(key: str, value: str, string: bool, dsml: str = D) -> str:
    return f'<{dsml}parameter name="{key}" string="{"true" if string else "false"}">{value}</{dsml}parameter>'


@pytest.mark.parametrize("target", ["llguidance", "gbnf"])
@pytest.mark.parametrize("name, block_name, dsml", [("deepseek_v32", "function_calls", D), ("deepseek_v4", "tool_calls", D),
                                                    ("deepseek_v41", "calls", D + " ")])
def test_values_typed_by_the_schema(name, block_name, dsml, target):
    fmt = toolwire.get_format(name)
    m = Matcher(fmt.grammar(TOOLS, target=target, tool_choice="required"))
    weather = invoke("get_weather", param("city", "Sa<o> \"Paulo\"\n", True, dsml), param("days", "3", False, dsml),
                     param("unit", "c", True, dsml), dsml=dsml)
    assert m.accepts(block(block_name, weather, dsml=dsml))
    assert m.accepts(block(block_name, weather, f'<{dsml}invoke name="now">\n\n</{dsml}invoke>', dsml=dsml))
    # an integer is string="false" JSON; a string is string="true" text; the enum holds
    assert not m.accepts(block(block_name, invoke("get_weather", param("city", "x", True, dsml),
                                                  param("days", "3", True, dsml), dsml=dsml), dsml=dsml))
    assert not m.accepts(block(block_name, invoke("get_weather", param("city", "x", True, dsml),
                                                  param("unit", "k", True, dsml), dsml=dsml), dsml=dsml))
    # a string value cannot spell the closer nor the next parameter's opener
    assert not m.accepts(block(block_name, invoke("get_weather", param("city", f"a</{dsml}parameter>b", True, dsml),
                                                  dsml=dsml), dsml=dsml))
    assert not m.accepts(block(block_name, invoke("get_weather", param(
        "city", f'a<{dsml}parameter name="days" string="false">3', True, dsml), dsml=dsml), dsml=dsml))
    # the parser needs the block's \n\n; nothing may follow the block
    assert not m.accepts(block(block_name, weather, dsml=dsml)[2:])
    assert not m.accepts(block(block_name, weather, dsml=dsml) + "Done.")


@pytest.mark.parametrize("target", ["llguidance", "gbnf"])
def test_tool_choice_and_reasoning(target):
    fmt = toolwire.get_format("deepseek_v4")
    call = block("tool_calls", f'<{D}invoke name="now">\n\n</{D}invoke>')  # the template's empty invoke
    auto, none, named = (Matcher(fmt.grammar(TOOLS, target=target, tool_choice=c, thinking=True))
                         for c in ("auto", "none", {"name": "get_weather"}))
    assert auto.accepts("Think.</think>Sure." + call) and auto.accepts("Think.</think>Hello.")
    assert not auto.accepts("Think." + call + "</think>Hi.")  # a block inside reasoning is not a call
    assert none.accepts("Think.</think>Hello.") and not none.accepts("Think.</think>" + call)
    assert not named.accepts("Think.</think>" + call)
    assert not none.accepts(f"Think.</think>a <{D}invoke name=\"now\"> b")  # a bare invoke is never text
