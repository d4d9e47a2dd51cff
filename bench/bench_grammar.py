"""Constrained decoding: per format, the cost of building each target's grammar (``Format.grammar``), xgrammar's
compile time of the structural tag on CPU (Qwen3 vocabulary from ../shared, 151k tokens), and the certification
numbers (golden outputs accepted, random walks parsed back) per target.

Run: ``.venv/bin/python -m bench grammar`` for llguidance / gbnf; the xgrammar columns need xgrammar (and torch),
so run it in the engine venv for them: ``.engines-venv/bin/python -m bench grammar``.
"""

from __future__ import annotations

import json
import os
import time

from bench import harness
import toolwire

SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "shared")
GOLDEN = os.path.join(SHARED, "golden", "parse")
TOKENIZER = os.path.join(SHARED, "real", "tokenizers", "Qwen3")
WALKS = 12


def _rows(name: str) -> list[dict]:
    path = os.path.join(GOLDEN, f"{name}.jsonl")
    if not os.path.exists(path):
        return []
    return [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]


def _targets() -> list[str]:
    targets = ["llguidance", "gbnf"]
    if harness.optional_import("xgrammar") is not None:
        targets.insert(0, "xgrammar")
    return targets


def _compile_ms(name: str, tools: list[dict]) -> str:
    xgr = harness.optional_import("xgrammar")
    if xgr is None or not os.path.isdir(TOKENIZER):
        return harness.MISSING
    from transformers import AutoTokenizer

    global _INFO
    if "_INFO" not in globals():
        _INFO = xgr.TokenizerInfo.from_huggingface(AutoTokenizer.from_pretrained(TOKENIZER))
    compiler = xgr.GrammarCompiler(_INFO, cache_enabled=False)
    tag = toolwire.get_format(name).grammar(tools).xgrammar()
    start = time.perf_counter()
    compiler.compile_structural_tag(tag)
    return f"{(time.perf_counter() - start) * 1000:.0f}"


def main() -> None:
    """One row per format with a grammar description: build µs per target, xgrammar compile ms, certification."""
    from toolwire.grammar.certify import BYTE_WALKS_INEXACT, check_outputs, check_walks
    from toolwire.grammar.coverage import supported_formats, unsupported_formats

    targets = _targets()
    rows = []
    for name in supported_formats():
        golden = _rows(name)
        if not golden:
            continue
        fmt, tools = toolwire.get_format(name), golden[0]["tools"]
        build = [f"{harness.per_call_us(lambda t=t: fmt.grammar(tools, target=t)):.0f}" for t in targets]
        cert = []
        for target in targets:
            out = check_outputs(fmt, golden, target,
                                thinking_of=lambda r: r.get("prompt_opens_reasoning", r["options"].get("thinking")))
            if target != "xgrammar" and name in BYTE_WALKS_INEXACT:
                cert.append(f"{out.passed}/{out.checked} · walks not certified on bytes"
                            + (f" ({len(out.failures)} fail)" if out.failures else ""))
                continue
            walk = check_walks(fmt, tools, target, samples=WALKS, seed=11)
            skipped = sum(walk.excluded.values())
            cert.append(f"{out.passed}/{out.checked} · {walk.passed}/{walk.checked - skipped}"
                        + (f" (+{skipped} out of claim)" if skipped else "")
                        + (f" ({len(out.failures) + len(walk.failures)} fail)" if out.failures or walk.failures else ""))
        rows.append([name, *build, _compile_ms(name, tools), *cert])
    print(f"Build: µs per Format.grammar call (golden tools: {len(_rows('qwen25')[0]['tools'])} tools). "
          "Compile: xgrammar compile_structural_tag on CPU, Qwen3 vocabulary. Certification: golden outputs "
          f"accepted / checked · {WALKS} random walks parsed back as proposed / finished (out of claim: a number "
          "beyond the double range, or a JSON string spelling a parameter opener: docs/grammar.md).\n")
    harness.print_table(["format", *[f"build {t} µs" for t in targets], "xgrammar compile ms",
                         *[f"{t} certified" for t in targets]], rows, align="l" + "r" * (len(targets) + 1))
    missing = unsupported_formats()
    if missing:
        print(f"\nNo grammar description yet: {', '.join(missing)}.")
