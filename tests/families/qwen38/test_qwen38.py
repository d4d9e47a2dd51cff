"""Qwen3.8 beyond the golden vectors: the reference template on random conversations (every effort), the
template's own switch names, the effort refusal, round trip, malformed outputs (fixtures/qwen38)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import toolwire
from toolwire.errors import InvalidOption
from support.xml_calls import (RT_TOOLS, calls, check_against_reference, check_corpus_row, check_round_trip,
                            conversations, corpus_tools, load_corpus, plain_texts)

QWEN38 = toolwire.get_format("qwen38")
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
HELLO = [{"role": "user", "content": "hi"}]


@SETTINGS
@given(messages=conversations(), with_tools=st.booleans(), thinking=st.booleans(), agp=st.booleans(),
       preserve=st.none() | st.booleans(), effort=st.sampled_from([None, "xhigh", "medium", "low"]))
def test_native_render_equals_the_reference_template(messages, with_tools, thinking, agp, preserve, effort):
    tools = RT_TOOLS if with_tools else None
    options = {"thinking": thinking, "add_generation_prompt": agp}
    kwargs = {"enable_thinking": thinking}
    if preserve is not None:
        options["preserve_thinking"] = kwargs["preserve_thinking"] = preserve
    if effort is not None:
        options["reasoning_effort"] = kwargs["reasoning_effort"] = effort
    check_against_reference("qwen38", messages, tools, options, kwargs)


def test_effort_instruction_opens_a_system_turn_of_its_own():
    low = QWEN38.render(HELLO, thinking=True, reasoning_effort="low").text
    assert low.startswith("<|im_start|>system\nReasoning effort is set to low. Keep your thinking brief")
    assert QWEN38.render(HELLO, thinking=True, reasoning_effort="medium").text.startswith("<|im_start|>user\nhi")
    assert QWEN38.render(HELLO, thinking=True).text.startswith("<|im_start|>system\nReasoning effort is set to xhigh.")
    assert QWEN38.render(HELLO, thinking=False, reasoning_effort="low").text.startswith("<|im_start|>user\n")


def test_an_effort_the_template_does_not_know_is_refused_naming_the_field():
    with pytest.raises(InvalidOption) as info:
        QWEN38.render(HELLO, thinking=True, reasoning_effort="max")
    assert info.value.field == "reasoning_effort" and "xhigh (default), medium, and low" in info.value.detail


def test_enable_thinking_is_an_alias_of_thinking():
    assert QWEN38.render(HELLO, enable_thinking=True).text == QWEN38.render(HELLO, thinking=True).text
    prompt = QWEN38.render(HELLO, enable_thinking=False)
    assert prompt.text == QWEN38.render(HELLO, thinking=False).text and not prompt.opens_reasoning
    assert QWEN38.render(HELLO).text == QWEN38.render(HELLO, thinking=True).text  # the template's default: on
    with pytest.raises(InvalidOption) as info:
        QWEN38.render(HELLO, thinking=True, enable_thinking=False)
    assert info.value.field == "enable_thinking"


def test_earlier_reasoning_is_kept_unless_preserve_thinking_is_false():
    convo = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "reasoning_content": "r1"},
             {"role": "user", "content": "c"}]
    assert "<think>\nr1\n</think>\n\nb" in QWEN38.render(convo).text  # thinking off too
    assert "r1" not in QWEN38.render(convo, thinking=True, preserve_thinking=False).text


@pytest.mark.parametrize("thinking", [False, True])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(content=plain_texts, reasoning=plain_texts, turn_calls=calls, seed=st.integers(0, 2**16))
def test_round_trip(thinking, content, reasoning, turn_calls, seed):
    check_round_trip("qwen38", thinking, content, reasoning if thinking else "", turn_calls, seed)


@pytest.mark.parametrize("row", load_corpus("qwen38"))
def test_malformed_output(row):
    check_corpus_row(row, corpus_tools("qwen38"))
