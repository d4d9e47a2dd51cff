"""Format.grammar: structure, tool_choice shapes, errors naming the field, determinism, the CLI.

Expected grammar pieces are written here by hand from the wire format (``<tool_call>\\n{"name": ...,
"arguments": ...}\\n</tool_call>``), not produced by the code under test.
"""

from __future__ import annotations

import json

import pytest

import toolwire
from toolwire.errors import InvalidOption, InvalidRequest, InvalidToolDefinition, ToolwireError
from toolwire.grammar.coverage import supported_formats, unsupported_formats
from toolwire.grammar.matchers import Matcher
from toolwire.workbench.cli import main

WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1,
                                                                          "maximum": 14}},
    "required": ["city"]}}}
CLOCK = {"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}}
TOOLS = [WEATHER, CLOCK]
JSON_FAMILY = ["qwen25", "qwen3", "qwen3_instruct_2507", "qwen3_thinking_2507", "hermes3", "granite4"]
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}}\n</tool_call>'
CLOCK_CALL = '<tool_call>\n{"name": "now", "arguments": {}}\n</tool_call>'


def test_the_json_family_is_covered_and_the_rest_is_listed():
    assert set(JSON_FAMILY) <= set(supported_formats())
    assert set(supported_formats()) | set(unsupported_formats()) == set(toolwire.formats())


def test_the_call_frame_is_the_templates_own_example():
    from toolwire.grammar.families.json_calls import CALL_FRAME
    from toolwire.templates.hermes_json import TOOLS_EXAMPLE

    assert TOOLS_EXAMPLE == CALL_FRAME[0] + '{"name": <function-name>, "arguments": <args-json-object>}' + CALL_FRAME[1]


def test_xgrammar_structural_tag_has_one_tag_per_tool():
    tag = toolwire.get_format("qwen25").grammar(TOOLS, target="xgrammar").structural_tag
    fmt = tag["format"]
    assert tag["type"] == "structural_tag" and fmt["type"] == "triggered_tags"
    assert fmt["triggers"] == ["<tool_call>"] and fmt["at_least_one"] is False
    assert [t["begin"] for t in fmt["tags"]] == ['<tool_call>\n{"name": "get_weather", "arguments": ',
                                                 '<tool_call>\n{"name": "now", "arguments": ']
    assert {t["end"] for t in fmt["tags"]} == {"}\n</tool_call>"}
    assert fmt["tags"][0]["content"] == {"type": "json_schema", "json_schema": WEATHER["function"]["parameters"]}
    assert fmt["excludes"] == ["<think>", "</think>", "<|im_end|>", "<|endoftext|>"]  # free text spells none


@pytest.mark.parametrize("choice, mode", [("auto", "auto"), ("required", "required"), ("none", "none"),
                                          ({"type": "function", "function": {"name": "now"}}, "named"),
                                          ({"name": "now"}, "named")])
def test_tool_choice_shapes_in_the_structural_tag(choice, mode):
    g = toolwire.get_format("qwen25").grammar(TOOLS, tool_choice=choice)
    assert g.mode == mode
    body = g.structural_tag["format"]
    if mode == "none":
        assert body == {"type": "any_text", "excludes": ["<tool_call>", "<think>", "</think>", "<|im_end|>",
                                                         "<|endoftext|>"]}
        return
    assert body["at_least_one"] is (mode != "auto")
    names = [t["begin"].split('"name": "')[1].split('"')[0] for t in body["tags"]]
    assert names == (["now"] if mode == "named" else ["get_weather", "now"])


@pytest.mark.parametrize("target", ["llguidance", "gbnf"])
def test_tool_choice_modes_accept_and_refuse_in_the_matcher(target):
    fmt = toolwire.get_format("qwen25")
    auto, required, none, named = (Matcher(fmt.grammar(TOOLS, target=target, tool_choice=c))
                                   for c in ("auto", "required", "none", {"name": "now"}))
    assert auto.accepts("Hello.") and auto.accepts("Let me look.\n" + CALL) and auto.accepts(CALL + CLOCK_CALL)
    assert required.accepts(CALL) and required.accepts(CALL + "\n" + CLOCK_CALL + "\nDone.")
    assert not required.accepts("Hello.")  # required: the answer starts with a call
    assert none.accepts("Hello.") and not none.accepts(CALL) and not none.accepts("a <tool_call> b")
    assert named.accepts(CLOCK_CALL) and not named.accepts(CALL)


@pytest.mark.parametrize("target", ["llguidance", "gbnf"])
def test_argument_schemas_are_enforced(target):
    m = Matcher(toolwire.get_format("qwen25").grammar(TOOLS, target=target))
    assert not m.accepts(CALL.replace('"days": 2', '"days": 15'))   # maximum 14
    assert not m.accepts(CALL.replace('"city": "Oslo", ', ''))        # city is required
    assert not m.accepts(CALL.replace('"Oslo"', '3'))                 # a string
    assert not m.accepts(CALL.replace("get_weather", "get_wether"))   # an undeclared tool
    assert not m.accepts(CALL[:-3])                                   # unclosed
    assert not m.accepts(CALL + "Hi<|im_end|>")                        # the end of turn spelled as text


@pytest.mark.parametrize("target", ["llguidance", "gbnf"])
def test_reasoning_is_free_text_before_the_calls(target):
    m = Matcher(toolwire.get_format("qwen3_thinking_2507").grammar(TOOLS, target=target, tool_choice="required",
                                                                  thinking=True))
    assert m.accepts("I should look it up.\n</think>\n\n" + CALL)
    assert not m.accepts("thinking " + CALL + "</think>" + CALL)  # a call inside reasoning
    assert not m.accepts(CALL)                                      # the reasoning was opened: close it first


@pytest.mark.parametrize("target", ["llguidance", "gbnf"])
def test_a_reasoning_block_the_model_opens_itself(target):
    """Qwen3's parser reads a <think> written as the very first thing as reasoning; so does the grammar, and only
    there (qwen25's parser does not: its grammar keeps <think> out of free text)."""
    for choice in ("auto", "required"):
        m = Matcher(toolwire.get_format("qwen3").grammar(TOOLS, target=target, tool_choice=choice))
        assert m.accepts("<think>\nLook it up.\n</think>\n\n" + CALL)
        if not m.grammar.lazy:  # a lazy grammar (gbnf auto) starts at the trigger and never sees the text before
            assert not m.accepts("Hi <think>x</think>" + CALL)
    qwen25 = toolwire.get_format("qwen25").grammar(TOOLS, target=target, tool_choice="required")
    assert not Matcher(qwen25).accepts("<think>x</think>" + CALL)


def test_gbnf_lazy_triggers_in_llama_cpp_form():
    g = toolwire.get_format("qwen25").grammar(TOOLS, target="gbnf")
    fields = g.llama_cpp_fields()
    assert fields["grammar_lazy"] is True and fields["grammar_triggers"] == [{"type": 1, "value": "<tool_call>"}]
    assert fields["grammar"].startswith("root ::= ")
    thinking = toolwire.get_format("qwen3").grammar(TOOLS, target="gbnf", thinking=True).grammar_triggers
    assert thinking[0]["type"] == 3 and thinking[0]["value"].endswith("(<tool_call>)[\\s\\S]*")
    assert toolwire.get_format("qwen25").grammar(TOOLS, target="gbnf", tool_choice="required").lazy is False


def test_to_json_is_each_targets_request_form():
    fmt = toolwire.get_format("qwen25")
    assert json.loads(fmt.grammar(TOOLS).to_json())["type"] == "structural_tag"
    lark = json.loads(fmt.grammar(TOOLS, target="llguidance").to_json())
    assert lark["grammars"][0]["lark_grammar"].startswith("%llguidance {}")
    assert set(json.loads(fmt.grammar(TOOLS, target="gbnf").to_json())) == {"grammar", "grammar_lazy",
                                                                             "grammar_triggers"}


@pytest.mark.parametrize("name", JSON_FAMILY)
@pytest.mark.parametrize("target", ["xgrammar", "llguidance", "gbnf"])
def test_grammars_are_deterministic(name, target):
    fmt = toolwire.get_format(name)
    assert fmt.grammar(TOOLS, target=target).text == fmt.grammar(TOOLS, target=target).text


@pytest.mark.parametrize("kwargs, error, field", [
    ({"target": "outlines"}, InvalidOption, "target"),
    ({"tool_choice": "sometimes"}, InvalidOption, "tool_choice"),
    ({"tool_choice": {"name": "missing"}}, InvalidOption, "tool_choice.function.name"),
    ({"tool_choice": {"type": "web_search"}}, InvalidOption, "tool_choice"),
    ({"prompt": "text"}, InvalidOption, "prompt"),
])
def test_bad_options_name_the_field(kwargs, error, field):
    with pytest.raises(error) as exc:
        toolwire.get_format("qwen25").grammar(TOOLS, **kwargs)
    assert exc.value.field == field


@pytest.mark.parametrize("tools, field", [
    ([{"type": "function", "function": {"name": "f", "parameters": {"type": "array"}}}],
     "tools[0].function.parameters.type"),
    ([{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": []}}}],
     "tools[0].function.parameters.properties"),
    ([{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "required": "x"}}}],
     "tools[0].function.parameters.required"),
    ([WEATHER, WEATHER], "tools[1].function.name"),
    ([{"type": "function", "function": {"description": "no name"}}], "tools[0].function.name"),
])
def test_bad_tools_name_the_field(tools, field):
    with pytest.raises((InvalidToolDefinition, InvalidRequest)) as exc:
        toolwire.get_format("qwen25").grammar(tools)
    assert exc.value.field == field


def test_required_without_tools_is_refused():
    with pytest.raises(InvalidRequest) as exc:
        toolwire.get_format("qwen25").grammar([], tool_choice="required")
    assert exc.value.field == "tool_choice"


@pytest.mark.parametrize("schema, field", [
    ({"type": "object", "properties": {"q": {"type": "string", "pattern": "^a"}}}, "properties.q.pattern"),
    ({"type": "object", "properties": {"q": {"$ref": "#/defs/x"}}}, "properties.q.$ref"),
    ({"type": "object", "properties": {"n": {"type": "number", "minimum": 0}}}, "properties.n.minimum"),
    ({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 10 ** 6}}},
     "properties.n.maximum"),
])
def test_gbnf_refuses_schema_features_it_cannot_express_naming_them(schema, field):
    tools = [{"type": "function", "function": {"name": "f", "parameters": schema}}]
    with pytest.raises(InvalidToolDefinition) as exc:
        toolwire.get_format("qwen25").grammar(tools, target="gbnf")
    assert exc.value.field == f"tools[0].function.parameters.{field}" and exc.value.tool == "f"
    assert toolwire.get_format("qwen25").grammar(tools, target="llguidance").text  # the schema is whole there


@pytest.mark.parametrize("target", ["xgrammar", "llguidance", "gbnf"])
def test_every_format_has_a_grammar_on_every_target(target):
    assert unsupported_formats() == []
    for name in toolwire.formats():
        grammar = toolwire.get_format(name).grammar(TOOLS, target=target, tool_choice="required")
        assert grammar.target == target and (grammar.text or grammar.structural_tag), name


def test_cli_prints_each_target(tmp_path, capsys):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    assert main(["grammar", "--format", "qwen25", "--tools", str(tools)]) == 0
    assert json.loads(capsys.readouterr().out)["format"]["triggers"] == ["<tool_call>"]
    assert main(["grammar", "--format", "qwen25", "--tools", str(tools), "--target", "llguidance",
                 "--tool-choice", "now"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("%llguidance {}") and "get_weather" not in out and '\\"now\\"' in out
    assert main(["grammar", "--format", "qwen25", "--tools", str(tools), "--target", "gbnf", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["grammar_lazy"] is True


@pytest.mark.parametrize("argv, code", [
    (["--format", "nope"], "unknown_format"),
    (["--format", "qwen25", "--target", "gbnf", "--tool-choice", "{bad"], "usage"),
    (["--format", "qwen25", "--tool-choice", "missing"], "invalid_option"),
])
def test_cli_errors_exit_2_with_the_code(tmp_path, capsys, argv, code):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    assert main(["grammar", "--tools", str(tools), *argv]) == 2
    err = capsys.readouterr().err
    assert f"[{code}]" in err and "Traceback" not in err


R1_CALL = ('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Oslo"}\n```'
           '<｜tool▁call▁end｜><｜tool▁calls▁end｜>')


@pytest.mark.parametrize("target", ["llguidance", "gbnf"])
def test_deepseek_r1_fenced_calls(target):
    """R1's golden outputs hold no call, so its wire is checked here, from DeepSeek-R1's documented format."""
    fmt = toolwire.get_format("deepseek_r1")
    parsed = fmt.parse("Checking." + R1_CALL, TOOLS, thinking=False)
    assert [(c.name, c.arguments, c.status) for c in parsed.tool_calls] == [("get_weather", {"city": "Oslo"},
                                                                           "proposed")]
    m = Matcher(fmt.grammar(TOOLS, target=target, thinking=False))
    assert m.accepts("Checking." + R1_CALL) and m.accepts("No call needed.")
    assert not m.accepts(R1_CALL.replace("```json", "```"))
    two = R1_CALL.replace("<｜tool▁calls▁end｜>", "\n") + R1_CALL.split("<｜tool▁calls▁begin｜>")[1]
    assert [c.status for c in fmt.parse(two, TOOLS, thinking=False).tool_calls] == ["proposed", "proposed"]
    assert m.accepts(two)  # two calls in one section, a line break between them as the template writes it
    assert not m.accepts(two.replace("```<｜tool▁call▁end｜>\n", "```<｜tool▁call▁end｜>"))
