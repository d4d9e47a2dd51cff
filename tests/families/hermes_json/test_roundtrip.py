"""Round trip: parse(render(assistant turn)) == that turn, for random turns of every family (hypothesis).

Arguments may hold any JSON value (every type, unicode, whitespace-only strings, markup that spells the
markers, huge ints): they travel as JSON, so the parser reads them back exactly. Content and reasoning
are free text and cannot spell the format's own markers (``<tool_call>``, ``</think>`` ...) unambiguously
in text form, so the generated text avoids those; the Qwen3 templates also strip newlines around
reasoning and before content, which the generated text avoids too.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolwire
from support import assert_events_consistent, random_chunks, stream_parse, summary

from support.hermes_json import FAMILIES, THINKING, declared, json_objects, model_output

NAMES = ("get_weather", "search", "db.query", "a-b_c")
TOOLS = declared(*NAMES)
MARKERS = ("<tool_call>", "</tool_call>", "<think>", "</think>", "<|im_end|>")

free_text = st.text(alphabet=st.one_of(st.sampled_from(list(" \n\t{}[]\"'\\<>/:,é☕𝄞")), st.characters(
    exclude_categories=("Cs",))), max_size=25).filter(lambda t: not any(m in t for m in MARKERS))


@st.composite
def turns(draw, family: str, thinking: bool):
    content = draw(free_text)
    calls = [{"id": f"call_{k}", "type": "function",
              "function": {"name": draw(st.sampled_from(NAMES)), "arguments": draw(json_objects)}}
             for k in range(draw(st.integers(0, 3)))]
    turn = {"role": "assistant", "content": content}
    reasoning = ""
    if family in ("qwen3", "qwen3_thinking_2507"):
        turn["content"] = content = content.lstrip("\n")
        if thinking:
            reasoning = draw(free_text).strip("\n")
        turn["reasoning_content"] = reasoning
    if calls:
        turn["tool_calls"] = calls
    expected = {"content": content, "reasoning": reasoning,
                "tool_calls": [{"name": c["function"]["name"], "arguments": c["function"]["arguments"]}
                               for c in calls]}
    return turn, expected


CASES = [(family, thinking) for family in FAMILIES for thinking in THINKING[family]]


@pytest.mark.parametrize("family,thinking", CASES)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_parse_of_render_is_the_turn(family, thinking, data):
    turn, expected = data.draw(turns(family, thinking))
    text = model_output(family, turn, TOOLS, thinking=thinking)
    fmt = toolwire.get_format(family)
    prompt = fmt.render([{"role": "user", "content": "hi"}], TOOLS, thinking=thinking)  # where the output starts
    thinking = prompt.opens_reasoning
    out = fmt.parse(text, TOOLS, thinking=thinking)
    assert summary(out) == expected
    assert [c.status for c in out.tool_calls] == ["proposed"] * len(expected["tool_calls"])
    assert out.codes() == [] and not out.truncated
    rng = random.Random(data.draw(st.integers(0, 2 ** 20)))
    result, events = stream_parse(fmt, text, random_chunks(text, rng, rng.choice([1, 3, 17])), TOOLS,
                                  thinking=thinking)
    assert result.model_dump() == out.model_dump()
    assert_events_consistent(result, events)


@pytest.mark.parametrize("family", FAMILIES)
def test_round_trip_of_a_64k_argument(family):
    thinking = THINKING[family][-1]
    value = "".join(chr(0x20 + (i * 7919) % 0x2000) for i in range(65536))
    turn = {"role": "assistant", "content": "", "reasoning_content": "", "tool_calls": [
        {"id": "1", "type": "function", "function": {"name": "search", "arguments": {"q": value, "n": 2 ** 70}}}]}
    text = model_output(family, turn, TOOLS, thinking=thinking)
    out = toolwire.get_format(family).parse(text, TOOLS, thinking=thinking)
    assert out.tool_calls[0].arguments == {"q": value, "n": 2 ** 70}
