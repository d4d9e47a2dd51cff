"""History keeper replay: how much of the engine's prefix cache each turn of a tool loop reuses when the client
drops the reasoning of every echoed assistant turn, without the keeper, with it, and with it supplying the
sampled token ids; and what the keeper costs per request.

Run: ``.venv/bin/python -m bench history``. For every family whose context policy keeps reasoning in the
current tool loop (thinking on, tools declared), a 20-turn conversation: one user question, then 20 assistant
turns, each with reasoning and one call, each followed by its tool result. Request *k* is what the client sends
before turn *k*: the history with every earlier assistant turn echoed WITHOUT its reasoning. The engine then
holds request *k*'s prompt ids followed by the ids the model sampled for turn *k* (the turn as the format
writes it after that prompt, its markers as control ids and the rest as text, tokenised on its own:
``model_completion_ids``). The "reuse" of request *k+1* is the
share of those cached ids its prompt starts with (100 %: it extends them; below, the rest is prefilled again).

* **client only**: request *k+1* rendered as sent;
* **keeper**: ``HistoryKeeper.restore`` puts the recorded reasoning back before rendering, and
  ``HistoryKeeper.record`` stores each turn (with its sampled ids);
* **keeper + ids**: also ``restore(token_ids=True)`` and ``splice_token_ids``, so the echoed turns are the
  sampled ids themselves rather than a fresh tokenisation of their text.

Tokens are the family's real tokenizer from ../shared where there is one (Qwen3, DeepSeek-V3/V4, o200k for
gpt-oss), else a byte-level tokenizer with the family's marker tokens (then a token is a byte). The keeper's
cost is CPU µs per request at turn 20 (``restore`` + ``record``, a MemoryStore), against rendering that request.
"""

from __future__ import annotations

import os
from functools import cache

from bench import harness
import toolwire
from toolwire.tokenize import byte_tokenizer

SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "real", "tokenizers")
TURNS = 20
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather for a city.",
                                            "parameters": {"type": "object", "properties": {
                                                "city": {"type": "string", "description": "City name."}},
                                                "required": ["city"]}}}]
REAL = {**dict.fromkeys(["qwen3", "qwen3_thinking_2507", "qwen35", "qwen36", "qwen38"], "Qwen3"),
        **dict.fromkeys(["deepseek_v32", "deepseek_v4"], "DeepSeek-V4"), "gpt_oss": "o200k_base"}


@cache
def _real(name: str):
    from toolwire.tokenize import load_tokenizer

    folder = os.path.join(SHARED, name)
    return load_tokenizer(folder)


def tokenizer(fmt, conversation):
    if fmt.name in REAL and os.path.isdir(os.path.join(SHARED, REAL[fmt.name])):
        return _real(REAL[fmt.name]), REAL[fmt.name]
    specials = set()  # the markers the renderer writes as control tokens (not every marker-table entry is one)
    prompt = fmt.render(conversation, TOOLS, thinking=True, add_generation_prompt=False)
    specials |= {s.text for s in prompt.segments if s.kind == "special"}
    return byte_tokenizer(specials), "bytes"


def turns() -> list[dict]:
    out = []
    for k in range(TURNS):
        out.append({"role": "assistant", "content": "",
                    "reasoning_content": f"Step {k}: the user wants the whole route; city {k} is next, so I call the "
                                         f"weather tool for it and compare with what I have so far.",
                    "tool_calls": [{"id": f"call_{k}", "type": "function", "function": {
                        "name": "get_weather", "arguments": f'{{"city": "City {k}"}}'}}]})
    return out


USER = {"role": "user", "content": "Plan a 20-city route and check the weather in each city on the way."}


def result(k: int) -> dict:
    return {"role": "tool", "tool_call_id": f"call_{k}", "content": f"City {k}: {10 + k % 15} C, wind {k % 7} m/s."}


def echoed(turn: dict) -> dict:
    return {k: v for k, v in turn.items() if k != "reasoning_content"}


def families() -> list[str]:
    """Families whose policy keeps the reasoning of the current tool loop (thinking on, tools declared)."""
    from toolwire.context_policy import plan

    probe = [USER, turns()[0], result(0)]
    out = []
    for name in toolwire.formats():
        try:
            if 1 in plan(probe, name, thinking=True, tools=TOOLS, check=False).kept_indices:
                toolwire.get_format(name).render(probe, TOOLS, thinking=True)
                out.append(name)
        except toolwire.ToolwireError:
            continue
    return sorted(out)


def common(a: list[int], b: list[int]) -> int:
    return next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def by_characters(ids: list[int], tok) -> list[int]:
    """The same text sampled as other ids: every plain character its own ids, control ids kept (a model that
    wrote ``P`` ``a`` ``r`` ``i`` ``s`` where a fresh tokenisation has ``Paris``: the worst case of a sampled
    tokenisation that is not the fresh one)."""
    from toolwire.tokenize import token_pieces, vocabulary

    vocab = vocabulary(tok)
    out = []
    for piece in token_pieces(ids, tok):
        out += [vocab.control[piece.text]] if piece.special else [t for ch in piece.text for t in vocab.encode_plain(ch)]
    return out


def replay(fmt, tok, mode: str, sampled: str = "fresh") -> tuple[list[float], list[int], object]:
    """Reuse fraction and prefilled tokens of requests 2..TURNS in ``mode`` (client / keeper / ids); ``sampled``:
    the turn's ids as the format tokenises it (``fresh``) or one id per character (``chars``)."""
    from toolwire.history import HistoryKeeper, model_completion_ids, splice_token_ids

    keeper = HistoryKeeper(fmt)
    model_turns = turns()
    sent = [USER]
    cached: list[int] | None = None
    fractions, prefill = [], []
    for k, turn in enumerate(model_turns):
        messages = sent
        if mode != "client":
            messages = keeper.restore(sent, TOOLS, token_ids=(mode == "ids"), thinking=True).messages
        if mode == "ids":
            ids = splice_token_ids(fmt, messages, TOOLS, tok, bridge="report", on_refusal="skip", thinking=True).ids
        else:
            ids = fmt.render(messages, TOOLS, thinking=True).token_ids(tok)
        if cached is not None:
            reused = common(cached, ids)
            fractions.append(reused / len(cached))
            prefill.append(len(ids) - reused)
        completion = model_completion_ids(fmt, messages, turn, TOOLS, tok, thinking=True)
        if sampled == "chars":
            completion = by_characters(completion, tok)
        cached = ids + completion
        if mode != "client":
            keeper.record(messages, turn, TOOLS, token_ids=completion, thinking=True)
        sent = sent + [echoed(turn), result(k)]
    return fractions, prefill, keeper


def cost(fmt) -> tuple[float, float, float, float]:
    """µs per request at turn TURNS: restore, record, stability (text), and rendering the request."""
    from toolwire.history import HistoryKeeper

    keeper = HistoryKeeper(fmt)
    model_turns = turns()
    sent = [USER]
    for k, turn in enumerate(model_turns[:-1]):
        keeper.record(keeper.restore(sent, TOOLS, thinking=True).messages, turn, TOOLS, thinking=True)
        sent = sent + [echoed(turn), result(k)]
    restored = keeper.restore(sent, TOOLS, thinking=True).messages
    restore_us = harness.per_call_us(lambda: keeper.restore(sent, TOOLS, thinking=True), budget=0.15)
    assert keeper.stability(restored, TOOLS, thinking=True).previous_found
    stability_us = harness.per_call_us(lambda: keeper.stability(restored, TOOLS, thinking=True), budget=0.15)
    record_us = harness.per_call_us(lambda: keeper.record(restored, model_turns[-1], TOOLS, thinking=True), budget=0.15)
    render_us = harness.per_call_us(lambda: fmt.render(restored, TOOLS, thinking=True), budget=0.15)
    return restore_us, record_us, stability_us, render_us


def pct(values: list[float]) -> str:
    return f"{100 * sum(values) / len(values):.1f}"


def main() -> None:
    rows = []
    for name in families():
        fmt = toolwire.get_format(name)
        full = [USER]
        for k, t in enumerate(turns()):
            full += [t, result(k)]
        tok, tok_name = tokenizer(fmt, full)
        client, client_prefill, _ = replay(fmt, tok, "client")
        kept, kept_prefill, _ = replay(fmt, tok, "keeper")
        ids, ids_prefill, _ = replay(fmt, tok, "ids")
        restore_us, record_us, stability_us, render_us = cost(fmt)
        rows.append([f"`{name}`", tok_name, pct(client), f"{100 * min(client):.1f}", pct(kept), f"{100 * min(kept):.1f}",
                     pct(ids), f"{100 * min(ids):.1f}",
                     f"{sum(client_prefill) / len(client_prefill):,.0f} / {sum(kept_prefill) / len(kept_prefill):,.0f}"
                     f" / {sum(ids_prefill) / len(ids_prefill):,.0f}",
                     f"{restore_us:,.0f} + {record_us:,.0f}", f"{(restore_us + record_us) / render_us:.2f}x",
                     f"{stability_us:,.0f}"])
    print(f"\n{TURNS}-turn tool loop, thinking on, the client drops every echoed reasoning: share of the cached "
          "ids (previous prompt + sampled turn) that the next prompt reuses, mean and min over 19 requests; "
          "prefilled tokens per request (client / keeper / keeper + ids); keeper CPU µs per request at turn 20 "
          "(restore + record), as a multiple of rendering that request, and stability()\n")
    harness.print_table(["family", "tokens", "client %", "min", "keeper %", "min", "keeper + ids %", "min",
                         "prefill per request", "keeper µs", "keeper / render", "stability µs"], rows,
                        align="llrrrrrrrrrr")
    rows = []
    for name in families():
        fmt = toolwire.get_format(name)
        if name not in REAL or not os.path.isdir(os.path.join(SHARED, REAL[name])):
            continue
        tok = _real(REAL[name])
        kept, kept_prefill, _ = replay(fmt, tok, "keeper", "chars")
        ids, ids_prefill, _ = replay(fmt, tok, "ids", "chars")
        rows.append([f"`{name}`", REAL[name], pct(kept), f"{100 * min(kept):.1f}", pct(ids), f"{100 * min(ids):.1f}",
                     f"{sum(kept_prefill) / len(kept_prefill):,.0f} / {sum(ids_prefill) / len(ids_prefill):,.0f}"])
    print("\nThe same replay when the model sampled each turn as other ids than a fresh tokenisation (one id per "
          "character of text, markers as control ids), real tokenizers only: the keeper restores the text, "
          "the ids need the keeper's recorded ids spliced in (token-faithful turns)\n")
    harness.print_table(["family", "tokens", "keeper %", "min", "keeper + ids %", "min", "prefill (keeper / + ids)"],
                        rows, align="llrrrrr")


if __name__ == "__main__":
    main()
