"""Hy3 beyond the golden vectors: the reference template on random conversations, its ``reasoning_effort``
switch (no_think / low / high), ``preserved_thinking``, refusals, round trip and malformed outputs
(fixtures/hy3)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import toolwire
from toolwire.errors import InvalidOption, UnsupportedByFormat
from support.xml_calls import (RT_TOOLS, calls, check_against_reference, check_corpus_row, check_round_trip,
                            conversations, corpus_tools, load_corpus, plain_texts)

HY3 = toolwire.get_format("hy3")
HELLO = [{"role": "user", "content": "hi"}]
BOS, USER, ASSISTANT = "<｜hy_begin_of_sentence:opensource｜>", "<｜hy_User:opensource｜>", "<｜hy_Assistant:opensource｜>"
MODE = "<｜reasoning_mode:opensource｜>reasoning_effort:"
HISTORY = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "reasoning_content": "r1"},
           {"role": "user", "content": "c"}]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(messages=conversations(), with_tools=st.booleans(), effort=st.sampled_from(["no_think", "low", "high"]),
       agp=st.booleans(), preserved=st.none() | st.booleans())
def test_native_render_equals_the_reference_template(messages, with_tools, effort, agp, preserved):
    options = {"reasoning_effort": effort, "add_generation_prompt": agp}
    kwargs = {"reasoning_effort": effort}
    if preserved is not None:
        options["preserved_thinking"] = kwargs["preserved_thinking"] = preserved
    check_against_reference("hy3", messages, RT_TOOLS if with_tools else None, options, kwargs)


@pytest.mark.parametrize("options,effort,opens", [
    ({}, "no_think", False),
    ({"thinking": True}, "high", True),
    ({"reasoning_effort": "low"}, "low", True),
    ({"thinking": True, "reasoning_effort": "low"}, "low", True),
    ({"reasoning_effort": "no_think"}, "no_think", False),
])
def test_reasoning_effort_is_the_thinking_switch(options, effort, opens):
    prompt = HY3.render(HELLO, **options)
    tail = "<think:opensource>" if opens else "<think:opensource></think:opensource>"
    assert prompt.text == f"{BOS}{MODE}{effort}{USER}hi{ASSISTANT}{tail}"
    assert prompt.opens_reasoning == opens


@pytest.mark.parametrize("options", [{"thinking": True, "reasoning_effort": "no_think"},
                                     {"reasoning_effort": "max"}])
def test_contradicting_or_unknown_efforts_are_refused(options):
    with pytest.raises(InvalidOption) as info:
        HY3.render(HELLO, **options)
    assert info.value.field == "reasoning_effort"


def test_history_reasoning_before_the_last_user_message_unless_preserved():
    assert "r1" not in HY3.render(HISTORY, thinking=True).text
    assert f"{ASSISTANT}<think:opensource>r1</think:opensource>b" in HY3.render(HISTORY, preserved_thinking=True).text
    assert "r1" in HY3.render(HISTORY, RT_TOOLS).text  # preserved_thinking is the template's default with tools


def test_every_system_message_joins_the_top_and_a_closing_answer_stays_open():
    msgs = [{"role": "system", "content": "A. "}, *HELLO, {"role": "system", "content": "B."},
            {"role": "assistant", "content": "done"}]
    text = HY3.render(msgs).text
    assert text == f"{BOS}A. B.{MODE}no_think{USER}hi{ASSISTANT}<think:opensource></think:opensource>done"
    assert HY3.render(msgs, raw_last_assistant=True).text.endswith(f"{ASSISTANT}done")


@pytest.mark.parametrize("messages,index,field", [
    ([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}], 0, "content[0].type"),
    ([{"role": "developer", "content": "be brief"}, *HELLO], 0, "role"),
])
def test_what_the_template_drops_is_refused_naming_the_field(messages, index, field):
    with pytest.raises(UnsupportedByFormat) as info:
        HY3.render(messages)
    assert (info.value.message_index, info.value.field) == (index, field)


@pytest.mark.parametrize("thinking", [False, True])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(content=plain_texts, reasoning=plain_texts, turn_calls=calls, seed=st.integers(0, 2**16))
def test_round_trip(thinking, content, reasoning, turn_calls, seed):
    check_round_trip("hy3", thinking, content, reasoning if thinking else "", turn_calls, seed)


@pytest.mark.parametrize("row", load_corpus("hy3"))
def test_malformed_output(row):
    check_corpus_row(row, corpus_tools("hy3"))
