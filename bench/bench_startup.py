"""Start-up: what ``import toolwire`` costs a fresh interpreter.

Median of 10 fresh subprocesses (``sys.executable``): the ``toolwire`` line of ``python -X importtime -c
"import toolwire"`` (cumulative µs of the package and everything it imports, interpreter start-up excluded),
then the CPU time of the first use of a request model
(``toolwire.Message``), which is where the pydantic models are built now. Target: ``import toolwire`` at most
150 ms.
"""

from __future__ import annotations

import statistics
import subprocess
import sys

from bench import harness

RUNS = 10
TARGET_MS = 150.0


def import_ms(statement: str, module: str) -> float:
    """The cumulative ``-X importtime`` of ``module`` when a fresh interpreter runs ``statement``, in ms."""
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", statement], capture_output=True, text=True,
                         check=True).stderr
    for line in err.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[2].strip() == module and parts[2].startswith(" " + module):
            return int(parts[1]) / 1000
    raise RuntimeError(f"no importtime line for {module!r}")


def first_use_ms() -> float:
    """CPU ms of ``toolwire.Message`` (building the request models) in a fresh interpreter after ``import toolwire``."""
    code = ("import time, toolwire; t = time.process_time(); toolwire.Message; "
            "print((time.process_time() - t) * 1000)")
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def main() -> None:
    """Print the start-up table and record the ``import toolwire`` row."""
    rows = []
    toolwire_ms = statistics.median(import_ms("import toolwire", "toolwire") for _ in range(RUNS))
    models_ms = statistics.median(first_use_ms() for _ in range(RUNS))
    rows.append(["import toolwire", f"{toolwire_ms:,.1f}", f"≤ {TARGET_MS:.0f}", "yes" if toolwire_ms <= TARGET_MS else "NO"])
    rows.append(["then toolwire.Message (first use: builds the request models)", f"{models_ms:,.1f}", "-", "-"])
    print(f"\nstart-up: median of {RUNS} fresh interpreters (ms; -X importtime, start-up of Python itself excluded)\n")
    harness.print_table(["what", "ms", "target", "met"], rows, align="lrrl")
    harness.record("start-up", "import toolwire, ms", f"{toolwire_ms:,.1f}", "target", f"{TARGET_MS:.0f}",
                   f"{TARGET_MS / toolwire_ms:.1f}x")


if __name__ == "__main__":
    print(harness.environment())
    main()
