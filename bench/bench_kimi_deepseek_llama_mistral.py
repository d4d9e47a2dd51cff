"""Kimi K2, DeepSeek V3.1 / R1, Llama 3.1 and Mistral Small 3.2 streaming: per-delta cost while one string
argument grows to 1k..64k characters.

Each family's own call wrapping around ``{"q": "<N chars>", "limit": 3}`` (``bench_qwen``'s plain arguments) is
fed in 4-character deltas (timing: :mod:`bench.harness`; the text before and after the timed deltas is fed
whole, so markers arrive whole, as special tokens do from a server). Peers, when importable (``.bench-venv``,
see ``bench/setup_peers.sh``): SGLang's ``KimiK2Detector``, ``DeepSeekV31Detector``, ``DeepSeekV3Detector``
(R1's fenced form), ``Llama32Detector`` and ``MistralDetector``, and vLLM's ``kimi_k2``, ``deepseek_v31``,
``deepseek_v3``, ``llama3_json`` and ``mistral`` parsers (:func:`bench.harness.vllm_parser`); a peer that does not return the right
arguments for an output is reported, not timed. Target: toolwire's 64k cost at most 2x its 1k cost.
"""

from __future__ import annotations

import json

from bench import harness
from bench.bench_qwen import TOOLS, arguments

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

VLLM_PEERS = {"kimi_k2": ("kimi_k2", "Qwen3"), "deepseek_v31": ("deepseek_v31", "DeepSeek-V3"),
              "deepseek_r1": ("deepseek_v3", "DeepSeek-V3"), "llama31": ("llama3_json", "Qwen3"),
              "mistral_small32": ("mistral", "Qwen3")}
"""family -> (vLLM ``--tool-call-parser``, tokenizer in ``../shared/real/tokenizers``)."""
VLLM_MARKERS = {
    "kimi_k2": ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>",
                "<|tool_call_argument_begin|>", "<|tool_call_end|>"),
    "llama31": ("<|python_tag|>",),
    "mistral_small32": ("[TOOL_CALLS]", "[CALL_ID]", "[ARGS]"),
}
"""Markers added as special tokens to the Qwen3 tokenizer where ``../shared`` has no tokenizer of the family
that transformers loads (Kimi, Mistral; Llama 3's is tiktoken): vLLM's parsers need their ids in the vocabulary."""


def output(family: str, size: int) -> tuple[str, dict, int]:
    """The family's model output whose string argument is ``size`` characters long, its arguments, where the
    value starts."""
    args = arguments(size)
    before, after = WRAPPERS[family]
    return before + json.dumps(args, ensure_ascii=False) + after, args, len(before) + len('{"q": "')


def main() -> None:
    """One table per family."""
    for family in WRAPPERS:
        tool_parser, tokenizer = VLLM_PEERS[family]
        peers = {f"SGLang {PEERS[family].split('.')[1]}": harness.sglang_parser(PEERS[family], TOOLS),
                 f"vLLM {tool_parser}": harness.vllm_parser(tool_parser, TOOLS, tokenizer, VLLM_MARKERS.get(family, ()))}
        harness.stream_table(f"{family}, plain argument text", lambda size, family=family: output(family, size),
                             family, TOOLS, peers)


if __name__ == "__main__":
    print(harness.environment())
    main()
