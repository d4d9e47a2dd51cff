"""Every family against its declaration (toolwire.families): the parser, renderer, options, policy, grammar and
registry read one declaration, so what the declaration says is what each of them does."""

from __future__ import annotations

import importlib
import pickle
import random

import pytest

import toolwire
from toolwire.errors import InvalidOption
from toolwire.family import Family, Options
from toolwire.markers import Marker, MarkerTable
from toolwire.registry import families

from support import GOLDEN, golden, golden_parse_kwargs, require_shared

FORMATS = toolwire.formats()

PLAIN_ANSWER = {"gpt_oss": "<|channel|>final<|message|>Hello there"}
"""A plain answer in the family's output syntax (harmony output names its channel)."""


_TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather for a city.",
                                           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                          "required": ["city"]}}}]

def plain(name: str) -> str:
    return PLAIN_ANSWER.get(name, "Hello there")


def answer_text(out: toolwire.ParsedOutput) -> str:
    return out.content


@pytest.mark.parametrize("name", FORMATS)
def test_every_stop_token_at_the_end_is_stripped_with_its_diagnostic(name):
    """Each stop token the declaration names, left at the end of an output, is taken out of the content and kept in
    a ``stop_token_in_output`` diagnostic (before stop 28, 9 families kept one of theirs in the content)."""
    fmt = toolwire.get_format(name)
    assert fmt.stop_tokens, f"{name} declares no stop token"
    for token in fmt.stop_tokens:
        out = fmt.parse(plain(name) + token, thinking=False)
        assert answer_text(out) == "Hello there", (name, token, out.content)
        assert [d.raw for d in out.diagnostics if d.code == "stop_token_in_output"] == [token], (name, token)


@pytest.mark.parametrize("name", FORMATS)
def test_a_stop_token_followed_by_more_text_is_not_lost(name):
    """Before the end, a stop token is the family's own business (text, or dropped with a diagnostic, as DSML
    does); the text after it stays content and the token is kept somewhere."""
    fmt = toolwire.get_format(name)
    token = fmt.stop_tokens[-1]
    out = fmt.parse(plain(name) + token + " and more", thinking=False)
    assert out.content.endswith(" and more")
    assert token in out.content + "".join(d.raw or "" for d in out.diagnostics)


@pytest.mark.parametrize("name", FORMATS)
def test_the_format_and_its_parser_read_one_declaration(name):
    fmt = toolwire.get_format(name)
    family = families()[name]
    assert fmt.family is family and fmt.parser_class.family is family
    assert (fmt.name, fmt.markers, fmt.stop_tokens, fmt.reasoning_markers) == (
        name, family.markers, family.stop_tokens, family.reasoning)
    assert isinstance(family.markers, MarkerTable) and all(isinstance(r, Marker) for r in family.markers)
    assert set(family.stop) <= set(family.markers)
    parser_module = importlib.import_module(fmt.parser_class.__module__)
    if hasattr(parser_module, "MARKERS"):  # the parser module's table is the declaration's, not a copy
        assert parser_module.MARKERS is family.markers or fmt.parser_class.family.markers is family.markers
    assert fmt.parser_class.__name__.endswith("Parser") and fmt.parser_class.__module__ == \
        f"toolwire.parsers.{family.module}"
    assert type(fmt).__module__ == f"toolwire.templates.{family.module}"


@pytest.mark.parametrize("name", FORMATS)
def test_reasoning_markers_are_spelled_from_the_table(name):
    family = families()[name]
    if family.reasoning is None:
        return
    spellings = family.markers.spellings()
    for marker in family.reasoning:
        assert any(marker.startswith(s) for s in spellings), (name, marker)


def test_every_declared_family_has_a_format_and_no_format_is_undeclared():
    declared = families()
    assert sorted(declared) == FORMATS
    for family in declared.values():
        module = importlib.import_module(f"toolwire.templates.{family.module}")
        assert all(f.family.module == family.module for f in module.FORMATS.values())


def test_fingerprints_name_one_family_each():
    seen = {}
    for family in families().values():
        for fp in family.fingerprints:
            assert len(fp.sha256) == 64 and fp.sha256 not in seen, (family.name, seen.get(fp.sha256))
            seen[fp.sha256] = family.name


@pytest.mark.parametrize("name", FORMATS)
def test_every_family_has_its_grammar_description(name):
    from toolwire.grammar.families import describer

    fmt = toolwire.get_format(name)
    assert fmt.family.grammar is not None and describer(fmt) is not None


# ---- options: one mechanism for every name

@pytest.mark.parametrize("name", FORMATS)
def test_thinking_and_its_template_spelling_that_disagree_are_refused_in_every_family(name):
    fmt = toolwire.get_format(name)
    messages = [{"role": "user", "content": "Hi"}]
    with pytest.raises(InvalidOption) as err:
        fmt.render(messages, _TOOLS, thinking=True, enable_thinking=False)
    assert err.value.field == "enable_thinking"
    with pytest.raises(InvalidOption):
        fmt.render(messages, _TOOLS, thinking=False, chat_template_kwargs={"enable_thinking": True})


@pytest.mark.parametrize("name", FORMATS)
def test_every_spelling_of_an_option_renders_the_same(name):
    """The toolwire name, the template keyword, each alias and ``chat_template_kwargs`` are one option."""
    fmt = toolwire.get_format(name)
    messages = [{"role": "user", "content": "Hi"}]
    options = fmt.family.options
    for value in (True, False):
        try:
            expected = fmt.render(messages, _TOOLS, thinking=value).text
        except InvalidOption:
            continue
        for spelling, target in options.spellings.items():
            if target != "thinking":
                continue
            assert fmt.render(messages, _TOOLS, **{spelling: value}).text == expected, (name, spelling)
            assert fmt.render(messages, _TOOLS, chat_template_kwargs={spelling: value}).text == expected, \
                (name, spelling)


@pytest.mark.parametrize("name", FORMATS)
def test_an_unknown_option_is_refused_naming_it(name):
    fmt = toolwire.get_format(name)
    with pytest.raises(InvalidOption) as err:
        fmt.render([{"role": "user", "content": "Hi"}], _TOOLS, effort="high")
    assert err.value.field == "effort" and "reasoning_effort" in str(err.value) and name in str(err.value)


def test_the_hint_names_an_api_that_exists():
    from toolwire.family import OPTION_HINTS

    assert "toolwire.validate(" not in " ".join(OPTION_HINTS.values())
    assert hasattr(toolwire, "ToolSet") and hasattr(toolwire.ToolSet, "validate")


def test_option_classes_reject_a_spelling_claimed_twice():
    from toolwire.family import Option

    with pytest.raises(TypeError, match="names both"):
        type("Clash", (Options,), {"preserve_thinking": Option(bool, template="enable_thinking")})


def test_a_declaration_whose_stop_token_is_not_in_its_table_is_an_error_at_import():
    table = MarkerTable(IM_END="<|im_end|>")
    with pytest.raises(ValueError, match="not in its marker table"):
        Family(name="x", module="x", reference="x", markers=table, stop=(Marker.EOS,), reasoning=None,
               options=Options, policy=families()["qwen25"].policy)


def test_marker_tables_are_read_only_and_keyed_by_role():
    table = families()["qwen3"].markers
    assert table.THINK_OPEN == table[Marker.THINK_OPEN] == table["think_open"] == "<think>"
    with pytest.raises(AttributeError):
        table.THINK_OPEN = "x"
    with pytest.raises(AttributeError, match="no EOT marker"):
        table.EOT
    with pytest.raises(ValueError, match="not a Marker role"):
        MarkerTable(THINKOPEN="<think>")
    assert pickle.loads(pickle.dumps(table)) == table


# ---- where parsing starts without prompt= or thinking=

@pytest.mark.parametrize("name", FORMATS)
def test_parsing_starts_in_content_unless_told_and_prompt_says_where_the_prompt_left_off(name):
    """Not given, ``thinking`` is False for parsing in every family (content first: no call is hidden as written
    inside the reasoning); ``prompt=`` starts where the prompt left the output, which for the default prompt is
    ``default_opens_reasoning``."""
    fmt = toolwire.get_format(name)
    prompt = fmt.render([{"role": "user", "content": "Hi"}], _TOOLS)
    assert prompt.opens_reasoning == fmt.default_opens_reasoning
    text = plain(name) if name == "gpt_oss" else "Some words."
    assert fmt.parse(text) == fmt.parse(text, thinking=False)
    assert fmt.parse(text, prompt=prompt) == fmt.parse(text, thinking=prompt.opens_reasoning)


# ---- every stream parser pickles mid-stream and resumes with the identical result

def _golden_outputs():
    if not GOLDEN.is_dir():
        return [pytest.param(None, None, marks=pytest.mark.skip(reason="../shared is absent"))]
    return [pytest.param(name, row, id=row["id"]) for name in FORMATS for row in golden("parse", name)]


@pytest.mark.parametrize("name, row", _golden_outputs())
def test_a_stream_pickled_mid_output_resumes_with_the_identical_result(name, row):
    require_shared()
    fmt = toolwire.get_format(name)
    kwargs = golden_parse_kwargs(row)
    text = row["model_output"]
    expected = fmt.parse(text, row.get("tools"), **kwargs)
    rng = random.Random(row["id"])
    cut = rng.randrange(len(text) + 1)
    parser = fmt.stream(row.get("tools"), **kwargs)
    first = parser.feed(text[:cut])
    resumed = pickle.loads(pickle.dumps(parser))
    events = first + resumed.feed(text[cut:]) + resumed.flush()
    result = resumed.finish()
    assert result == expected
    one_piece = fmt.stream(row.get("tools"), **kwargs)
    assert [e for e in events] == one_piece.feed(text[:cut]) + one_piece.feed(text[cut:]) + one_piece.flush()


# ---- an option not given means what the family's template does with its keyword unset

TEMPLATE_FILES = {
    "qwen25": "Qwen2.5-7B-Instruct", "qwen3": "Qwen3-8B", "qwen3_instruct_2507": "Qwen3-4B-Instruct-2507",
    "qwen3_thinking_2507": "Qwen3-4B-Thinking-2507", "qwen3_coder": "Qwen3-Coder", "qwen35": "Qwen3.5-4B",
    "qwen36": "Qwen3.6-35B-A3B", "qwen38": "Qwen3.8-27B", "glm45": "GLM-4.5", "glm46": "GLM-4.6",
    "glm47": "GLM-4.7-Flash", "kimi_k2": "Kimi-K2-Instruct", "kimi_k2_thinking": "Kimi-K2-Thinking",
    "minimax_m2": "MiniMax-M2", "deepseek_v31": "DeepSeek-V3.1", "deepseek_r1": "DeepSeek-R1",
    "llama32": "Llama-3.2-3B-Instruct", "llama4": "Llama-4-transformers-default",
    "mistral_small32": "Mistral-Small-3.2-24B-Instruct-2506", "gpt_oss": "gpt-oss-20b",
    "seed_oss": "Seed-OSS-36B-Instruct", "hermes3": "Hermes-3-Llama-3.1-8B-tool_use", "granite4": "Granite-4.1",
    "ministral3": "Ministral-3-14B-Reasoning-2512", "gemma4": "Gemma-4-E2B-it",
    "nemotron3": "extra/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "minimax_m3": "extra/MiniMax-M3",
    "kimi_k3": "extra/Kimi-K3", "laguna": "extra/poolside-Laguna-S-2.1", "step35": "extra/StepFun3.5-Flash",
    "hy3": "extra/tencent-Hy3", "glm53": "extra/GLM-5.3", "gigachat35": "extra/GigaChat3.5",
    "lfm25": "extra/LFM2.5-8B-A1B", "llama4_pythonic": "extra/Llama-4-pythonic-vllm",
}
"""The model's own template of each family whose reference is one (llama31's prints a fixed date instead of
today's and is checked by its golden vectors)."""

_CONVERSATIONS = (
    [{"role": "user", "content": "Weather in Paris?"}],
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Paris?"},
     {"role": "assistant", "content": "", "reasoning_content": "Look it up.", "tool_calls": [
         {"id": "call00000", "type": "function", "function": {"name": "get_weather",
                                                               "arguments": '{"city": "Paris"}'}}]},
     {"role": "tool", "tool_call_id": "call00000", "content": "18C"}],
)


@pytest.mark.parametrize("name", sorted(TEMPLATE_FILES))
def test_an_option_not_given_renders_what_the_template_does_with_its_keyword_unset(name):
    """``render(messages, tools)`` with no option equals the model's own template rendered with none of its
    switches set (what ``apply_chat_template`` gives): Qwen3, Qwen3.5/3.6/3.8, GLM, Nemotron 3, Laguna and Kimi K3
    think by default; MiniMax-M3 renders its ``adaptive`` mode."""
    from datetime import date

    from support import REAL
    from toolwire.templates.jinja import ChatTemplate, decode_arguments

    require_shared()
    fmt = toolwire.get_format(name)
    bos = fmt.markers.get(Marker.BOS) or fmt.markers.get(Marker.BOD)
    template = ChatTemplate((REAL / "templates" / f"{TEMPLATE_FILES[name]}.jinja").read_text("utf-8"),
                            now=date.today(), bos_token=bos, eos_token=fmt.markers.get(Marker.EOS))
    convert = getattr(fmt, "template_messages", lambda m: m)  # a family's own request conversion (Ministral 3)
    for messages in _CONVERSATIONS:
        sent = decode_arguments(convert(messages), arguments="string" if name == "deepseek_r1" else "object")
        expected = template.render(sent, _TOOLS, add_generation_prompt=True)
        assert fmt.render(messages, _TOOLS).text == expected


def test_the_options_page_states_every_familys_declaration():
    """docs/options.md has one row per family: the thinking keyword and default, where parsing starts, and the
    family's own options with their template keywords."""
    from pathlib import Path

    from toolwire.family import UNSET

    page = (Path(__file__).resolve().parents[2] / "docs" / "options.md").read_text("utf-8")
    rows = {line.split("|")[1].strip().strip("`"): [c.strip() for c in line.split("|")[2:-1]]
            for line in page.splitlines() if line.startswith("| `")}
    assert sorted(rows) == FORMATS
    for name, (keyword, default, starts, own) in rows.items():
        fmt = toolwire.get_format(name)
        options = fmt.family.options
        thinking = options.fields["thinking"]
        assert keyword == (f"`{thinking.template}`" if thinking.template else "(none)"), name
        assert default == ("on" if thinking.default else "off"), name
        assert starts == ("yes" if fmt.default_opens_reasoning else "no"), name
        named = {part.split("`")[1] for part in own.split(";") if "`" in part}
        expected = {k for k, v in options.fields.items()
                    if k not in options.COMMON or v.template and k == "reasoning_effort" or v.retains is not UNSET}
        assert named == expected, name
