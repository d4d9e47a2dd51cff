"""Test helpers shared by the JSON-bodied families (kimi, deepseek_legacy, llama, mistral).

* a differential reference: the model's real chat template from ../shared/real/templates rendered by
  transformers' own Jinja renderer, for request shapes the golden vectors do not cover;
* hypothesis strategies for argument values, round trips, the malformed corpora, linear time, marker soup.

The golden-vector checks, chunking checks, "nothing lost" accounting and JSON-value strategies are
:mod:`support`'s.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from hypothesis import strategies as st

import toolwire
import support
from support import assert_nothing_lost, chunkings, counting_scans, random_chunks, text_of_every_kind, turn_output

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

def reference_render(family: str, messages: list, tools: list | None = None, **variables) -> str:
    """The real template's output through transformers (arguments decoded, except for deepseek_r1)."""
    bos, eos = _BOS_EOS[family]
    variables.setdefault("add_generation_prompt", True)
    return support.reference_render(TEMPLATE_FILES[family], messages, tools,
                                    decode_arguments=family != "deepseek_r1", bos_token=bos, eos_token=eos,
                                    **variables)


def content_segments(prompt) -> str:
    """All ``content`` segment text of a rendered prompt, concatenated."""
    return "".join(s.text for s in prompt.segments if s.kind == "content")


# ---- parsing

def check_chunking(fmt, text: str, tools=None, *, seed: int = 0, **kw):
    """One-shot result; asserts every split, 1-char feeds and random splits agree with it. Returns it."""
    return support.check_chunking(fmt, text, tools, splits=chunkings(text, seed=seed, random_splits=10), **kw)


# ---- hypothesis strategies

strings = text_of_every_kind(
    ["<tool_call>", "</tool_call>", "<think>", "</think>", "{", "}", "[", "]", '"', "\\", "```json", "\n", "\t", " ",
     "<|im_end|>", "[TOOL_CALLS]", "[ARGS]", "<｜tool▁sep｜>", "<|tool_call_end|>", "<｜tool▁call▁end｜>", "&amp;", "'",
     "True", "None", ","], max_size=40, non_ascii_size=12)
json_values = support.json_values(support.json_scalars(strings), strings)
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
    out = support.check_chunking(fmt, output, tools, splits=[
        list(output), random_chunks(output, random.Random(len(output)), 9)], **kw)
    assert (out.content, out.reasoning) == (content, reasoning)
    assert [(c.name, c.arguments) for c in out.tool_calls] == calls
    assert [c.status for c in out.tool_calls] == ["proposed"] * len(calls), out.codes()
    assert not out.diagnostics and not out.truncated
    if ids is not None:
        assert [c.id for c in out.tool_calls] == ids


def generation(fmt, history: list, turn: dict, tools, stop: str, **kw) -> str:
    """What the model wrote for ``turn``: the history+turn render minus the generation prompt, minus ``stop``."""
    return turn_output(fmt, history, turn, tools, stop=stop, **kw)


# ---- malformed corpora (fixtures/<module>/malformed.jsonl, expectations written by hand)

def load_corpus(module: str) -> list[dict]:
    """The hand-written malformed-output corpus of ``module`` (fixtures/<module>/malformed.jsonl)."""
    path = Path(__file__).resolve().parents[2] / "fixtures" / module / "malformed.jsonl"
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


# ---- linear time

def scanned_chars(fmt, chunks: list[str], tools=None, **kw) -> int:
    """Characters the marker scanner and the JSON scanner look at while ``chunks`` stream in."""
    with counting_scans(json_scanner=True) as counts:
        parser = fmt.stream(tools, **kw)
        for piece in chunks:
            parser.feed(piece)
        parser.finish()
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
    out = support.check_chunking(fmt, text, tools, splits=[list(text), random_chunks(text, random.Random(text), 5)],
                                 **kw)
    assert_nothing_lost(text, out, structure)
