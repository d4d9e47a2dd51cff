"""Certification on real token ids, llguidance (main venv), for every family with a tokenizer in
../shared/real/tokenizers (the families of tests_engines' xgrammar real-id tests): Qwen3, DeepSeek-V3, DeepSeek-V4,
Llama-3, Llama-4 and o200k (gpt-oss). The grammar is built with ``special_tokens=`` the tokenizer's special tokens,
so markers that are one special token are written as ``<[id]>`` references (llguidance's Hugging Face bridge
treats them as special and never matches them as text).

1. every golden output whose calls parse as ``proposed`` (schema-valid, in the written key order), encoded by
   the real tokenizer (markers as their special tokens), is accepted, end token included;
2. random walks over the allowed tokens of the real vocabulary parse back as ``proposed``, schema-valid calls
   with no diagnostic, in every ``tool_choice`` mode.

Outside claim 1, counted: an argument value that spells a special-token marker (its ids hold the special token,
which llguidance admits neither inside ``%json`` nor inside free text; docs/grammar.md, "Approximations").
Numbers are printed (``pytest -s``).
"""

from __future__ import annotations

from functools import cache

import pytest

import toolwire
from toolwire.grammar.certify import check_outputs, check_walks
from toolwire.grammar.matchers import llguidance_vocabulary

from support import SHARED, golden, golden_parse_kwargs, require_shared

TOKENIZER = {
    **dict.fromkeys(["qwen25", "qwen3", "qwen3_instruct_2507", "qwen3_thinking_2507", "qwen3_coder", "qwen35",
                     "qwen36"], "Qwen3"),
    **dict.fromkeys(["deepseek_v31", "deepseek_r1"], "DeepSeek-V3"),
    **dict.fromkeys(["deepseek_v32", "deepseek_v4", "deepseek_v41"], "DeepSeek-V4"),
    **dict.fromkeys(["llama31", "llama32"], "Llama-3"),
    "llama4": "Llama-4",
    "gpt_oss": "o200k_base",
}
"""Format -> the folder of its real tokenizer in ../shared/real/tokenizers."""


@cache
def vocabulary(folder: str, eos_token: str):
    pytest.importorskip("llguidance")
    from toolwire.tokenize import load_tokenizer

    tokenizer = load_tokenizer(str(SHARED / "real" / "tokenizers" / folder))
    if type(tokenizer).__name__ == "Tokenizer":  # a bare tokenizers.Tokenizer (tokenizer.json.gz): as vLLM loads it
        from transformers import PreTrainedTokenizerFast

        tokenizer = PreTrainedTokenizerFast(tokenizer_object=tokenizer)
    return llguidance_vocabulary(tokenizer, eos_token)


def _vocabulary_of(name: str):
    require_shared()
    fmt = toolwire.get_format(name)
    return fmt, vocabulary(TOKENIZER[name], fmt.stop_tokens[0])


def _thinking(row):
    return golden_parse_kwargs(row).get("thinking", False)


@pytest.mark.parametrize("name", sorted(TOKENIZER))
def test_parser_accepted_outputs_are_accepted_as_real_token_ids(name):
    fmt, vocab = _vocabulary_of(name)
    rows = golden("parse", name)
    report = check_outputs(fmt, rows, "llguidance", vocabulary=vocab, thinking_of=_thinking)
    print(f"\n{name} llguidance {TOKENIZER[name]} token ids: {report.passed}/{report.checked}; "
          f"outside the claim: {report.excluded}")
    if report.checked == 0 and set(report.excluded) == {"no call"}:
        pytest.skip(f"no golden {name} output holds a call")
    assert report.checked >= 3 and report.failures == []


@pytest.mark.parametrize("choice", ["required", "auto", "none", {"name": "get_weather"}])
@pytest.mark.parametrize("name", sorted(TOKENIZER))
def test_token_walks_parse_back_as_proposed(name, choice):
    fmt, vocab = _vocabulary_of(name)
    tools = golden("parse", name)[0]["tools"]
    thinking = fmt.markers.get("think_close") is not None and name != "qwen25"
    report = check_walks(fmt, tools, "llguidance", samples=4, tool_choice=choice, thinking=thinking, seed=7,
                         max_steps=3000, vocabulary=vocab)
    print(f"\n{name} llguidance {TOKENIZER[name]} ids {choice}: {report.passed}/{report.checked} parsed back; "
          f"unfinished {report.unfinished}")
    assert report.checked >= 1 and report.failures == []  # unfinished walks (step limit) are not counted


def test_markers_are_token_references_only_when_told():
    """The default grammar spells ``<tool_call>`` as text; with the tokenizer's special tokens it is ``<[id]>``,
    and the text spelling stays excluded from free text."""
    fmt, vocab = _vocabulary_of("qwen3")
    tools = golden("parse", "qwen3")[0]["tools"]
    plain = fmt.grammar(tools, target="llguidance").text
    tokens = fmt.grammar(tools, target="llguidance", special_tokens=vocab.special_tokens).text
    call = vocab.special_tokens["<tool_call>"]
    assert f"<[{call}]>" not in plain and f"<[{call}]>" in tokens
    from toolwire.grammar.matchers import Matcher

    m = Matcher(fmt.grammar(tools, target="llguidance", tool_choice="none", special_tokens=vocab.special_tokens),
                vocab.tokenizer, vocab.eos)
    assert m.accepts_ids(vocab.encode("plain text"))
    assert not m.accepts_ids(vocab.encode("text then <tool_call>"))  # the special token
    assert not m.accepts_ids(vocab.tokenizer.tokenize_str("text then <tool_call>"))  # its bytes as plain tokens


def test_special_tokens_is_checked():
    fmt = toolwire.get_format("qwen3")
    from toolwire.errors import InvalidOption

    with pytest.raises(InvalidOption) as err:
        fmt.grammar([], target="xgrammar", special_tokens={"<tool_call>": 1})
    assert err.value.field == "special_tokens"
    with pytest.raises(InvalidOption):
        fmt.grammar([], target="llguidance", special_tokens={"<tool_call>": "1"})
