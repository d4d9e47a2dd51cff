"""Test helpers shared by the JSON-bodied families (kimi, deepseek_legacy, llama, mistral).

* golden render / parse checks (vectors read from ../shared at run time);
* a differential reference: the model's real chat template from ../shared/real/templates rendered by
  transformers' own Jinja renderer, for request shapes the golden vectors do not cover;
* hypothesis strategies for argument values, and the stream checks (every split, 1-char feeds, random splits).
"""

from __future__ import annotations

import json
import random

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
    return {"thinking": bool(row["options"].get("thinking", False))}


def check_golden_parse_oneshot(row: dict) -> None:
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
    return "".join(parts)


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
arguments = st.dictionaries(st.text(min_size=1, max_size=12).filter(lambda k: k.strip() == k and k), json_values,
                            max_size=5)
tool_names = st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True)


def declared(*names: str) -> list[dict]:
    """OpenAI tool dicts for ``names`` (no parameters schema)."""
    return [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in names]
