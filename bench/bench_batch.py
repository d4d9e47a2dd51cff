"""Batch throughput: rows/s for parse and render on the golden outputs, one worker vs two, and what the batch
layer costs per row over calling ``parse`` / ``render`` directly.

Run: ``.venv/bin/python -m bench batch``. The corpus is every golden parse output (and render request) of a few
families, repeated to about 20k rows, written to a temporary JSON-lines file; ``run_file`` reads it in 256-row
chunks. Rows/s here is wall time (the point of two workers is using two cores); "per core" divides by the
number of workers. The overhead row compares ``BatchParser(batch)`` with a plain loop of ``fmt.parse`` +
``validate`` on the same rows, in CPU time.
"""

from __future__ import annotations

import json
import os
import tempfile
import time

from bench import harness
import toolwire
from toolwire.batch import BatchParser, BatchRenderer, run_file

FAMILIES = ("qwen3", "deepseek_v4", "glm47", "gpt_oss")
GOLDEN = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "golden")
TARGET_ROWS = 20_000


def _rows(kind: str, family: str) -> list[dict]:
    path = os.path.join(GOLDEN, kind, f"{family}.jsonl")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _corpus(kind: str, family: str, tools: list | None) -> list[dict]:
    rows = [r for r in _rows(kind, family) if kind == "render" or r["tools"] == tools]
    if kind == "parse":
        records = [{"model_output": r["model_output"],
                    "thinking": bool(r.get("prompt_opens_reasoning", r["options"].get("thinking", False)))}
                   for r in rows]
    else:
        records = [{"messages": json.dumps(r["request"]["messages"])} for r in rows
                   if "expected_error" not in r and not r["request"].get("tools")]
    return (records * (TARGET_ROWS // max(1, len(records)) + 1))[:TARGET_ROWS] if records else []


def _file(records: list[dict]) -> str:
    fd, path = tempfile.mkstemp(suffix=".jsonl")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path


def _rows_per_second(mapper, path: str, workers: int) -> float:
    out = path + f".out{workers}.jsonl"
    try:
        summary = run_file(mapper, path, out, workers=workers, progress=False)
    finally:
        if os.path.exists(out):
            os.remove(out)
    return summary.rows_per_second


def _overhead_us(family: str, tools: list, records: list[dict]) -> tuple[float, float]:
    """CPU µs per row: plain parse + validate loop, and BatchParser on the same 256-row batch."""
    batch = records[:256]
    fmt = toolwire.get_format(family)
    parser = BatchParser(family, tools=tools)
    columns = {"model_output": [r["model_output"] for r in batch], "thinking": [r["thinking"] for r in batch]}

    def plain():
        for r in batch:
            fmt.parse(r["model_output"], tools, thinking=r["thinking"]).validate(tools)

    plain_us = harness.per_call_us(plain, budget=0.5) / len(batch)
    batch_us = harness.per_call_us(lambda: parser(columns), budget=0.5) / len(batch)
    return plain_us, batch_us


def main() -> None:
    """Print rows/s (1 and 2 workers, per core) for parse and render, and the batch layer's overhead per row."""
    rows_out = []
    for family in FAMILIES:
        parse_rows = _rows("parse", family)
        if not parse_rows:
            print(f"no golden vectors for {family} (../shared absent?)")
            continue
        tools = parse_rows[0]["tools"]
        for kind, mapper in (("parse", BatchParser(family, tools=tools)),
                             ("render", BatchRenderer(family, options={"thinking": True}))):
            records = _corpus(kind, family, tools)
            if not records:
                continue
            path = _file(records)
            try:
                one = _rows_per_second(mapper, path, 1)
                two = _rows_per_second(mapper, path, 2)
            finally:
                os.remove(path)
            rows_out.append([family, kind, f"{len(records):,}", f"{one:,.0f}", f"{two:,.0f}", f"{two / 2:,.0f}",
                             f"{two / one:.2f}x"])
    harness.print_table(["format", "job", "rows", "rows/s, 1 worker", "rows/s, 2 workers", "per core (2)",
                         "scaling"], rows_out, align="llrrrrr")
    print()
    over = []
    for family in FAMILIES:
        parse_rows = _rows("parse", family)
        if not parse_rows:
            continue
        tools = parse_rows[0]["tools"]
        plain_us, batch_us = _overhead_us(family, tools, _corpus("parse", family, tools))
        over.append([family, f"{plain_us:.1f}", f"{batch_us:.1f}", f"{batch_us - plain_us:+.1f}",
                     f"{batch_us / plain_us:.2f}x"])
    harness.print_table(["format", "parse+validate µs/row", "BatchParser µs/row", "overhead µs/row", "ratio"],
                        over, align="lrrrr")
