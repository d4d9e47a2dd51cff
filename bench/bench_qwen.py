"""Qwen JSON streaming: per-delta cost while one ``<tool_call>`` string argument grows to 1k..64k characters.

The output ``<tool_call>\\n{"name": "search", "arguments": {"q": "<N chars>", "limit": 3}}\\n</tool_call>`` is fed
in 4-character deltas, once with plain words and once with text full of JSON escapes, brackets and a spelled-out
``</tool_call>``. Numbers are CPU time of this thread per delta (``time.thread_time``: on the shared 2-core
machine wall time mostly measures waiting for a core). Two numbers per parser and size:

* **at N** - µs per delta for 256 deltas fed once the argument is already ~N characters long (what one
  delta costs at that point of the stream; the earlier text is fed untimed in one piece);
* **mean** - µs per delta averaged over the whole stream from the first character (toolwire only: for a
  quadratic parser it is just a slower way to see the same growth).

Peers run in the same process when importable: SGLang's ``Qwen25Detector`` (installed in ``.bench-venv`` by
``bench/setup_peers.sh``). Run ``.bench-venv/bin/python -m bench qwen`` to include it.
"""

from __future__ import annotations

import json
import time
from typing import Callable

import toolwire

SIZES = (1_000, 4_000, 16_000, 64_000)
DELTA = 4
TIMED_DELTAS = 256
TOOLS = [{"type": "function", "function": {"name": "search", "description": "Search.", "parameters": {
    "type": "object", "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}}}}}]


FILLERS = {
    "plain": "lorem ipsum dolor sit amet ",
    "escapes": 'lorem \u00e9t "quoted" \\ {braces} [x] </tool_call>\n',
}
"""The argument's text: plain words, or text full of JSON escapes, brackets and a marker spelled out."""


def output(size: int, kind: str = "plain") -> tuple[str, dict]:
    """The model output whose string argument is ``size`` characters long, and its arguments."""
    filler = FILLERS[kind]
    args = {"q": (filler * (size // len(filler) + 1))[:size], "limit": 3}
    text = ('<tool_call>\n{"name": "search", "arguments": ' + json.dumps(args, ensure_ascii=False)
            + "}\n</tool_call>")
    return text, args


# ---- parsers under test: make() -> feed(delta) -> None, and finish() -> arguments

def toolwire_parser() -> tuple[Callable[[str], None], Callable[[], dict]]:
    parser = toolwire.get_format("qwen25").stream(TOOLS)
    frags: list[str] = []

    def feed(delta: str) -> None:
        for event in parser.feed(delta):
            if event.type == "arguments":
                frags.append(event.fragment)

    def finish() -> dict:
        out = parser.finish()
        assert json.loads("".join(frags)) == out.tool_calls[0].arguments
        return out.tool_calls[0].arguments

    return feed, finish


def sglang_parser():
    """SGLang's Qwen25Detector, or None when SGLang is not importable here."""
    try:
        from sglang.srt.entrypoints.openai.protocol import Tool
        from sglang.srt.function_call.qwen25_detector import Qwen25Detector
    except Exception:  # noqa: BLE001 - any import failure means "peer missing"
        return None
    tools = [Tool.model_validate(t) for t in TOOLS]

    def make():
        detector = Qwen25Detector()
        args: list[str] = []

        def feed(delta: str) -> None:
            for call in detector.parse_streaming_increment(delta, tools).calls:
                if call.parameters:
                    args.append(call.parameters)

        def finish() -> dict:
            return json.loads("".join(args))

        return feed, finish

    return make


def per_delta_at(make, text: str, args: dict, size: int) -> float:
    """µs per delta for TIMED_DELTAS deltas once ~``size`` argument characters were fed (best of 3)."""
    head = text.index('"q": "') + len('"q": "')
    start_at = min(head + size - DELTA * TIMED_DELTAS, len(text) - DELTA * TIMED_DELTAS)
    best = float("inf")
    for _ in range(3):
        feed, finish = make()
        feed(text[:start_at])
        timed = [text[i:i + DELTA] for i in range(start_at, start_at + DELTA * TIMED_DELTAS, DELTA)]
        t0 = time.thread_time()
        for delta in timed:
            feed(delta)
        best = min(best, (time.thread_time() - t0) / len(timed) * 1e6)
        feed(text[start_at + DELTA * TIMED_DELTAS:])
        assert finish() == args, "the parser lost the arguments"
    return best


def mean_per_delta(make, text: str, args: dict) -> float:
    """µs per delta over the whole stream, fed in DELTA-character pieces (best of 3)."""
    deltas = [text[i:i + DELTA] for i in range(0, len(text), DELTA)]
    best = float("inf")
    for _ in range(3):
        feed, finish = make()
        t0 = time.thread_time()
        for delta in deltas:
            feed(delta)
        best = min(best, (time.thread_time() - t0) / len(deltas) * 1e6)
        assert finish() == args
    return best


def table(kind: str, sglang) -> list[tuple]:
    """Measure every size for one kind of argument text and print its table; returns the rows."""
    rows = []
    for size in SIZES:
        text, args = output(size, kind)
        tw_at = per_delta_at(toolwire_parser, text, args, size)
        tw_mean = mean_per_delta(toolwire_parser, text, args)
        sg_at = per_delta_at(sglang, text, args, size) if sglang else None
        rows.append((size, tw_at, tw_mean, sg_at))
    print(f"\n{kind} argument text, {DELTA}-char deltas (µs per delta)\n")
    print("| argument size | toolwire at N | toolwire mean | SGLang Qwen25Detector at N | speedup |")
    print("|---:|---:|---:|---:|---:|")
    for size, tw_at, tw_mean, sg_at in rows:
        sg = f"{sg_at:,.1f}" if sg_at is not None else "n/a (peer missing)"
        speed = f"{sg_at / tw_at:,.0f}x" if sg_at is not None else "-"
        print(f"| {size // 1000}k | {tw_at:.1f} | {tw_mean:.1f} | {sg} | {speed} |")
    growth = rows[-1][1] / rows[0][1]
    print(f"\ntoolwire per-delta cost 64k / 1k: {growth:.2f}x (target <= 2x)", end="")
    print(f"; speedup at 64k: {rows[-1][3] / rows[-1][1]:,.0f}x (target >= 100x)" if sglang else "")
    return rows


def main() -> None:
    """Print one table per kind of argument text (speedup = SGLang / toolwire at the same size)."""
    sglang = sglang_parser()
    if sglang is None:
        print("SGLang is not importable in this interpreter (run in .bench-venv to compare)")
    for kind in FILLERS:
        table(kind, sglang)


if __name__ == "__main__":
    main()
