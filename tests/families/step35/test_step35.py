"""Step 3.5 beyond the golden vectors: the reference template on random conversations, refusals, the bos token,
round trip and malformed outputs (fixtures/step35)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import toolwire
from toolwire.errors import UnsupportedByFormat
from support.xml_calls import (RT_TOOLS, calls, check_against_reference, check_corpus_row, check_round_trip,
                            conversations, corpus_tools, load_corpus, plain_texts)

STEP = toolwire.get_format("step35")
HELLO = [{"role": "user", "content": "hi"}]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(messages=conversations(), with_tools=st.booleans(), agp=st.booleans())
def test_native_render_equals_the_reference_template(messages, with_tools, agp):
    check_against_reference("step35", messages, RT_TOOLS if with_tools else None,
                            {"thinking": True, "add_generation_prompt": agp}, {"bos_token": "<s>"})


def test_the_prompt_always_opens_reasoning():
    for thinking in (False, True):
        prompt = STEP.render(HELLO, thinking=thinking)
        assert prompt.text == "<s><|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n"
        assert prompt.opens_reasoning


def test_observation_system_turn_and_image_parts():
    msgs = [*HELLO, {"role": "system", "name": "observation", "content": "seen"},
            {"role": "user", "content": [{"type": "text", "text": "look "}, {"type": "image"},
                                         {"type": "text", "value": "here"}]}]
    text = STEP.render(msgs).text
    assert "<|im_start|>observation\nseen<|im_end|>\n<|im_start|>user\nlook <im_patch>here<|im_end|>\n" in text


@pytest.mark.parametrize("messages,index,field", [
    ([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}], 0, "content[0].type"),
    ([{"role": "developer", "content": "be brief"}, *HELLO], 0, "role"),
])
def test_what_the_template_drops_is_refused_naming_the_field(messages, index, field):
    with pytest.raises(UnsupportedByFormat) as info:
        STEP.render(messages)
    assert (info.value.message_index, info.value.field) == (index, field)


def test_reasoning_is_kept_only_after_the_last_real_query():
    convo = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "reasoning_content": "r1"},
             {"role": "user", "content": "<tool_response>x</tool_response>"},
             {"role": "assistant", "content": "c", "reasoning_content": "r2"}]
    text = STEP.render(convo, add_generation_prompt=False).text
    assert "<|im_start|>assistant\n<think>\nr1\n</think>\nb" in text and "<think>\nr2\n</think>\nc" in text
    text = STEP.render([*convo, {"role": "user", "content": "d"}]).text
    assert "r1" not in text and "r2" not in text


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(content=plain_texts, reasoning=plain_texts, turn_calls=calls, seed=st.integers(0, 2**16))
def test_round_trip(content, reasoning, turn_calls, seed):
    check_round_trip("step35", True, content, reasoning, turn_calls, seed)


@pytest.mark.parametrize("row", load_corpus("step35"))
def test_malformed_output(row):
    check_corpus_row(row, corpus_tools("step35"))
