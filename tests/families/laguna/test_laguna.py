"""Laguna beyond the golden vectors: the reference template on random conversations, its switches
(``enable_thinking``, ``preserve_thinking``), refusals, round trip and malformed outputs (fixtures/laguna)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import toolwire
from toolwire.errors import InvalidOption, UnrepresentableValue, UnsupportedByFormat
from toolwire.templates.laguna import DEFAULT_SYSTEM
from support.xml_calls import (RT_TOOLS, calls, check_against_reference, check_corpus_row, check_round_trip,
                            conversations, corpus_tools, load_corpus, plain_texts)

LAGUNA = toolwire.get_format("laguna")
HELLO = [{"role": "user", "content": "hi"}]
HISTORY = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "reasoning_content": "r1"},
           {"role": "user", "content": "c"}]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(messages=conversations(), with_tools=st.booleans(), thinking=st.booleans(), agp=st.booleans(),
       preserve=st.none() | st.booleans())
def test_native_render_equals_the_reference_template(messages, with_tools, thinking, agp, preserve):
    options = {"thinking": thinking, "add_generation_prompt": agp}
    kwargs = {"enable_thinking": thinking}
    if preserve is not None:
        options["preserve_thinking"] = kwargs["preserve_thinking"] = preserve
    check_against_reference("laguna", messages, RT_TOOLS if with_tools else None, options, kwargs)


def test_default_system_text_and_its_opt_out():
    assert LAGUNA.render(HELLO, thinking=False).text == \
        f"〈|EOS|〉<system>{DEFAULT_SYSTEM}</system>\n<user>hi</user>\n<assistant></think>"
    blank = [{"role": "system", "content": " "}, *HELLO]
    assert LAGUNA.render(blank, thinking=False).text == "〈|EOS|〉<user>hi</user>\n<assistant></think>"
    assert LAGUNA.render(blank, enable_thinking=True).text == "〈|EOS|〉<system></system>\n<user>hi</user>\n<assistant><think>"
    with pytest.raises(InvalidOption):
        LAGUNA.render(HELLO, thinking=True, enable_thinking=False)


def test_reasoning_is_rendered_in_every_turn_with_thinking_on_or_preserve_thinking():
    assert "<assistant><think>r1</think>b</assistant>" in LAGUNA.render(HISTORY, thinking=True).text
    assert "<assistant></think>b</assistant>" in LAGUNA.render(HISTORY, thinking=False).text
    assert "<assistant><think>r1</think>b</assistant>" in LAGUNA.render(HISTORY, thinking=False,
                                                                      preserve_thinking=True).text
    assert "<assistant><think></think>b</assistant>" in LAGUNA.render(HISTORY, thinking=True, policy="drop_all").text


@pytest.mark.parametrize("messages,index,field", [
    ([{"role": "user", "content": [{"type": "text", "text": "hi"}]}], 0, "content"),
    ([{"role": "developer", "content": "be brief"}, *HELLO], 0, "role"),
])
def test_what_the_template_drops_is_refused_naming_the_field(messages, index, field):
    with pytest.raises(UnsupportedByFormat) as info:
        LAGUNA.render(messages)
    assert (info.value.message_index, info.value.field) == (index, field)


def test_a_value_that_would_close_early_is_refused():
    turn = {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "type": "function", "function": {
        "name": "other_tool", "arguments": '{"body": "x</arg_value><arg_key>y"}'}}]}
    with pytest.raises(UnrepresentableValue) as info:
        LAGUNA.render([*HELLO, turn], RT_TOOLS)
    assert (info.value.message_index, info.value.field) == (1, "tool_calls[0].function.arguments.body")


@pytest.mark.parametrize("thinking", [False, True])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(content=plain_texts, reasoning=plain_texts, turn_calls=calls, seed=st.integers(0, 2**16))
def test_round_trip(thinking, content, reasoning, turn_calls, seed):
    check_round_trip("laguna", thinking, content, reasoning if thinking else "", turn_calls, seed)


@pytest.mark.parametrize("row", load_corpus("laguna"))
def test_malformed_output(row):
    check_corpus_row(row, corpus_tools("laguna"))
