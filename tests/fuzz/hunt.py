"""A long hypothesis run over every format, collecting every distinct failure (shrunk) instead of stopping
at the first: ``python tests/fuzz/hunt.py --examples 2000 [--formats a,b] [--out findings.jsonl]``.

Each line of the output is ``{"format", "group", "invariant", "detail", "text", "thinking", "seed"}``; replay one
with ``fuzz.invariants.replay``. Exits 1 when anything failed."""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: support, fuzz, tokens.test_token_input

from hypothesis import HealthCheck, given, settings  # noqa: E402

from fuzz import families, invariants, strategies  # noqa: E402


def violation(name: str, text: str, thinking: bool, seed: int = 0, answer: str | None = None) -> tuple | None:
    """(invariant, raising line, detail) of the first invariant ``text`` breaks, or None."""
    try:
        invariants.check(name, text, thinking=thinking, seed=seed, answer=answer)
    except invariants.Violation as v:
        return v.invariant, traceback.extract_tb(v.__traceback__)[-1].lineno, v.detail
    return None


def shrink(text: str, still_fails, budget: float = 15.0) -> str:
    """Delta debugging over characters (drop chunks while the same failure remains), bounded in time."""
    deadline = time.monotonic() + budget
    size = max(1, len(text) // 2)
    while size >= 1 and time.monotonic() < deadline:
        at, reduced = 0, False
        while at < len(text) and time.monotonic() < deadline:
            candidate = text[:at] + text[at + size:]
            if still_fails(candidate):
                text, reduced = candidate, True
            else:
                at += size
        if not reduced:
            size //= 2
    return text


def hunt(name: str, examples: int) -> list[dict]:
    """Distinct failures of format ``name`` in ``examples`` hypothesis examples: per (invariant, raising
    line), the first input found, then shrunk. Failures are recorded, not raised, so the run explores its
    whole budget."""
    found: dict[tuple, tuple] = {}

    @settings(max_examples=examples, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(strategies.parser_inputs(name))
    def run(case):
        text, thinking, seed, answer = case
        got = violation(name, text, thinking, seed, answer)
        if got and got[:2] not in found:
            found[got[:2]] = (text, thinking, seed, answer)

    run()
    rows = []
    for key, (text, thinking, seed, answer) in found.items():
        if answer is None:  # an input with a known answer keeps its shape: shrinking would lose the answer
            text = shrink(text, lambda t: (violation(name, t, thinking, seed) or ())[:2] == key)
        detail = violation(name, text, thinking, seed, answer)[2]
        rows.append({"format": name, "group": families.group(name), "invariant": key[0], "detail": detail[:600],
                     "text": text, "thinking": thinking, "seed": seed, "answer": answer})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--examples", type=int, default=500)
    ap.add_argument("--formats", default="")
    ap.add_argument("--out", default="fuzz-hunt.jsonl")
    args = ap.parse_args(argv)
    names = args.formats.split(",") if args.formats else families.format_names()
    failures = 0
    with open(args.out, "a", encoding="utf-8") as fh:
        for name in names:
            rows = hunt(name, args.examples)
            failures += len(rows)
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            fh.flush()
            print(f"{name}: {args.examples} examples, {len(rows)} distinct failures", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
