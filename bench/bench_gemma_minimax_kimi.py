"""Gemma 4, MiniMax-M3 and Kimi K3 streaming: per-delta cost while one string argument grows to 1k..64k characters.

Each family's own call wrapping around ``q`` (``bench_qwen``'s plain argument text) and ``limit: 3`` is fed in
4-character deltas (timing: :mod:`bench.harness`; the text before and after the timed deltas is fed whole, so
markers arrive whole, as special tokens do from a server). No peer parses these formats in ``.bench-venv``.
Target: toolwire's 64k cost at most 2x its 1k cost.
"""

from __future__ import annotations

from bench import harness
from bench.bench_qwen import TOOLS, arguments

Q = '<|"|>'
NS = "]<]minimax[>["
O, C, S = "<|open|>", "<|close|>", "<|sep|>"
WRAPPERS: dict[str, tuple[str, str]] = {
    "gemma4": ("<|tool_call>call:search{limit:3,q:" + Q, Q + "}<tool_call|>"),
    "minimax_m3": (f'{NS}<tool_call>\n{NS}<invoke name="search">{NS}<q>',
                   f"{NS}</q>{NS}<limit>3{NS}</limit>{NS}</invoke>\n{NS}</tool_call>"),
    "kimi_k3": (f'{C}response{S}{O}tools{S}{O}call tool="search" index="1"{S}{O}argument key="q" type="string"{S}',
                f'{C}argument{S}{O}argument key="limit" type="number"{S}3{C}argument{S}{C}call{S}{C}tools{S}'
                f"{C}message{S}"),
}


def output(family: str, size: int) -> tuple[str, dict, int]:
    """The family's model output whose string argument is ``size`` characters long, its arguments, where the
    value starts."""
    args = arguments(size)
    before, after = WRAPPERS[family]
    return before + args["q"] + after, args, len(before)


def main() -> None:
    """One table per family."""
    for family in WRAPPERS:
        harness.stream_table(f"{family}, plain argument text", lambda size, family=family: output(family, size),
                             family, TOOLS, {})


if __name__ == "__main__":
    print(harness.environment())
    main()
