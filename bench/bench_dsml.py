"""DeepSeek V4 DSML streaming: per-delta cost while one ``write_file`` string argument grows to 1k..64k characters.

The ``content`` value (code-like lines with quotes, backslashes, ``</tag>`` near-miss closing tags and
non-ASCII) is fed in 4-character deltas (timing: :mod:`bench.harness`). Peers, in this same process when
importable (``.bench-venv``, see ``bench/setup_peers.sh``): SGLang's ``DeepSeekV4Detector``
(``parse_streaming_increment``), vLLM's ``deepseek_v4`` parser and DeepSeek's ``deepseek-recipe`` ``StreamProcessor`` (Rust, Chat Completions
chunks). Targets: toolwire's per-delta cost at 64k at most 2x its cost at 1k; at least 20x faster than SGLang
at 64k.
"""

from __future__ import annotations

import json

import toolwire
from bench import harness

SIZES = (1024, 4096, 16384, 65536)
"""Powers of two: at 1,000 characters the value ends in a space, which SGLang's detector strips (it would be
reported as returning wrong arguments instead of being timed)."""
TOOLS = [{"type": "function", "function": {"name": "write_file", "description": "Write a file.", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"]}}}]


def output(size: int) -> tuple[str, dict, int]:
    """The model output whose ``content`` value is ``size`` characters long, its arguments, where the value starts."""
    line = 'if (a < b && s != "x\\n") { print("héllo </tag> ✓"); }  // ünïcode\n'
    value = (line * (size // len(line) + 1))[:size]
    m = toolwire.get_format("deepseek_v4").markers
    head = (f"I will write it.\n\n{m['tool_calls_open']}\n{m['invoke_open']}write_file\">\n"
            f"{m['parameter_open']}path\" string=\"true\">src/app.c{m['parameter_close']}\n"
            f"{m['parameter_open']}content\" string=\"true\">")
    text = head + f"{value}{m['parameter_close']}\n{m['invoke_close']}\n{m['tool_calls_close']}"
    return text, {"path": "src/app.c", "content": value}, len(head)


def recipe_parser() -> harness.Make | str:
    """deepseek-recipe's ``StreamProcessor`` fed one text chunk per delta; its argument deltas joined and decoded
    at the end. :data:`harness.MISSING` when it does not import here."""
    dr = harness.optional_import("deepseek_recipe")
    if dr is None:
        return harness.MISSING
    body = {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "write it"}], "tools": TOOLS,
            "stream": True}

    def make():
        request = dr.ChatCompletionRequest(body).convert(dr.ConversionOptions(default_thinking_mode=False))
        processor = dr.StreamProcessor(dr.ChatCompletionRequest.chunk_generator(request, "bench", "DeepSeek-V4-Pro"),
                                       dr.ParsingOptions())
        chunks = list(processor.push(dr.InferenceChunk.ready()))

        def feed(delta: str) -> None:
            chunks.extend(processor.push(dr.InferenceChunk.text(delta, 1)))

        def finish() -> dict:
            chunks.extend(processor.push(dr.InferenceChunk.finish(dr.InferenceFinishReason.Stop)))
            chunks.extend(processor.finish())
            args = [call["function"].get("arguments") or "" for chunk in chunks
                    for choice in json.loads(chunk.to_json())["choices"]
                    for call in choice["delta"].get("tool_calls") or ()]
            return json.loads("".join(args))

        return feed, finish

    return make


def main() -> None:
    """Print the table."""
    peers = {"SGLang DeepSeekV4Detector": harness.sglang_parser("deepseekv4_detector.DeepSeekV4Detector", TOOLS),
             "vLLM deepseek_v4": harness.vllm_parser("deepseek_v4", TOOLS, "DeepSeek-V4"),
             "deepseek-recipe StreamProcessor": recipe_parser()}
    harness.stream_table("deepseek_v4, one DSML string parameter", output, "deepseek_v4", TOOLS, peers, sizes=SIZES,
                         speedup_targets={"SGLang DeepSeekV4Detector": 20})


if __name__ == "__main__":
    print(harness.environment())
    main()
