"""First use without surprises (issue 35): stdin reads like a file, no stray transformers line, ``parse`` takes
``Limits`` from the command line, counts are spelled right, and every feature that needs an extra names it
before doing any work (a package made absent here with ``sys.modules[name] = None``, as when not installed)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from support import REAL, require_shared
from toolwire.errors import MissingExtra
from toolwire.workbench import cli

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def process(*argv: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "toolwire.workbench.cli", *argv], input=stdin, capture_output=True,
                          timeout=300)


# ---------------------------------------------------------------- stdin, stray output

def test_binary_bytes_on_stdin_are_not_utf8_as_from_a_file(tmp_path):
    data = b"ab\xff\xfecd"
    (tmp_path / "out.txt").write_bytes(data)
    from_file = process("parse", "--format", "qwen3", str(tmp_path / "out.txt"))
    from_stdin = process("parse", "--format", "qwen3", "-", stdin=data)
    for proc in (from_file, from_stdin):
        assert proc.returncode == 2 and proc.stdout == b""
        assert proc.stderr.decode().startswith("toolwire: error [not_utf8]: model output ")
    assert b"on stdin: not UTF-8 text (byte 2)" in from_stdin.stderr


def test_stdin_text_reads_as_a_file_does(tmp_path):
    text = "caf\u00e9 \u2014 line one\r\nline two"
    (tmp_path / "out.txt").write_bytes(text.encode("utf-8"))
    from_file = process("parse", "--format", "qwen3", str(tmp_path / "out.txt"))
    from_stdin = process("parse", "--format", "qwen3", "-", stdin=text.encode("utf-8"))
    assert from_file.returncode == from_stdin.returncode == 0
    assert json.loads(from_stdin.stdout)["content"] == json.loads(from_file.stdout)["content"]


def test_tokenizer_commands_print_no_pytorch_advice(tmp_path):
    require_shared()
    pytest.importorskip("transformers")
    (tmp_path / "r.json").write_text(json.dumps([{"role": "user", "content": "hi"}]))
    proc = process("render", "--format", "qwen3", str(tmp_path / "r.json"), "--tokenizer",
                   str(REAL / "tokenizers" / "Qwen3"))
    assert proc.returncode == 0 and json.loads(proc.stdout)[:2] == [151644, 872]
    assert b"PyTorch" not in proc.stderr and proc.stderr == b""


# ---------------------------------------------------------------- Limits from the command line

def test_parse_takes_limits(tmp_path, capsys):
    (tmp_path / "o.txt").write_text(CALL + "\n" + CALL.replace("Paris", "Rome"))
    code, out, _ = run(capsys, "parse", "--format", "qwen3", tmp_path / "o.txt")
    assert code == 0 and [c["status"] for c in json.loads(out)["tool_calls"]] == ["proposed", "proposed"]
    code, out, _ = run(capsys, "parse", "--format", "qwen3", "--max-calls", "1", tmp_path / "o.txt")
    parsed = json.loads(out)
    assert code == 0 and [c["arguments"] for c in parsed["tool_calls"]] == [{"city": "Paris"}]
    (past,) = parsed["diagnostics"]                         # the call past the limit: kept as text, not built
    assert past["code"] == "too_large" and "Rome" in past["raw"] and "max_calls=1" in past["message"]
    (tmp_path / "deep.txt").write_text('<tool_call>\n{"name": "get_weather", "arguments": {"city": [[["x"]]]}}\n'
                                       "</tool_call>")
    code, out, _ = run(capsys, "parse", "--format", "qwen3", "--max-depth", "3", tmp_path / "deep.txt")
    assert json.loads(out)["tool_calls"][0]["status"] == "rejected"
    code, out, _ = run(capsys, "parse", "--format", "qwen3", "--max-depth", "4", tmp_path / "deep.txt")
    assert json.loads(out)["tool_calls"][0]["status"] == "proposed"


def test_batch_parse_takes_limits_through_validation(tmp_path, capsys):
    pytest.importorskip("jsonschema")
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS))
    (tmp_path / "in.jsonl").write_text(json.dumps({"model_output": CALL + CALL}) + "\n")
    code, _, err = run(capsys, "parse", "--format", "qwen3", "--tools", tmp_path / "tools.json", "--max-calls", "1",
                       "--batch", tmp_path / "in.jsonl", "--out", tmp_path / "out.jsonl")
    row = json.loads((tmp_path / "out.jsonl").read_text())
    assert code == 0 and [c["status"] for c in row["tool_calls"]] == ["validated"]
    assert [d["code"] for d in row["diagnostics"]] == ["too_large"]
    (tmp_path / "deep.jsonl").write_text(json.dumps({"model_output": CALL.replace('"Paris"', '[["Paris"]]')}) + "\n")
    run(capsys, "parse", "--format", "qwen3", "--tools", tmp_path / "tools.json", "--max-depth", "2", "--batch",
        tmp_path / "deep.jsonl", "--out", tmp_path / "deep.out.jsonl")
    call = json.loads((tmp_path / "deep.out.jsonl").read_text())["tool_calls"][0]
    assert call["status"] == "rejected" and "too_large" in call["error_codes"]


@pytest.mark.parametrize("value", ["0", "-3", "many"])
def test_a_bad_limit_is_a_usage_error(value, capsys, tmp_path):
    (tmp_path / "o.txt").write_text("hi")
    code, out, err = run(capsys, "parse", "--format", "qwen3", "--max-calls", value, tmp_path / "o.txt")
    assert code == 2 and out == "" and err.startswith("toolwire: error [usage]: argument --max-calls")


# ---------------------------------------------------------------- plurals

def test_one_scenario_and_one_row_are_singular(tmp_path, capsys):
    scenario = {"id": "only", "messages": [{"role": "user", "content": "hi"}]}
    (tmp_path / "c.jsonl").write_text(json.dumps(scenario) + "\n")
    (tmp_path / "edited.jinja").write_text("{% for m in messages %}{{ m.content }}{% endfor %}")
    code, out, _ = run(capsys, "fidelity", "--format", "qwen35", "--template", tmp_path / "edited.jinja",
                       "--no-builtin", "--corpus", tmp_path / "c.jsonl", "--date", "2025-03-14")
    assert code == 1 and "(1 scenario, tokenizer" in out and "result: DIFFERENT in 1 scenario: only" in out
    assert "scenarios" not in out and "scenario(s)" not in out
    (tmp_path / "in.jsonl").write_text(json.dumps({"model_output": "hi"}) + "\n")
    code, _, err = run(capsys, "parse", "--format", "qwen3", "--batch", tmp_path / "in.jsonl", "--out",
                       tmp_path / "out.jsonl")
    assert code == 0 and err.startswith("toolwire parse: 1 row in ") and "0 errors" in err


# ---------------------------------------------------------------- extras named before any work

def absent(monkeypatch, *modules: str) -> None:
    for name in modules:
        for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            monkeypatch.delitem(sys.modules, loaded)
        monkeypatch.setitem(sys.modules, name, None)


def test_o200k_without_openai_harmony_names_the_harmony_extra(monkeypatch, capsys):
    """Before: tokenizer_mismatch ('use the model's own tokenizer', which it was)."""
    require_shared()
    pytest.importorskip("tiktoken")
    from toolwire.tokenize import load_tokenizer

    absent(monkeypatch, "openai_harmony")
    with pytest.raises(MissingExtra) as err:
        load_tokenizer(str(REAL / "tokenizers" / "o200k_base"))
    assert "openai_harmony" in str(err.value) and "toolwire[harmony]" in str(err.value)
    code, out, err_text = run(capsys, "fidelity", "--format", "gpt_oss", "--template",
                              REAL / "templates" / "gpt-oss-20b.jinja", "--tokenizer",
                              REAL / "tokenizers" / "o200k_base")
    assert code == 2 and out == ""
    assert err_text.startswith("toolwire: error [missing_extra]: ") and "toolwire[harmony]" in err_text
    assert "tokenizer_mismatch" not in err_text


def test_a_vocab_folder_without_transformers_names_the_hf_extra(monkeypatch):
    require_shared()
    from toolwire.tokenize import load_tokenizer

    absent(monkeypatch, "transformers")
    with pytest.raises(MissingExtra) as err:
        load_tokenizer(str(REAL / "tokenizers" / "Qwen3"))       # vocab.json + merges.txt: transformers reads it
    assert "transformers" in str(err.value) and "toolwire[hf]" in str(err.value)


def test_fidelity_html_names_the_report_extra_before_comparing(monkeypatch, capsys, tmp_path):
    require_shared()
    absent(monkeypatch, "lxml")
    code, out, err = run(capsys, "fidelity", "--template", REAL / "templates" / "Qwen3.5-4B.jinja", "--html",
                         tmp_path / "r.html")
    assert code == 2 and out == "" and not (tmp_path / "r.html").exists()
    assert err == "toolwire: error [missing_extra]: --html needs the lxml package: pip install 'toolwire[report]'\n"


def test_validate_names_the_schema_extra_before_parsing(monkeypatch, capsys, tmp_path):
    absent(monkeypatch, "jsonschema")
    (tmp_path / "o.txt").write_text(CALL)
    (tmp_path / "t.json").write_text(json.dumps(TOOLS))
    code, out, err = run(capsys, "parse", "--format", "qwen3", "--tools", tmp_path / "t.json", "--validate",
                         tmp_path / "o.txt")
    assert code == 2 and out == "" and "toolwire[schema]" in err and err.startswith("toolwire: error [missing_extra]")
    (tmp_path / "in.jsonl").write_text(json.dumps({"model_output": CALL}) + "\n")
    code, _, err = run(capsys, "parse", "--format", "qwen3", "--tools", tmp_path / "t.json", "--batch",
                       tmp_path / "in.jsonl", "--out", tmp_path / "out.jsonl")
    assert code == 2 and "toolwire[schema]" in err and not (tmp_path / "out.jsonl").exists()


def test_eval_html_names_the_eval_extra_before_scoring(monkeypatch, capsys, tmp_path):
    absent(monkeypatch, "matplotlib")
    suite = tmp_path / "suite.jsonl"
    suite.write_text(json.dumps({"id": "a", "messages": [{"role": "user", "content": "Hi"}], "tools": TOOLS,
                                 "expected": "no_call"}) + "\n")
    (tmp_path / "o.jsonl").write_text(json.dumps({"id": "a", "output": "Hello"}) + "\n")
    code, out, err = run(capsys, "eval", "score", "--format", "qwen3", "--suite", suite, "--outputs",
                         tmp_path / "o.jsonl", "--html", tmp_path / "r.html")
    assert code == 2 and out == "" and not (tmp_path / "r.html").exists()
    assert err == "toolwire: error [missing_extra]: --html needs the matplotlib package: pip install 'toolwire[eval]'\n"
