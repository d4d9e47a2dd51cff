"""XML streaming: per-delta cost while one Qwen3-Coder string argument grows to 1k..64k characters.

The output is one ``write_file`` call whose ``content`` value (code-like text with newlines, ``<`` and
near-miss closing tags such as ``</par`` and ``</parameter x``) is N characters long::

    <tool_call>\\n<function=write_file>\\n<parameter=path>\\na.py\\n</parameter>\\n<parameter=content>\\n...N...

fed in 4-character deltas (timing: :mod:`bench.harness`). Peer, when importable (``.bench-venv``, see
``bench/setup_peers.sh``): SGLang's ``Qwen3CoderDetector`` and vLLM's ``qwen3_coder`` parser. Target: toolwire's per-delta cost at 64k is at
most 2x its cost at 1k.
"""

from __future__ import annotations

from bench import harness

TOOLS = [{"type": "function", "function": {"name": "write_file", "description": "Write a file.", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"]}}}]
HEAD = "<tool_call>\n<function=write_file>\n<parameter=path>\na.py\n</parameter>\n<parameter=content>\n"
TAIL = "\n</parameter>\n</function>\n</tool_call>"


def output(size: int) -> tuple[str, dict, int]:
    """The model output whose ``content`` value is ``size`` characters long, its arguments, where the value starts."""
    unit = "    if a < b and c </par> d:\n        print('</parameter x', \"\u00e9\")\n"
    value = (unit * (size // len(unit) + 1))[:size]
    return HEAD + value + TAIL, {"path": "a.py", "content": value}, len(HEAD)


def main() -> None:
    """Print the table."""
    peers = {"SGLang Qwen3CoderDetector": harness.sglang_parser("qwen3_coder_detector.Qwen3CoderDetector", TOOLS),
             "vLLM qwen3_coder": harness.vllm_parser("qwen3_coder", TOOLS, "Qwen3")}
    harness.stream_table("qwen3_coder, one <parameter=content> string value", output, "qwen3_coder", TOOLS, peers)


if __name__ == "__main__":
    print(harness.environment())
    main()
