"""Nemotron 3 beyond the golden vectors: the reference template on random conversations, its switches
(``enable_thinking``, ``truncate_history_thinking``), refusals, round trip and malformed outputs
(fixtures/nemotron3)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import toolwire
from toolwire.errors import InvalidOption, UnsupportedByFormat
from support.xml_calls import (RT_TOOLS, calls, check_against_reference, check_corpus_row, check_round_trip,
                            conversations, corpus_tools, load_corpus, plain_texts)

NEMOTRON = toolwire.get_format("nemotron3")
HELLO = [{"role": "user", "content": "hi"}]
HISTORY = [{"role": "user", "content": "a"},
           {"role": "assistant", "content": "b", "reasoning_content": "r1"},
           {"role": "user", "content": "c"}]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(messages=conversations(), with_tools=st.booleans(), thinking=st.booleans(), agp=st.booleans(),
       truncate=st.none() | st.booleans())
def test_native_render_equals_the_reference_template(messages, with_tools, thinking, agp, truncate):
    options = {"thinking": thinking, "add_generation_prompt": agp}
    kwargs = {"enable_thinking": thinking}
    if truncate is not None:
        options["truncate_history_thinking"] = kwargs["truncate_history_thinking"] = truncate
    check_against_reference("nemotron3", messages, RT_TOOLS if with_tools else None, options, kwargs)


def test_always_a_system_turn_and_the_prompt_closes_thinking_when_off():
    off = NEMOTRON.render(HELLO, thinking=False).text
    assert off == "<|im_start|>system\n<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think></think>"
    on = NEMOTRON.render(HELLO)  # the template's default: thinking on
    assert on.text == NEMOTRON.render(HELLO, enable_thinking=True).text
    assert on.text.endswith("<|im_start|>assistant\n<think>\n") and on.opens_reasoning
    with pytest.raises(InvalidOption):
        NEMOTRON.render(HELLO, thinking=True, enable_thinking=False)


def test_history_reasoning_is_truncated_unless_switched_off():
    # the template cuts after the last </think> and trims before putting <think></think> in front: "\nb" stays
    assert "<|im_start|>assistant\n<think></think>\nb<|im_end|>" in NEMOTRON.render(HISTORY, thinking=True).text
    without = [HISTORY[0], {"role": "assistant", "content": "b"}, HISTORY[2]]
    assert "<|im_start|>assistant\n<think></think>b<|im_end|>" in NEMOTRON.render(without, thinking=True).text
    kept = NEMOTRON.render(HISTORY, thinking=True, truncate_history_thinking=False).text
    assert "<|im_start|>assistant\n<think>\nr1\n</think>\nb<|im_end|>" in kept
    assert NEMOTRON.render(HISTORY, thinking=True, policy="keep_all").text == kept


@pytest.mark.parametrize("messages,index", [
    ([{"role": "user", "content": [{"type": "text", "text": "hi"}]}], 0),
    ([{"role": "system", "content": None}, *HELLO], 0),
    ([*HELLO, {"role": "assistant", "content": [{"type": "text", "text": "x"}]}], 1),
])
def test_what_the_template_cannot_carry_is_refused_naming_the_field(messages, index):
    with pytest.raises(UnsupportedByFormat) as info:
        NEMOTRON.render(messages)
    assert (info.value.message_index, info.value.field) == (index, "content")


def test_python_style_values_are_written_and_read_back_typed():
    turn = {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "type": "function", "function": {
        "name": "do_it", "arguments": '{"b": true, "z": null, "n": 1e-07, "a": [1], "s": "True"}'}}]}
    text = NEMOTRON.render([*HELLO, turn], RT_TOOLS, add_generation_prompt=False).text
    assert "<parameter=b>\nTrue\n</parameter>\n<parameter=z>\nNone\n</parameter>\n<parameter=n>\n1e-07\n" in text
    out = NEMOTRON.parse(text.split("<think></think>", 1)[1].removesuffix("<|im_end|>\n"), RT_TOOLS)
    assert [c.arguments for c in out.tool_calls] == [{"b": True, "z": None, "n": 1e-07, "a": [1], "s": "True"}]


@pytest.mark.parametrize("thinking", [False, True])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(content=plain_texts, reasoning=plain_texts, turn_calls=calls, seed=st.integers(0, 2**16))
def test_round_trip(thinking, content, reasoning, turn_calls, seed):
    if thinking:
        assume(reasoning)  # an empty reasoning renders <think></think>, which the thinking prompt cannot precede
    check_round_trip("nemotron3", thinking, content, reasoning if thinking else "", turn_calls, seed)


@pytest.mark.parametrize("row", load_corpus("nemotron3"))
def test_malformed_output(row):
    check_corpus_row(row, corpus_tools("nemotron3"))
