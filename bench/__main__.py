"""Run every benchmark module (``bench/bench_*.py``) or the ones named: ``python -m bench [dsml qwen ...]``.

Prints the machine and versions first, each module's tables, then a summary of toolwire against each peer.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import bench
from bench import harness


def main(argv: list[str]) -> int:
    names = sorted(m.name[len("bench_"):] for m in pkgutil.iter_modules(bench.__path__) if m.name.startswith("bench_"))
    chosen = argv or names
    unknown = sorted(set(chosen) - set(names))
    if unknown:
        print(f"unknown benchmark(s) {unknown}; available: {names}", file=sys.stderr)
        return 2
    print("# toolwire benchmarks\n")
    print(harness.environment())
    for name in chosen:
        print(f"\n## {name}", flush=True)
        importlib.import_module(f"bench.bench_{name}").main()
    harness.summary_table()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
