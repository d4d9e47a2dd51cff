"""The command line's error contract: every bad input exits 2 with ``toolwire: error [code]: ...`` naming the
file or field, never a traceback; a fidelity difference is 1, an internal error 3. One test per case seen."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import toolwire
from support import REAL, require_shared
from toolwire.workbench import cli

REQUEST = {"messages": [{"role": "user", "content": "Weather in Paris?"}],
           "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {
               "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]}
QWEN3_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def run_process(*argv: str, stdin: str | None = None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "toolwire.workbench.cli", *argv], input=stdin, capture_output=True,
                          text=True, cwd=cwd, timeout=900)  # a hang guard


def one_error(err: str, code: str) -> str:
    """The single error line, checked for its shape; returns its message."""
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    prefix = f"toolwire: error [{code}]: "
    assert lines[0].startswith(prefix), err
    return lines[0][len(prefix):]


@pytest.fixture
def files(tmp_path):
    (tmp_path / "request.json").write_text(json.dumps(REQUEST), encoding="utf-8")
    (tmp_path / "broken.json").write_text('{"messages": [\n  {"role": "user",, "content": "x"}]}', encoding="utf-8")
    (tmp_path / "output.txt").write_text(QWEN3_CALL, encoding="utf-8")
    (tmp_path / "tools.json").write_text(json.dumps(REQUEST["tools"]), encoding="utf-8")
    return tmp_path


# ---------------------------------------------------------------- missing and malformed files

@pytest.mark.parametrize("command", [
    ["render", "--format", "qwen3"], ["parse", "--format", "qwen3"], ["plan", "--format", "qwen3"]])
def test_missing_file_names_the_file(command, files, capsys):
    missing = str(files / "nowhere.json")
    code, out, err = run(capsys, *command, missing)
    assert code == 2 and out == ""
    assert one_error(err, "file_not_found").endswith(f"{missing}: no such file")


@pytest.mark.parametrize("command", [["render", "--format", "qwen3"], ["plan", "--format", "qwen3"]])
def test_malformed_json_names_the_file_and_line(command, files, capsys):
    code, _, err = run(capsys, *command, str(files / "broken.json"))
    message = one_error(err, "invalid_json")
    assert code == 2 and str(files / "broken.json") in message and "line 2 column 19" in message


def test_missing_tools_file_of_parse_names_it(files, capsys):
    code, _, err = run(capsys, "parse", "--format", "qwen3", "--tools", str(files / "no-tools.json"),
                       str(files / "output.txt"))
    assert code == 2 and one_error(err, "file_not_found") == f"tools {files / 'no-tools.json'}: no such file"


@pytest.mark.parametrize("value, kind", [({"name": "get_weather"}, "an object"), ("get_weather", "a string"), (3, "a number")])
def test_tools_holding_a_non_list(value, kind, files, capsys):
    (files / "odd.json").write_text(json.dumps(value), encoding="utf-8")
    code, _, err = run(capsys, "parse", "--format", "qwen3", "--tools", str(files / "odd.json"), str(files / "output.txt"))
    message = one_error(err, "invalid_tools")
    assert code == 2 and str(files / "odd.json") in message and message.endswith(f"got {kind}")


def test_request_whose_messages_is_not_a_list(files, capsys):
    (files / "odd.json").write_text(json.dumps({"messages": "hi"}), encoding="utf-8")
    code, _, err = run(capsys, "render", "--format", "qwen3", str(files / "odd.json"))
    assert code == 2 and one_error(err, "invalid_request").endswith("messages must be a list, got a string")


def test_template_with_a_jinja_syntax_error(files, capsys):
    bad = files / "bad.jinja"
    bad.write_text("{{ bos_token }}\n{% for m in messages %}{{ m.content }}\n", encoding="utf-8")
    code, out, err = run(capsys, "fidelity", "--format", "qwen3", "--template", str(bad))
    message = one_error(err, "template_syntax")
    assert code == 2 and out == ""
    assert message.startswith(f"template {bad}, line 2: Unexpected end of template")


# ---------------------------------------------------------------- unknown names and bad options

def test_plan_on_an_unknown_format(files, capsys):
    code, out, err = run(capsys, "plan", "--format", "qwen9", str(files / "request.json"))
    assert code == 2 and out == ""
    assert one_error(err, "unknown_format").startswith("unknown format 'qwen9'; did you mean")


def test_demo_for_a_format_without_bundled_output_refuses_clearly(capsys):
    code, out, err = run(capsys, "demo", "--format", "glm45")
    assert code == 2 and out == ""
    assert one_error(err, "no_demo_output") == \
        "--format glm45: the demo has a bundled model output only for deepseek_v4, qwen3"


def test_demo_runs_for_each_bundled_format(capsys):
    code, out, _ = run(capsys, "demo", "--format", "qwen3")
    assert code == 0
    assert "#0 validated get_weather" in out and "#1 validated search_papers" in out
    assert "finish_reason: tool_calls" in out and "reasoning: 143 chars" in out


@pytest.mark.parametrize("delay, why", [("-1", "must be 0 or more, got -1"), ("soon", "not a number: 'soon'"),
                                        ("nan", "must be 0 or more, got nan")])
def test_demo_delay_must_be_a_non_negative_number(delay, why, capsys):
    code, _, err = run(capsys, "demo", "--delay", delay)
    assert code == 2 and why in one_error(err, "usage") and "--delay" in err


@pytest.mark.parametrize("argv, fragment", [
    (["render", "request.json"], "the following arguments are required: --format"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    ([], "the following arguments are required: COMMAND"),
])
def test_usage_errors_are_one_line_not_a_usage_dump(argv, fragment, capsys):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and fragment in one_error(err, "usage")


def test_unknown_render_option_in_the_request_names_it(files, capsys):
    (files / "opt.json").write_text(json.dumps({**REQUEST, "options": {"enable_thinkin": True}}), encoding="utf-8")
    code, _, err = run(capsys, "render", "--format", "qwen3", str(files / "opt.json"))
    assert code == 2 and "enable_thinkin" in one_error(err, "invalid_option")


# ---------------------------------------------------------------- streams: stdin, stdout, broken pipes

def test_plan_reads_stdin():
    conv = {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a",
                                                            "reasoning_content": "r"}, {"role": "user", "content": "q2"}]}
    proc = run_process("plan", "--format", "qwen3", "--thinking", "-", stdin=json.dumps(conv))
    assert proc.returncode == 0, proc.stderr
    assert "turns start at messages [0, 2]" in proc.stdout and "message   1: drop" in proc.stdout


def test_parse_into_a_closed_pipe_exits_quietly(files):
    """``toolwire parse ... | head -c 10``: the reader goes away early; no BrokenPipeError traceback."""
    big = files / "big.txt"
    big.write_text("x" * 2_000_000, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "toolwire.workbench.cli", "parse", "--format", "qwen3", str(big)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=900) == 0  # the timeout: a hang guard, not a time bound
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_fidelity_json_to_stdout_not_to_a_file_named_dash(tmp_path):
    require_shared()
    proc = run_process("fidelity", "--format", "qwen35", "--template", str(REAL / "templates" / "Qwen3.5-4B.jinja"),
                       "--date", "2025-03-14", "--json", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["format"] == "qwen35" and report["ok"] is True and len(report["scenarios"]) == 26
    assert "result: ALL MATCH" in proc.stderr
    assert not (tmp_path / "-").exists()


# ---------------------------------------------------------------- internal errors and missing extras

def test_internal_error_exits_3_without_a_traceback(monkeypatch, capsys):
    def broken(args):
        raise RuntimeError("boom")

    monkeypatch.setattr(cli, "_cmd_formats", broken)
    code, _, err = run(capsys, "formats")
    assert code == 3 and one_error(err, "internal").startswith("RuntimeError: boom (this is a toolwire bug")


def test_missing_extra_names_the_extra_to_install(monkeypatch, files, capsys):
    import toolwire.tokenize

    def no_transformers(path):
        raise ModuleNotFoundError("No module named 'transformers'", name="transformers")

    monkeypatch.setattr(toolwire.tokenize, "load_tokenizer", no_transformers)
    code, _, err = run(capsys, "render", "--format", "qwen3", str(files / "request.json"), "--tokenizer", "somewhere")
    assert code == 2
    assert one_error(err, "missing_extra") == "--tokenizer needs the transformers package: pip install 'toolwire[hf]'"


def test_no_traceback_for_any_bad_invocation(files):
    """The same contract seen from outside the process, for a spread of bad inputs."""
    cases = [
        ["render", "--format", "qwen3", str(files / "missing.json")],
        ["render", "--format", "qwen3", str(files / "broken.json")],
        ["parse", "--format", "nope", str(files / "output.txt")],
        ["plan", "--format", "qwen3", str(files)],
        ["detect", str(files / "missing.jinja")],
        ["fidelity", "--template", str(files / "request.json")],
        ["demo", "--delay", "-1"],
    ]
    for argv in cases:
        proc = run_process(*argv)
        assert proc.returncode == 2, (argv, proc.stderr)
        assert "Traceback" not in proc.stderr and proc.stderr.startswith("toolwire: error ["), (argv, proc.stderr)
        assert proc.stdout == ""
