"""Claim 1 on real token ids, xgrammar 0.2.8 (CPU), for the families with a tokenizer in ../shared/real/tokenizers
beyond Qwen3 (tests_engines/test_grammar_xgrammar.py): DeepSeek-V3 (V3.1), DeepSeek-V4 (V3.2, V4, V4.1),
Llama-3 (3.1, 3.2), Llama-4 and o200k (gpt-oss). Every golden output whose calls parse as ``proposed`` with
schema-valid arguments (in the order the grammar writes them) is fed to the matcher as the real tokenizer's ids
(markers as their control tokens) and must be accepted, end token included. Numbers are printed (``pytest -s``).
"""

from __future__ import annotations

from functools import cache

import pytest

import toolwire
import xgrammar as xgr
from conftest import TOKENIZERS, golden_rows, hf_tokenizer, opens_reasoning
from toolwire.grammar.certify import check_outputs

HF = {"deepseek_v31": "DeepSeek-V3", **dict.fromkeys(["deepseek_v32", "deepseek_v4", "deepseek_v41"], "DeepSeek-V4")}
TIKTOKEN = {"llama31": "Llama-3", "llama32": "Llama-3", "llama4": "Llama-4", "gpt_oss": "o200k_base"}


@cache
def tiktoken_vocabulary(name: str):
    """``(encoding, the raw byte vocabulary)`` of a tiktoken model folder (control tokens spelled as text)."""
    from toolwire.tokenize import load_tokenizer

    enc = load_tokenizer(str(TOKENIZERS / name))
    vocab = []
    for i in range(enc.n_vocab):
        try:
            vocab.append(enc.decode_single_token_bytes(i))
        except KeyError:  # an id the encoding leaves unused
            vocab.append(b"")
    return enc, vocab


def _matcher_inputs(name: str):
    fmt = toolwire.get_format(name)
    if name in HF:
        hf = hf_tokenizer(HF[name])
        eos = hf.convert_tokens_to_ids(fmt.stop_tokens[0])
        info = xgr.TokenizerInfo.from_huggingface(hf, stop_token_ids=[eos])
        return info, eos, lambda text: hf.encode(text, add_special_tokens=False)
    enc, vocab = tiktoken_vocabulary(TIKTOKEN[name])
    eos = enc.encode_single_token(fmt.stop_tokens[0])
    info = xgr.TokenizerInfo(vocab, vocab_type=xgr.VocabType.RAW, stop_token_ids=[eos])
    return info, eos, lambda text: enc.encode(text, allowed_special="all")


@pytest.mark.parametrize("name", sorted({**HF, **TIKTOKEN}))
def test_parser_accepted_outputs_are_accepted_as_real_token_ids(name):
    info, eos, encode = _matcher_inputs(name)
    report = check_outputs(toolwire.get_format(name), golden_rows(name), "xgrammar", tokenizer=info, eos=eos,
                           encode=encode, thinking_of=opens_reasoning)
    print(f"\n{name} xgrammar {HF.get(name) or TIKTOKEN[name]} token ids: {report.passed}/{report.checked}; "
          f"outside the claim: {report.excluded}")
    assert report.checked >= 3 and report.failures == []


def test_control_tokens_are_single_ids():
    """The markers the grammars write are one control token each in the real vocabularies (so the matcher sees
    them as the model writes them, not spelled in pieces)."""
    enc, _ = tiktoken_vocabulary("o200k_base")
    assert len(enc.encode("<|channel|>analysis<|message|>", allowed_special="all")) == 3
    hf = hf_tokenizer("DeepSeek-V3")
    assert len(hf.encode("<｜tool▁calls▁begin｜>", add_special_tokens=False)) == 1
