"""Bounded atheris run for CI: each family group fuzzed for its share of ``--seconds`` in a child process.

    python tests/fuzz/run_atheris.py [--seconds 20] [--groups JSON,XML,DSML+harmony] [--out FILE]

Failures (broken invariants, with the input) go to ``--out`` (default ``fuzz-atheris-failures.jsonl``,
emptied first); the exit status is 1 when there is any, 2 when a child crashed, else 0. Prints the
executions per group (libFuzzer's "Done N runs")."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
GROUPS = ["JSON", "XML", "DSML+harmony", "pythonic"]
SEED = int(os.environ.get("TOOLWIRE_FUZZ_SEED", "1"))
"""libFuzzer's seed: fixed, so a CI run explores the same inputs first (set TOOLWIRE_FUZZ_SEED=0 for a random
one, as for the long runs in docs/fuzzing.md)."""


def run_group(group: str, seconds: int, out: Path, workdir: Path, runs: int | None = None) -> tuple[int, int]:
    """(executions, return code) of one group's child: ``runs`` inputs when given (with the fixed seed, the same
    inputs every time: what CI uses), else for ``seconds``."""
    bound = f"-runs={runs}" if runs else f"-max_total_time={seconds}"
    cmd = [sys.executable, str(HERE / "atheris_target.py"), group, str(out), bound,
           "-rss_limit_mb=3072", "-timeout=60", f"-artifact_prefix={workdir}/", f"-seed={SEED}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=workdir)
    runs = re.findall(r"Done (\d+) runs", proc.stderr)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-4000:])
    return (int(runs[-1]) if runs else 0), proc.returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seconds", type=int, default=int(os.environ.get("TOOLWIRE_FUZZ_SECONDS", "20")))
    ap.add_argument("--groups", default=",".join(GROUPS))
    ap.add_argument("--out", default="fuzz-atheris-failures.jsonl")
    ap.add_argument("--runs", type=int, default=None, help="inputs per group instead of a time budget")
    args = ap.parse_args(argv)
    groups = args.groups.split(",")
    out = Path(args.out).resolve()
    out.write_text("", encoding="utf-8")
    workdir = out.parent
    crashed = False
    share = max(1, args.seconds // len(groups))
    for group in groups:
        runs, rc = run_group(group, share, out, workdir, args.runs)
        crashed |= rc != 0
        budget = f"{args.runs} runs" if args.runs else f"{share} s"
        print(f"atheris {group}: {budget}, {runs} executions, exit {rc}", flush=True)
    lines = [line for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]
    print(f"{len(lines)} invariant failures recorded in {out}")
    return 2 if crashed else (1 if lines else 0)


if __name__ == "__main__":
    sys.exit(main())
