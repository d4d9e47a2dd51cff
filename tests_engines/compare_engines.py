"""Where the engines' own parsers differ from toolwire on the golden vectors (a report, not a test).

    cd tests_engines && ../.engines-venv/bin/python compare_engines.py

Every golden parse vector of a family the engine has its own parser for is replayed, exactly as the adapter
tests replay it (vLLM: the composed ``Parser`` through ``ChatStreamProcessor``, token ids where a real tokenizer
exists, 1-unit deltas; SGLang: its ``ReasoningParser`` then ``FunctionCallParser``, 1-character deltas), with
the engine's parser names instead of ``toolwire_<f>``. Per family it prints how many vectors the engine's
rebuilt (content, reasoning, calls) equals the vector's expectation, and the first difference of each kind.
"""

from __future__ import annotations

import json
import sys
from collections import Counter

from conftest import golden_rows, opens_reasoning

import test_sglang_adapter as sg
import test_vllm_adapter as vl

# family -> (tool parser, reasoning parser) of the engine's own, for the same family
VLLM = {"qwen25": ("hermes", None), "qwen3": ("hermes", "qwen3"), "qwen3_coder": ("qwen3_coder", None),
        "qwen35": ("qwen3_coder", "qwen3"), "deepseek_v31": ("deepseek_v31", "deepseek_v3"),
        "deepseek_r1": ("deepseek_v3", "deepseek_r1"), "deepseek_v32": ("deepseek_v32", "deepseek_v3"),
        "deepseek_v4": ("deepseek_v4", "deepseek_v4"), "kimi_k2": ("kimi_k2", "kimi_k2"),
        "glm45": ("glm45", "glm45"), "glm47": ("glm47", "glm45"), "minimax_m2": ("minimax_m2", "minimax_m2"),
        "seed_oss": ("seed_oss", "seed_oss"), "llama31": ("llama3_json", None), "mistral_small32": ("mistral", None)}
SGLANG = {"qwen25": ("qwen25", None), "qwen3": ("qwen25", "qwen3"), "qwen3_coder": ("qwen3_coder", None),
          "deepseek_v31": ("deepseekv31", "deepseek-v3"), "deepseek_r1": ("deepseekv3", "deepseek-r1"),
          "deepseek_v32": ("deepseekv32", "deepseek-v3"), "deepseek_v4": ("deepseekv4", "deepseek-v3"),
          "kimi_k2": ("kimi_k2", "kimi"), "glm45": ("glm45", "glm45"), "glm47": ("glm47", "glm45"),
          "minimax_m2": ("minimax-m2", "minimax"), "llama31": ("llama3", None), "mistral_small32": ("mistral", None)}


def expected(row):
    exp = row["expected"]
    return exp["content"], exp["reasoning"], [(c["name"], c["arguments"]) for c in exp["tool_calls"]]


def vllm_own(row, tool_name, reasoning_name):
    family = row["family"]
    tokenizer, as_ids = vl.tokenizer_for(family)
    request = vl.make_request(row)
    parser_cls = vl.ParserManager.get_parser(tool_parser_name=tool_name, reasoning_parser_name=reasoning_name,
                                             enable_auto_tools=True)
    parser = parser_cls(tokenizer, request.tools, chat_template_kwargs={"enable_thinking": opens_reasoning(row)},
                        model_config=None)
    processor = vl.ChatStreamProcessor(request, parser, enable_auto_tools=True, parser_cls=parser_cls)
    prompt = vl.prompt_ids(family, tokenizer, opens_reasoning(row))
    output = row["model_output"]
    units = tokenizer.encode(output, add_special_tokens=False) if as_ids else output
    messages = []
    for n in range(len(units)):
        ids = units[n:n + 1] if as_ids else []
        text = tokenizer.decode(ids, skip_special_tokens=False) if as_ids else units[n]
        step = processor.step(text, ids, "stop" if n == len(units) - 1 else None, prompt)
        if step.delta is not None:
            messages.append(step.delta)
    content, reasoning, calls = vl.rebuild(messages)
    return content, reasoning, [(calls[i]["name"], json.loads(calls[i]["arguments"] or "{}")) for i in sorted(calls)]


def sglang_own(row, tool_name, reasoning_name):
    rp = sg.ReasoningParser(model_type=reasoning_name, force_reasoning=opens_reasoning(row)) if reasoning_name else None
    fcp = sg.FunctionCallParser(sg.sglang_tools(row), tool_name)
    content, reasoning, calls = [], [], {}

    def take(normal, items):
        content.append(normal or "")
        for item in items:
            call = calls.setdefault(item.tool_index, {"name": None, "arguments": ""})
            call["name"] = call["name"] or item.name
            call["arguments"] += item.parameters or ""

    for ch in row["model_output"]:
        normal = ch
        if rp is not None:
            r, normal = rp.parse_stream_chunk(ch)
            reasoning.append(r or "")
        if normal:
            take(*fcp.parse_stream_chunk(normal))
    if rp is not None:
        r, normal = rp.parse_stream_end()
        reasoning.append(r or "")
        if normal:
            take(*fcp.parse_stream_chunk(normal))
    take(*fcp.parse_stream_end())
    return "".join(content), "".join(reasoning), [(calls[i]["name"], json.loads(calls[i]["arguments"] or "{}"))
                                                  for i in sorted(calls)]


def kind_of(got, want) -> str:
    parts = [name for name, g, w in zip(("content", "reasoning", "calls"), got, want) if g != w]
    return "+".join(parts)


def report(engine: str, table: dict, run) -> None:
    print(f"\n## {engine}\n\n| family | own parser | vectors | equal to the vector | differ in |\n|---|---|---:|---:|---|")
    for family, names in table.items():
        rows = golden_rows(family)
        equal, kinds, first = 0, Counter(), {}
        for row in rows:
            want = expected(row)
            try:
                got = run(row, *names)
            except Exception as exc:  # noqa: BLE001 - an engine parser that raises is a difference too
                got, kind = None, f"raised {type(exc).__name__}"
            else:
                kind = kind_of(got, want)
            if not kind:
                equal += 1
                continue
            kinds[kind] += 1
            first.setdefault(kind, (row["id"], got, want))
        differ = ", ".join(f"{k} ({n})" for k, n in kinds.most_common()) or "-"
        print(f"| {family} | {' + '.join(n for n in names if n)} | {len(rows)} | {equal} | {differ} |")
        for kind, (rid, got, want) in first.items():
            print(f"  <!-- {kind}: {rid}: got {str(got)[:240]!s} want {str(want)[:240]!s} -->", file=sys.stderr)


if __name__ == "__main__":
    which = sys.argv[1:] or ["vllm", "sglang"]
    if "vllm" in which:
        report("vLLM 0.33.0", VLLM, vllm_own)
    if "sglang" in which:
        report("SGLang 0.5.23", SGLANG, sglang_own)
