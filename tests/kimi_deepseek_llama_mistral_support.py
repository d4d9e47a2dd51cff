"""Test helpers shared by the JSON-bodied families (kimi, deepseek_legacy, llama, mistral).

* golden render / parse checks (vectors read from ../shared at run time);
* a differential reference: the model's real chat template from ../shared/real/templates rendered by
  transformers' own Jinja renderer, for request shapes the golden vectors do not cover;
* hypothesis strategies for argument values, and the stream checks (every split, 1-char feeds, random splits).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import strategies as st

import toolwire
from toolwire.errors import ToolwireError
from support import (
    REAL, assert_events_consistent, every_split, full_state, random_chunks, render_kwargs, require_shared,
    stream_parse, summary,
)

TEMPLATE_FILES = {
    "kimi_k2": "Kimi-K2-Instruct", "kimi_k2_thinking": "Kimi-K2-Thinking", "deepseek_v31": "DeepSeek-V3.1",
    "deepseek_r1": "DeepSeek-R1", "llama31": "Llama-3.1-8B-Instruct",
    "mistral_small32": "Mistral-Small-3.2-24B-Instruct-2506",
}
_BOS_EOS = {
    "deepseek_v31": ("<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"),
    "deepseek_r1": ("<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"),
    "llama31": ("<|begin_of_text|>", "<|eot_id|>"), "mistral_small32": ("<s>", "</s>"),
    "kimi_k2": ("[BOS]", "[EOS]"), "kimi_k2_thinking": ("[BOS]", "[EOS]"),
}


# ---- rendering

def check_golden_render(row: dict) -> None:
    """The row's request renders byte for byte to ``expected``, or is refused with a toolwire error."""
    require_shared()
    fmt = toolwire.get_format(row["family"])
    req = row["request"]
    if "expected_error" in row:
        with pytest.raises(ToolwireError):
            fmt.render(req["messages"], req.get("tools"), **render_kwargs(row["options"]))
        return
    prompt = fmt.render(req["messages"], req.get("tools"), **render_kwargs(row["options"]))
    assert prompt.text == row["expected"]
    assert "".join(s.text for s in prompt.segments) == prompt.text
    assert set(prompt.special_markers()) <= set(fmt.markers.values())


def reference_render(family: str, messages: list, tools: list | None = None, **variables) -> str:
    """The real template's output through transformers (arguments decoded, except for deepseek_r1)."""
    require_shared()
    path = REAL / "templates" / f"{TEMPLATE_FILES[family]}.jinja"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    render_jinja_template = pytest.importorskip("transformers.utils.chat_template_utils").render_jinja_template
    msgs = json.loads(json.dumps(messages))
    if family != "deepseek_r1":
        for m in msgs:
            for call in m.get("tool_calls") or []:
                if isinstance(call["function"].get("arguments"), str):
                    call["function"]["arguments"] = json.loads(call["function"]["arguments"])
    bos, eos = _BOS_EOS[family]
    variables.setdefault("add_generation_prompt", True)
    out, _ = render_jinja_template(conversations=[msgs], tools=tools, chat_template=path.read_text(encoding="utf-8"),
                                   bos_token=bos, eos_token=eos, **variables)
    return out[0]


def content_segments(prompt) -> str:
    """All ``content`` segment text of a rendered prompt, concatenated."""
    return "".join(s.text for s in prompt.segments if s.kind == "content")


# ---- parsing

def golden_parse_kwargs(row: dict) -> dict:
    """Golden ``options`` to parse keyword arguments."""
    return {"thinking": bool(row["options"].get("thinking", False))}


def check_golden_parse_oneshot(row: dict) -> None:
    """One golden parse vector, parsed in one piece: the expected message, every call proposed."""
    require_shared()
    fmt = toolwire.get_format(row["family"])
    out = fmt.parse(row["model_output"], row["tools"], **golden_parse_kwargs(row))
    assert summary(out) == row["expected"]
    assert all(c.status == "proposed" for c in out.tool_calls), out.codes()
    assert out.diagnostics == [] and not out.truncated


def check_golden_parse_streamed(row: dict) -> None:
    """1-char feeds, every two-piece split (short outputs) or 200 random splits, all equal to one-shot."""
    require_shared()
    fmt = toolwire.get_format(row["family"])
    text, tools, kw = row["model_output"], row["tools"], golden_parse_kwargs(row)
    ref = full_state(fmt.parse(text, tools, **kw))
    assert summary(fmt.parse(text, tools, **kw)) == row["expected"]
    result, events = stream_parse(fmt, text, None, tools, **kw)
    assert full_state(result) == ref
    assert_events_consistent(result, events)
    if len(text) <= 400:
        splits = list(every_split(text))
    else:
        rng = random.Random(row["id"])
        splits = [random_chunks(text, rng, rng.choice([3, 16, 64])) for _ in range(60)]
    for chunks in splits:
        result, events = stream_parse(fmt, text, chunks, tools, **kw)
        assert full_state(result) == ref, chunks
        assert_events_consistent(result, events)


def check_chunking(fmt, text: str, tools=None, *, seed: int = 0, **kw):
    """One-shot result; asserts every split, 1-char feeds and random splits agree with it. Returns it."""
    ref = fmt.parse(text, tools, **kw)
    want = full_state(ref)
    pieces = [list(text)] + list(every_split(text)) if len(text) <= 300 else [list(text)]
    rng = random.Random(seed)
    pieces += [random_chunks(text, rng, rng.choice([2, 7, 64])) for _ in range(10)]
    for chunks in pieces:
        result, events = stream_parse(fmt, text, chunks, tools, **kw)
        assert full_state(result) == want, chunks
        assert_events_consistent(result, events)
    return ref


def accounted_text(out) -> str:
    """Everything a result keeps: content, reasoning, raw call arguments and diagnostics' raw text."""
    parts = [out.content, out.reasoning]
    parts += [c.raw_arguments for c in out.tool_calls]
    parts += [d.raw or "" for d in out.diagnostics]
    parts += [d.raw or "" for c in out.tool_calls for d in c.diagnostics]
    return "\n".join(parts)


# ---- hypothesis strategies

_MARKUP = st.sampled_from(["<tool_call>", "</tool_call>", "<think>", "</think>", "{", "}", "[", "]", '"', "\\",
                           "```json", "\n", "\t", " ", "<|im_end|>", "[TOOL_CALLS]", "[ARGS]", "<｜tool▁sep｜>",
                           "<|tool_call_end|>", "<｜tool▁call▁end｜>", "&amp;", "'", "True", "None", ","])
strings = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.sampled_from(" \t\n\r"), max_size=6),
    st.lists(_MARKUP, max_size=6).map("".join),
    st.text(alphabet=st.characters(min_codepoint=0x80, max_codepoint=0x1FAFF, exclude_categories=("Cs",)),
            max_size=12),
)
scalars = st.one_of(
    st.none(), st.booleans(), strings,
    st.integers(min_value=-(2 ** 70), max_value=2 ** 70),
    st.floats(allow_nan=False, allow_infinity=False),
)
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(strings, inner, max_size=4)), max_leaves=12)
arguments = st.dictionaries(st.one_of(st.text(max_size=12), strings), json_values,
                            max_size=5)
tool_names = st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True)


def declared(*names: str) -> list[dict]:
    """OpenAI tool dicts for ``names`` (no parameters schema)."""
    return [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in names]


# ---- round trip

def roundtrip(fmt, output: str, tools, *, content: str = "", reasoning: str = "", calls: list, ids=None,
              **kw) -> None:
    """``output`` parses (one-shot, 1-char and random feeds alike) to exactly this content, reasoning and
    calls (``[(name, arguments)]``), every call ``proposed``, no diagnostics."""
    out = fmt.parse(output, tools, **kw)
    want = full_state(out)
    for chunks in (list(output), random_chunks(output, random.Random(len(output)), 9)):
        result, events = stream_parse(fmt, output, chunks, tools, **kw)
        assert full_state(result) == want
        assert_events_consistent(result, events)
    assert (out.content, out.reasoning) == (content, reasoning)
    assert [(c.name, c.arguments) for c in out.tool_calls] == calls
    assert [c.status for c in out.tool_calls] == ["proposed"] * len(calls), out.codes()
    assert not out.diagnostics and not out.truncated
    if ids is not None:
        assert [c.id for c in out.tool_calls] == ids


def generation(fmt, history: list, turn: dict, tools, stop: str, **kw) -> str:
    """What the model wrote for ``turn``: the history+turn render minus the generation prompt, minus ``stop``."""
    prompt = fmt.render(history, tools, add_generation_prompt=True, **kw).text
    full = fmt.render(history + [turn], tools, add_generation_prompt=False, **kw).text
    assert full.startswith(prompt) and full.endswith(stop)
    return full[len(prompt):len(full) - len(stop)]


# ---- malformed corpora (fixtures/<module>/malformed.jsonl, expectations written by hand)

def load_corpus(module: str) -> list[dict]:
    """The hand-written malformed-output corpus of ``module`` (fixtures/<module>/malformed.jsonl)."""
    path = Path(__file__).resolve().parents[1] / "fixtures" / module / "malformed.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def check_corpus_row(row: dict, tools: list, structure: tuple[str, ...]) -> None:
    """The row's output gives exactly its ``expected`` result at every chunking, with consistent events
    and nothing lost (every word outside the format's ``structure`` is kept somewhere)."""
    fmt = toolwire.get_format(row["family"])
    kw = {"thinking": row.get("thinking", False), **row.get("options", {})}
    out = check_chunking(fmt, row["output"], tools, **kw)
    want = row["expected"]
    assert (out.content, out.reasoning, out.truncated) == (want["content"], want["reasoning"], want["truncated"])
    assert [d.code for d in out.diagnostics] == want["codes"]
    assert len(out.tool_calls) == len(want["calls"]), out.tool_calls
    for call, exp in zip(out.tool_calls, want["calls"]):
        assert (call.name, call.status, call.source) == (exp["name"], exp["status"], exp.get("source", "content"))
        assert call.arguments == exp["arguments"]
        assert sorted(d.code for d in call.diagnostics) == sorted(exp["codes"])
        for key in ("id", "raw_arguments"):
            if key in exp:
                assert getattr(call, key) == exp[key]
    assert_nothing_lost(row["output"], out, structure)


def assert_nothing_lost(output: str, out, structure: tuple[str, ...]) -> None:
    """Every letter and digit of ``output`` outside the format's ``structure`` (its markers and own words,
    like R1's ``function``) is in content, reasoning, a call's raw text, name or id, or a diagnostic's raw
    text, as often as it occurs (counted per character: pieces of content around a call join up)."""
    text = output
    for marker in sorted(structure, key=len, reverse=True):
        text = text.replace(marker, " ")
    kept = accounted_text(out) + "\n" + " ".join(f"{c.name} {c.id}" for c in out.tool_calls)
    have = Counter(ch for ch in kept if ch.isalnum())
    for ch, count in Counter(ch for ch in text if ch.isalnum()).items():
        assert have[ch] >= count, f"{ch!r} lost"


# ---- linear time

def scanned_chars(fmt, chunks: list[str], tools=None, **kw) -> int:
    """Characters the marker scanner and the JSON scanner look at while ``chunks`` stream in."""
    from toolwire.parsers import json_body, lexer

    counts = [0]
    real_scan, real_feed = lexer.MarkerScanner.scan, json_body.JsonValueScanner.feed

    def scan(self, text, pos=0, *, final=False):
        counts[0] += len(text) - pos
        return real_scan(self, text, pos, final=final)

    def feed(self, text):
        counts[0] += len(text)
        return real_feed(self, text)

    lexer.MarkerScanner.scan, json_body.JsonValueScanner.feed = scan, feed
    try:
        parser = fmt.stream(tools, **kw)
        for piece in chunks:
            parser.feed(piece)
        parser.finish()
    finally:
        lexer.MarkerScanner.scan, json_body.JsonValueScanner.feed = real_scan, real_feed
    return counts[0]


def assert_linear(fmt, before: str, after: str, tools=None, *, unit: str = "x", **kw) -> None:
    """An argument string growing to 64k characters, fed a few characters at a time, is scanned a bounded
    number of times per character (no re-parse of the buffer per delta)."""
    for size in (1_000, 64_000):
        text = before + unit * size + after
        chunks = [text[i:i + 3] for i in range(0, len(text), 3)]
        assert scanned_chars(fmt, chunks, tools, **kw) <= 4 * len(text) + 2_000, size


# ---- marker soup: any output, however broken, parses without error, alike at every chunking, losing nothing

_SOUP_BITS = ["{", "}", '"', ":", ", ", "[", "]", "\\", " ", "\n", "a", "1", "True", "'", "```json\n", "```",
              '{"q": "x"}', '{"q": ', "search", "get_weather", "<think>", "</think>", ";", "functions.search:0"]


def soup(markers) -> st.SearchStrategy[str]:
    """Outputs made of a family's markers, JSON pieces and words, in any order."""
    return st.lists(st.sampled_from(list(markers) + _SOUP_BITS), max_size=24).map("".join)


def check_soup(fmt, text: str, structure: tuple[str, ...], **kw) -> None:
    """Parse ``text`` one-shot, 1 char and in random pieces: alike, consistent events, nothing lost."""
    tools = declared("get_weather", "search")
    out = fmt.parse(text, tools, **kw)
    want = full_state(out)
    for chunks in (list(text), random_chunks(text, random.Random(text), 5)):
        result, events = stream_parse(fmt, text, chunks, tools, **kw)
        assert full_state(result) == want, chunks
        assert_events_consistent(result, events)
    assert_nothing_lost(text, out, structure)
