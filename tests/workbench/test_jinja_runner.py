"""The Jinja runner renders every real chat template exactly as transformers does, without needing it.

Parity: the 48 templates in ../shared/real/templates x the built-in scenario corpus, against
``transformers.utils.chat_template_utils.render_jinja_template`` fed the way ``apply_chat_template``
feeds it (None-valued keys dropped, the tokenizer's named special tokens as variables): equal output, or
both refuse with the same error.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import jinja2
import pytest

import toolwire

from support import REAL, golden, require_shared
from toolwire.errors import ToolwireError
from toolwire.templates.jinja import (
    ChatTemplate, TemplateRefused, TemplateRenderError, chat_template_from_config, decode_arguments,
    prepare_messages, special_tokens_from_config,
)

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = [json.loads(line) for line in (ROOT / "fixtures" / "scenarios.jsonl").read_text("utf-8").splitlines()
             if line.strip()]
TEMPLATES = REAL / "templates"
TOKENIZERS = REAL / "tokenizers"
FIXED_NOW = datetime(2025, 3, 14, 9, 26, 53)


def _template_files() -> list[Path]:
    return sorted(TEMPLATES.glob("*.jinja")) if TEMPLATES.is_dir() else []


def _results() -> dict:
    path = REAL / "renders" / "_results.json"
    return json.loads(path.read_text("utf-8")) if path.exists() else {}


def _llama_tokens(folder: str, eos: str) -> dict[str, str]:
    meta = json.loads((TOKENIZERS / folder / "special_tokens.json").read_text("utf-8"))
    by_id = {i: t for t, i in meta["special_tokens"].items()}
    return {"bos_token": by_id[meta["bos_id"]], "eos_token": eos}


def special_tokens_for(name: str) -> dict[str, str]:
    """The named special tokens the shared renders used for this template (../shared/real/README.md)."""
    via = _results().get(name, {}).get("via") or ""
    if via == "tokenizer:qwen" or name.startswith("Qw"):
        return special_tokens_from_config(TOKENIZERS / "Qwen3")
    if via == "tokenizer:deepseek" or name.startswith("DeepSeek"):
        return special_tokens_from_config(TOKENIZERS / "DeepSeek-V3")
    if via == "tokenizer:Llama-3":
        return _llama_tokens("Llama-3", "<|eot_id|>")
    if via == "tokenizer:Llama-4":
        return _llama_tokens("Llama-4", "<|eot|>")
    m = re.match(r"render_jinja_template\(bos='(.*)',eos='(.*)'\)$", via)
    if m:
        return {"bos_token": m.group(1), "eos_token": m.group(2)}
    return {"bos_token": "<bos>", "eos_token": "<end_of_turn>"}  # Gemma 2/3: no tool support, no via


def argument_mode(name: str) -> str:
    """Templates that concatenate ``arguments`` as text get the JSON string (../shared/real/README.md)."""
    return "string" if _results().get(name, {}).get("args") == "json-string" else "object"


def plain_variables(variables, options: dict) -> dict:
    """A scenario's options as the variables a template that is no toolwire family reads: ``thinking`` under
    whichever of ``enable_thinking`` / ``thinking`` it reads, anything else under its own name (the same on both
    sides of the comparison, so the runner and transformers get one input)."""
    out = {}
    for name, value in options.items():
        for spelling in (("enable_thinking", "thinking") if name == "thinking" else (name,)):
            if spelling in variables and value is not None:
                out[spelling] = value
    return out


def scenario_request(scenario: dict, variables, mode: str) -> tuple[list, list | None, dict]:
    opts = dict(scenario["options"])
    add_gen = opts.pop("add_generation_prompt", True)
    kwargs = plain_variables(variables, opts)
    return decode_arguments(scenario["messages"], arguments=mode), scenario["tools"], {
        "add_generation_prompt": add_gen, **kwargs}


# ---------------------------------------------------------------- transformers, as the reference

@pytest.fixture(scope="module")
def hf_render(request):
    """render_jinja_template fed as apply_chat_template feeds it, with strftime_now pinned to FIXED_NOW."""
    utils = pytest.importorskip("transformers.utils.chat_template_utils")

    class _Pinned(datetime):
        @classmethod
        def now(cls, tz=None):
            return FIXED_NOW

    mp = pytest.MonkeyPatch()
    mp.setattr(utils, "datetime", _Pinned)
    request.addfinalizer(mp.undo)

    def render(source, messages, tools, special, add_generation_prompt, **kwargs):
        conversation = utils._normalize_chat_messages(messages)
        out, _ = utils.render_jinja_template(conversations=[conversation], tools=tools, chat_template=source,
                                             add_generation_prompt=add_generation_prompt, **{**special, **kwargs})
        return out[0]

    return render


def _outcome(fn):
    """('ok', text) or ('error', exception type name, message) with the template's own exception."""
    try:
        return ("ok", fn())
    except TemplateRenderError as exc:
        original = exc.original
        kind = "TemplateError" if isinstance(exc, TemplateRefused) else type(original).__name__
        return ("error", kind, str(original))
    except Exception as exc:  # transformers side: raw exceptions
        return ("error", type(exc).__name__, str(exc))


@pytest.mark.parametrize("path", _template_files() or [pytest.param(None, marks=pytest.mark.skip("no ../shared"))],
                         ids=lambda p: p.stem if p else "none")
def test_parity_with_transformers_on_every_template_and_scenario(path, hf_render):
    require_shared()
    source = path.read_text(encoding="utf-8")
    special = special_tokens_for(path.name)
    mode = argument_mode(path.name)
    runner = ChatTemplate(source, special_tokens=special, now=FIXED_NOW)
    rendered = 0
    for scenario in SCENARIOS:
        messages, tools, kwargs = scenario_request(scenario, runner.variables, mode)
        ours = _outcome(lambda: runner.render(messages, tools, **kwargs))
        theirs = _outcome(lambda: hf_render(source, messages, tools, special, **kwargs))
        assert ours == theirs, f"{path.name} / {scenario['id']}"
        rendered += ours[0] == "ok"
    # the corpus is meaningful for every template: most scenarios render (Gemma 2/3 refuse tool turns)
    assert rendered >= 10, (path.name, rendered)  # the corpus is meaningful for every template


def test_parity_covers_all_48_templates():
    require_shared()
    assert len(_template_files()) == 48


def test_apply_chat_template_of_real_tokenizer_matches(hf_render):
    """With the tokenizer directory itself, bos/eos and template come from its config, as in transformers."""
    require_shared()
    transformers = pytest.importorskip("transformers")
    tok = transformers.AutoTokenizer.from_pretrained(str(TOKENIZERS / "Qwen3"))
    runner = ChatTemplate.from_pretrained(TOKENIZERS / "Qwen3", now=FIXED_NOW)
    assert runner.special_tokens == tok.special_tokens_map
    assert runner.source == tok.chat_template
    for scenario in SCENARIOS:
        messages, tools, kwargs = scenario_request(scenario, runner.variables, "object")
        expected = tok.apply_chat_template(messages, tools=tools, tokenize=False, **kwargs)
        assert runner.render(messages, tools, **kwargs) == expected, scenario["id"]


# ---------------------------------------------------------------- the runner's semantics, one by one

def test_trim_and_lstrip_blocks():
    tpl = ChatTemplate("A\n    {% if true %}\nB\n    {% endif %}\nC")
    assert tpl.render([]) == "A\nB\nC"


def test_tojson_keeps_non_ascii_and_is_not_html_escaped():
    tpl = ChatTemplate("{{ messages[0].content | tojson }}|{{ {'k': 'é<&>'} | tojson(indent=2) }}"
                       "|{{ ('x' | tojson) + '<b>' }}")
    out = tpl.render([{"role": "user", "content": "東京 <tag> & 'q'"}])
    assert out == '"東京 <tag> & \'q\'"|{\n  "k": "é<&>"\n}|"x"<b>'


def test_raise_exception_is_a_refusal_naming_the_message():
    tpl = ChatTemplate("{% if messages[0].role != 'user' %}{{ raise_exception('first must be user') }}{% endif %}ok")
    assert tpl.render([{"role": "user", "content": "x"}]) == "ok"
    with pytest.raises(TemplateRefused) as info:
        tpl.render([{"role": "system", "content": "x"}])
    assert isinstance(info.value, ToolwireError)
    assert info.value.code == "template_refused" and "first must be user" in str(info.value)


def test_other_template_failures_are_template_errors():
    tpl = ChatTemplate("{{ messages[0].content + 1 }}")
    with pytest.raises(TemplateRenderError) as info:
        tpl.render([{"role": "user", "content": "x"}])
    assert info.value.kind == "TypeError" and not isinstance(info.value, TemplateRefused)


def test_strftime_now_uses_the_injected_date():
    src = "{{ strftime_now('%Y-%m-%d') }} {{ strftime_now('%d %b %Y') }}"
    assert ChatTemplate(src, now="2024-07-26").render([]) == "2024-07-26 26 Jul 2024"
    assert ChatTemplate(src, now=datetime(1999, 12, 31, 23, 59)).render([]) == "1999-12-31 31 Dec 1999"
    before = datetime.now().strftime("%Y-%m-%d")
    rendered = ChatTemplate("{{ strftime_now('%Y-%m-%d') }}").render([])
    assert rendered in (before, datetime.now().strftime("%Y-%m-%d"))  # the clock's date, across a midnight too


def test_reasoning_fields_are_aliased():
    src = "{% for m in messages %}[{{ m.reasoning_content }}|{{ m.thinking }}]{% endfor %}"
    out = ChatTemplate(src).render([{"role": "assistant", "content": "a", "reasoning": "r1"},
                                    {"role": "assistant", "content": "b", "thinking": "r2"},
                                    {"role": "assistant", "content": "c", "reasoning_content": "r3"},
                                    {"role": "assistant", "content": "d"}])
    assert out == "[r1|r1][r2|r2][r3|r3][|]"


def test_none_valued_keys_are_dropped_as_apply_chat_template_does():
    src = "{% for m in messages %}{{ 'content' in m }},{% endfor %}"
    assert ChatTemplate(src).render([{"role": "assistant", "content": None}, {"role": "user", "content": ""}]) \
        == "False,True,"
    assert ChatTemplate(src).render([{"role": "assistant", "content": None}], drop_none=False) == "True,"


def test_bos_and_eos_come_from_the_tokenizer_config():
    require_shared()
    tpl = ChatTemplate.from_file(TEMPLATES / "DeepSeek-V3.1.jinja", tokenizer=TOKENIZERS / "DeepSeek-V3")
    assert tpl.special_tokens == {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>",
                                  "pad_token": "<｜end▁of▁sentence｜>"}
    assert tpl.render([{"role": "user", "content": "hi"}]).startswith("<｜begin▁of▁sentence｜><｜User｜>hi")
    assert special_tokens_from_config(TOKENIZERS / "Qwen3" / "tokenizer_config.json") == {
        "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}
    assert chat_template_from_config(TOKENIZERS / "Qwen3") == (TEMPLATES / "Qwen3-4B-Thinking-2507.jinja").read_text(
        "utf-8")


def test_explicit_tokens_and_variables_override_config():
    tpl = ChatTemplate("{{ bos_token }}|{{ eos_token }}", special_tokens={"bos_token": "<s>", "eos_token": "</s>"},
                       eos_token="<|eot|>")
    assert tpl.render([]) == "<s>|<|eot|>"
    assert tpl.render([], bos_token="B") == "B|<|eot|>"


def test_generation_tag_and_loop_controls():
    src = ("{% for m in messages %}{% if m.role == 'system' %}{% continue %}{% endif %}"
           "{% generation %}{{ m.content }}{% endgeneration %}{% if loop.index > 2 %}{% break %}{% endif %}{% endfor %}")
    msgs = [{"role": "system", "content": "S"}] + [{"role": "user", "content": str(i)} for i in range(5)]
    assert ChatTemplate(src).render(msgs) == "01"


@pytest.mark.parametrize("src", [
    "{{ ''.__class__.__mro__ }}",
    "{{ messages.append(1) }}",
    "{% set ns = namespace(_x=1) %}",
    "{{ dict.__init__.__globals__ }}",
    "{{ raise_exception.__globals__['os'] }}",
])
def test_sandbox_refuses_escapes_and_mutation(src):
    with pytest.raises(TemplateRenderError) as info:
        ChatTemplate(src).render([{"role": "user", "content": "x"}])
    assert info.value.kind in ("SecurityError", "UndefinedError")


def test_template_sees_only_plain_data():
    class Handle:
        def delete_everything(self):  # pragma: no cover - must never be reachable
            raise AssertionError

    out = ChatTemplate("{{ messages[0].content }}").render([{"role": "user", "content": Handle()}])
    assert out == "<Handle>"


def test_pydantic_messages_are_accepted():
    from toolwire.models import Message

    msg = Message(role="user", content="hi", reasoning_content=None)
    assert prepare_messages([msg]) == [{"role": "user", "content": "hi"}]


def test_decode_arguments_both_ways():
    msgs = [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": '{"a": 1}'}},
                                                 {"function": {"name": "g", "arguments": "not json"}}]}]
    decoded = decode_arguments(msgs)
    assert decoded[0]["tool_calls"][0]["function"]["arguments"] == {"a": 1}
    assert decoded[0]["tool_calls"][1]["function"]["arguments"] == "not json"
    assert msgs[0]["tool_calls"][0]["function"]["arguments"] == '{"a": 1}'  # input untouched
    assert decode_arguments(decoded, arguments="string")[0]["tool_calls"][0]["function"]["arguments"] == '{"a": 1}'


def test_a_familys_options_go_to_its_templates_keywords():
    """The family's declaration names the template keyword of each option (one translation, toolwire.family)."""
    assert toolwire.get_format("qwen3").template_variables(thinking=False) == {"enable_thinking": False,
                                                                              "add_generation_prompt": True}
    assert toolwire.get_format("deepseek_v31").template_variables(enable_thinking=True)["thinking"] is True
    assert toolwire.get_format("kimi_k3").template_variables(reasoning_effort="low")["thinking_effort"] == "low"
    assert toolwire.get_format("hy3").template_variables(thinking=False)["reasoning_effort"] == "no_think"
    assert toolwire.get_format("minimax_m3").template_variables()["thinking_mode"] == "adaptive"
    assert toolwire.get_format("qwen36").template_variables(preserve_thinking=True)["preserve_thinking"] is True


def test_runs_without_transformers_installed():
    """A fresh interpreter in which importing transformers fails still renders a real template."""
    require_shared()
    row = next(r for r in golden("render", "qwen3") if r["id"] == "qwen3/user_only/thinking=False")
    code = (
        "import json, sys; sys.modules['transformers'] = None\n"
        "from toolwire.templates.jinja import ChatTemplate\n"
        f"t = ChatTemplate.from_file({str(TEMPLATES / 'Qwen3-8B.jinja')!r})\n"
        f"msgs = json.loads({json.dumps(row['request']['messages'])!r})\n"
        "print(t.render(msgs, add_generation_prompt=True, enable_thinking=False), end='')\n"
        "assert 'transformers' not in [m.split('.')[0] for m in sys.modules if sys.modules[m] is not None]\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)  # hang guard
    assert out.returncode == 0, out.stderr
    assert out.stdout == row["expected"]


def test_jinja2_version_is_one_without_known_sandbox_escapes():
    assert tuple(int(x) for x in jinja2.__version__.split(".")[:3]) >= (3, 1, 6)


# ---------------------------------------------------------------- the golden vectors of the template families

GOLDEN_TEMPLATES = {  # family -> (template file, special tokens the template reads; ../shared/golden/README.md)
    "qwen25": ("Qwen2.5-7B-Instruct", {}), "qwen3": ("Qwen3-8B", {}),
    "qwen3_instruct_2507": ("Qwen3-4B-Instruct-2507", {}), "qwen3_thinking_2507": ("Qwen3-4B-Thinking-2507", {}),
    "qwen3_coder": ("Qwen3-Coder", {}), "qwen35": ("Qwen3.5-4B", {}), "qwen36": ("Qwen3.6-35B-A3B", {}),
    "glm45": ("GLM-4.5", {}), "glm46": ("GLM-4.6", {}), "glm47": ("GLM-4.7-Flash", {}),
    "kimi_k2": ("Kimi-K2-Instruct", {}), "kimi_k2_thinking": ("Kimi-K2-Thinking", {}),
    "minimax_m2": ("MiniMax-M2", {}),
    "deepseek_v31": ("DeepSeek-V3.1", {"bos_token": "<｜begin▁of▁sentence｜>"}),
    "deepseek_r1": ("DeepSeek-R1", {"bos_token": "<｜begin▁of▁sentence｜>"}),
    "llama31": ("Llama-3.1-8B-Instruct", {"bos_token": "<|begin_of_text|>"}),
    "mistral_small32": ("Mistral-Small-3.2-24B-Instruct-2506", {"bos_token": "<s>", "eos_token": "</s>"}),
    "gpt_oss": ("gpt-oss-20b", {}), "seed_oss": ("Seed-OSS-36B-Instruct", {"bos_token": "<seed:bos>"}),
}


@pytest.mark.parametrize("family", sorted(GOLDEN_TEMPLATES))
def test_reproduces_every_golden_vector_of_the_template_families(family):
    """The golden vectors were rendered by transformers from these templates; the runner renders them too."""
    require_shared()
    rows = golden("render", family)
    if not rows:
        pytest.skip(f"no golden vectors for {family}")
    name, special = GOLDEN_TEMPLATES[family]
    source = (TEMPLATES / f"{name}.jinja").read_text(encoding="utf-8")
    for row in rows:
        options = dict(row.get("options") or {})
        today = options.get("current_date")
        tpl = ChatTemplate(source, special_tokens=special, now=today)
        messages = decode_arguments(row["request"]["messages"], arguments="string" if family == "deepseek_r1" else "object")
        variables = toolwire.get_format(family).template_variables(**options)
        add_gen = variables.pop("add_generation_prompt", True)
        render = lambda: tpl.render(messages, row["request"].get("tools"), add_generation_prompt=add_gen,  # noqa: E731
                                    **variables)
        if "expected" in row:
            assert render() == row["expected"], row["id"]
        else:
            with pytest.raises(TemplateRenderError):
                render()
