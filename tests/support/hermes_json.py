"""Test helpers for the Qwen/Hermes JSON family and the JSON engine (parsers/engine/json_scan, json_repair, json_arguments).

* hypothesis strategies for JSON values (every JSON type, unicode, whitespace-only strings, markup, huge ints);
* the differential reference: the model's real chat template (../shared/real/templates) rendered by
  transformers' own Jinja renderer, for request shapes the golden vectors do not cover;
* the family's chunking check (every split, 1-char feeds, random splits) and "nothing lost" accounting,
  configured from :mod:`support`'s.
"""

from __future__ import annotations

from hypothesis import strategies as st

import toolwire
import support
from support import chunkings, kept_text, text_of_every_kind, turn_output

FAMILIES = ("qwen25", "qwen3", "qwen3_instruct_2507", "qwen3_thinking_2507")
TEMPLATE_FILES = {"qwen25": "Qwen2.5-7B-Instruct", "qwen3": "Qwen3-8B",
                  "qwen3_instruct_2507": "Qwen3-4B-Instruct-2507", "qwen3_thinking_2507": "Qwen3-4B-Thinking-2507"}
THINKING = {"qwen25": (False,), "qwen3": (False, True), "qwen3_instruct_2507": (False,),
            "qwen3_thinking_2507": (True,)}
"""The thinking modes each family has (the golden vectors use exactly these)."""

# ---------------------------------------------------------------- strategies

MARKUP = ["<tool_call>", "</tool_call>", "<think>", "</think>", "<|im_end|>", "<|im_start|>", "<tool_response>",
          "{", "}", "[", "]", '"', "\\", "\\n", "```json", "```", "\n", "\t", " ", "'", "True", "None", ",", ":",
          "&amp;", "\u2028", "\x00", "\x1f"]
strings = text_of_every_kind(MARKUP, blank_min=1, markup_pieces=8, max_codepoint=0x10FFFF)
"""Plain text, whitespace only, markup and JSON syntax, unicode beyond ASCII."""
json_values = support.json_values(support.json_scalars(strings, int_bound=2 ** 200), strings, max_leaves=14)
"""Any JSON value; huge ints stay exact."""
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
    variables = {"enable_thinking": thinking} if family == "qwen3" else {}
    return support.reference_render(TEMPLATE_FILES[family], messages, tools,
                                    add_generation_prompt=add_generation_prompt, **variables)


def model_output(family: str, turn: dict, tools: list, *, thinking: bool,
                 history: list | None = None) -> str:
    """What the model generates for ``turn`` (rendered with it minus rendered up to the generation prompt,
    without the stop token), as the golden parse vectors were derived."""
    return turn_output(toolwire.get_format(family), history or [{"role": "user", "content": "go"}], turn, tools,
                       stop="<|im_end|>\n", thinking=thinking)


# ---------------------------------------------------------------- streaming checks

def check_chunking(fmt, text: str, tools=None, *, seed: int = 0, **kw):
    """One-shot result; asserts 1-char feeds, every two-piece split (short texts) and random splits all
    give the same full result and consistent events. Returns the one-shot result."""
    return support.check_chunking(fmt, text, tools, splits=chunkings(text, seed=seed, max_len=(2, 5, 16, 64)), **kw)


def accounted(out) -> str:
    """Everything a result keeps: content, reasoning, raw call arguments and diagnostics' raw text."""
    return kept_text(out)
