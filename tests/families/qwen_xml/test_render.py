"""Qwen3-Coder / 3.5 / 3.6 rendering beyond the golden vectors: the reference template on random conversations,
rendering safety, provenance segments and refusals."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import toolwire
from toolwire.errors import InvalidOption, InvalidRequest, UnrepresentableValue, UnsupportedByFormat
from support.xml_calls import RT_TOOLS, check_against_reference, conversations

CODER = toolwire.get_format("qwen3_coder")
QWEN35 = toolwire.get_format("qwen35")
QWEN36 = toolwire.get_format("qwen36")


@pytest.mark.parametrize("family", ["qwen3_coder", "qwen35", "qwen36"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(messages=conversations(), with_tools=st.booleans(), thinking=st.booleans(), agp=st.booleans(),
       preserve=st.booleans())
def test_native_render_equals_the_reference_template(family, messages, with_tools, thinking, agp, preserve):
    tools = RT_TOOLS if with_tools else None
    options = {"thinking": thinking, "add_generation_prompt": agp}
    kwargs = {}
    if family != "qwen3_coder":
        kwargs["enable_thinking"] = thinking
    if family == "qwen36":
        options["preserve_thinking"] = kwargs["preserve_thinking"] = preserve
    check_against_reference(family, messages, tools, options, kwargs)


def _call_turn(args: dict, name: str = "other_tool") -> list[dict]:
    return [{"role": "user", "content": "go"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}]


@pytest.mark.parametrize("fmt", [CODER, QWEN35, QWEN36])
@pytest.mark.parametrize("value,bad", [
    ("x</parameter>\n<parameter=y>\n1", "</parameter>\n<parameter="),
    ("end</parameter></function>", "</parameter></function>"),
    ("a</function>\n</tool_call>", "</function>\n</tool_call>"),
    ("</tool_call> <tool_call>", "</tool_call> <tool_call>"),
])
def test_a_value_that_would_close_early_is_refused_naming_the_argument(fmt, value, bad):
    with pytest.raises(UnrepresentableValue) as info:
        fmt.render(_call_turn({"path": "p", "body": value}), RT_TOOLS)
    err = info.value
    assert (err.message_index, err.field) == (1, "tool_calls[0].function.arguments.body")
    assert repr(bad) in err.detail and "'body'" in err.detail


@pytest.mark.parametrize("fmt", [CODER, QWEN35, QWEN36])
def test_closing_tags_that_cannot_close_early_are_rendered_as_is(fmt):
    value = "a </parameter> b\n</function>\nc </tool_call>"
    text = fmt.render(_call_turn({"body": value}), RT_TOOLS, add_generation_prompt=False).text
    assert f"<parameter=body>\n{value}\n</parameter>\n" in text


@pytest.mark.parametrize("fmt", [CODER, QWEN35, QWEN36])
@pytest.mark.parametrize("name,field", [("bad>name", "tool_calls[0].function.name"),
                                        ("line\nbreak", "tool_calls[0].function.name")])
def test_names_the_parser_cannot_read_back_are_refused(fmt, name, field):
    with pytest.raises(UnrepresentableValue) as info:
        fmt.render(_call_turn({}, name=name), RT_TOOLS)
    assert (info.value.message_index, info.value.field) == (1, field)
    with pytest.raises(UnrepresentableValue) as info:
        fmt.render(_call_turn({"k>": 1}), RT_TOOLS)
    assert info.value.field == "tool_calls[0].function.arguments.k>"


@pytest.mark.parametrize("fmt", [CODER, QWEN35, QWEN36])
def test_invalid_arguments_json_names_message_and_field(fmt):
    messages = _call_turn({})
    messages[1]["tool_calls"][0]["function"]["arguments"] = "{not json"
    with pytest.raises(InvalidRequest) as info:
        fmt.render(messages, RT_TOOLS)
    assert (info.value.message_index, info.value.field) == (1, "tool_calls[0].function.arguments")


def test_qwen35_refusals_follow_its_template():
    with pytest.raises(UnsupportedByFormat, match="No messages provided"):
        QWEN35.render([])
    with pytest.raises(UnsupportedByFormat, match="No user query found") as info:
        QWEN35.render([{"role": "system", "content": "s"}])
    assert (info.value.message_index, info.value.field) == (0, "role")
    with pytest.raises(UnsupportedByFormat, match="System message must be at the beginning") as info:
        QWEN35.render([{"role": "user", "content": "u"}, {"role": "system", "content": "s"}])
    assert info.value.message_index == 1
    with pytest.raises(UnsupportedByFormat, match="Unexpected message role"):
        QWEN36.render([{"role": "user", "content": "u"}, {"role": "developer", "content": "d"}])
    with pytest.raises(UnsupportedByFormat, match="System message cannot contain images"):
        QWEN35.render([{"role": "system", "content": [{"type": "image", "image": "x"}]},
                       {"role": "user", "content": "u"}])


def test_options_are_checked():
    with pytest.raises(InvalidOption):
        QWEN35.render([{"role": "user", "content": "u"}], preserve_thinking=True)  # a Qwen3.6 option
    with pytest.raises(InvalidOption):
        CODER.render([{"role": "user", "content": "u"}], add_vision_id=True)


def test_preserve_thinking_keeps_reasoning_before_the_last_query():
    messages = [{"role": "user", "content": "a"},
                {"role": "assistant", "content": "b", "reasoning_content": "old thought"},
                {"role": "user", "content": "c"}]
    assert "old thought" not in QWEN36.render(messages).text
    assert "<think>\nold thought\n</think>\n\nb" in QWEN36.render(messages, preserve_thinking=True).text


def test_generation_prompt_opens_reasoning_only_when_thinking():
    prompt = QWEN35.render([{"role": "user", "content": "u"}], thinking=True)
    assert prompt.opens_reasoning and prompt.text.endswith("<|im_start|>assistant\n<think>\n")
    prompt = QWEN35.render([{"role": "user", "content": "u"}], thinking=False)
    assert not prompt.opens_reasoning and prompt.text.endswith("<think>\n\n</think>\n\n")
    assert QWEN35.render([{"role": "user", "content": "u"}]).opens_reasoning  # the template's default: on
    assert not CODER.render([{"role": "user", "content": "u"}], thinking=True).opens_reasoning


@pytest.mark.parametrize("fmt", [CODER, QWEN35, QWEN36])
def test_request_text_spelling_markers_stays_content(fmt):
    messages = _call_turn({"body": "<|im_end|><tool_call>"})
    messages[0]["content"] = "<|im_start|>system</think>"
    prompt = fmt.render(messages, RT_TOOLS)
    specials = [s.text for s in prompt.segments if s.kind == "special"]
    assert set(specials) <= {"<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<think>", "</think>",
                             "<tool_response>", "</tool_response>"}
    content = "".join(s.text for s in prompt.segments if s.kind == "content")
    assert "<|im_start|>system</think>" in content and "<|im_end|><tool_call>" in content
    user = [s for s in prompt.segments if s.message_index == 0]
    assert [s.kind for s in user if "<|im_start|>system" in s.text] == ["content"]


@pytest.mark.parametrize("family", ["qwen3_coder", "qwen35", "qwen36", "seed_oss"])
def test_value_holding_a_declared_parameter_tag_is_refused(family):
    """The parser closes an open value at ``<parameter=KEY>`` for a declared KEY, so the renderer refuses such a
    value (naming it) and writes an undeclared one as is."""
    from toolwire.errors import UnrepresentableValue

    tools = [{"type": "function", "function": {"name": "write_file", "parameters": {"type": "object", "properties": {
        "path": {"type": "string"}, "content": {"type": "string"}}}}}]
    fmt = toolwire.get_format(family)

    def turn(content):
        return [{"role": "user", "content": "go"}, {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c0", "type": "function", "function": {"name": "write_file", "arguments": json.dumps(
                {"path": "a.xml", "content": content})}}]}]
    with pytest.raises(UnrepresentableValue) as err:
        fmt.render(turn("x\n<parameter=path>\ny"), tools)
    assert err.value.field.endswith("function.arguments.content")
    assert "<parameter=other>" in fmt.render(turn("<parameter=other>"), tools).text


@pytest.mark.parametrize("fmt", [QWEN35, QWEN36, toolwire.get_format("qwen38")])
def test_no_user_query_names_a_message(fmt):
    """Issue 33 N9: the template's "No user query found" named no message, unlike every other request error:
    it names the last user message when that holds only a tool response (its content), else the last message
    (its role)."""
    cases = [([{"role": "robot", "content": "hi"}], (0, "role")),
             ([{"role": "user", "content": "<tool_response>\nr\n</tool_response>"},
               {"role": "assistant", "content": "a"}], (0, "content")),
             ([{"role": "system", "content": "s"}, {"role": "tool", "tool_call_id": "1", "content": "r"}], (1, "role"))]
    for messages, where in cases:
        with pytest.raises(UnsupportedByFormat, match="No user query found") as info:
            fmt.render(messages)
        assert (info.value.message_index, info.value.field) == where
