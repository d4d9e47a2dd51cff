"""Token spans (issue 32, item 4): the per-delta cost of streaming token ids with spans on the events, against
the same stream without them (``stream(..., spans=False)``).

For each format with a real tokenizer in ``../shared/real/tokenizers``, every golden model output of the format
(``../shared/golden/parse/<format>.jsonl``, encoded by the tokenizer: its markers become control ids) is streamed
as token ids, and the table gives CPU µs per id fed:

* ``1 id / feed``: ``feed(ids=[id])`` for each id, then ``flush`` and ``finish`` (a serving engine's stream;
  making the stream is not timed): ``spans`` (the default) against ``spans=False``; ``cost`` is the ratio
  (target: at most 1.10);
* ``8 ids / feed``: the same in 8-id feeds. Without spans the stream decodes and parses the 8 ids at once; with
  spans it reads them a run at a time, a run ending after each control id that may end a marker (see
  docs/design-notes.md "Token spans"), so a feed holding such a marker costs a parse step more.

Then the content and reasoning events of those streams (one id a feed): how many are exactly the decode of their
span (the rest begin with framing that no event carries, a marker read before them, or share an id with the
event after them; see docs/design-notes.md "Token spans").

Text input does not reach the span code (the text ``feed`` path and the event constructors are unchanged): the
text-stream cost before and after this change is in bench/README.md ("Token spans").

All timings in one process, CPU µs per id (``harness.clock``): the fastest of 9 passes over the outputs, with
and without spans interleaved (a busy machine slows both alike).

``python -m bench.bench_spans --bytecodes`` gives instead the Python bytecodes executed per id, with and without
spans, at 1 and 8 ids a feed (``sys.settrace`` with ``f_trace_opcodes`` over the same streams, after a pass that
warms the vocabulary's caches): exact, where the timings spread with the machine's load; C work (decoding, string
joins) is not in it.
"""

from __future__ import annotations

import json
from pathlib import Path

import toolwire
from bench import harness
from toolwire.output import ContentDelta, ReasoningDelta
from toolwire.tokenize import load_tokenizer, token_pieces, vocabulary

SHARED = Path(__file__).resolve().parents[2] / "shared"
TOKENIZERS = SHARED / "real" / "tokenizers"
FORMATS = {"qwen3": "Qwen3", "qwen3_coder": "Qwen3", "deepseek_v4": "DeepSeek-V4", "deepseek_v31": "DeepSeek-V3",
           "llama31": "Llama-3", "llama4_pythonic": "Llama-4", "gpt_oss": "o200k_base"}


def _tokenizer(name: str):
    folder = TOKENIZERS / name
    if name == "o200k_base":
        from toolwire.templates.harmony import load_o200k_harmony

        return load_o200k_harmony(folder)
    return load_tokenizer(str(folder))


def _rows(family: str) -> list[dict]:
    path = SHARED / "golden" / "parse" / f"{family}.jsonl"
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _cases(family: str, tok) -> list[tuple[list, dict, list[int]]]:
    vocab = vocabulary(tok)
    cases = []
    for row in _rows(family):
        thinking = bool(row.get("prompt_opens_reasoning", row["options"].get("thinking", False)))
        cases.append((row["tools"], {"thinking": thinking}, vocab.encode(row["model_output"])))
    return cases


def _feed_time(fmt, tok, cases, per_feed: int, spans: bool) -> float:
    """CPU seconds of the feeds, ``flush`` and ``finish`` of every case (making the stream is not timed)."""
    clock = harness.clock
    total = 0.0
    for tools, options, ids in cases:
        parser = fmt.stream(tools, tokenizer=tok, spans=spans, **options)
        feed = parser.feed
        chunks = [ids[i:i + per_feed] for i in range(0, len(ids), per_feed)]
        start = clock()
        for chunk in chunks:
            feed(ids=chunk)
        parser.flush()
        parser.finish()
        total += clock() - start
    return total


def _compare(fmt, tok, cases, per_feed: int, rounds: int = 9) -> tuple[float, float]:
    """(with spans, without): the fastest of ``rounds`` passes over the cases each, the two interleaved so
    that a busy machine slows both alike; seconds."""
    with_spans, without = [], []
    for _ in range(rounds):
        with_spans.append(_feed_time(fmt, tok, cases, per_feed, True))
        without.append(_feed_time(fmt, tok, cases, per_feed, False))
    return min(with_spans), min(without)


def _exact(fmt, tok, cases) -> tuple[int, int]:
    """(content and reasoning events, of those the ones exactly the decode of their span)."""
    events = exact = 0
    for tools, options, ids in cases:
        parser = fmt.stream(tools, tokenizer=tok, **options)
        out = []
        for tid in ids:
            out += parser.feed(ids=(tid,))
        out += parser.flush()
        for e in out:
            if isinstance(e, (ContentDelta, ReasoningDelta)):
                events += 1
                exact += "".join(p.text for p in token_pieces(ids[e.span[0]:e.span[1]], tok)) == e.text
    return events, exact


def main() -> None:
    if not TOKENIZERS.is_dir():
        print(f"bench_spans: {TOKENIZERS} is absent; nothing to measure")
        return
    print("\n### token-id streaming with spans against without (CPU µs per id; cost = with / without)\n")
    rows, alignment = [], []
    for family, name in FORMATS.items():
        if not (TOKENIZERS / name).is_dir():
            continue
        try:
            tok = _tokenizer(name)
        except ImportError as exc:  # the tokenizer's library is not installed
            rows.append([family, f"skipped: {exc}", "", "", "", "", "", ""])
            continue
        fmt = toolwire.get_format(family)
        cases = _cases(family, tok)
        n = sum(len(ids) for _, _, ids in cases)
        cells = [family, f"{n:,}"]
        for per_feed in (1, 8):
            with_spans, without = _compare(fmt, tok, cases, per_feed)
            cells += [f"{with_spans / n * 1e6:.2f}", f"{without / n * 1e6:.2f}", f"{with_spans / without:.2f}"]
        rows.append(cells)
        text_events, exact = _exact(fmt, tok, cases)
        alignment.append([family, f"{text_events:,}", f"{exact:,}", f"{exact / max(text_events, 1):.0%}"])
    harness.print_table(["format", "ids", "1 id/feed: spans", "no spans", "cost", "8 ids/feed: spans", "no spans",
                         "cost"], rows, align="lrrrrrrr")
    print("\n### content and reasoning events (1 id a feed) that are exactly the decode of their span\n")
    harness.print_table(["format", "events", "exact", "share"], alignment, align="lrrr")


def _bytecodes(fmt, tok, cases, per_feed: int, spans: bool) -> int:
    """Python bytecodes executed by the feeds, ``flush`` and ``finish`` of every case (not making the stream)."""
    import sys

    count = 0

    def trace(frame, event, arg):
        nonlocal count
        frame.f_trace_opcodes = True
        if event == "opcode":
            count += 1
        return trace

    for tools, options, ids in cases:
        parser = fmt.stream(tools, tokenizer=tok, spans=spans, **options)
        chunks = [ids[i:i + per_feed] for i in range(0, len(ids), per_feed)]
        sys.settrace(trace)
        try:
            for chunk in chunks:
                parser.feed(ids=chunk)
            parser.flush()
            parser.finish()
        finally:
            sys.settrace(None)
    return count


def bytecodes_main() -> None:
    """The bytecode table (``--bytecodes``)."""
    print("\n### Python bytecodes per id, with spans against without (ratio = with / without)\n")
    rows = []
    for family, name in FORMATS.items():
        if not (TOKENIZERS / name).is_dir():
            continue
        tok = _tokenizer(name)
        fmt = toolwire.get_format(family)
        cases = _cases(family, tok)
        n = sum(len(ids) for _, _, ids in cases)
        cells = [family]
        for per_feed in (1, 8):
            _feed_time(fmt, tok, cases, per_feed, True)  # warm the vocabulary's caches for both
            with_spans, without = (_bytecodes(fmt, tok, cases, per_feed, spans) for spans in (True, False))
            cells += [f"{with_spans / n:.1f}", f"{without / n:.1f}", f"{with_spans / without:.3f}"]
        rows.append(cells)
    harness.print_table(["format", "1 id/feed: spans", "no spans", "ratio", "8 ids/feed: spans", "no spans",
                         "ratio"], rows, align="lrrrrrr")


if __name__ == "__main__":
    import sys

    if "--bytecodes" in sys.argv[1:]:
        bytecodes_main()
    else:
        main()
