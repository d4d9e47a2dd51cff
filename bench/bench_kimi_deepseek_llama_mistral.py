"""Kimi K2, DeepSeek V3.1 / R1, Llama 3.1 and Mistral Small 3.2 streaming: per-delta cost while one string
argument grows to 1k..64k characters.

Each family's own call wrapping around ``{"q": "<N chars>", "limit": 3}`` is fed in 4-character deltas, timed
the way ``bench_qwen`` times Qwen (its helpers are reused): **at N** is µs per delta for 256 deltas fed once the
argument is ~N characters long, **mean** is µs per delta over the whole stream.

Peers run in the same process when importable (``.bench-venv``, see ``bench/setup_peers.sh``): SGLang's
``KimiK2Detector``, ``DeepSeekV31Detector``, ``DeepSeekV3Detector`` (R1's fenced form), ``Llama32Detector`` and
``MistralDetector``. ``per_delta_at`` feeds the text before and after the timed deltas whole, so markers arrive
whole, as special tokens do from a server; a peer is timed only where it then returns the right arguments for
that output; otherwise its column says why not.
"""

from __future__ import annotations

import json
from typing import Callable

import toolwire
from bench.bench_qwen import DELTA, FILLERS, TOOLS, mean_per_delta, per_delta_at

SIZES = (1_000, 4_000, 16_000, 64_000)

WRAPPERS: dict[str, tuple[str, str]] = {
    "kimi_k2": ("<|tool_calls_section_begin|><|tool_call_begin|>functions.search:0<|tool_call_argument_begin|>",
                "<|tool_call_end|><|tool_calls_section_end|>"),
    "deepseek_v31": ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>search<｜tool▁sep｜>",
                     "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
    "deepseek_r1": ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n```json\n",
                    "\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
    "llama31": ('{"name": "search", "parameters": ', "}"),
    "mistral_small32": ("[TOOL_CALLS]search[CALL_ID]a1b2c3d4e[ARGS]", ""),
}
PEERS = {"kimi_k2": "kimik2_detector.KimiK2Detector", "deepseek_v31": "deepseekv31_detector.DeepSeekV31Detector",
         "deepseek_r1": "deepseekv3_detector.DeepSeekV3Detector", "llama31": "llama32_detector.Llama32Detector",
         "mistral_small32": "mistral_detector.MistralDetector"}


def output(family: str, size: int, kind: str = "plain") -> tuple[str, dict]:
    """The family's model output whose string argument is ``size`` characters long, and its arguments."""
    filler = FILLERS[kind]
    args = {"q": (filler * (size // len(filler) + 1))[:size], "limit": 3}
    before, after = WRAPPERS[family]
    return before + json.dumps(args, ensure_ascii=False) + after, args


def toolwire_parser(family: str):
    """toolwire's stream parser for ``family`` as a ``make`` function (``feed``, ``finish``)."""
    fmt = toolwire.get_format(family)

    def make() -> tuple[Callable[[str], None], Callable[[], dict]]:
        parser = fmt.stream(TOOLS)
        frags: list[str] = []

        def feed(delta: str) -> None:
            frags.extend(e.fragment for e in parser.feed(delta) if e.type == "arguments")

        def finish() -> dict:
            out = parser.finish()
            assert json.loads("".join(frags)) == out.tool_calls[0].arguments
            return out.tool_calls[0].arguments

        return feed, finish

    return make


def sglang_parser(family: str):
    """The SGLang detector for ``family`` as a ``make`` function, or a string saying why there is none."""
    try:
        import importlib

        from sglang.srt.entrypoints.openai.protocol import Tool

        module, cls = PEERS[family].split(".")
        detector_class = getattr(importlib.import_module(f"sglang.srt.function_call.{module}"), cls)
    except Exception:  # noqa: BLE001 - any import failure means "peer missing"
        return "n/a (peer missing)"
    tools = [Tool.model_validate(t) for t in TOOLS]

    def make():
        detector = detector_class()
        args: list[str] = []

        def feed(delta: str) -> None:
            for call in detector.parse_streaming_increment(delta, tools).calls:
                if call.parameters:
                    args.append(call.parameters)

        def finish() -> dict:
            return json.loads("".join(args))

        return feed, finish

    text, args = output(family, SIZES[0])
    try:
        per_delta_at(make, text, args, SIZES[0])  # asserts the peer returns the arguments
        return make
    except Exception:  # noqa: BLE001 - a peer that fails on the format is reported, not timed
        pass
    return "n/a (wrong arguments for this format)"


def table(family: str) -> None:
    """Measure and print one family's table."""
    tw = toolwire_parser(family)
    peer = sglang_parser(family)
    print(f"\n{family}, plain argument text, {DELTA}-char deltas (µs per delta)\n")
    print("| argument size | toolwire at N | toolwire mean | SGLang at N | speedup |")
    print("|---:|---:|---:|---:|---:|")
    first = last = None
    for size in SIZES:
        text, args = output(family, size)
        tw_at = per_delta_at(tw, text, args, size)
        tw_mean = mean_per_delta(tw, text, args)
        first = first or tw_at
        last = tw_at
        if callable(peer):
            sg_at = per_delta_at(peer, text, args, size)
            print(f"| {size // 1000}k | {tw_at:.1f} | {tw_mean:.1f} | {sg_at:,.1f} | {sg_at / tw_at:,.0f}x |")
        else:
            print(f"| {size // 1000}k | {tw_at:.1f} | {tw_mean:.1f} | {peer} | - |")
    print(f"\ntoolwire per-delta cost 64k / 1k: {last / first:.2f}x (target <= 2x)")


def main() -> None:
    """One table per family (speedup = SGLang / toolwire at the same size)."""
    for family in WRAPPERS:
        table(family)
