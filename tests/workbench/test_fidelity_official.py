"""``toolwire fidelity`` on the 19 official templates behind toolwire's formats: each ALL MATCH, or different
only by the documented divergences written here (docs/fidelity.md), never DIFFERENT; ``detect`` names each
template's format; a tokenizer for another model is one early error; a divergence excuses only its own loss."""

from __future__ import annotations

import json

import pytest

import toolwire
from toolwire.errors import UnsupportedByFormat
from support import REAL, require_shared
from toolwire.workbench import cli
from toolwire.workbench.detect import detect_path
from toolwire.workbench.fidelity import Comparer, builtin_corpus_path, load_scenarios
from toolwire.templates.jinja import ChatTemplate

TEMPLATES = REAL / "templates"
TOKENIZERS = REAL / "tokenizers"
DATE = "2025-03-14"

OFFICIAL = [  # (format, template, tokenizer that fits or None, {divergence: scenarios})
    ("qwen25", "Qwen2.5-7B-Instruct", None, {}),
    ("qwen3", "Qwen3-8B", "Qwen3", {"content_parts_lost": ["content_parts"]}),
    ("qwen3_instruct_2507", "Qwen3-4B-Instruct-2507", "Qwen3", {"content_parts_lost": ["content_parts"]}),
    ("qwen3_thinking_2507", "Qwen3-4B-Thinking-2507", "Qwen3", {"content_parts_lost": ["content_parts"]}),
    ("qwen3_coder", "Qwen3-Coder", "Qwen3", {}),
    ("qwen35", "Qwen3.5-4B", "Qwen3", {}),
    ("qwen36", "Qwen3.6-35B-A3B", "Qwen3", {}),
    ("glm45", "GLM-4.5", None, {}),
    ("glm46", "GLM-4.6", None, {}),
    ("glm47", "GLM-4.7-Flash", None, {}),
    ("kimi_k2", "Kimi-K2-Instruct", None, {}),
    ("kimi_k2_thinking", "Kimi-K2-Thinking", None, {"call_id_in_name_slot": [
        "final_assistant_call", "final_assistant_parallel_typed", "final_assistant_reasoning_call"]}),
    ("minimax_m2", "MiniMax-M2", None, {}),
    ("deepseek_v31", "DeepSeek-V3.1", "DeepSeek-V3", {}),
    ("deepseek_r1", "DeepSeek-R1", "DeepSeek-V3", {}),
    ("llama31", "Llama-3.1-8B-Instruct", "Llama-3", {"content_parts_lost": ["content_parts"]}),
    ("mistral_small32", "Mistral-Small-3.2-24B-Instruct-2506", None, {}),
    ("gpt_oss", "gpt-oss-20b", "o200k_base", {"first_call_only": ["final_assistant_parallel_typed"]}),
    ("seed_oss", "Seed-OSS-36B-Instruct", None, {}),
    ("glm53", "extra/GLM-5.3", None, {}),
    ("gigachat35", "extra/GigaChat3.5", None, {"content_parts_lost": ["content_parts"]}),
]


def need(fmt: str) -> None:
    require_shared()
    if fmt not in toolwire.formats():
        pytest.skip(f"format {fmt} is not built yet")


def fidelity(tmp_path, capsys, *argv: str) -> tuple[int, str, dict]:
    target = tmp_path / "r.json"
    code = cli.main(["fidelity", "--date", DATE, *argv, "--json", str(target)])
    out = capsys.readouterr().out
    return code, out, json.loads(target.read_text("utf-8"))


@pytest.mark.parametrize("fmt, template, tokenizer, documented", OFFICIAL, ids=[row[0] for row in OFFICIAL])
def test_official_template_matches_or_diverges_only_as_documented(fmt, template, tokenizer, documented, tmp_path,
                                                                  capsys):
    need(fmt)
    if tokenizer == "o200k_base":
        pytest.importorskip("openai_harmony")
    argv = ["--format", fmt, "--template", str(TEMPLATES / f"{template}.jinja")]
    if tokenizer:
        argv += ["--tokenizer", str(TOKENIZERS / tokenizer)]
    code, out, report = fidelity(tmp_path, capsys, *argv)
    assert code == 0 and report["ok"] is True
    assert report["divergences"] == documented
    verdict = out.rstrip().splitlines()[-1]
    assert verdict == ("result: ALL MATCH" if not documented else
                       f"result: MATCH WITH DOCUMENTED DIVERGENCES: {', '.join(documented)}")
    statuses = {s[check]["status"] for s in report["scenarios"] for check in ("bytes", "tokens", "round_trip")}
    assert "differ" not in statuses
    if tokenizer:  # every scenario both sides render is token-equal
        assert all(s["tokens"]["status"] == "match" for s in report["scenarios"]
                   if s["native"] is not None and s["template"] is not None)


@pytest.mark.parametrize("fmt, template, tokenizer, documented", OFFICIAL, ids=[row[0] for row in OFFICIAL])
def test_detect_names_the_format_by_fingerprint(fmt, template, tokenizer, documented):
    need(fmt)
    found = detect_path(str(TEMPLATES / f"{template}.jinja"))
    assert (found.format, found.how) == (fmt, "fingerprint")


def test_fidelity_without_format_uses_detect(tmp_path, capsys):
    need("qwen35")
    target = tmp_path / "r.json"
    code = cli.main(["fidelity", "--date", DATE, "--template", str(TEMPLATES / "Qwen3.5-4B.jinja"), "--json",
                     str(target)])
    captured = capsys.readouterr()
    assert code == 0 and json.loads(target.read_text("utf-8"))["format"] == "qwen35"
    assert captured.err == "toolwire fidelity: Qwen3.5-4B.jinja detected as qwen35 (fingerprint)\n"


def test_fidelity_without_format_on_a_template_no_format_fits(capsys):
    require_shared()
    code = cli.main(["fidelity", "--template", str(TEMPLATES / "Gemma-2-2b-it.jinja")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("toolwire: error [format_not_detected]: Gemma-2-2b-it.jinja: no toolwire "
                                        "format fits this template") and err.rstrip().endswith("; give --format")


# ---------------------------------------------------------------- tokenizers for another model

@pytest.mark.parametrize("fmt, template, tokenizer, named", [
    # the Qwen3 vocabulary made <tool_response> a control token; Qwen2.5 writes it as text
    ("qwen25", "Qwen2.5-7B-Instruct", "Qwen3", 'it has "<tool_response>", "</tool_response>" as control tokens'),
    # Llama 3's vocabulary has none of ChatML's markers
    ("qwen3", "Qwen3-8B", "Llama-3", 'its control tokens lack "<|im_start|>", "<|im_end|>"'),
])
def test_a_tokenizer_for_another_model_is_one_early_error(fmt, template, tokenizer, named, capsys):
    need(fmt)
    code = cli.main(["fidelity", "--format", fmt, "--template", str(TEMPLATES / f"{template}.jinja"),
                     "--tokenizer", str(TOKENIZERS / tokenizer)])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and len(captured.err.splitlines()) == 1
    assert captured.err.startswith(f"toolwire: error [tokenizer_mismatch]: tokenizer {TOKENIZERS / tokenizer} "
                                   f"does not fit {fmt}: ") and named in captured.err


# ---------------------------------------------------------------- a divergence excuses only its own loss

SCENARIOS = {sc.id: sc for sc in load_scenarios(builtin_corpus_path())}


class LossyParse:
    """A format whose parser loses a character of an argument value (a real bug, not a template loss)."""

    def __init__(self, fmt):
        self._fmt = fmt

    def __getattr__(self, attr):
        return getattr(self._fmt, attr)

    def parse(self, text, tools=None, **kw):
        return self._fmt.parse(text.replace("Paris", "Pari").replace("R-1", "R-"), tools, **kw)


@pytest.mark.parametrize("fmt, template, scenario", [
    ("kimi_k2_thinking", "Kimi-K2-Thinking", "final_assistant_call"),
    ("gpt_oss", "gpt-oss-20b", "final_assistant_parallel_typed"),
])
def test_a_real_round_trip_bug_is_a_difference_even_where_a_divergence_is_documented(fmt, template, scenario):
    need(fmt)
    comparer = Comparer(fmt, ChatTemplate((TEMPLATES / f"{template}.jinja").read_text("utf-8"), now=DATE), on_date=DATE)
    assert comparer.compare(SCENARIOS[scenario]).round_trip.status == "diverge"
    comparer.fmt = LossyParse(comparer.fmt)
    check = comparer.compare(SCENARIOS[scenario]).round_trip
    assert check.status == "differ" and check.divergence is None


def test_a_template_that_renders_list_content_intact_is_not_excused(tmp_path, capsys):
    """A Qwen3 template edited to render list content: toolwire still refuses, and that is a difference."""
    need("qwen3")
    source = (TEMPLATES / "Qwen3-8B.jinja").read_text("utf-8")
    original = "{%- if message.content is string %}\n        {%- set content = message.content %}\n    {%- else %}\n        {%- set content = '' %}"
    assert source.count(original) == 1
    edited = tmp_path / "Qwen3-parts.jinja"
    edited.write_text(source.replace(original, original.replace(
        "{%- set content = '' %}", "{%- set content = message.content | map(attribute='text') | join('\\n\\n') %}")),
        encoding="utf-8")
    code, out, report = fidelity(tmp_path, capsys, "--format", "qwen3", "--template", str(edited))
    row = next(s for s in report["scenarios"] if s["id"] == "content_parts")
    assert code == 1 and row["bytes"]["status"] == "differ" and report["divergences"] == {}
    assert out.rstrip().endswith("result: DIFFERENT in 1 scenario: content_parts")


def test_join_content_parts_is_the_explicit_way_to_join():
    need("qwen3")
    messages = SCENARIOS["content_parts"].messages
    with pytest.raises(UnsupportedByFormat) as refused:
        toolwire.get_format("qwen3").render(messages)
    assert refused.value.message_index == 0 and refused.value.field == "content"
    joined = toolwire.get_format("qwen3").render(messages, join_content_parts=True).text
    assert joined == "<|im_start|>user\nPart one.\n\nPart two.<|im_end|>\n<|im_start|>assistant\n"  # thinking on
    # formats whose template renders list content keep rendering it without the option
    assert "Part one." in toolwire.get_format("qwen35").render(messages).text


# ---------------------------------------------------------------- divergences are declared by their families
def test_every_declared_template_loss_is_a_documented_divergence_and_every_divergence_is_declared():
    """A family's ``template_losses`` names rows of DIVERGENCES (a misspelt name would excuse nothing and the
    fidelity run would call the template DIFFERENT); each row is some family's loss (a row nobody declares is
    dead), and the families this file's official templates document are exactly those that declare it."""
    from toolwire.families import declared
    from toolwire.workbench.divergences import DIVERGENCES

    names = {d.name for d in DIVERGENCES}
    declaring = {}
    for family in declared().values():
        assert set(family.template_losses) <= names, family.name
        for loss in family.template_losses:
            declaring.setdefault(loss, set()).add(family.name)
    assert set(declaring) == names
    documented = {}
    for fmt, _template, _tokenizer, found in OFFICIAL:
        for loss in found:
            documented.setdefault(loss, set()).add(fmt)
    for loss, formats in documented.items():
        assert formats <= declaring[loss], loss
