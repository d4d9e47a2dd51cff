"""Test-run reporting: where the reference data comes from (said once, at the top), and, at the end, how many
tests were skipped because that data is absent."""

from __future__ import annotations

from support import GOLDEN, SHARED

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
