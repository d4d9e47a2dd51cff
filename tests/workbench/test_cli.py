"""The ``toolwire`` command line: formats, render, parse, plan, demo, and errors with their codes."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest

import toolwire
from support import REAL, require_shared
from toolwire.workbench.cli import main

REQUEST = {
    "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Paris?"}],
    "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
}
OUTPUT = ('Need weather.</think>\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_weather">\n'
          '<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>\n'
          '</｜DSML｜tool_calls>')


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path):
    (tmp_path / "request.json").write_text(json.dumps(REQUEST), encoding="utf-8")
    (tmp_path / "tools.json").write_text(json.dumps(REQUEST["tools"]), encoding="utf-8")
    (tmp_path / "output.txt").write_text(OUTPUT, encoding="utf-8")
    return tmp_path


def test_formats_lists_every_format_with_its_reference():
    code, out, _ = run("formats")
    lines = out.splitlines()
    assert code == 0 and [line.split()[0] for line in lines] == toolwire.formats()
    assert all(len(line.split(None, 1)) == 2 for line in lines)


def test_render_prints_the_exact_prompt(files):
    code, out, _ = run("render", "--format", "deepseek_v4", str(files / "request.json"), "--thinking")
    expected = toolwire.get_format("deepseek_v4").render(REQUEST["messages"], REQUEST["tools"], thinking=True).text
    assert code == 0 and out == expected + "\n"


def test_render_segments_are_json_lines_that_rebuild_the_prompt(files):
    code, out, _ = run("render", "--format", "qwen3", str(files / "request.json"), "--segments")
    rows = [json.loads(line) for line in out.splitlines()]
    prompt = toolwire.get_format("qwen3").render(REQUEST["messages"], REQUEST["tools"])
    assert code == 0 and "".join(r["text"] for r in rows) == prompt.text
    assert {r["kind"] for r in rows} == {"special", "template", "content"}


def test_parse_prints_the_parsed_output_as_json(files):
    code, out, _ = run("parse", "--format", "deepseek_v4", "--tools", str(files / "tools.json"), "--thinking",
                       str(files / "output.txt"))
    data = json.loads(out)
    assert code == 0
    assert data["reasoning"] == "Need weather." and data["content"] == ""
    assert [(c["name"], c["arguments"], c["status"]) for c in data["tool_calls"]] == \
        [("get_weather", {"city": "Paris"}, "proposed")]


def test_plan_prints_decisions_and_warnings(files):
    conv = {"messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a", "reasoning_content": "r"},
        {"role": "user", "content": "q2"}]}
    (files / "conv.json").write_text(json.dumps(conv), encoding="utf-8")
    code, out, _ = run("plan", "--format", "qwen3", str(files / "conv.json"), "--thinking")
    assert code == 0
    assert "turns start at messages [0, 2]" in out
    assert "message   1: drop" in out and "[reasoning_dropped]" in out


def test_bad_request_exits_2_with_code_index_and_field(files):
    (files / "bad.json").write_text(json.dumps([{"role": "user", "content": "x"}, {"content": "y"}]), encoding="utf-8")
    code, _, err = run("render", "--format", "qwen3", str(files / "bad.json"))
    assert code == 2 and "[invalid_request]" in err and "messages[1].role" in err


def test_unknown_format_exits_2_naming_the_closest(files):
    code, _, err = run("render", "--format", "qwen-3", str(files / "request.json"))
    assert code == 2 and "[unknown_format]" in err and "qwen3" in err


def test_demo_renders_streams_and_validates():
    code, out, _ = run("demo")
    assert code == 0
    assert "== 1. render" in out and "opens_reasoning=True" in out
    assert "[tool_call_started] #0 get_weather" in out
    assert "#0 validated get_weather" in out and "#1 validated search_papers" in out
    assert "finish_reason: tool_calls" in out


# ---------------------------------------------------------------- options added with the error contract

def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0 and capsys.readouterr().out == f"toolwire {toolwire.__version__}\n"


def _every_parser(parser):
    import argparse

    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield from _every_parser(child)


def test_every_option_has_plain_help_text():
    from toolwire.workbench.cli import build_parser

    parsers = list(_every_parser(build_parser()))
    assert {p.prog.split()[-1] for p in parsers} >= {"render", "parse", "plan", "detect", "fidelity", "demo", "formats"}
    for p in parsers:
        for action in p._actions:
            if action.dest in ("help", "command"):
                continue
            assert action.help, (p.prog, action.dest)
        text = p.format_help()
        assert "``" not in text and ":mod:" not in text and ":func:" not in text, p.prog


def test_render_tokenizer_prints_the_ids_the_tokenizer_gives(files):
    """Checked against transformers' own tokenizer on the prompt text (this request spells no marker as text)."""
    require_shared()
    transformers = pytest.importorskip("transformers")
    folder = REAL / "tokenizers" / "Qwen3"
    code, out, _ = run("render", "--format", "qwen3", str(files / "request.json"), "--tokenizer", str(folder))
    prompt = toolwire.get_format("qwen3").render(REQUEST["messages"], REQUEST["tools"]).text
    expected = transformers.AutoTokenizer.from_pretrained(str(folder))(prompt, add_special_tokens=False)["input_ids"]
    assert code == 0 and json.loads(out) == expected
    assert expected.count(151644) == 3  # <|im_start|> for system, user and the generation prompt


def test_render_policy_overrides_the_family_rule(files):
    conv = {"messages": [{"role": "user", "content": "q"},
                         {"role": "assistant", "content": "a", "reasoning_content": "EARLIER-REASONING"},
                         {"role": "user", "content": "q2"}], "options": {"thinking": True}}
    (files / "conv.json").write_text(json.dumps(conv), encoding="utf-8")
    _, default, _ = run("render", "--format", "qwen3", str(files / "conv.json"))
    code, kept, _ = run("render", "--format", "qwen3", str(files / "conv.json"), "--policy", "keep_all")
    assert code == 0 and "EARLIER-REASONING" not in default
    assert "<think>\nEARLIER-REASONING\n</think>" in kept


def test_parse_validate_checks_the_schemas(files):
    code, out, _ = run("parse", "--format", "deepseek_v4", "--tools", str(files / "tools.json"), "--thinking",
                       "--validate", str(files / "output.txt"))
    assert code == 0 and json.loads(out)["tool_calls"][0]["status"] == "validated"
    (files / "bad_output.txt").write_text(OUTPUT.replace('name="city" string="true">Paris', 'name="town" string="true">Paris'),
                                          encoding="utf-8")
    code, out, _ = run("parse", "--format", "deepseek_v4", "--tools", str(files / "tools.json"), "--thinking",
                       "--validate", str(files / "bad_output.txt"))
    call = json.loads(out)["tool_calls"][0]
    assert code == 0 and call["status"] == "rejected" and call["arguments"] == {"town": "Paris"}


def test_parse_validate_needs_tools(files):
    code, _, err = run("parse", "--format", "deepseek_v4", "--validate", str(files / "output.txt"))
    assert code == 2 and err == "toolwire: error [usage]: --validate needs --tools (the definitions to validate against)\n"
