"""Training samples and the bridge: CPU cost per turn of ``Format.bridge`` against a full re-render with token
ids, and of ``training_sample``, over a growing tool-loop conversation (Qwen3 tokenizer from ../shared).

Run: ``.venv/bin/python -m bench training``. The bridge renders the next request once, tokenizes it and
compares it with the sampled ids (it must never return ids a fresh render disagrees with), so its cost is a
re-render plus the comparison; the table says how close to a bare re-render that is.
"""

from __future__ import annotations

import os

from bench import harness
import toolwire

TOKENIZER = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "real", "tokenizers", "Qwen3")
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


def conversation(turns: int) -> list[dict]:
    msgs: list[dict] = [{"role": "user", "content": "Plan a trip through these cities and check the weather."}]
    for i in range(turns):
        msgs.append({"role": "assistant", "content": "", "reasoning_content": f"Check city {i}.", "tool_calls": [
            {"id": f"call_{i}", "type": "function",
             "function": {"name": "get_weather", "arguments": f'{{"city": "City {i}"}}'}}]})
        msgs.append({"role": "tool", "tool_call_id": f"call_{i}", "content": f"{10 + i}C, clear"})
    return msgs


def main() -> None:
    """Print µs per turn for bridge, re-render + ids, and training_sample at 10 / 50 / 200 tool-loop steps."""
    if not os.path.isdir(TOKENIZER):
        print("no Qwen3 tokenizer in ../shared/real/tokenizers; skipped")
        return
    from toolwire.tokenize import load_tokenizer

    tok = load_tokenizer(TOKENIZER)
    fmt = toolwire.get_format("qwen3")
    rows = []
    for steps in (10, 50, 200):
        full = conversation(steps)
        history, call, result = full[:-2], full[-2], full[-1]
        prompt_ids = fmt.render(history, TOOLS, thinking=True).token_ids(tok)
        sample = fmt.training_sample(history + [call], TOOLS, tok, thinking=True)
        completion = [t for t, on in zip(sample.ids, sample.loss_mask) if on]
        assert fmt.bridge(prompt_ids, completion, full, TOOLS, tok, thinking=True).ok
        bridge_us = harness.per_call_us(lambda: fmt.bridge(prompt_ids, completion, full, TOOLS, tok, thinking=True))
        render_us = harness.per_call_us(lambda: fmt.render(full, TOOLS, thinking=True).token_ids(tok))
        sample_us = harness.per_call_us(lambda: fmt.training_sample(full[:-1], TOOLS, tok, thinking=True))
        rows.append([str(steps), f"{len(full)}", f"{bridge_us:,.0f}", f"{render_us:,.0f}",
                     f"{bridge_us / render_us:.2f}x", f"{sample_us:,.0f}"])
    harness.print_table(["tool-loop steps", "messages", "bridge µs", "re-render + ids µs", "bridge / re-render",
                         "training_sample µs"], rows, align="rrrrrr")
