"""Run every benchmark module (``bench/bench_*.py``) or the ones named: ``python -m bench [dsml qwen ...]``."""

from __future__ import annotations

import importlib
import pkgutil
import platform
import sys

import bench


def main(argv: list[str]) -> int:
    names = sorted(m.name[len("bench_"):] for m in pkgutil.iter_modules(bench.__path__) if m.name.startswith("bench_"))
    chosen = argv or names
    unknown = sorted(set(chosen) - set(names))
    if unknown:
        print(f"unknown benchmark(s) {unknown}; available: {names}", file=sys.stderr)
        return 2
    print(f"# toolwire benchmarks on {platform.machine()} {platform.processor() or ''}, Python {platform.python_version()}")
    for name in chosen:
        print(f"\n## {name}", flush=True)
        importlib.import_module(f"bench.bench_{name}").main()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
