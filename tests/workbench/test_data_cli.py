"""The data-scale commands: parse/render --batch, prefix, eval prompts/score (exit codes, files, summaries)."""

from __future__ import annotations

import json

import pytest

from toolwire.workbench.cli import main

from support import golden, require_shared

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_parse_batch_on_two_workers_with_a_summary(tmp_path, capsys):
    rows = [{"model_output": CALL}, {"model_output": "Just text."}, {"model_output": CALL[:30]}] * 20
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS))
    code = main(["parse", "--format", "qwen3", "--tools", str(tmp_path / "tools.json"), "--batch",
                 write_jsonl(tmp_path / "in.jsonl", rows), "--out", str(tmp_path / "out.jsonl"), "--workers", "2"])
    assert code == 0
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [o["status"] for o in out[:3]] == ["called", "no_call", "truncated"]
    assert out[0]["tool_calls"][0]["status"] == "validated"
    summary = capsys.readouterr().err
    assert "60 rows" in summary and "20 with calls" in summary and "20 truncated" in summary


def test_render_batch(tmp_path):
    require_shared()
    rows = [r for r in golden("render", "qwen3") if "expected_error" not in r and not r["options"]
            and not r["request"].get("tools")][:5]
    assert main(["render", "--format", "qwen3", "--batch",
                 write_jsonl(tmp_path / "in.jsonl", [{"messages": r["request"]["messages"]} for r in rows]),
                 "--out", str(tmp_path / "out.jsonl")]) == 0
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [o["prompt"] for o in out] == [r["expected"] for r in rows]


@pytest.mark.parametrize("argv, words", [
    (["parse", "--format", "qwen3", "--batch", "in.jsonl"], "--batch needs --out"),
    (["parse", "--format", "qwen3"], "needs an output file"),
    (["render", "--format", "qwen3"], "needs a request file"),
    (["parse", "--format", "qwen3", "--batch", "missing.jsonl", "--out", "o.jsonl"], "no such file"),
])
def test_batch_usage_errors_exit_2(argv, words, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.jsonl").write_text('{"model_output": "x"}\n')
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("toolwire: error [") and words in err


def test_prefix_exit_codes(tmp_path, capsys):
    user = {"role": "user", "content": "Weather in Paris?"}
    call = {"role": "assistant", "content": "", "reasoning_content": "Need it.", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]}
    result = {"role": "tool", "tool_call_id": "c1", "content": "18C"}
    answer = {"role": "assistant", "content": "18C.", "reasoning_content": "Say it."}
    first = tmp_path / "a.json"
    second = tmp_path / "b.json"
    first.write_text(json.dumps({"messages": [user], "tools": TOOLS, "options": {"thinking": True}}))
    second.write_text(json.dumps({"messages": [user, call, result], "tools": TOOLS, "options": {"thinking": True}}))
    assert main(["prefix", "--format", "qwen3", str(first), str(second)]) == 0
    assert "extends" in capsys.readouterr().out
    first.write_text(json.dumps({"messages": [user, call, result, answer], "tools": TOOLS,
                                 "options": {"thinking": True, "add_generation_prompt": False}}))
    second.write_text(json.dumps({"messages": [user, call, result, answer, {"role": "user", "content": "More?"}],
                                  "tools": TOOLS, "options": {"thinking": True}}))
    assert main(["prefix", "--format", "qwen3", "--json", str(first), str(second)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert not report["extends"] and "drops earlier reasoning" in report["why"]


def test_eval_prompts_then_score(tmp_path, capsys):
    suite = write_jsonl(tmp_path / "suite.jsonl", [
        {"id": "a", "messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": TOOLS,
         "expected": [{"name": "get_weather", "arguments": {"city": ["Paris"]}}]},
        {"id": "b", "messages": [{"role": "user", "content": "Hi"}], "tools": TOOLS, "expected": "no_call"}])
    assert main(["eval", "prompts", "--format", "qwen3", "--suite", suite, "--out", str(tmp_path / "p.jsonl"),
                 "--no-thinking"]) == 0
    prompts = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert [p["id"] for p in prompts] == ["a", "b"] and prompts[0]["prompt"].endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert main(["eval", "prompts", "--format", "qwen3", "--suite", suite, "--out", str(tmp_path / "d.jsonl")]) == 0
    default = json.loads((tmp_path / "d.jsonl").read_text().splitlines()[0])["prompt"]
    assert default.endswith("<|im_start|>assistant\n")  # the template's default: thinking on
    outputs = write_jsonl(tmp_path / "o.jsonl", [{"id": "a", "output": CALL}, {"id": "b", "output": CALL}])
    assert main(["eval", "score", "--format", "qwen3", "--suite", suite, "--outputs", outputs,
                 "--html", str(tmp_path / "r.html"), "--json", str(tmp_path / "r.json")]) == 0
    table = capsys.readouterr().out
    assert "overall" in table and "50.0%" in table
    scores = json.loads((tmp_path / "r.json").read_text())
    assert scores["overall"]["false_call_rate"] == 1.0
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    (tmp_path / "bad.jsonl").write_text("not json\n")
    assert main(["eval", "score", "--format", "qwen3", "--suite", suite, "--outputs", str(tmp_path / "bad.jsonl")]) == 2
