"""Shared helpers of the engine tests (run by ``make test-engines`` in the engine venv, not by ``make test``).

Golden parse vectors come from ../shared at run time; real tokenizers from ../shared/real/tokenizers serve the
families that have one (their outputs are replayed as token ids), the others are replayed as text.
"""

from __future__ import annotations

import json
import os
import random
from functools import cache
from pathlib import Path

import pytest

import toolwire

# vLLM picks its platform when it is first imported: a CPU, with no CUDA device visible (vLLM 0.34 on an x86 CPU
# then accepts the installed Triton; nothing here runs a kernel)
os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

SHARED = Path(os.environ.get("TOOLWIRE_SHARED", Path(__file__).resolve().parents[1].parent / "shared"))
GOLDEN = SHARED / "golden" / "parse"
TOKENIZERS = SHARED / "real" / "tokenizers"

# families whose real Hugging Face tokenizer lies in ../shared (the rest replay text)
REAL_TOKENIZER = {
    **dict.fromkeys(["qwen25", "qwen3", "qwen3_instruct_2507", "qwen3_thinking_2507", "qwen3_coder", "qwen35",
                     "qwen36"], "Qwen3"),
    **dict.fromkeys(["deepseek_v32", "deepseek_v4", "deepseek_v41"], "DeepSeek-V4"),
    **dict.fromkeys(["deepseek_v31", "deepseek_r1"], "DeepSeek-V3"),
}  # Llama-3 ships as a tiktoken model, not a Hugging Face tokenizer vLLM would load: replayed as text
TEXT_TOKENIZER = "Qwen3"  # the model tokenizer handed to the adapters of text-replayed families


def golden_rows(family: str) -> list[dict]:
    path = GOLDEN / f"{family}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]


def golden_params(exclude=()):
    """One param per golden parse vector of every toolwire format (but ``exclude``, which the adapter does not
    register); a skip (counted as such) without ../shared."""
    params = [pytest.param(row, id=row["id"]) for family in toolwire.formats() if family not in exclude
              for row in golden_rows(family)]
    return params or [pytest.param(None, marks=pytest.mark.skip(reason=f"no golden vectors at {GOLDEN}"))]


def opens_reasoning(row: dict) -> bool:
    return bool(row.get("prompt_opens_reasoning", row["options"].get("thinking", False)))


@cache
def hf_tokenizer(name: str):
    """The Hugging Face fast tokenizer vLLM would load for the model (built from the stored tokenizer.json)."""
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    from toolwire.tokenize import load_tokenizer

    folder = TOKENIZERS / name
    if (folder / "tokenizer.json.gz").exists():
        return PreTrainedTokenizerFast(tokenizer_object=load_tokenizer(str(folder)))
    return AutoTokenizer.from_pretrained(str(folder))


def tokenizer_for(family: str):
    """(the model tokenizer the engine would hand the adapter, whether the output is replayed as ids)."""
    if family in REAL_TOKENIZER:
        return hf_tokenizer(REAL_TOKENIZER[family]), True
    return hf_tokenizer(TEXT_TOKENIZER), False


def split_points(n: int, size: int | None, seed: int | None = None) -> list[tuple[int, int]]:
    """Cut ``range(n)`` into deltas of ``size`` (None: one delta), or random sizes 1..8 with ``seed``."""
    if seed is not None:
        rng = random.Random(seed)
        cuts, at = [], 0
        while at < n:
            step = rng.randint(1, 8)
            cuts.append((at, min(n, at + step)))
            at += step
        return cuts
    if size is None or n == 0:
        return [(0, n)]
    return [(i, min(n, i + size)) for i in range(0, n, size)]


def expected_calls(parsed) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parsed.tool_calls if c.source != "reasoning"]


def check_expected(row, truth, content, reasoning, calls):
    """The vector's expectation; where toolwire's own ``parse()`` on this checkout already differs from it,
    the adapter cannot do better: that row is reported as an expected failure (a core bug, not hidden)."""
    exp = row["expected"]
    exp_calls = [(c["name"], c["arguments"]) for c in exp["tool_calls"]]
    if (truth.content, truth.reasoning, expected_calls(truth)) != (exp["content"], exp["reasoning"], exp_calls):
        pytest.xfail("toolwire's own parse() differs from this golden vector on this checkout")
    assert content == exp["content"] and reasoning == exp["reasoning"]
    assert calls == exp_calls


@pytest.fixture(scope="session")
def serving_root():
    """A private directory for the serving tests' model folders and server logs (not pytest's shared basetemp,
    which another pytest run of the same user may prune while a server reads it)."""
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="toolwire-serving-"))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def pytest_terminal_summary(terminalreporter):
    """The serving tests' tables (tests_engines/serving.py RESULTS), for the closing note and docs/engines.md."""
    try:
        from serving import RESULTS
    except ImportError:
        return
    tables: dict[str, list] = {}
    for (table, family), counts in sorted(RESULTS.items()):
        tables.setdefault(table, []).append((family, counts))
    for table, rows in tables.items():
        terminalreporter.write_sep("-", table)
        columns = list(dict.fromkeys(key for _family, counts in rows for key in counts))
        terminalreporter.write_line("| family | " + " | ".join(columns) + " |")
        terminalreporter.write_line("|---" * (len(columns) + 1) + "|")
        for family, counts in rows:
            terminalreporter.write_line(f"| {family} | " + " | ".join(str(counts.get(c, "")) for c in columns) + " |")
