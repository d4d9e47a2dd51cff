"""vLLM's own tool-parser and reasoning-parser test cases (vLLM 0.33.0's sdist, unpacked into the engine venv
by ``fetch_vllm_tests.py``) run with the toolwire adapters in place of vLLM's parsers
(``vllm_cases_plugin.py`` says exactly what is substituted). Every case must end as ``vllm_own_expected.py``
says: pass, or fail in its documented divergence class (docs/engines.md, "vLLM's own test cases"), so a
regression, and also a divergence that went away, fails here. The per-family table is printed (``-s``).
"""

from __future__ import annotations

import collections
import fnmatch
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vllm_own_expected import CLASSES, RULES

HERE = Path(__file__).resolve().parent
VLLM_TESTS = Path(sys.prefix) / "vllm-tests" / "0.33.0"


def expected_class(nodeid: str) -> str | None:
    module, name = nodeid.split("::", 1)
    module = module.rsplit("/", 1)[-1]
    for rule_module, pattern, cls in RULES:
        if rule_module == module and fnmatch.fnmatchcase(name, pattern):
            return cls
    return None


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> list[dict]:
    if not (VLLM_TESTS / ".complete").exists():
        pytest.fail(f"vLLM's tests are not unpacked at {VLLM_TESTS}: run tests_engines/setup_venv.sh")
    out = tmp_path_factory.mktemp("vllm-cases") / "cases.jsonl"
    env = dict(os.environ, PYTHONPATH=str(HERE), TOOLWIRE_VLLM_CASES_OUT=str(out))
    run = subprocess.run([sys.executable, "-m", "pytest", "tests", "-p", "vllm_cases_plugin", "-q", "--runxfail",
                          "-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning", "-o", "addopts="],
                         cwd=VLLM_TESTS, env=env, capture_output=True, text=True)
    if not out.exists():
        pytest.fail("vLLM's test run produced no outcomes:\n" + run.stdout[-3000:] + run.stderr[-3000:])
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]


def family_of(case: dict) -> str:
    return ",".join(case.get("families") or []) or case.get("file_family", "?")


def test_every_case_ends_as_expected(cases):
    assert len(cases) > 700  # the 36 substituted modules of vLLM 0.33.0 hold 765 cases
    wrong = []
    for case in cases:
        cls = expected_class(case["nodeid"])
        ok = case["outcome"] in ("passed", "skipped") if cls is None else case["outcome"] in ("failed", "error")
        if not ok:
            wrong.append(f"{case['nodeid']}: {case['outcome']} (expected {cls or 'pass'}) {case['message']}")
    assert not wrong, "\n".join(wrong)


def test_every_rule_names_a_case(cases):
    """No stale rule: each one still matches a case of the run."""
    names = [(c["nodeid"].split("::", 1)[0].rsplit("/", 1)[-1], c["nodeid"].split("::", 1)[1]) for c in cases]
    stale = [rule for rule in RULES if not any(m == rule[0] and fnmatch.fnmatchcase(n, rule[1]) for m, n in names)]
    assert not stale
    assert {rule[2] for rule in RULES} - {None} <= set(CLASSES)


def test_print_family_table(cases):
    table = collections.defaultdict(lambda: collections.Counter())
    classes = collections.defaultdict(collections.Counter)
    for case in cases:
        family = family_of(case)
        table[family]["run"] += 1
        cls = expected_class(case["nodeid"])
        if case["outcome"] in ("passed", "skipped") and cls is None:
            table[family]["passed"] += 1
        else:
            table[family]["divergent"] += 1
            classes[family][cls] += 1
    lines = ["| toolwire family | cases run | passed | divergent | divergence classes |", "|---|---:|---:|---:|---|"]
    for family in sorted(table):
        row = table[family]
        detail = ", ".join(f"{k} {v}" for k, v in classes[family].most_common())
        lines.append(f"| {family} | {row['run']} | {row['passed']} | {row['divergent']} | {detail or '-'} |")
    print("\n" + "\n".join(lines))
    assert sum(row["run"] for row in table.values()) == len(cases)
