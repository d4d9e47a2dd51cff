"""Qwen JSON streaming: per-delta cost while one ``<tool_call>`` string argument grows to 1k..64k characters.

The output ``<tool_call>\\n{"name": "search", "arguments": {"q": "<N chars>", "limit": 3}}\\n</tool_call>`` is fed
in 4-character deltas, once with plain words and once with text full of JSON escapes, brackets and a spelled-out
``</tool_call>`` (timing: :mod:`bench.harness`). Peer, when importable (``.bench-venv``, see
``bench/setup_peers.sh``): SGLang's ``Qwen25Detector`` and vLLM's ``hermes`` parser (what it serves Qwen2.5 /
Qwen3 with; :func:`bench.harness.vllm_parser`). Targets: toolwire's 64k cost at most 2x its 1k cost;
at least 100x faster than SGLang at 64k.
"""

from __future__ import annotations

import json

from bench import harness

TOOLS = [{"type": "function", "function": {"name": "search", "description": "Search.", "parameters": {
    "type": "object", "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}}}}}]

FILLERS = {
    "plain": "lorem ipsum dolor sit amet ",
    "escapes": 'lorem \u00e9t "quoted" \\ {braces} [x] </tool_call>\n',
}
"""The argument's text: plain words, or text full of JSON escapes, brackets and a marker spelled out."""


def arguments(size: int, kind: str = "plain") -> dict:
    """``{"q": <size characters of the kind's filler>, "limit": 3}``."""
    filler = FILLERS[kind]
    return {"q": (filler * (size // len(filler) + 1))[:size], "limit": 3}


def output(size: int, kind: str = "plain") -> tuple[str, dict, int]:
    """The model output whose string argument is ``size`` characters long, its arguments, where the value starts."""
    args = arguments(size, kind)
    text = '<tool_call>\n{"name": "search", "arguments": ' + json.dumps(args, ensure_ascii=False) + "}\n</tool_call>"
    return text, args, text.index('"q": "') + len('"q": "')


def main() -> None:
    """One table per kind of argument text."""
    peer = "SGLang Qwen25Detector"
    peers = {peer: harness.sglang_parser("qwen25_detector.Qwen25Detector", TOOLS),
             "vLLM hermes": harness.vllm_parser("hermes", TOOLS, "Qwen3")}
    for kind in FILLERS:
        harness.stream_table(f"qwen25, {kind} argument text", lambda size, kind=kind: output(size, kind), "qwen25",
                             TOOLS, peers, speedup_targets={peer: 100})


if __name__ == "__main__":
    print(harness.environment())
    main()
