"""Test helpers for the Qwen/Hermes JSON family and parsers/json_body.

* hypothesis strategies for JSON values (every JSON type, unicode, whitespace-only strings, markup, huge ints);
* the differential reference: the model's real chat template (../shared/real/templates) rendered by
  transformers' own Jinja renderer, for request shapes the golden vectors do not cover;
* stream checks (every split, 1-char feeds, random splits) and the "nothing lost" accounting.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import strategies as st

import toolwire
from support import REAL, assert_events_consistent, every_split, full_state, random_chunks, require_shared, stream_parse

FAMILIES = ("qwen25", "qwen3", "qwen3_instruct_2507", "qwen3_thinking_2507")
TEMPLATE_FILES = {"qwen25": "Qwen2.5-7B-Instruct", "qwen3": "Qwen3-8B",
                  "qwen3_instruct_2507": "Qwen3-4B-Instruct-2507", "qwen3_thinking_2507": "Qwen3-4B-Thinking-2507"}
THINKING = {"qwen25": (False,), "qwen3": (False, True), "qwen3_instruct_2507": (False,),
            "qwen3_thinking_2507": (True,)}
"""The thinking modes each family has (the golden vectors use exactly these)."""

# ---------------------------------------------------------------- strategies

MARKUP = st.sampled_from(["<tool_call>", "</tool_call>", "<think>", "</think>", "<|im_end|>", "<|im_start|>",
                          "<tool_response>", "{", "}", "[", "]", '"', "\\", "\\n", "```json", "```", "\n", "\t",
                          " ", "'", "True", "None", ",", ":", "&amp;", "\u2028", "\x00", "\x1f"])
strings = st.one_of(
    st.text(max_size=30),
    st.text(alphabet=st.sampled_from(" \t\n\r"), min_size=1, max_size=6),          # whitespace only
    st.lists(MARKUP, max_size=8).map("".join),                                       # markup and JSON syntax
    st.text(alphabet=st.characters(min_codepoint=0x80, max_codepoint=0x10FFFF, exclude_categories=("Cs",)),
            max_size=10),                                                            # unicode beyond ASCII
)
scalars = st.one_of(
    st.none(), st.booleans(), strings,
    st.integers(min_value=-(2 ** 200), max_value=2 ** 200),                          # huge ints stay exact
    st.floats(allow_nan=False, allow_infinity=False),
)
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(strings, inner, max_size=4)), max_leaves=14)
json_objects = st.dictionaries(strings, json_values, max_size=5)
tool_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,20}", fullmatch=True)


def declared(*names: str) -> list[dict]:
    """OpenAI tool dicts for ``names``."""
    return [{"type": "function", "function": {"name": n, "description": f"tool {n}",
                                              "parameters": {"type": "object", "properties": {}}}}
            for n in names]


# ---------------------------------------------------------------- the reference

def reference_render(family: str, messages: list, tools: list | None = None, *, thinking: bool = False,
                     add_generation_prompt: bool = True) -> str:
    """The real template through transformers' Jinja renderer, ``arguments`` decoded to objects."""
    require_shared()
    path = REAL / "templates" / f"{TEMPLATE_FILES[family]}.jinja"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    render = pytest.importorskip("transformers.utils.chat_template_utils").render_jinja_template
    msgs = json.loads(json.dumps(messages))
    for m in msgs:
        for call in m.get("tool_calls") or []:
            if isinstance(call["function"].get("arguments"), str):
                call["function"]["arguments"] = json.loads(call["function"]["arguments"])
    variables = {"enable_thinking": thinking} if family == "qwen3" else {}
    out, _ = render(conversations=[msgs], tools=tools, chat_template=path.read_text(encoding="utf-8"),
                    add_generation_prompt=add_generation_prompt, **variables)
    return out[0]


def model_output(family: str, turn: dict, tools: list, *, thinking: bool,
                 history: list | None = None) -> str:
    """What the model generates for ``turn`` (rendered with it minus rendered up to the generation prompt,
    without the stop token), as the golden parse vectors were derived."""
    fmt = toolwire.get_format(family)
    history = history or [{"role": "user", "content": "go"}]
    prompt = fmt.render(history, tools, thinking=thinking).text
    full = fmt.render(history + [turn], tools, thinking=thinking, add_generation_prompt=False).text
    assert full.startswith(prompt), "the turn is not representable after this generation prompt"
    rest = full[len(prompt):]
    assert rest.endswith("<|im_end|>\n")
    return rest[:-len("<|im_end|>\n")]


# ---------------------------------------------------------------- streaming checks

def check_chunking(fmt, text: str, tools=None, *, seed: int = 0, **kw):
    """One-shot result; asserts 1-char feeds, every two-piece split (short texts) and random splits all
    give the same full result and consistent events. Returns the one-shot result."""
    ref = fmt.parse(text, tools, **kw)
    want = full_state(ref)
    pieces = [list(text)]
    pieces += list(every_split(text)) if len(text) <= 300 else []
    rng = random.Random(seed)
    pieces += [random_chunks(text, rng, rng.choice([2, 5, 16, 64])) for _ in range(8)]
    for chunks in pieces:
        result, events = stream_parse(fmt, text, chunks, tools, **kw)
        assert full_state(result) == want, chunks
        assert_events_consistent(result, events)
    return ref


def accounted(out) -> str:
    """Everything a result keeps: content, reasoning, raw call arguments and diagnostics' raw text."""
    parts = [out.content, out.reasoning]
    parts += [c.raw_arguments for c in out.tool_calls]
    parts += [d.raw or "" for d in out.diagnostics]
    parts += [d.raw or "" for c in out.tool_calls for d in c.diagnostics]
    return "\x00".join(parts)
