"""Remembered run ids (``Vocabulary.encode_run``): :func:`encode_segments` encodes each run of plain text between
control tokens once per tokenizer, and a remembered run gives the ids a fresh encoding gives.

Real tokenizers from ../shared/real/tokenizers (fixtures of ``test_tokenize``): Qwen3 through transformers,
DeepSeek-V4 as a ``tokenizers.Tokenizer``, Llama-3 through tiktoken.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import toolwire
from tokens.test_tokenize import deepseek_v4, llama3_tiktoken, qwen3, reference_ids  # noqa: F401 - fixtures
from toolwire.prompt import Segment
from toolwire.tokenize import encode_segments
from toolwire.tokenize.vocabularies import _make_vocabulary

TOKENIZERS = ["qwen3", "deepseek_v4", "llama3_tiktoken"]

# few distinct pieces, so that runs repeat, and runs that only differ in where their pieces meet
_PIECES = ["user\n", "assistant\n", "\n", "\n\n", " ", "  ", "a", "ab", "b c", "東京", "°C", "12", "'s", "{\"", "\"}"]


def _fresh(tok):
    """A new vocabulary of ``tok`` (nothing remembered yet, shared with no other test)."""
    return _make_vocabulary(tok)


def _conversation(turns: int) -> list[dict]:
    messages = [{"role": "system", "content": "You are terse."}]
    for t in range(turns):
        messages += [{"role": "user", "content": f"Question {t}?"}, {"role": "assistant", "content": f"Answer {t}."}]
    return messages + [{"role": "user", "content": "Bye."}]


@pytest.mark.parametrize("tok_name", TOKENIZERS)
def test_remembered_runs_give_the_tokenizers_own_ids(tok_name, request):
    """For any sequence of segments from a few pieces and control tokens (runs repeat, and the same pieces meet
    differently), the ids with runs remembered from earlier prompts equal the tokenizer's own tokenization of
    the prompt text, and those of a vocabulary that remembers nothing."""
    tok = request.getfixturevalue(tok_name)
    vocab = _fresh(tok)
    markers = sorted(vocab.control, key=len)[:2]
    segment = st.one_of(st.tuples(st.sampled_from(["template", "content"]), st.sampled_from(_PIECES)),
                        st.tuples(st.just("special"), st.sampled_from(markers)))

    @settings(max_examples=150, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(st.lists(segment, max_size=24))
    def check(parts):
        segments = [Segment(kind, text, 0) for kind, text in parts]
        ids = encode_segments(segments, vocab)
        assert ids == encode_segments(segments, _fresh(tok))
        assert ids == reference_ids(tok, "".join(text for _, text in parts))

    check()


@pytest.mark.parametrize("tok_name, family", [("qwen3", "qwen3"), ("llama3_tiktoken", "llama31")])
def test_each_distinct_run_is_encoded_once(tok_name, family, request):
    """A conversation's runs repeat (the role lines, the newlines): the first encoding encodes each distinct run
    once, encoding the prompt again encodes none, and the ids are the same both times."""
    tok = request.getfixturevalue(tok_name)
    vocab = _fresh(tok)
    prompt = toolwire.get_format(family).render(_conversation(6), None)
    runs: list[str] = []
    encoded: list[str] = []
    encode_run, encode_plain = vocab.encode_run, vocab.encode_plain
    vocab.encode_run = lambda text: (runs.append(text), encode_run(text))[1]
    vocab.encode_plain = lambda text: (encoded.append(text), encode_plain(text))[1]
    first = encode_segments(prompt.segments, vocab)
    distinct = set(runs) - {""}
    assert len(runs) > len(distinct) and sorted(encoded) == sorted(distinct)
    encoded.clear()
    assert encode_segments(prompt.segments, vocab) == first and encoded == []


def test_callers_cannot_change_remembered_ids(qwen3):
    """The ids list is the caller's own: changing it changes no later encoding."""
    vocab = _fresh(qwen3)
    segments = [Segment("special", "<|im_start|>", 0), Segment("template", "user\n", 0),
                Segment("content", "hello", 0), Segment("special", "<|im_end|>", 0)]
    first = encode_segments(segments, vocab)
    expected = list(first)
    first.clear()
    assert encode_segments(segments, vocab) == expected


def test_remembered_text_is_bounded(qwen3):
    """At most ``RUN_CACHE_CHARS`` characters of run text are remembered (a longer run is encoded, not kept),
    and forgetting changes no ids."""
    vocab = _fresh(qwen3)
    vocab.RUN_CACHE_CHARS = 40
    for k in range(30):
        for text in (f"run number {k}\n", "x" * 41 + str(k)):
            segments = [Segment("special", "<|im_start|>", 0), Segment("content", text, 0)]
            assert encode_segments(segments, vocab) == reference_ids(qwen3, "<|im_start|>" + text)
            assert vocab._run_chars == sum(map(len, vocab._runs)) <= 40
    assert not any(len(text) > 40 for text in vocab._runs)
