"""``toolwire detect``: the format of a chat template by fingerprint, else by its markup, else a plain "no
format fits"; from a .jinja file, a tokenizer_config.json or a model folder."""

from __future__ import annotations

import json

import pytest

import toolwire
from support import REAL, require_shared
from toolwire.workbench import cli
from toolwire.workbench.detect import detect_path, detect_source, fingerprint, known_revisions

TEMPLATES = REAL / "templates"

NOT_TOOLWIRE = [  # templates of families toolwire lacks: (template, the format being added for it, if any)
    ("Gemma-2-2b-it", None), ("Gemma-3-4b-it", None),
    ("Gemma-4-E2B-it", "gemma4"), ("Granite-3.3-2B-Instruct", None),
    ("Granite-4.1", "granite4"), ("Hermes-3-Llama-3.1-8B-tool_use", "hermes3"),
    ("Hermes-2-Pro-Llama-3-8B-tool_use", "hermes3"), ("Llama-3-8B-Instruct", None),
    ("Llama-3.2-3B-Instruct", "llama32"), ("Llama-4-transformers-default", "llama4"),
    ("Ministral-3-14B-Reasoning-2512", "ministral3"), ("Mistral-Nemo-Instruct-2407", None),
    ("Qwen3.8-27B", "qwen38"),
]


def run(capsys, *argv):
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("template, added", NOT_TOOLWIRE, ids=[t for t, _ in NOT_TOOLWIRE])
def test_says_plainly_when_no_format_fits(template, added, capsys):
    require_shared()
    code, out, _ = run(capsys, "detect", str(TEMPLATES / f"{template}.jinja"))
    found = detect_path(str(TEMPLATES / f"{template}.jinja"))
    assert code == (0 if found.format else 1)   # 0: a format fits; 1: none does
    if added in toolwire.formats():  # its family has landed: then the fingerprint names it
        assert (found.format, found.how) == (added, "fingerprint")
    elif added:
        assert found.format is None and found.unregistered == added
        assert out.rstrip().endswith(f"template of format {added}, which this toolwire build does not have")
    else:
        assert found.format is None and found.how == "none"
        assert out.startswith(f"{template}.jinja: no toolwire format fits this template")


@pytest.mark.parametrize("template, fmt, shared", [
    # revisions not in the fingerprint table, recognised by their markup
    ("extra/Kimi-K2-Thinking-llamacpp-modified", "kimi_k2", {"kimi_k2", "kimi_k2_thinking"}),
    ("QwQ-32B", "qwen25", {"qwen25", "qwen3", "qwen3_instruct_2507", "qwen3_thinking_2507", "hermes3"}),
    ("Gemma-4-31B-it", "gemma4", {"gemma4"}),       # other Gemma 4 revisions: the same markup
    ("Gemma-4-E2B-it-release", "gemma4", {"gemma4"}),
    ("DeepSeek-R1-Distill", "deepseek_r1", {"deepseek_r1", "deepseek_v31"}),
])
def test_unknown_revision_is_found_by_its_markup(template, fmt, shared, capsys):
    require_shared()
    if fmt not in toolwire.formats():
        pytest.skip(f"{fmt} not built")
    found = detect_path(str(TEMPLATES / f"{template}.jinja"))
    assert found.how == "markup" and found.format == found.candidates[0]   # markup alone cannot rank a tie
    assert set(found.candidates) == shared and fmt in shared and found.probes[0].score >= 0.8
    code, out, _ = run(capsys, "detect", str(TEMPLATES / f"{template}.jinja"))
    assert code == 0 and f": {found.format} by its markup" in out and "not a known revision" in out


def test_a_one_character_edit_is_no_longer_the_known_revision():
    require_shared()
    source = (TEMPLATES / "Qwen3.5-4B.jinja").read_text("utf-8")
    assert detect_source(source).how == "fingerprint"
    edited = detect_source(source.replace("<tool_response>\\n", "<tool_response>\\n\\n", 1))
    assert edited.how == "markup" and "qwen35" in edited.candidates
    # line endings and outer whitespace do not change the fingerprint
    assert detect_source("\n" + source.replace("\n", "\r\n") + "\n\n").how == "fingerprint"


def test_tokenizer_config_and_model_folder(tmp_path, capsys):
    require_shared()
    source = (TEMPLATES / "Qwen3-8B.jinja").read_text("utf-8")
    model = tmp_path / "Qwen3-8B"
    model.mkdir()
    (model / "tokenizer_config.json").write_text(json.dumps({"chat_template": source, "eos_token": "<|im_end|>"}),
                                                 encoding="utf-8")
    assert detect_path(str(model / "tokenizer_config.json")).format == "qwen3"
    assert detect_path(str(model)).format == "qwen3"
    named = tmp_path / "named"
    named.mkdir()
    (named / "tokenizer_config.json").write_text(json.dumps({"chat_template": [
        {"name": "default", "template": source}, {"name": "tool_use", "template": "{{ x }}"}]}), encoding="utf-8")
    assert detect_path(str(named)).format == "qwen3"
    code, out, _ = run(capsys, "detect", "--json", str(model))
    data = json.loads(out)
    assert code == 0 and (data["format"], data["how"], data["revision"]) == ("qwen3", "fingerprint", "Qwen3-8B")


def test_bad_inputs(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    code, _, err = run(capsys, "detect", str(tmp_path / "empty"))
    assert code == 2 and err.startswith("toolwire: error [no_template]: ") and "empty" in err
    (tmp_path / "c.json").write_text(json.dumps({"eos_token": "x"}), encoding="utf-8")
    code, _, err = run(capsys, "detect", str(tmp_path / "c.json"))
    assert code == 2 and err == f"toolwire: error [no_template]: {tmp_path / 'c.json'}: holds no chat_template\n"
    code, _, err = run(capsys, "detect", str(tmp_path / "missing.jinja"))
    assert code == 2 and err.startswith("toolwire: error [file_not_found]: template ")


def test_fingerprint_table_is_well_formed():
    """One row per (format, revision); the hashes are distinct per format and look like SHA-256."""
    digests = {}
    for fmt, known in known_revisions():
        assert len(known.sha256) == 64 and int(known.sha256, 16) >= 0 and fmt and known.revision
        assert digests.setdefault(known.sha256, fmt) == fmt
    assert fingerprint(" a\r\nb \n") == fingerprint("a\nb")


# ---------------------------------------------------------------- ports, options, exit codes

PORTS = [  # llama.cpp's DeepSeek templates: markers built by string concatenation; DeepSeek publishes encoders
    ("DeepSeek-V3.2-llamacpp", "deepseek_v32"),
    ("DeepSeek-V4-llamacpp", "deepseek_v4"),
    ("DeepSeek-V4-Flash-0731-llamacpp", "deepseek_v4"),
]


@pytest.mark.parametrize("template, fmt", PORTS, ids=[t for t, _ in PORTS])
def test_llamacpp_deepseek_ports_are_found_by_what_they_render_and_called_ports(template, fmt, capsys):
    require_shared()
    found = detect_path(str(TEMPLATES / f"{template}.jinja"))
    assert (found.format, found.how, found.revision) == (fmt, "render", None)
    assert found.candidates == [fmt] and found.probes[0].score == 1.0 and found.probes[0].rendered_only
    code, out, _ = run(capsys, "detect", str(TEMPLATES / f"{template}.jinja"))
    assert code == 0 and f": {fmt} by what it renders" in out
    assert "toolwire knows no official chat template of" in out and "this template is a port" in out
    assert "official template" not in out.replace("no official chat template", "")


def test_no_fingerprint_names_a_port():
    """Every fingerprinted revision is an official template, and none is a llama.cpp port."""
    assert not [known for _, known in known_revisions()
                if "port" in known.revision.lower() or "llama.cpp" in known.revision.lower()]


def test_a_revision_that_needs_a_family_option_names_it(capsys):
    require_shared()
    found = detect_path(str(TEMPLATES / "Granite-4.0.jinja"))
    assert (found.format, found.how, found.revision, found.options) == ("granite4", "fingerprint", "Granite-4.0",
                                                                        {"version": "4.0"})
    code, out, _ = run(capsys, "detect", str(TEMPLATES / "Granite-4.0.jinja"))
    assert code == 0 and out == ("Granite-4.0.jinja: granite4 with version='4.0' (official template Granite-4.0, "
                                 "matched by fingerprint)\n")


def test_a_template_rendering_no_calls_is_not_fitted_by_its_turn_markers():
    """Llama 3's template has Llama 3.1's turn markers but renders no tool call: no format fits."""
    require_shared()
    found = detect_path(str(TEMPLATES / "Llama-3-8B-Instruct.jinja"))
    assert found.format is None and found.how == "none"


@pytest.mark.parametrize("text, code, words", [
    ("", "empty_template", "the file is empty"),
    ("  \n\n ", "empty_template", "the file is empty"),
    ("{% for m in messages %}{{ m.content }", "template_syntax", "line 1"),
    ("{% if x %}<tool_call>", "template_syntax", "line 1"),
])
def test_exit_2_on_a_file_that_is_not_a_template(tmp_path, capsys, text, code, words):
    path = tmp_path / "t.jinja"
    path.write_text(text, encoding="utf-8")
    exit_code, out, err = run(capsys, "detect", str(path))
    assert exit_code == 2 and out == "" and err.startswith(f"toolwire: error [{code}]: template ") and words in err


def test_exit_1_when_no_format_fits(tmp_path, capsys):
    path = tmp_path / "plain.jinja"
    path.write_text("{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}", encoding="utf-8")
    code, out, err = run(capsys, "detect", str(path))
    assert (code, err) == (1, "") and out.startswith("plain.jinja: no toolwire format fits this template")
    code, out, _ = run(capsys, "detect", "--json", str(path))
    assert code == 1 and json.loads(out)["format"] is None
