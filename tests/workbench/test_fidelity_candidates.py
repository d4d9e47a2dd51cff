"""``toolwire fidelity`` without ``--format`` compares every format whose markup the template shares and keeps the
best, saying which and why; family options come from the command line (``--option version=4.0``) or from the
fingerprinted revision; and across every real template, none that ``detect`` calls official is DIFFERENT."""

from __future__ import annotations

import json

import pytest

from support import REAL, require_shared
from toolwire.workbench import cli
from toolwire.workbench.detect import detect_path
from toolwire.workbench.fidelity import parse_options
from toolwire.workbench.inputs import BadInput

TEMPLATES = REAL / "templates"
DATE = "2025-03-14"


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_without_format_every_candidate_is_compared_and_the_best_kept(tmp_path, capsys):
    """Qwen3-0.6B's first template: markup shared by five formats; detect's first guess (hermes3) is DIFFERENT in
    25 of 26, qwen3 matches all 26."""
    require_shared()
    template = TEMPLATES / "Qwen3-0.6B-initial.jinja"
    found = detect_path(str(template))
    assert found.format == "hermes3" and "qwen3" in found.candidates and len(found.candidates) == 5
    code, out, err = run(capsys, "fidelity", "--template", template, "--date", DATE, "--json", tmp_path / "r.json")
    assert code == 0 and out.rstrip().endswith("result: ALL MATCH")
    assert err.startswith("toolwire fidelity: Qwen3-0.6B-initial.jinja fits 5 formats by its markup; compared each "
                          "and chose qwen3: 26 of 26 scenarios match (the others: ")
    report = json.loads((tmp_path / "r.json").read_text("utf-8"))
    assert report["format"] == "qwen3" and report["selection"]["chosen"] == "qwen3"
    assert set(report["selection"]["candidates"]) == set(found.candidates)
    assert report["selection"]["candidates"]["qwen3"] == 26 and report["selection"]["candidates"]["hermes3"] < 26


def test_with_format_only_that_format_is_compared(capsys):
    require_shared()
    code, out, err = run(capsys, "fidelity", "--template", TEMPLATES / "Qwen3-0.6B-initial.jinja", "--format",
                         "hermes3", "--date", DATE, "--details", "0")
    assert code == 1 and err == "" and "hermes3 vs Qwen3-0.6B-initial.jinja" in out


def test_granite_40_from_the_command_line(capsys):
    """Granite 4.0 is granite4 with version="4.0": given with --option, or found from the fingerprint."""
    require_shared()
    template = TEMPLATES / "Granite-4.0.jinja"
    code, out, _ = run(capsys, "fidelity", "--template", template, "--format", "granite4", "--date", DATE,
                       "--details", "0")
    assert code == 1 and "DIFFERENT" in out                         # 4.1's default system turn
    code, out, _ = run(capsys, "fidelity", "--template", template, "--format", "granite4", "--option",
                       "version=4.0", "--date", DATE)
    assert code == 0 and out.rstrip().endswith("result: ALL MATCH")
    code, out, err = run(capsys, "fidelity", "--template", template, "--date", DATE)
    assert code == 0 and out.rstrip().endswith("result: ALL MATCH")
    assert err == "toolwire fidelity: Granite-4.0.jinja detected as granite4 with version='4.0' (fingerprint)\n"


@pytest.mark.parametrize("items, expected", [
    (["version=4.0"], {"version": "4.0"}),
    (["n=3", "flag=true", "off=false", "none=null"], {"n": 3, "flag": True, "off": False, "none": None}),
    (['docs=[{"title": "a"}]', 'name="x y"', "text=a=b"], {"docs": [{"title": "a"}], "name": "x y", "text": "a=b"}),
    (["empty="], {"empty": ""}),
])
def test_option_values(items, expected):
    assert parse_options(items) == expected


@pytest.mark.parametrize("item", ["version", "=4.0", "docs=[1,"])
def test_a_bad_option_is_a_usage_error(item):
    with pytest.raises(BadInput) as err:
        parse_options([item])
    assert err.value.code == "usage" and item in str(err.value)


@pytest.mark.parametrize("text, code", [("", "empty_template"), ("{% if %}", "template_syntax")])
def test_fidelity_on_a_file_that_is_not_a_template(tmp_path, capsys, text, code):
    (tmp_path / "t.jinja").write_text(text, encoding="utf-8")
    exit_code, out, err = run(capsys, "fidelity", "--format", "qwen3", "--template", tmp_path / "t.jinja")
    assert exit_code == 2 and out == "" and err.startswith(f"toolwire: error [{code}]: ")


def _every_template():
    if not TEMPLATES.is_dir():
        return []
    return sorted(TEMPLATES.glob("*.jinja")) + sorted((TEMPLATES / "extra").glob("*.jinja"))


@pytest.mark.parametrize("template", _every_template(), ids=lambda p: p.name)
def test_no_template_called_official_is_different(template, capsys):
    """The closing table's invariant: a template detect names as an official revision (by fingerprint) gets ALL
    MATCH or documented divergences from fidelity; any other template is not called official."""
    require_shared()
    found = detect_path(str(template))
    if found.how != "fingerprint":
        assert found.revision is None or found.unregistered
        return
    code, out, err = run(capsys, "fidelity", "--template", template, "--date", DATE, "--details", "3")
    assert code == 0, out[-2000:] + err
    assert f"detected as {found.format}" in err and "(fingerprint)" in err
