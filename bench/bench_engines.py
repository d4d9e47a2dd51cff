"""Serving-engine adapters: per-delta cost of a tool call streamed through vLLM's and SGLang's own serving
classes, with toolwire's adapter (``toolwire_<family>``) vs the engine's own parser for the same family.

The output is ``bench_qwen``'s call (one string argument of 1k / 64k characters) in the family's wrapping, fed
in 4-character text deltas (:mod:`bench.harness`). vLLM: the ``Parser`` that ``ParserManager.get_parser``
composes from ``--tool-call-parser`` / ``--reasoning-parser`` (toolwire's pair, or vLLM's ``hermes`` + ``qwen3``),
driven by ``parse_delta`` as ``ChatStreamProcessor`` drives it. SGLang: ``FunctionCallParser`` with
``toolwire_qwen3`` or SGLang's ``qwen25`` detector, driven by ``parse_stream_chunk``. Needs the engine venv
(``make test-engines`` builds it): ``.engines-venv/bin/python -m bench engines``; without the engines the rows
say the peer is missing.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench import harness
from bench.bench_qwen import TOOLS, arguments

TOKENIZER = Path(__file__).resolve().parents[2] / "shared" / "real" / "tokenizers" / "Qwen3"
SIZES = (1_000, 64_000)


def output(size: int) -> tuple[str, dict, int]:
    args = arguments(size)
    before = '<tool_call>\n{"name": "search", "arguments": '
    return before + json.dumps(args, ensure_ascii=False) + "}\n</tool_call>", args, len(before) + len('{"q": "')


def vllm_parser(tool_parser: str, reasoning_parser: str):
    """vLLM's composed serving parser for the two names, fed through ``parse_delta``; or a missing-peer reason."""
    if harness.optional_import("vllm.parser") is None or not TOKENIZER.exists():
        return harness.MISSING
    import toolwire.integrations.vllm  # noqa: F401  (registers toolwire_<format>)
    from transformers import AutoTokenizer
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.parser import ParserManager

    tokenizer = AutoTokenizer.from_pretrained(str(TOKENIZER))
    parser_cls = ParserManager.get_parser(tool_parser_name=tool_parser, reasoning_parser_name=reasoning_parser,
                                          enable_auto_tools=True)
    request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "q"}], tools=TOOLS, stream=True)
    prompt = tokenizer.encode("<|im_start|>assistant\n", add_special_tokens=False)

    def make():
        parser = parser_cls(tokenizer, request.tools, chat_template_kwargs={}, model_config=None)
        args: list[str] = []

        def take(message) -> None:
            if message is not None:
                args.extend(tc.function.arguments for tc in message.tool_calls if tc.function and tc.function.arguments)

        def feed(delta: str) -> None:
            take(parser.parse_delta(delta, [], request, prompt, finished=False))

        def finish() -> dict:
            take(parser.parse_delta("", [], request, prompt, finished=True))
            return harness.joined_arguments(args)

        return feed, finish

    return make


def sglang_parser(name: str):
    """SGLang's ``FunctionCallParser`` for ``name``, fed through ``parse_stream_chunk``."""
    fcp = harness.optional_import("sglang.srt.function_call.function_call_parser")
    protocol = harness.optional_import("sglang.srt.entrypoints.openai.protocol")
    if fcp is None or protocol is None:
        return harness.MISSING
    import toolwire.integrations.sglang  # noqa: F401  (registers toolwire_<format>)

    tools = [protocol.Tool.model_validate(t) for t in TOOLS]

    def make():
        parser = fcp.FunctionCallParser(tools, name)
        args: list[str] = []

        def feed(delta: str) -> None:
            args.extend(c.parameters for c in parser.parse_stream_chunk(delta)[1] if c.parameters)

        def finish() -> dict:
            args.extend(c.parameters for c in parser.parse_stream_end()[1] if c.parameters)
            return harness.joined_arguments(args)

        return feed, finish

    return make


def main() -> None:
    """One table: toolwire alone, each adapter and each engine's own parser, at 1k and 64k."""
    peers = {
        "vLLM + toolwire_qwen3": vllm_parser("toolwire_qwen3", "toolwire_qwen3"),
        "vLLM hermes + qwen3 (own)": vllm_parser("hermes", "qwen3"),
        "SGLang + toolwire_qwen3": sglang_parser("toolwire_qwen3"),
        "SGLang qwen25 (own)": sglang_parser("qwen25"),
    }
    harness.stream_table("qwen3 through the serving engines' parser classes", output, "qwen3", TOOLS, peers,
                         sizes=SIZES, growth_limit=3.0)


if __name__ == "__main__":
    print(harness.environment())
    main()
