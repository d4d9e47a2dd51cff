"""``toolwire fidelity``: byte, token and round-trip checks, drift detection, reports and exit codes.

Verdicts are checked against an independent oracle: transformers' own ``render_jinja_template`` (fed as
``apply_chat_template`` feeds it) decides which scenarios a template renders differently.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lxml import html as lxml_html

import toolwire
from support import REAL, require_shared
from toolwire.workbench import cli
from toolwire.workbench.fidelity import (
    Comparer, Scenario, builtin_corpus_path, describe_difference, first_difference, load_scenarios,
)
from toolwire.templates.jinja import ChatTemplate, decode_arguments, template_variables

TEMPLATES = REAL / "templates"
TOKENIZERS = REAL / "tokenizers"
DATE = "2025-03-14"
SCENARIOS = load_scenarios(builtin_corpus_path())


def need(fmt: str) -> None:
    require_shared()
    if fmt not in toolwire.formats():
        pytest.skip(f"format {fmt} is not built yet")


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(["fidelity", "--date", DATE, *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def run_json(tmp_path, capsys, *argv: str) -> tuple[int, dict]:
    target = tmp_path / "result.json"
    code, _, _ = run_cli(capsys, *argv, "--json", str(target))
    return code, json.loads(target.read_text("utf-8"))


def differing(report: dict, check: str | None = None) -> set[str]:
    return {s["id"] for s in report["scenarios"]
            if (not s["matches"] if check is None else s[check]["status"] == "differ")}


# ---------------------------------------------------------------- the oracle

def oracle_render(source: str, scenario: Scenario, special: dict, arguments: str = "object"):
    """transformers' render of a scenario, or None when the template refuses it."""
    utils = pytest.importorskip("transformers.utils.chat_template_utils")
    opts = dict(scenario.options)
    add_gen = opts.pop("add_generation_prompt", True)
    reads = template_variables(source)
    variables = {spelling: value for name, value in opts.items() if value is not None
                 for spelling in (("enable_thinking", "thinking") if name == "thinking" else (name,)) if spelling in reads}
    messages = utils._normalize_chat_messages(decode_arguments(scenario.messages, arguments=arguments))
    try:
        out, _ = utils.render_jinja_template(conversations=[messages], tools=scenario.tools, chat_template=source,
                                             add_generation_prompt=add_gen, **{**special, **variables})
    except Exception:
        return None
    return out[0]


def native_render(fmt: str, scenario: Scenario):
    try:
        return toolwire.get_format(fmt).render(scenario.messages, scenario.tools, **scenario.options).text
    except toolwire.ToolwireError:
        return None


PAIRS = [  # (format, template, special tokens, scenarios whose byte difference is a documented divergence)
    ("qwen3", "Qwen3-8B.jinja", {}, {"content_parts"}),
    ("qwen35", "Qwen3.5-4B.jinja", {}, set()),
    ("deepseek_v4", "DeepSeek-V4-llamacpp.jinja", {"bos_token": "<｜begin▁of▁sentence｜>"}, set()),
    ("deepseek_v31", "DeepSeek-V3.1.jinja", {"bos_token": "<｜begin▁of▁sentence｜>"}, set()),
    ("llama31", "Llama-3.1-8B-Instruct.jinja", {"bos_token": "<|begin_of_text|>"}, {"content_parts"}),
    ("glm45", "GLM-4.5.jinja", {}, set()),
]


def diverging(report: dict, check: str) -> set[str]:
    return {s["id"] for s in report["scenarios"] if s[check]["status"] == "diverge"}


@pytest.mark.parametrize("fmt, template, special, documented", PAIRS, ids=[p[0] for p in PAIRS])
def test_byte_verdicts_agree_with_transformers(fmt, template, special, documented, tmp_path, capsys):
    """Every scenario's bytes verdict is what transformers' own render says (equal, or both refuse); where they
    differ, it is a documented divergence only when toolwire refused and the template rendered."""
    need(fmt)
    source = (TEMPLATES / template).read_text("utf-8")
    code, report = run_json(tmp_path, capsys, "--format", fmt, "--template", str(TEMPLATES / template))
    expected, refused_by_toolwire_only = set(), set()
    for sc in SCENARIOS:
        ours, theirs = native_render(fmt, sc), oracle_render(source, sc, special)
        if ours != theirs:
            expected.add(sc.id)
            if ours is None:
                refused_by_toolwire_only.add(sc.id)
    assert differing(report, "bytes") | diverging(report, "bytes") == expected
    assert diverging(report, "bytes") == documented <= refused_by_toolwire_only
    assert len(report["scenarios"]) == len(SCENARIOS) == 26
    assert code == (0 if not differing(report) else 1)


# ---------------------------------------------------------------- drift detection

DRIFTS = [
    # (what changes, original text, altered text): each occurs exactly once in Qwen3.5-4B.jinja
    ("tool response opening", "{{- '\\n<tool_response>\\n' }}", "{{- '\\n<tool_response>\\n\\n' }}"),
    ("reasoning close in history", "'\\n</think>\\n\\n' + content", "'\\n</think>\\n' + content"),
    ("tool call close", "{{- '</function>\\n</tool_call>' }}", "{{- '</function>\\n</tool_call> ' }}"),
    ("generation prompt without thinking", "{{- '<think>\\n\\n</think>\\n\\n' }}", "{{- '<think>\\n</think>\\n\\n' }}"),
]


@pytest.mark.parametrize("what, original, altered", DRIFTS, ids=[d[0] for d in DRIFTS])
def test_drift_names_exactly_the_affected_scenarios(what, original, altered, tmp_path, capsys):
    need("qwen35")
    source = (TEMPLATES / "Qwen3.5-4B.jinja").read_text("utf-8")
    assert source.count(original) == 1, what
    drifted = tmp_path / "Qwen3.5-4B-drifted.jinja"
    drifted.write_text(source.replace(original, altered), encoding="utf-8")

    base_code, base = run_json(tmp_path, capsys, "--format", "qwen35", "--template", str(TEMPLATES / "Qwen3.5-4B.jinja"))
    assert base_code == 0 and differing(base) == set()  # the baseline matches everywhere

    affected = {sc.id for sc in SCENARIOS
                if oracle_render(source, sc, {}) != oracle_render(drifted.read_text("utf-8"), sc, {})}
    assert affected and len(affected) < len(SCENARIOS)  # one place: some scenarios, not all
    code, out, _ = run_cli(capsys, "--format", "qwen35", "--template", str(drifted))
    assert code == 1
    verdict = next(line for line in out.splitlines() if line.startswith("result:"))
    named = set(verdict.split(": ", 2)[2].split(", "))
    assert named == affected


# ---------------------------------------------------------------- tokens

def test_token_equality_with_the_real_tokenizer(tmp_path, capsys):
    need("qwen35")
    code, report = run_json(tmp_path, capsys, "--format", "qwen35", "--template", str(TEMPLATES / "Qwen3.5-4B.jinja"),
                            "--tokenizer", str(TOKENIZERS / "Qwen3"))
    assert code == 0
    statuses = {s["id"]: s["tokens"]["status"] for s in report["scenarios"]}
    assert set(statuses.values()) == {"match"}
    # user and tool text spelling <|im_end|> is plain text on both sides, not a control token
    assert statuses["special_tokens_in_user"] == statuses["special_tokens_in_tool_result"] == "match"


def test_token_check_uses_only_the_templates_own_control_tokens():
    """Without the request-text marking, the template prompt's naive ids would differ where users spell markers."""
    need("qwen35")
    transformers = pytest.importorskip("transformers")
    tok = transformers.AutoTokenizer.from_pretrained(str(TOKENIZERS / "Qwen3"))
    source = (TEMPLATES / "Qwen3.5-4B.jinja").read_text("utf-8")
    comparer = Comparer("qwen35", ChatTemplate(source, now=DATE), tokenizer=tok, on_date=DATE)
    sc = next(s for s in SCENARIOS if s.id == "special_tokens_in_user")
    result = comparer.compare(sc)
    assert result.tokens.status == "match"
    naive = tok(result.template_text, add_special_tokens=False)["input_ids"]
    assert naive != result.template_ids
    assert naive.count(151645) > result.template_ids.count(151645)  # <|im_end|> injected by plain tokenizing


def test_token_difference_is_reported_with_its_position(tmp_path, capsys):
    """A template that spells a marker differently in its own text gives equal bytes nowhere near, and a token
    difference with the position and the tokens around it."""
    need("qwen35")
    source = (TEMPLATES / "Qwen3.5-4B.jinja").read_text("utf-8")
    drifted = tmp_path / "q.jinja"
    drifted.write_text(source.replace("{{- '<|im_start|>assistant\\n' }}", "{{- '<|im_start|>assistant \\n' }}"), "utf-8")
    code, report = run_json(tmp_path, capsys, "--format", "qwen35", "--template", str(drifted),
                            "--tokenizer", str(TOKENIZERS / "Qwen3"))
    assert code == 1
    row = next(s for s in report["scenarios"] if s["id"] == "plain_chat")
    assert row["bytes"]["status"] == row["tokens"]["status"] == "differ"
    assert row["tokens"]["detail"].startswith("first difference at token ")


@pytest.mark.parametrize("fmt, template, tokenizer", [
    ("deepseek_v4", "DeepSeek-V4-llamacpp.jinja", "DeepSeek-V4"),
    ("deepseek_v31", "DeepSeek-V3.1.jinja", "DeepSeek-V3"),
    ("llama31", "Llama-3.1-8B-Instruct.jinja", "Llama-3"),
])
def test_tokens_equal_wherever_bytes_are_equal(fmt, template, tokenizer, tmp_path, capsys):
    """DSML (｜DSML｜ is one token of the V4 vocabulary), DeepSeek V3.1 and Llama 3.1 with their real tokenizers."""
    need(fmt)
    _, report = run_json(tmp_path, capsys, "--format", fmt, "--template", str(TEMPLATES / template),
                         "--tokenizer", str(TOKENIZERS / tokenizer))
    equal_bytes = [s for s in report["scenarios"] if s["bytes"]["status"] == "match" and s["native"] is not None]
    assert len(equal_bytes) >= 10
    assert all(s["tokens"]["status"] == "match" for s in equal_bytes), [
        (s["id"], s["tokens"]["detail"]) for s in equal_bytes if s["tokens"]["status"] != "match"]


# ---------------------------------------------------------------- round trip

def test_round_trip_reads_every_final_assistant_turn_back():
    need("qwen35")
    comparer = Comparer("qwen35", ChatTemplate((TEMPLATES / "Qwen3.5-4B.jinja").read_text("utf-8")), on_date=DATE)
    finals = [sc for sc in SCENARIOS if sc.messages[-1]["role"] == "assistant"]
    assert len(finals) >= 5
    for sc in finals:
        assert comparer.compare(sc).round_trip.status == "match", sc.id


def test_round_trip_difference_is_reported(monkeypatch):
    """A parser that loses a character is caught by the round trip, with the output that failed."""
    need("qwen35")
    comparer = Comparer("qwen35", ChatTemplate((TEMPLATES / "Qwen3.5-4B.jinja").read_text("utf-8")), on_date=DATE)
    real_parse = comparer.fmt.parse

    class Lossy:
        name = comparer.fmt.name

        def __getattr__(self, attr):
            return getattr(real_parse.__self__, attr)

        def parse(self, text, tools=None, **kw):  # loses the first character (the last may be a stop token's)
            return real_parse(text[1:], tools, **kw)

    comparer.fmt = Lossy()
    sc = next(s for s in SCENARIOS if s.id == "final_assistant_text")
    check = comparer.compare(sc).round_trip
    assert check.status == "differ" and "parses back differently" in check.detail


# ---------------------------------------------------------------- output: summary, progress, HTML, corpus, exit codes

def test_summary_table_names_every_scenario_and_the_verdict(capsys):
    need("qwen35")
    code, out, err = run_cli(capsys, "--format", "qwen35", "--template", str(TEMPLATES / "Qwen3.5-4B.jinja"))
    assert code == 0 and err == ""  # stderr is not a TTY here: no progress bar
    for sc in SCENARIOS:
        assert f"  {sc.id} " in out
    assert "bytes 26/26 equal" in out and "round trip 5/5 ok" in out
    assert out.rstrip().endswith("result: ALL MATCH")


def test_first_difference_is_shown_in_context(tmp_path, capsys):
    need("qwen35")
    source = (TEMPLATES / "Qwen3.5-4B.jinja").read_text("utf-8")
    drifted = tmp_path / "drifted.jinja"
    drifted.write_text(source.replace(DRIFTS[0][1], DRIFTS[0][2]), "utf-8")
    code, out, _ = run_cli(capsys, "--format", "qwen35", "--template", str(drifted), "--details", "1")
    assert code == 1
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("- single_call_result [bytes]: first difference"))
    scenario = next(s for s in SCENARIOS if s.id == "single_call_result")
    native = toolwire.get_format("qwen35").render(scenario.messages, scenario.tools, **scenario.options).text
    index = native.index("<tool_response>\n") + len("<tool_response>\n")
    assert lines[at].endswith(f"first difference at char {index} (line {native.count(chr(10), 0, index) + 1}, "
                              f"column 1); lengths {len(native)} vs {len(native) + 1}")
    assert lines[at + 1].startswith("      native   | …") and "<tool_response>\\n⟦{" in lines[at + 1]
    assert lines[at + 2].startswith("      template | …") and "<tool_response>\\n⟦\\n{" in lines[at + 2]
    assert "... and 7 more scenarios; see --html or --json" in out


def test_progress_bar_only_when_asked_or_on_a_tty(capsys):
    need("qwen35")
    _, _, err = run_cli(capsys, "--format", "qwen35", "--template", str(TEMPLATES / "Qwen3.5-4B.jinja"), "--progress")
    assert err.startswith("\r[") and "26/26" in err and err.endswith("\n")


def test_html_report_has_side_by_side_diffs_and_highlighted_special_tokens(tmp_path, capsys):
    need("qwen35")
    source = (TEMPLATES / "Qwen3.5-4B.jinja").read_text("utf-8")
    drifted = tmp_path / "drifted.jinja"
    drifted.write_text(source.replace(DRIFTS[0][1], DRIFTS[0][2]), "utf-8")
    report = tmp_path / "report.html"
    code, _, _ = run_cli(capsys, "--format", "qwen35", "--template", str(drifted), "--html", str(report),
                         "--tokenizer", str(TOKENIZERS / "Qwen3"))
    assert code == 1
    doc = lxml_html.fromstring(report.read_bytes())
    rows = doc.xpath("//table[@class='sum']//tr")
    assert len(rows) == 1 + len(SCENARIOS)
    section = doc.get_element_by_id("single_call_result")
    pairs = [row.xpath("./td/pre") for row in section.xpath(".//table[@class='side']//tr[td]")]
    native = "".join(left.text_content() for left, _ in pairs)
    template = "".join(right.text_content() for _, right in pairs)
    left_sp = [s.text for left, _ in pairs for s in left.xpath(".//span[contains(@class,'sp')]")]
    right_sp = [s.text for _, right in pairs for s in right.xpath(".//span[contains(@class,'sp')]")]
    assert "<|im_start|>" in left_sp and left_sp == right_sp  # shaded alike on both sides
    # the one inserted newline is the marked difference, drawn as a visible glyph in its own row
    changed = section.xpath(".//table[@class='side']//tr[@class='chg']")
    assert len(changed) == 1
    left, right = changed[0].xpath("./td/pre")
    assert left.text_content() == "" and right.text_content() == "↵\n"
    assert [s.get("class") for s in right.xpath(".//span")] == ["d ws"]
    assert template.replace("<tool_response>\n↵\n", "<tool_response>\n") == native
    # columns stay level: the rows after the difference hold the same text on both sides
    after = [pair for pair in pairs[pairs.index([left, right]) + 1:]]
    assert after and all(a.text_content() == b.text_content() for a, b in after)
    clean = doc.get_element_by_id("plain_chat")
    assert not clean.xpath(".//span[contains(@class,'d')]") and "same" in clean.get("class")


def test_user_corpus_runs_alongside_or_alone(tmp_path, capsys):
    need("qwen35")
    corpus = tmp_path / "mine.jsonl"
    corpus.write_text(json.dumps({"id": "mine_hello", "messages": [{"role": "user", "content": "Bonjour 🙂"}]}) + "\n",
                      encoding="utf-8")
    code, report = run_json(tmp_path, capsys, "--format", "qwen35", "--template", str(TEMPLATES / "Qwen3.5-4B.jinja"),
                            "--corpus", str(corpus))
    assert code == 0 and [s["id"] for s in report["scenarios"]][-1] == "mine_hello"
    assert report["scenarios"][-1]["source"] == "mine.jsonl" and len(report["scenarios"]) == 27
    code, report = run_json(tmp_path, capsys, "--format", "qwen35", "--template", str(TEMPLATES / "Qwen3.5-4B.jinja"),
                            "--corpus", str(corpus), "--no-builtin")
    assert code == 0 and [s["id"] for s in report["scenarios"]] == ["mine_hello"]


def test_bad_inputs_exit_2_with_a_message(tmp_path, capsys):
    need("qwen35")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "messages": []}\n{not json\n', encoding="utf-8")
    code, _, err = run_cli(capsys, "--format", "qwen35", "--template", str(TEMPLATES / "Qwen3.5-4B.jinja"),
                           "--corpus", str(bad))
    assert code == 2 and "bad.jsonl:2: not valid JSON" in err
    code, _, err = run_cli(capsys, "--format", "qwen35", "--template", str(tmp_path / "missing.jinja"))
    assert code == 2 and "missing.jinja" in err
    code, _, err = run_cli(capsys, "--format", "qwen9", "--template", str(TEMPLATES / "Qwen3.5-4B.jinja"))
    assert code == 2 and "unknown format 'qwen9'" in err


def test_native_option_refusal_is_not_applicable_not_a_difference(tmp_path, capsys):
    """A scenario option the native renderer does not take is skipped, and does not fail the run."""
    need("qwen35")
    corpus = tmp_path / "opt.jsonl"
    corpus.write_text(json.dumps({"id": "odd_option", "messages": [{"role": "user", "content": "x"}],
                                  "options": {"no_such_option": True}}) + "\n", encoding="utf-8")
    code, report = run_json(tmp_path, capsys, "--format", "qwen35", "--template", str(TEMPLATES / "Qwen3.5-4B.jinja"),
                            "--corpus", str(corpus), "--no-builtin")
    assert code == 0 and report["scenarios"][0]["bytes"]["status"] == "skip"


def test_describe_difference_locates_line_and_column():
    a, b = "line one\nline two\nsame", "line one\nline 2wo\nsame"
    assert first_difference(a, b) == 14
    text = describe_difference(a, b)
    assert text.startswith("first difference at char 14 (line 2, column 6); lengths 22 vs 22")
    assert "native   | line one\\nline ⟦two" in text and "template | line one\\nline ⟦2wo" in text
    assert first_difference("abc", "abcd") == 3 and "⟦(end)" in describe_difference("abc", "abcd")


def test_builtin_corpus_covers_what_the_issue_lists():
    tags = {t for sc in SCENARIOS for t in sc.tags}
    assert {"chat", "system", "tools", "call", "parallel", "tool-result", "reasoning", "multi-turn", "unicode",
            "markup", "special-text", "long", "round-trip"} <= tags
    assert len({sc.id for sc in SCENARIOS}) == len(SCENARIOS)
    assert Path(builtin_corpus_path()).name == "scenarios.jsonl"


@pytest.mark.parametrize("tokenizer", ["mistral:v7", "mistral:v3-tekken"])
def test_mistral_small_tokens_with_mistral_commons_shipped_tokenizers(tokenizer, tmp_path, capsys):
    """The shipped tokenizers predate [CALL_ID] and [ARGS]: the command stops at once naming them (one error,
    not a DIFF per scenario); chats without tool calls still tokenize identically through the Python API."""
    need("mistral_small32")
    pytest.importorskip("mistral_common")
    if tokenizer == "mistral:v7":
        pytest.importorskip("sentencepiece")
    template = TEMPLATES / "Mistral-Small-3.2-24B-Instruct-2506.jinja"
    code, out, err = run_cli(capsys, "--format", "mistral_small32", "--tokenizer", tokenizer, "--template", str(template))
    assert code == 2 and out == ""
    assert err.startswith(f"toolwire: error [tokenizer_mismatch]: tokenizer {tokenizer} does not fit mistral_small32")
    assert '"[CALL_ID]"' in err and '"[ARGS]"' in err and err.count("\n") == 1

    from toolwire.tokenize import load_tokenizer

    comparer = Comparer("mistral_small32", ChatTemplate(template.read_text("utf-8"), bos_token="<s>", eos_token="</s>",
                                                        now=DATE), tokenizer=load_tokenizer(tokenizer), on_date=DATE)
    plain = [sc for sc in SCENARIOS if not any(m.get("tool_calls") for m in sc.messages)]
    assert len(plain) >= 12 and comparer.tokenizer_problems(plain) == []
    for sc in plain:
        assert comparer.compare(sc).tokens.status == "match", sc.id
