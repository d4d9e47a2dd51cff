"""Properties of the shared XML-call parser on arbitrary output (marker soup), for all four formats:
never crashes, chunking invariance, events agree with the result, nothing lost, truncation is honest."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings, strategies as st

import toolwire
from support.xml_calls import RT_TOOLS
from support import check_chunking, kept_text, random_chunks

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
    """What the result keeps (:func:`support.kept_text` with call names), and each call's decoded arguments."""
    return "\x00".join([kept_text(out, names=True), *(json.dumps(c.arguments, ensure_ascii=False)
                                                      for c in out.tool_calls)])


@pytest.mark.parametrize("family", sorted(FORMATS))
@settings(max_examples=250, deadline=None)
@given(data=st.data(), thinking=st.booleans(), seed=st.integers(0, 2**16))
def test_arbitrary_output(family, data, thinking, seed):
    text = data.draw(outputs(family))
    fmt = toolwire.get_format(family)
    out = check_chunking(fmt, text, RT_TOOLS, splits=[random_chunks(text, random.Random(seed), 5), list(text)],
                         thinking=thinking)
    kept = everything_kept(out)
    for word in {w for w in text.replace("<", " ").replace(">", " ").replace("=", " ").split() if w.startswith("w")}:
        if word.endswith("x") and word[1:-1].isdigit():
            assert word in kept, f"{word} was lost"
    for call in out.tool_calls:
        assert call.status in ("proposed", "repaired", "rejected", "truncated")
        if call.status == "truncated":
            assert out.truncated


from hypothesis import HealthCheck, given, settings  # noqa: E402

from support.xml_calls import REASONING_SHAPES, answers, check_reasoning_mention, mention_soup  # noqa: E402


@pytest.mark.parametrize("family", sorted(REASONING_SHAPES))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(soup=mention_soup, answer=answers)
def test_call_markup_in_reasoning_never_swallows_the_answer(family, soup, answer):
    check_reasoning_mention(family, soup, answer)
