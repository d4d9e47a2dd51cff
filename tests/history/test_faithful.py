"""Token-faithful turns (toolwire.history.faithful): every golden assistant turn of every format, sampled as ids
that are NOT the fresh tokenisation of its text (one plain id per character, control ids for the markers), is
spliced into the prompt verbatim, and a tampered id sequence is refused with the typed error.

Tokenizers: the real ones in ../shared/real/tokenizers where the family's vocabulary is there (Qwen3,
DeepSeek-V3, DeepSeek-V4, Llama-3, Llama-4, o200k with the harmony tokens); every other family gets a byte-level
tokenizer whose control tokens are the family's marker tokens (as in tests/tokens/test_token_input.py). With a
byte-level tokenizer the per-character ids are the fresh ids; with a real one they are not, which is the point.

The turn's text is found here the slow way (:func:`oracle_span`, as tests/tokens/test_training.py does), not by the
code under test.
"""

from __future__ import annotations


import pytest

import toolwire
from support import real_tokenizer, golden, require_shared
from toolwire.errors import InvalidRequest
from toolwire.history import TOKEN_IDS_FIELD, TokenSpliceError, splice_token_ids
from toolwire.tokenize import byte_tokenizer, token_pieces, vocabulary
from toolwire.tokenize.encode import _TOKEN_SHAPED

REAL_TOKENIZER = {
    **dict.fromkeys(["qwen3", "qwen3_instruct_2507", "qwen3_thinking_2507", "qwen3_coder", "qwen35", "qwen36",
                     "qwen38"], "Qwen3"),
    **dict.fromkeys(["deepseek_v32", "deepseek_v4"], "DeepSeek-V4"),
    **dict.fromkeys(["deepseek_v31", "deepseek_r1"], "DeepSeek-V3"),
    "llama31": "Llama-3", "llama32": "Llama-3", "llama4": "Llama-4", "gpt_oss": "o200k_base",
}
"""Families whose own vocabulary is in ../shared (DeepSeek-V4.1's <｜System｜> is not in V4's, and Qwen2.5's
<tool_response> is no control token of Qwen3's: those two get the byte-level tokenizer)."""

FAMILIES = sorted(f for f in toolwire.formats() if golden("render", f))


def rows(family: str) -> list[dict]:
    return [r for r in golden("render", family) if "expected_error" not in r]


def tokenizer(family: str):
    require_shared()
    if family in REAL_TOKENIZER:
        pytest.importorskip("tiktoken" if REAL_TOKENIZER[family] in ("Llama-3", "Llama-4", "o200k_base")
                            else "tokenizers")
        return real_tokenizer(REAL_TOKENIZER[family])
    fmt = toolwire.get_format(family)
    specials = {v for v in fmt.markers.values() if isinstance(v, str) and v.strip()}  # the family's markers
    for row in rows(family):  # and every other marker token the renders write
        prompt = fmt.render(row["request"]["messages"], row["request"].get("tools"), **row["options"])
        specials |= {s.text for s in prompt.segments if s.kind == "special" and _TOKEN_SHAPED.match(s.text)}
    return byte_tokenizer(specials)


def oracle_span(fmt, messages, tools, options, prompt, i):
    """Where assistant message ``i``'s model text is in ``prompt``: after the prompt that opened it when the whole
    prompt starts with that, else after the part of the generation header the turn repeats (cut back to a segment
    boundary); then without the template's own text after its end marker. None when the turn writes nothing."""
    segs, pos = [], 0
    for kind, text, index in prompt.segments:
        segs.append((pos, pos + len(text), kind, index))
        pos += len(text)
    mine = [s for s in segs if s[3] == i]
    if not mine:
        return None
    start, end = mine[0][0], mine[-1][1]
    opts = {k: v for k, v in options.items() if k != "add_generation_prompt"}
    opened = fmt.render(messages[:i], tools, add_generation_prompt=True, **opts).text
    if start <= len(opened) <= end and prompt.text.startswith(opened):
        skip = len(opened) - start
    else:
        without = fmt.render(messages[:i], tools, add_generation_prompt=False, **opts).text
        header = opened[len(without):] if opened.startswith(without) else ""
        region = prompt.text[start:end]
        shared = next((k for k in range(min(len(region), len(header))) if region[k] != header[k]),
                      min(len(region), len(header)))
        ends = {b - start for _a, b, _k, _i in mine}
        skip = shared if shared in ends else max([a - start for a, _b, _k, _i in mine if a - start <= shared])
    while mine and mine[-1][2] == "template" and mine[-1][0] >= start + skip:
        end = mine.pop()[0]
    return start + skip, end


def sampled_ids(prompt, a: int, b: int, tok) -> list[int]:
    """The text ``prompt.text[a:b]`` as a model could have sampled it: the format's markers as their control ids,
    every other character as its own plain ids (not how a fresh tokenisation groups them)."""
    vocab = vocabulary(tok)
    ids, pos = [], 0
    for kind, text, _index in prompt.pieces:
        end = pos + len(text)
        lo, hi = max(a, pos), min(b, end)
        if lo < hi:
            part = text[lo - pos:hi - pos]
            if kind == "special":
                ids += vocab.encode(part)
            else:
                for ch in part:
                    ids += vocab.encode_plain(ch)
        pos = end
    return ids


def turns(family: str):
    """``(fmt, tok, row, messages, i, (a, b), prompt, sampled ids)`` for every golden assistant turn that writes
    model text."""
    fmt, tok = toolwire.get_format(family), tokenizer(family)
    for row in rows(family):
        req, opts = row["request"], row["options"]
        msgs, tools = req["messages"], req.get("tools")
        prompt = fmt.render(msgs, tools, **opts)
        for i, m in enumerate(msgs):
            if m["role"] != "assistant":
                continue
            span = oracle_span(fmt, msgs, tools, opts, prompt, i)
            if span is None or span[0] >= span[1]:
                continue
            yield fmt, tok, row, msgs, i, span, prompt, sampled_ids(prompt, *span, tok)


def carrying(msgs: list[dict], i: int, ids: list[int]) -> list[dict]:
    out = [dict(m) for m in msgs]
    out[i] = {**out[i], TOKEN_IDS_FIELD: ids}
    return out


def merged(pieces):
    out = []
    for p in pieces:
        if out and not p.special and not out[-1][1]:
            out[-1] = (out[-1][0] + p.text, False)
        else:
            out.append((p.text, p.special))
    return out


@pytest.mark.parametrize("family", FAMILIES)
def test_every_golden_assistant_turn_splices_its_sampled_ids_verbatim(family):
    spliced = bridged = differs = 0
    for fmt, tok, row, msgs, i, (a, b), prompt, ids in turns(family):
        req = carrying(msgs, i, ids)
        tools, opts = row["request"].get("tools"), row["options"]
        canonical = prompt.token_ids(tok)
        result = splice_token_ids(fmt, req, tools, tok, bridge="report", **opts)
        [splice] = result.splices
        assert (splice.message_index, splice.char_start, splice.char_end) == (i, a, b), row["id"]
        assert result.ids[splice.start:splice.end] == ids, row["id"]  # the sampled ids, exactly
        # the same prompt: the same text, with control tokens at the same places
        assert merged(token_pieces(result.ids, tok)) == merged(token_pieces(canonical, tok)), row["id"]
        differs += result.ids != canonical
        spliced += 1
        # the bridge: required, it holds exactly when the prompt that opened the turn is the text (and the ids)
        # before it; otherwise the refusal says the history is re-rendered
        opened = fmt.render(msgs[:i], tools, add_generation_prompt=True,
                            **{k: v for k, v in opts.items() if k != "add_generation_prompt"})
        continues = prompt.text.startswith(opened.text) and len(opened.text) == a and \
            result.ids[:splice.start] == opened.token_ids(tok)
        if continues:
            strict = splice_token_ids(fmt, req, tools, tok, **opts)
            assert strict.ids == result.ids and strict.splices[0].bridged
            bridged += 1
        else:
            with pytest.raises(TokenSpliceError) as refusal:
                splice_token_ids(fmt, req, tools, tok, **opts)
            assert (refusal.value.reason, refusal.value.message_index) == ("history_rerendered", i)
    assert spliced > 0 and bridged > 0
    if family in REAL_TOKENIZER:
        assert differs > 0  # the sampled ids are not a fresh tokenisation, and they are what the prompt holds


@pytest.mark.parametrize("family", FAMILIES)
def test_a_tampered_id_sequence_is_refused_with_the_typed_error(family):
    vocab = None
    checked_text = checked_controls = 0
    for fmt, tok, row, msgs, i, _span, _prompt, ids in turns(family):
        vocab = vocab or vocabulary(tok)
        tools, opts = row["request"].get("tools"), row["options"]
        plain = [k for k, t in enumerate(ids) if t not in vocab.control_ids]
        if plain:  # one ordinary id replaced by another character's
            k = plain[len(plain) // 2]
            other = vocab.encode_plain("#") if ids[k] not in vocab.encode_plain("#") else vocab.encode_plain("%")
            tampered = ids[:k] + other + ids[k + 1:]
            with pytest.raises(TokenSpliceError) as refusal:
                splice_token_ids(fmt, carrying(msgs, i, tampered), tools, tok, bridge="report", **opts)
            error = refusal.value
            assert isinstance(error, InvalidRequest) and error.code == "token_splice_refused"
            assert (error.reason, error.message_index, error.field) == ("text_mismatch", i, "token_ids"), row["id"]
            checked_text += 1
        controls = [k for k, t in enumerate(ids) if t in vocab.control_ids]
        if controls:  # a marker sampled as plain text: same characters, not the same tokens
            k = controls[0]
            spelled = vocab.encode_plain(vocab.control_ids[ids[k]])
            with pytest.raises(TokenSpliceError) as refusal:
                splice_token_ids(fmt, carrying(msgs, i, ids[:k] + spelled + ids[k + 1:]), tools, tok,
                                 bridge="report", **opts)
            assert (refusal.value.reason, refusal.value.message_index) == ("control_token_mismatch", i), row["id"]
            checked_controls += 1
    assert checked_text > 0 and checked_controls > 0


def test_splicing_nothing_gives_the_prompts_own_ids_and_bad_ids_are_refused():
    fmt, tok = toolwire.get_format("qwen3"), tokenizer("qwen3")
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    msgs = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "?"}]
    result = splice_token_ids(fmt, msgs, tools, tok)
    assert result.ids == fmt.render(msgs, tools).token_ids(tok) and result.splices == []
    for bad in ([], [-1], ["7"], "12", [10 ** 9]):
        with pytest.raises(TokenSpliceError) as refusal:
            splice_token_ids(fmt, carrying(msgs, 1, bad), tools, tok)
        assert refusal.value.reason == "invalid_token_ids" and refusal.value.message_index == 1
    with pytest.raises(TokenSpliceError) as refusal:
        splice_token_ids(fmt, carrying(msgs, 0, [1, 2]), tools, tok)
    assert refusal.value.reason == "not_an_assistant_turn"
    # skip: the turn is tokenised as usual and the refusal is listed
    skipped = splice_token_ids(fmt, carrying(msgs, 1, [10 ** 9]), tools, tok, on_refusal="skip")
    assert skipped.ids == result.ids and [e.reason for e in skipped.refused] == ["invalid_token_ids"]


def test_ids_without_the_stop_token_get_the_end_marker_and_reasoning_the_policy_drops_is_named():
    """Engines often return the completion without its stop token: the format's end marker is written after
    the ids. Ids holding reasoning that this render leaves out (Qwen3 after a new user query) are refused as
    ``reasoning_dropped``."""
    fmt, tok = toolwire.get_format("qwen3"), tokenizer("qwen3")
    vocab = vocabulary(tok)
    user = {"role": "user", "content": "Weather in Paris?"}
    answer = {"role": "assistant", "content": "It is sunny.", "reasoning_content": "Say it."}
    sampled = vocab.encode("<think>\nSay it.\n</think>\n\nIt is sunny.")  # no <|im_end|>
    result = splice_token_ids(fmt, [user, {**answer, TOKEN_IDS_FIELD: sampled}], None, tok, thinking=True,
                              add_generation_prompt=False)
    [splice] = result.splices
    assert splice.end_marker_added and result.ids[splice.start:splice.end] == sampled + [vocab.control["<|im_end|>"]]
    later = [user, {**answer, TOKEN_IDS_FIELD: sampled}, {"role": "user", "content": "And Rome?"}]
    with pytest.raises(TokenSpliceError) as refusal:
        splice_token_ids(fmt, later, None, tok, thinking=True)
    assert (refusal.value.reason, refusal.value.message_index) == ("reasoning_dropped", 1)
