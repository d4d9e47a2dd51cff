"""Properties of the shared XML-call parser on arbitrary output (marker soup), for all four formats:
never crashes, chunking invariance, events agree with the result, nothing lost, truncation is honest."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings, strategies as st

import toolwire
from qwen_xml_cases import RT_TOOLS
from support import assert_events_consistent, full_state, random_chunks, stream_parse

FORMATS = {
    "qwen3_coder": ["<tool_call>", "</tool_call>"],
    "qwen35": ["<tool_call>", "</tool_call>", "</think>"],
    "qwen36": ["<tool_call>", "</tool_call>", "</think>"],
    "seed_oss": ["<seed:tool_call>", "</seed:tool_call>", "<seed:think>", "</seed:think>"],
}
COMMON = ["<function=do_it>", "<function=nope>", "<function=", "</function>", "<parameter=s>", "<parameter=i>",
          "<parameter=", "</parameter>", ">", "\n", "\n\n", " ", "<", "</"]


@st.composite
def outputs(draw, family):
    """Outputs built from the format's markers, whitespace and unique words w0, w1, ..."""
    pieces = draw(st.lists(st.sampled_from(FORMATS[family] + COMMON) | st.just("WORD"), max_size=40))
    words = iter(range(10_000))
    return "".join(f"w{next(words)}x" if p == "WORD" else p for p in pieces)


def everything_kept(out) -> str:
    parts = [out.content, out.reasoning]
    for call in out.tool_calls:
        parts += [call.name, call.raw_arguments, json.dumps(call.arguments, ensure_ascii=False)]
        parts += [d.raw or "" for d in call.diagnostics]
    parts += [d.raw or "" for d in out.diagnostics]
    return "\x00".join(parts)


@pytest.mark.parametrize("family", sorted(FORMATS))
@settings(max_examples=250, deadline=None)
@given(data=st.data(), thinking=st.booleans(), seed=st.integers(0, 2**16))
def test_arbitrary_output(family, data, thinking, seed):
    text = data.draw(outputs(family))
    fmt = toolwire.get_format(family)
    out = fmt.parse(text, RT_TOOLS, thinking=thinking)
    kept = everything_kept(out)
    for word in {w for w in text.replace("<", " ").replace(">", " ").replace("=", " ").split() if w.startswith("w")}:
        if word.endswith("x") and word[1:-1].isdigit():
            assert word in kept, f"{word} was lost"
    for call in out.tool_calls:
        assert call.status in ("proposed", "repaired", "rejected", "truncated")
        if call.status == "truncated":
            assert out.truncated
    result, events = stream_parse(fmt, text, random_chunks(text, random.Random(seed), 5), tools=RT_TOOLS,
                                  thinking=thinking)
    assert full_state(result) == full_state(out)
    assert_events_consistent(result, events)
    result, events = stream_parse(fmt, text, tools=RT_TOOLS, thinking=thinking)
    assert full_state(result) == full_state(out)
