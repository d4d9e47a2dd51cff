"""Token ids: render + ids against ``tml-renderers`` on Qwen3, and token-id streaming per id.

Table 1 (render + ids): for ``bench_render``'s 2- and 50-turn conversations with tools, CPU µs of

* ``toolwire``: ``Format.render(messages, tools, thinking=True).token_ids(tokenizer)`` with Qwen3's real
  tokenizer (``../shared/real/tokenizers/Qwen3``), request validation included;
* ``tml-renderers``: Thinking Machines' Rust renderer with its own Qwen3 tokenizer
  (``renderers.Qwen3().render_for_completion``), given the same OpenAI-style messages
  (``MessageList.from_oss_messages``, timed) and the tools as a system ``ToolDeclareJson`` message; and the
  same with the native messages built once, outside the timing (its best case);

and the ratio tml-renderers / toolwire (target issue 18: >= 0.6x). ``same text`` / ``same ids`` say whether
tml's ids decode to toolwire's prompt text and equal toolwire's ids.

Table 2 (token-id streaming): a ``search`` call with a ~4k-character argument, as Qwen3 ids, fed one id at a
time: µs per id of ``TokenDecoder.feed`` alone and of the ``qwen3`` stream parser (``feed(ids=[id])``), with
Qwen3's ByteLevel ids decoded from their bytes (each id once: the path now) and decoded through the tokenizer
with a left context (the path before: two ``decode`` calls per id), and whether both give the same pieces.

All timings run in one process: CPU µs per call, median of 5 batches (:func:`bench.harness.per_call_us`;
``process_time``, so a tokenizer's own threads would count too).
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import toolwire
from bench import harness
from bench.bench_render import TOOLS, conversation

TOKENIZER = Path(__file__).resolve().parents[2] / "shared" / "real" / "tokenizers" / "Qwen3"


def _per_call_us(fn, budget: float = 0.3) -> float:
    """:func:`harness.per_call_us` with process CPU time (all threads)."""
    clock, harness.clock = harness.clock, time.process_time
    try:
        return harness.per_call_us(fn, budget)
    finally:
        harness.clock = clock


def _tml(messages: list[dict]):
    """(render with conversion, render of prebuilt native messages, ids of one render), or None without tml."""
    tml = harness.optional_import("tml_renderers")
    if tml is None:
        return None
    from tml_renderers import chat, renderers

    renderer = renderers.Qwen3()
    declare = chat.Message(content=chat.ToolDeclareJson([
        chat.ToolSpecJson(t["type"], t["function"]["name"], t["function"]["description"], t["function"]["parameters"])
        for t in TOOLS]), author=chat.Author(chat.AuthorKind.System))
    native = [declare] + chat.MessageList.from_oss_messages(messages).messages

    def converted():
        return renderer.render_for_completion([declare] + chat.MessageList.from_oss_messages(messages).messages)

    def prebuilt():
        return renderer.render_for_completion(native)

    spans, _parser = converted()
    ids = [t for span in spans for t in span.span.tokens]
    return converted, prebuilt, ids, renderer.tokenizer.decode(ids)


def render_table(tokenizer) -> None:
    """Print table 1 and record the ratios."""
    fmt = toolwire.get_format("qwen3")
    rows = []
    for turns in (2, 50):
        messages = conversation(turns)

        def ours(messages=messages):
            return fmt.render(messages, TOOLS, thinking=True).token_ids(tokenizer)

        prompt = fmt.render(messages, TOOLS, thinking=True)
        t_ours = _per_call_us(ours)
        peer = _tml(messages)
        if peer is None:
            rows.append([turns, f"{t_ours:,.0f}", "(tml-renderers missing: bench/setup_peers.sh)", "-", "-", "-", "-"])
            continue
        converted, prebuilt, ids, text = peer
        t_conv, t_pre = _per_call_us(converted), _per_call_us(prebuilt)
        same_text, same_ids = text == prompt.text, ids == ours()
        rows.append([turns, f"{t_ours:,.0f}", f"{t_conv:,.0f}", f"{t_pre:,.0f}",
                     f"{t_conv / t_ours:.2f}x / {t_pre / t_ours:.2f}x", "yes" if same_text else "NO",
                     "yes" if same_ids else "NO"])
        harness.record("render + ids", f"qwen3, {turns} turns, µs", f"{t_ours:,.0f}", "tml-renderers Qwen3 (Rust)",
                       f"{t_conv:,.0f} ({t_pre:,.0f} prebuilt)", f"{t_conv / t_ours:.2f}x ({t_pre / t_ours:.2f}x)")
    print("\nrender + token ids, Qwen3 (CPU µs per render; ratio = tml-renderers / toolwire, target >= 0.6x)\n")
    harness.print_table(["turns", "toolwire µs", "tml-renderers µs", "tml prebuilt µs", "ratio (converted / prebuilt)",
                         "same text", "same ids"], rows, align="rrrrrll")


def _per_id_us(make_feed, ids: list[int]) -> float:
    """Median over 5 runs of CPU µs per id when ``make_feed()``'s feed takes one id at a time."""
    samples = []
    for _ in range(5):
        feed, finish = make_feed()
        start = time.process_time()
        for tid in ids:
            feed(tid)
        finish()
        samples.append((time.process_time() - start) / len(ids) * 1e6)
    return statistics.median(samples)


def stream_table(tokenizer) -> None:
    """Print table 2 and record the per-id cost."""
    from toolwire.tokenize import TokenDecoder, vocabulary

    vocab = vocabulary(tokenizer)
    tools = [{"type": "function", "function": {"name": "search", "parameters": {
        "type": "object", "properties": {"q": {"type": "string"}}}}}]
    value = ("Grüße aus 東京, the city of light: \"quoted\" and \\ escaped. " * 70)[:4000]
    text = '<tool_call>\n{"name": "search", "arguments": ' + json.dumps({"q": value}, ensure_ascii=False) + "}\n</tool_call>"
    ids = vocab.encode(text)
    fmt = toolwire.get_format("qwen3")
    own_bytes = vocab.plain_bytes
    rows, results = [], {}
    for label, plain_bytes in (("each id's bytes, once (now)", own_bytes),
                               ("through the tokenizer, two decodes per id (before)", None)):
        vocab.plain_bytes = plain_bytes
        try:
            def decoder():
                dec = TokenDecoder(tokenizer)
                out: list = []
                return (lambda tid: out.append(dec.feed((tid,)))), (lambda: results.setdefault(label, out + [dec.flush()]))

            def parser():
                stream = fmt.stream(tools, tokenizer=tokenizer)
                return (lambda tid: stream.feed(ids=(tid,))), stream.finish

            t_dec, t_parse = _per_id_us(decoder, ids), _per_id_us(parser, ids)
        finally:
            vocab.plain_bytes = own_bytes
        rows.append([label, len(ids), f"{t_dec:.2f}", f"{t_parse:.2f}"])
    same = len({json.dumps(v) for v in results.values()}) == 1
    harness.record("token-id stream", "qwen3, µs per id (decoder / parser)", f"{rows[0][2]} / {rows[0][3]}",
                   "toolwire before (decode twice per id)", f"{rows[1][2]} / {rows[1][3]}",
                   f"{float(rows[1][2]) / float(rows[0][2]):.1f}x / {float(rows[1][3]) / float(rows[0][3]):.1f}x")
    print(f"\ntoken-id streaming, Qwen3, one id per feed (CPU µs per id; same pieces both ways: "
          f"{'yes' if same else 'NO'})\n")
    harness.print_table(["ids decoded", "ids", "TokenDecoder µs/id", "qwen3 stream µs/id"], rows, align="lrrr")


def main() -> None:
    """Print both tables (markdown)."""
    if not TOKENIZER.is_dir():
        print("\n(../shared/real/tokenizers/Qwen3 missing: no token benchmarks)")
        return
    from toolwire.tokenize import load_tokenizer

    tokenizer = load_tokenizer(str(TOKENIZER))
    render_table(tokenizer)
    stream_table(tokenizer)


if __name__ == "__main__":
    print(harness.environment())
    main()
