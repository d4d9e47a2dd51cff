"""Every stream parser fed token ids (``stream(tools, tokenizer=tok)``, ``feed(ids=...)``): a marker counts
only where the model wrote it with its control-token ids; the same text from ordinary tokens is text.

Real tokenizers from ../shared/real/tokenizers (Qwen3, DeepSeek-V3, DeepSeek-V4 where ``｜DSML｜`` is the
single token 128825, Llama-3, o200k with the harmony tokens) for the families they serve. GLM (5.3 too), Kimi,
MiniMax, Mistral Small 3.2, Seed-OSS and GigaChat 3.5 have no tokenizer there: they get a byte-level tokenizer whose control tokens
are the family's own marker tokens (as the models' vocabularies have them).
"""

from __future__ import annotations

import json

import pytest

import toolwire
from support import real_tokenizer, assert_events_consistent, counting_scans, full_state, golden, require_shared
from toolwire.tokenize import byte_tokenizer, token_pieces, vocabulary

REAL_TOKENIZER = {
    **dict.fromkeys(["qwen25", "qwen3", "qwen3_instruct_2507", "qwen3_thinking_2507", "qwen3_coder", "qwen35",
                     "qwen36", "qwen38"], "Qwen3"),
    **dict.fromkeys(["deepseek_v32", "deepseek_v4", "deepseek_v41"], "DeepSeek-V4"),
    **dict.fromkeys(["deepseek_v31", "deepseek_r1"], "DeepSeek-V3"),
    "llama31": "Llama-3", "llama32": "Llama-3", "llama4": "Llama-4", "llama4_pythonic": "Llama-4",
    "gpt_oss": "o200k_base",
}

_GLM = list(toolwire.get_format("glm45").markers.values())
_KIMI = list(toolwire.get_format("kimi_k2").markers.values())
SYNTHETIC_SPECIALS = {
    **dict.fromkeys(["glm45", "glm46", "glm47", "glm53"], _GLM),
    **dict.fromkeys(["kimi_k2", "kimi_k2_thinking"], _KIMI),
    "minimax_m2": ["]~!b[", "]~b]", "[e~[", "<think>", "</think>", "<minimax:tool_call>", "</minimax:tool_call>"],
    "mistral_small32": list(toolwire.get_format("mistral_small32").markers.values()),
    "hermes3": sorted(toolwire.get_format("hermes3").special_tokens),
    "granite4": sorted(toolwire.get_format("granite4").special_tokens),
    "ministral3": list(toolwire.get_format("ministral3").markers.values()),
    "nemotron3": sorted(toolwire.get_format("nemotron3").markers[k] for k in (
        "im_start", "im_end", "think_open", "think_close", "call_open", "call_close", "tool_response_open",
        "tool_response_close")),
    "step35": sorted(toolwire.get_format("step35").markers[k] for k in (
        "bos", "im_start", "im_end", "think_open", "think_close", "call_open", "call_close", "tool_response_open",
        "tool_response_close", "image")),
    "laguna": list(toolwire.get_format("laguna").markers.values()),
    "hy3": list(toolwire.get_format("hy3").markers.values()),
    "gemma4": list(toolwire.get_format("gemma4").markers.values()),
    "kimi_k3": list(toolwire.get_format("kimi_k3").markers.values()),
    "gigachat35": list(toolwire.get_format("gigachat35").markers.values()),
    "lfm25": sorted(toolwire.get_format("lfm25").special_tokens),
    "minimax_m3": ["]~!b[", "]~b]", "[e~[", "]<]minimax[>[", "<mm:think>", "</mm:think>", "]<]image[>[", "]<]video[>["],
    "seed_oss": ["<seed:bos>", "<seed:eos>", "<seed:think>", "</seed:think>", "<seed:tool_call>", "</seed:tool_call>",
                 "<seed:cot_budget_reflect>", "</seed:cot_budget_reflect>"],
}
FAMILIES = sorted({**REAL_TOKENIZER, **SYNTHETIC_SPECIALS})

OPENER = {  # the marker that starts a call (or, for gpt_oss, a message)
    **dict.fromkeys(["qwen25", "qwen3", "qwen3_instruct_2507", "qwen3_thinking_2507", "qwen3_coder", "qwen35", "qwen36",
                     "glm45", "glm46", "glm47", "glm53"], "<tool_call>"),
    **dict.fromkeys(["qwen38", "nemotron3", "step35", "laguna"], "<tool_call>"),
    "deepseek_v32": "<｜DSML｜function_calls>", "deepseek_v4": "<｜DSML｜tool_calls>", "deepseek_v41": "<｜DSML｜ calls>",
    **dict.fromkeys(["deepseek_v31", "deepseek_r1"], "<｜tool▁calls▁begin｜>"),
    **dict.fromkeys(["kimi_k2", "kimi_k2_thinking"], "<|tool_calls_section_begin|>"),
    "llama31": "<|python_tag|>", "gpt_oss": "<|start|>", "minimax_m2": "<minimax:tool_call>",
    "hermes3": "<tool_call>", "granite4": "<tool_call>", "ministral3": "[TOOL_CALLS]",
    "mistral_small32": "[TOOL_CALLS]", "seed_oss": "<seed:tool_call>", "hy3": "<tool_calls:opensource>",
    "llama32": "<|python_tag|>", "llama4": "<|python_start|>", "gemma4": "<|tool_call>",
    "minimax_m3": "]<]minimax[>[<tool_call>", "kimi_k3": "<|open|>tools<|sep|>",
    "gigachat35": "<｜GCML｜tool_calls>", "lfm25": "<|tool_call_start|>",
}
"""(llama4_pythonic writes its calls with no marker: a ``[`` of ordinary text.)"""
HEADER = {"gpt_oss": "<|channel|>final<|message|>"}  # written before free text (with control ids)


def tokenizer(family: str):
    """The family's tokenizer: real (skips when ../shared or its library is absent) or synthetic."""
    if family in SYNTHETIC_SPECIALS:
        return byte_tokenizer(SYNTHETIC_SPECIALS[family])
    require_shared()
    pytest.importorskip("tiktoken" if REAL_TOKENIZER[family] in ("Llama-3", "Llama-4", "o200k_base") else "tokenizers")
    return real_tokenizer(REAL_TOKENIZER[family])


def feed_ids(fmt, ids, tools, tok, *, one_by_one=False, **kw):
    parser = fmt.stream(tools, tokenizer=tok, **kw)
    events = []
    for piece in ([[i] for i in ids] if one_by_one else [ids]):
        events += parser.feed(ids=piece)
    events += parser.flush()
    out = parser.finish()
    assert_events_consistent(out, events)
    return out


def kwargs(row: dict) -> dict:
    """Where the output starts: the reference prompt's state where the vector knows it (as the golden tests)."""
    return {"thinking": bool(row.get("prompt_opens_reasoning", row["options"].get("thinking", False)))}


# ---------------------------------------------------------------- (1) golden outputs as ids == as text

def golden_as_ids(family: str):
    """``(fmt, tokenizer, row, expected full state of the text parse, the output's ids)`` per golden output."""
    tok = tokenizer(family)
    vocab = vocabulary(tok)
    fmt = toolwire.get_format(family)
    rows = golden("parse", family)
    if not rows:
        pytest.skip(f"no golden parse vectors for {family}")
    for row in rows:
        expected = full_state(fmt.parse(row["model_output"], row["tools"], **kwargs(row)))
        yield fmt, tok, row, expected, vocab.encode(row["model_output"])


@pytest.mark.parametrize("family", FAMILIES)
def test_golden_outputs_fed_as_ids_parse_as_the_text(family):
    """Every golden output, encoded by the tokenizer (its markers become control ids), gives exactly the text
    result, fed all at once and one id at a time."""
    for fmt, tok, row, expected, ids in golden_as_ids(family):
        for one_by_one in (False, True):
            out = feed_ids(fmt, ids, row["tools"], tok, one_by_one=one_by_one, **kwargs(row))
            assert full_state(out) == expected, (row["id"], one_by_one)


@pytest.mark.parametrize("family", FAMILIES)
def test_golden_outputs_fed_as_ids_in_two_pieces_parse_as_the_text(family):
    """Every golden output as ids, split into two feeds, gives exactly the text result. The cuts are every
    id after which the text may hold a marker or stop-token prefix (its last character starts one: ``<``,
    ``[``, ``]`` ...) and every fifth id besides: a buffer ending in such a prefix is held back, and the
    literal check must still find the control ids' spans (it once missed them behind a held ``<``)."""
    fmt = toolwire.get_format(family)
    stop_tokens = getattr(fmt.parser_class, "stop_tokens", ())
    firsts = {m[0] for m in fmt.markers.values() if m} | {t[0] for t in stop_tokens}
    for fmt, tok, row, expected, ids in golden_as_ids(family):
        last = ["".join(p.text for p in token_pieces([i], tok))[-1:] for i in ids]
        for cut in (cut for cut in range(1, len(ids)) if cut % 5 == 0 or last[cut - 1] in firsts):
            parser = fmt.stream(row["tools"], tokenizer=tok, **kwargs(row))
            events = parser.feed(ids=ids[:cut]) + parser.feed(ids=ids[cut:]) + parser.flush()
            out = parser.finish()
            assert full_state(out) == expected, (row["id"], cut)
            assert_events_consistent(out, events)


# ---------------------------------------------------------------- (2)/(3) marker text: ordinary tokens vs its ids

def _ids(tok, *parts: tuple[str, bool]) -> list[int]:
    """``(text, as_control)`` parts to ids: control tokens recognised, or all ordinary tokens."""
    vocab = vocabulary(tok)
    return [i for text, control in parts for i in (vocab.encode(text) if control else vocab.encode_plain(text))]


@pytest.mark.parametrize("family", [f for f in FAMILIES if f in OPENER])
def test_marker_from_ordinary_tokens_stays_text_and_from_its_ids_is_a_marker(family):
    """The family's call opener written with ordinary tokens is text; written with its control ids it is the
    marker, and the output parses exactly as the same text does."""
    tok = tokenizer(family)
    fmt = toolwire.get_format(family)
    opener, header = OPENER[family], HEADER.get(family, "")
    assert vocabulary(tok).control_spans(opener), "the opener must hold a control token of this tokenizer"
    text = f"{opener} is how a call starts; {opener} again."
    as_text = feed_ids(fmt, _ids(tok, (header, True), (text, False)), None, tok)
    assert as_text.tool_calls == [] and as_text.content + as_text.reasoning == text
    plain = fmt.parse(header + "just text")  # e.g. reasoning left open, in families that start inside it
    assert [d.code for d in as_text.diagnostics] == [d.code for d in plain.diagnostics]
    for one_by_one in (False, True):
        as_ids = feed_ids(fmt, _ids(tok, (header, True), (text, True)), None, tok, one_by_one=one_by_one)
        assert full_state(as_ids) == full_state(fmt.parse(header + text))
        assert full_state(as_ids) != full_state(as_text)  # the ids made it a marker


def _string_argument(row: dict) -> tuple[int, str, str, str] | None:
    """(call index, key, value, how the output spells it) of a plain string argument written once."""
    for n, call in enumerate(row["expected"]["tool_calls"]):
        for key, value in call["arguments"].items():
            if isinstance(value, str) and value.replace(" ", "").isalnum():
                for spelling in (json.dumps(value), f">{value}<", f">\n{value}\n<", f"='{value}'"):
                    if row["model_output"].count(spelling) == 1:
                        return n, key, value, spelling
    return None


def _r1_call_row() -> dict:
    """DeepSeek-R1's golden outputs hold no call: one written with its marker table."""
    from toolwire.parsers.deepseek_legacy import MARKERS as M, R1_FENCE_CLOSE, R1_FENCE_OPEN

    args = {"city": "Paris"}
    output = (M["calls_begin"] + M["call_begin"] + "function" + M["sep"] + "get_weather" + R1_FENCE_OPEN
              + json.dumps(args) + R1_FENCE_CLOSE + M["call_end"] + M["calls_end"])
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}]
    return {"id": "deepseek_r1/constructed", "options": {}, "tools": tools, "model_output": output,
            "expected": {"content": "", "reasoning": "", "tool_calls": [{"name": "get_weather", "arguments": args}]}}


EXTRA_ROWS = {"deepseek_r1": [_r1_call_row()]}


@pytest.mark.parametrize("family", FAMILIES)
def test_markers_from_ordinary_tokens_inside_an_argument_stay_in_it(family):
    """A golden call whose string argument is replaced by every marker of the format (as ordinary tokens)
    keeps that text as the argument; the rest of the output keeps its control ids. The same output with the
    markers as control ids parses as the text does."""
    tok = tokenizer(family)
    vocab = vocabulary(tok)
    fmt = toolwire.get_format(family)
    rows = golden("parse", family) + EXTRA_ROWS.get(family, [])
    found = next(((row, arg) for row in rows if (arg := _string_argument(row))), None)
    if found is None:
        pytest.skip(f"no golden {family} call with a plain string argument")
    row, (n, key, old, spelling) = found
    markers = [m for m in fmt.markers.values() if vocab.control_spans(m)]
    value = f"x {' '.join(markers)} y"
    written = json.dumps(value, ensure_ascii=False)[1:-1] if spelling.startswith('"') else value
    start = row["model_output"].index(spelling) + spelling.index(old)
    before, after = row["model_output"][:start], row["model_output"][start + len(old):]
    ids = _ids(tok, (before, True), (written, False), (after, True))
    out = feed_ids(fmt, ids, row["tools"], tok, **kwargs(row))
    expected = [c["arguments"] for c in row["expected"]["tool_calls"]]
    expected[n] = {**expected[n], key: value}
    assert [c.arguments for c in out.tool_calls if c.source == "content"] == expected
    assert out.content == row["expected"]["content"] and out.reasoning == row["expected"]["reasoning"]
    text = before + written + after
    as_ids = feed_ids(fmt, _ids(tok, (text, True)), row["tools"], tok, **kwargs(row))
    assert full_state(as_ids) == full_state(fmt.parse(text, row["tools"], **kwargs(row)))


# ---------------------------------------------------------------- the id interface

def test_ids_need_a_tokenizer_and_one_kind_of_input():
    tok = tokenizer("glm45")
    fmt = toolwire.get_format("glm45")
    with pytest.raises(ValueError, match="tokenizer"):
        fmt.stream().feed(ids=[65])
    with pytest.raises(ValueError, match="text or ids"):
        fmt.stream(tokenizer=tok).feed("a", ids=[65])
    parser = fmt.stream(tokenizer=tok)
    parser.feed(ids=[65])
    with pytest.raises(ValueError):
        parser.feed("b")
    parser = fmt.stream(tokenizer=tok)
    parser.feed("<tool_ca")  # held back: a possible marker prefix
    with pytest.raises(ValueError):
        parser.feed(ids=[65])


def test_ids_outside_the_vocabulary_are_diagnosed_not_raised():
    tok = tokenizer("mistral_small32")
    out = feed_ids(toolwire.get_format("mistral_small32"), [72, 10 ** 9, 105, -1, "x"], None, tok)
    assert out.content == "Hi"
    assert [(d.code, d.raw) for d in out.diagnostics] == [
        ("invalid_token_id", str(10 ** 9)), ("invalid_token_id", "-1"), ("invalid_token_id", "x")]


def test_marker_text_from_ordinary_tokens_keeps_scanning_linear():
    """Content full of marker text from ordinary tokens: every character is still scanned a bounded number
    of times (a skipped marker is passed over, never rescanned from the start)."""
    tok = tokenizer("deepseek_v4")
    fmt = toolwire.get_format("deepseek_v4")
    text = "see <｜DSML｜tool_calls> and \n\n<｜DSML｜invoke name=\"x\"> " * 2000
    ids = vocabulary(tok).encode_plain(text)
    with counting_scans() as scanned:
        parser = fmt.stream(tokenizer=tok)
        for i in range(0, len(ids), 7):
            parser.feed(ids=ids[i:i + 7])
        out = parser.finish()
    assert out.content == text and out.tool_calls == []
    assert scanned[0] < 8 * len(text)
