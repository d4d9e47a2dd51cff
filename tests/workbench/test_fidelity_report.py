"""The HTML report of ``toolwire fidelity``: the filter, aligned side-by-side diffs with visible whitespace,
the token table around the first token mismatch, control tokens shaded alike on both sides; valid HTML
(strict lxml parse, always) and rendered by a real browser (headless Chromium, when installed)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from lxml import etree
from lxml import html as lxml_html

import toolwire
from support import REAL, require_shared
from toolwire.workbench import cli

TEMPLATES = REAL / "templates"
TOKENIZERS = REAL / "tokenizers"


def need(fmt: str) -> None:
    require_shared()
    if fmt not in toolwire.formats():
        pytest.skip(f"format {fmt} is not built yet")


def report(tmp_path, capsys, template, fmt, *extra):
    target = tmp_path / f"{fmt}.html"
    code = cli.main(["fidelity", "--date", "2025-03-14", "--format", fmt, "--template", str(template),
                     "--html", str(target), *extra])
    capsys.readouterr()
    return code, target


@pytest.fixture
def drifted_report(tmp_path, capsys):
    """Qwen3.5's template with one space added to its generation prompt: bytes and tokens differ."""
    need("qwen35")
    source = (TEMPLATES / "Qwen3.5-4B.jinja").read_text("utf-8")
    original = "{{- '<|im_start|>assistant\\n' }}"
    assert source.count(original) == 1
    drifted = tmp_path / "Qwen3.5-4B-drifted.jinja"
    drifted.write_text(source.replace(original, "{{- '<|im_start|>assistant \\n' }}"), "utf-8")
    code, path = report(tmp_path, capsys, drifted, "qwen35", "--tokenizer", str(TOKENIZERS / "Qwen3"))
    assert code == 1
    return path


def strict(path):
    """Parse without recovery: a malformed document raises."""
    return etree.fromstring(path.read_bytes(), etree.HTMLParser(recover=False, no_network=True))


def test_report_is_well_formed_html_with_working_links(drifted_report):
    root = strict(drifted_report)
    ids = root.xpath("//@id")
    assert len(ids) == len(set(ids))
    targets = {h[1:] for h in root.xpath("//a/@href") if h.startswith("#")}
    assert targets and targets <= set(ids)
    assert root.xpath("//meta/@charset") == ["utf-8"]


def test_filter_shows_only_differences_when_there_are_some(drifted_report, tmp_path, capsys):
    doc = lxml_html.fromstring(drifted_report.read_bytes())
    toggle = doc.get_element_by_id("only-differing")
    assert toggle.get("type") == "checkbox" and toggle.get("checked") is not None
    assert "#only-differing:checked ~ main section.same" in doc.xpath("//style")[0].text
    assert doc.get_element_by_id("tools_declared").get("class") == "differs"  # every prompt ends with the edit
    assert doc.get_element_by_id("plain_chat").get("class") == "differs"
    # a run where everything matches shows every scenario by default
    _, clean = report(tmp_path, capsys, TEMPLATES / "Qwen3.5-4B.jinja", "qwen35")
    doc = lxml_html.fromstring(clean.read_bytes())
    assert doc.get_element_by_id("only-differing").get("checked") is None
    assert {s.get("class") for s in doc.xpath("//section")} == {"same"}


def test_token_table_around_the_first_mismatch(drifted_report):
    doc = lxml_html.fromstring(drifted_report.read_bytes())
    table = doc.get_element_by_id("plain_chat").xpath(".//table[@class='tok']")[0]
    header = [th.text for th in table.xpath(".//tr[1]/th")]
    assert header == ["#", "native id", "piece", "kind", "template id", "piece", "kind"]
    rows = [[td.text_content() for td in tr.xpath("./td")] for tr in table.xpath(".//tr[td]")]
    first = table.xpath(".//tr[@class='first']/td")
    first = [td.text_content() for td in first]
    assert first[1] != first[4]  # the ids differ there
    assert all(r[1] == r[4] for r in rows[:rows.index(first)])  # and agree before it
    # <|im_start|> (id 151644 in the Qwen vocabulary) before "assistant" is a control token on both sides
    start = next(r for r in reversed(rows[:rows.index(first)]) if r[1] == "151644")
    assert start[2] == '"<|im_start|>"' and start[3] == start[6] == "control"
    # "\n" (198) natively, " \n" (715) in the drifted template: plain text on both sides
    assert first[1:] == ["198", '"\\n"', "text", "715", '" \\n"', "text"]
    legend = doc.xpath("//p[@class='legend']")[0].text_content()
    assert "control-token text" in legend and "documented divergence" in legend


def test_control_tokens_shaded_alike_on_both_sides_dsml(tmp_path, capsys):
    """DeepSeek V4's tool prompt spells DSML example markup as text: it is shaded on both sides or neither."""
    need("deepseek_v4")
    code, path = report(tmp_path, capsys, TEMPLATES / "DeepSeek-V4-llamacpp.jinja", "deepseek_v4",
                        "--bos-token", "<｜begin▁of▁sentence｜>")
    assert code in (0, 1)
    doc = lxml_html.fromstring(path.read_bytes())
    section = doc.get_element_by_id("tools_declared")
    for row in section.xpath(".//table[@class='side']//tr[td]"):
        left, right = row.xpath("./td/pre")
        assert [s.text for s in left.xpath(".//span[@class='sp']")] == \
            [s.text for s in right.xpath(".//span[@class='sp']")]
    shaded = [s.text for s in section.xpath(".//table[@class='side']//td[2]//span[@class='sp']")]
    assert "<｜DSML｜invoke name=\"" in shaded and "<｜User｜>" in shaded


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed (apt-get install chromium)")
def test_report_renders_in_headless_chromium(drifted_report, tmp_path):
    """The browser loads the report (its DOM after rendering holds every section) and draws it (a PNG)."""
    base = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(base + ["--dump-dom", drifted_report.as_uri()], capture_output=True, text=True,
                         timeout=900)  # a hang guard, not a time bound
    assert dom.returncode == 0, dom.stderr[-2000:]
    rendered = lxml_html.fromstring(dom.stdout)
    assert rendered.get_element_by_id("single_call_result") is not None
    assert len(rendered.xpath("//section")) == 26
    shot = tmp_path / "report.png"
    proc = subprocess.run(base + [f"--screenshot={shot}", "--window-size=1400,2000", drifted_report.as_uri()],
                          capture_output=True, text=True, timeout=900)  # a hang guard
    assert proc.returncode == 0 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
