"""Test-run reporting: where the reference data comes from (said once, at the top), and, at the end, how many
tests were skipped because that data is absent.

Load independence: no verdict may depend on how busy the machine is. Here, before any test module is imported,
hypothesis gets a profile without deadlines and without the ``too_slow`` health check (both wall-time verdicts;
a test's explicit ``@settings`` inherits them, and lists ``too_slow`` where it sets its own health checks), and
Ray's start-up waits are made generous (a local cluster starting on a loaded machine is slow, not broken).
Timings and their targets live in ``bench/``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

# tests/ on sys.path: the helper package ``support``, the fuzz suite ``fuzz``, and test modules a few others import
# by their path under tests/ (``from tokens.test_token_input import feed_ids``). Done here rather than with
# pytest's ``pythonpath`` setting, which would apply to tests_engines/ too (same pyproject.toml) and put this
# conftest.py ahead of tests_engines/conftest.py there. Layout: tests/README.md.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from support import GOLDEN, SHARED  # noqa: E402

settings.register_profile("toolwire", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("TOOLWIRE_HYPOTHESIS_PROFILE", "toolwire"))

RAY_STARTUP = {  # seconds Ray waits for its own processes before giving up (defaults: 30 to 60)
    "RAY_gcs_server_port_wait_time_s": "600",
    "RAY_worker_register_timeout_seconds": "600",
    "RAY_gcs_rpc_server_connect_timeout_s": "600",
    "RAY_gcs_server_request_timeout_seconds": "600",
    "RAY_DASHBOARD_STARTUP_TIMEOUT_S": "600",
}
for _name, _seconds in RAY_STARTUP.items():
    os.environ.setdefault(_name, _seconds)  # inherited by the subprocesses that start Ray (README blocks)

def pytest_sessionstart(session):
    """One line at the top, also under ``-q``: where golden vectors, templates and tokenizers come from."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    if GOLDEN.is_dir():
        reporter.write_line(f"toolwire reference data: {SHARED} (golden vectors, real templates and tokenizers)")
    else:
        reporter.write_line(f"toolwire reference data: NOT FOUND at {SHARED} (set TOOLWIRE_SHARED, or put shared/ "
                            "beside the repository): every test that needs golden vectors, real templates or "
                            "tokenizers is SKIPPED", yellow=True)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    skipped = terminalreporter.stats.get("skipped", [])
    if skipped and not GOLDEN.is_dir():
        terminalreporter.write_sep("-", f"{len(skipped)} tests skipped: no reference data at {SHARED}")


def pytest_configure(config):
    config.addinivalue_line("markers", "extras(*names): the test needs these toolwire extras (README blocks)")
