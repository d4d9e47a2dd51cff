"""XML streaming: per-delta cost while one Qwen3-Coder string argument grows to 1k..64k characters.

The output is one ``write_file`` call whose ``content`` value (code-like text with newlines, ``<`` and
near-miss closing tags such as ``</par`` and ``</parameter x``) is N characters long::

    <tool_call>\\n<function=write_file>\\n<parameter=path>\\na.py\\n</parameter>\\n<parameter=content>\\n...N...

fed in 4-character deltas. Two numbers per parser and size:

* **at N** - µs per delta for 256 deltas fed once the value is already ~N characters long (the text before
  is fed untimed in one piece), best of 3;
* **mean** - µs per delta over the whole stream from the first character, best of 3 (toolwire only).

Times are CPU time of this process (``time.process_time``), so they hold on a busy shared machine.
Target: toolwire's per-delta cost at 64k is at most 2x its cost at 1k. Peer, in the same process when
importable: SGLang's ``Qwen3CoderDetector`` (installed in ``.bench-venv`` by ``bench/setup_peers.sh``); run
``.bench-venv/bin/python -m bench xml`` to include it. The ratio column is peer / toolwire at the same size.
"""

from __future__ import annotations

import json
import time
from typing import Callable

import toolwire

SIZES = (1_000, 4_000, 16_000, 64_000)
DELTA = 4
TIMED_DELTAS = 256
TOOLS = [{"type": "function", "function": {"name": "write_file", "description": "Write a file.", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"]}}}]
HEAD = "<tool_call>\n<function=write_file>\n<parameter=path>\na.py\n</parameter>\n<parameter=content>\n"
TAIL = "\n</parameter>\n</function>\n</tool_call>"

Parser = Callable[[], tuple[Callable[[str], None], Callable[[], dict]]]

_clock = time.process_time
"""CPU time of this process: on a shared machine wall time mostly measures waiting for a core."""


def output(size: int) -> tuple[str, dict]:
    """The model output whose ``content`` value is ``size`` characters long, and its arguments."""
    unit = "    if a < b and c </par> d:\n        print('</parameter x', \"\u00e9\")\n"
    value = (unit * (size // len(unit) + 1))[:size]
    return HEAD + value + TAIL, {"path": "a.py", "content": value}


def toolwire_parser() -> tuple[Callable[[str], None], Callable[[], dict]]:
    """toolwire's qwen3_coder stream parser; finish() checks the streamed fragments against the result."""
    parser = toolwire.get_format("qwen3_coder").stream(TOOLS)
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


def sglang_parser() -> Parser | None:
    """SGLang's Qwen3CoderDetector, or None when SGLang is not importable here."""
    try:
        from sglang.srt.entrypoints.openai.protocol import Tool
        from sglang.srt.function_call.qwen3_coder_detector import Qwen3CoderDetector
    except Exception:  # noqa: BLE001 - any import failure means "peer missing"
        return None
    tools = [Tool.model_validate(t) for t in TOOLS]

    def make():
        detector = Qwen3CoderDetector()
        args: list[str] = []

        def feed(delta: str) -> None:
            for call in detector.parse_streaming_increment(delta, tools).calls:
                if call.parameters:
                    args.append(call.parameters)

        def finish() -> dict:
            try:
                return json.loads("".join(args))
            except ValueError:
                return {}

        return feed, finish

    return make


def per_delta_at(make: Parser, text: str, size: int, *, check: dict | None) -> float:
    """µs per delta for TIMED_DELTAS deltas once ~``size`` value characters were fed (best of 3)."""
    span = DELTA * TIMED_DELTAS
    start_at = max(0, min(len(HEAD) + size - span, len(text) - span))
    best = float("inf")
    for _ in range(3):
        feed, finish = make()
        feed(text[:start_at])
        timed = [text[i:i + DELTA] for i in range(start_at, start_at + span, DELTA)]
        t0 = _clock()
        for delta in timed:
            feed(delta)
        best = min(best, (_clock() - t0) / len(timed) * 1e6)
        feed(text[start_at + span:])
        result = finish()
        if check is not None:
            assert result == check, "the parser lost the arguments"
    return best


def mean_per_delta(make: Parser, text: str, check: dict) -> float:
    """µs per delta over the whole stream, fed in DELTA-character pieces (best of 3)."""
    deltas = [text[i:i + DELTA] for i in range(0, len(text), DELTA)]
    best = float("inf")
    for _ in range(3):
        feed, finish = make()
        t0 = _clock()
        for delta in deltas:
            feed(delta)
        best = min(best, _clock() - t0)
        assert finish() == check
    return best / len(deltas) * 1e6


def main() -> None:
    """Print the table (µs per delta; ratio = SGLang / toolwire at the same size)."""
    sglang = sglang_parser()
    rows = []
    for size in SIZES:
        text, args = output(size)
        tw_at = per_delta_at(toolwire_parser, text, size, check=args)
        tw_mean = mean_per_delta(toolwire_parser, text, args)
        sg_at = per_delta_at(sglang, text, size, check=None) if sglang else None
        rows.append((size, tw_at, tw_mean, sg_at))
    print(f"{DELTA}-char deltas into one Qwen3-Coder <parameter=content> string value (µs per delta)")
    print()
    print("| value size | toolwire at N | toolwire mean | SGLang Qwen3CoderDetector at N | ratio |")
    print("|---:|---:|---:|---:|---:|")
    for size, tw_at, tw_mean, sg_at in rows:
        sg = f"{sg_at:,.1f}" if sg_at is not None else "n/a (peer missing)"
        ratio = f"{sg_at / tw_at:,.1f}x" if sg_at is not None else "-"
        print(f"| {size // 1000}k | {tw_at:.1f} | {tw_mean:.1f} | {sg} | {ratio} |")
    print()
    print(f"toolwire 64k / 1k per-delta cost: {rows[-1][1] / rows[0][1]:.2f}x (target <= 2x)")
    if not sglang:
        print("SGLang is not importable in this interpreter: run in .bench-venv to compare")


if __name__ == "__main__":
    main()
