"""The fuzz suite, per format: marker soup (tests/fuzz/strategies.py) through the one invariant checker
(tests/fuzz/invariants.py). A fixed, derandomized budget in the normal suite; long runs set
``TOOLWIRE_FUZZ_EXAMPLES`` (examples per format) and ``TOOLWIRE_FUZZ_RANDOM=1`` (fresh examples each run).
See docs/fuzzing.md."""

from __future__ import annotations

import json
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings

import toolwire
from fuzz import families, invariants, strategies

EXAMPLES = 40  # per format, in the normal suite
# Formats whose parsers break an invariant within EXAMPLES derandomized examples on main today (the failures
# are in /work/fuzz-findings.md and tests/formats/test_fuzz_known_findings.py): the largest budget that passes there.
# Raise each to EXAMPLES once h/json (JSON group) and h/dsml (gpt_oss) are merged.
LONG_RUN = os.environ.get("TOOLWIRE_FUZZ_EXAMPLES")
RANDOM = os.environ.get("TOOLWIRE_FUZZ_RANDOM") == "1"


def budget(name: str) -> int:
    return int(LONG_RUN) if LONG_RUN else EXAMPLES


@pytest.mark.parametrize("name", sorted(toolwire.formats()))
def test_marker_soup_holds_every_invariant(name):
    @settings(max_examples=budget(name), derandomize=not RANDOM, database=None, deadline=None,
              suppress_health_check=list(HealthCheck), print_blob=True)
    @given(strategies.parser_inputs(name))
    def run(case):
        text, thinking, seed, answer = case
        invariants.check(name, text, thinking=thinking, seed=seed, answer=answer)

    run()


def test_the_sentinel_alphabet_is_large_and_in_no_spelling():
    """The nothing-lost check can only fail if there are sentinels to lose: non-ASCII whitespace, control
    characters and non-ASCII letters, none of them in any family's markers or syntax."""
    sentinels = families.sentinels()
    assert {"\u3000", "\u00a0", "\x0b", "\x1c", "\x1f", "中", "😀", "\x00"} <= sentinels
    assert not any(ch in spelling for ch in sentinels for spelling in families.all_spellings())


@pytest.mark.parametrize("text, invariant", [
    ("ab\u3000c", "nothing_lost"),
    ("abc", "nothing_invented"),
])
def test_the_checker_fails_on_a_result_that_drops_or_invents_text(text, invariant):
    """The checker's own accounting, on hand-made results: a dropped U+3000, invented content."""
    out = toolwire.ParsedOutput(content=text.replace("\u3000", "") if invariant == "nothing_lost" else text + "!")
    check = invariants.check_nothing_lost if invariant == "nothing_lost" else invariants.check_nothing_invented
    with pytest.raises(invariants.Violation) as broken:
        if invariant == "nothing_lost":
            check("qwen3", text, out)
        else:
            check(text, out)
    assert broken.value.invariant == invariant


def test_marker_text_is_allowed_to_go_but_not_the_text_around_it():
    """A recognised marker's characters need not be kept; a letter outside every spelling must be."""
    text = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_call>"
    out = toolwire.get_format("qwen3").parse(text, families.TOOLS)
    assert [c.name for c in out.tool_calls] == ["get_weather"] and out.content == ""
    invariants.check_nothing_lost("qwen3", text, out)
    with pytest.raises(invariants.Violation, match="'j'"):
        invariants.check_nothing_lost("qwen3", text + "j", out)


# ---- tool results: the malformed-request step's result cases, and MCP results from random blocks

from toolwire import ToolResult  # noqa: E402
from toolwire.errors import InvalidRequest, InvalidToolResult, ToolwireError, UnsupportedByFormat  # noqa: E402
from fuzz import results as result_cases  # noqa: E402

RESULT_CASES = result_cases.malformed_result_cases()
REPR = re.compile(r"\{'[A-Za-z_]+': |'type': '")


@pytest.mark.parametrize("case", sorted(RESULT_CASES))
@pytest.mark.parametrize("name", sorted(toolwire.formats()))
def test_malformed_result_requests_render_or_raise_a_located_toolwire_error(name, case):
    """The harness's contract on result cases: render, or a ToolwireError; one about a message names it."""
    messages, tools, options, where = RESULT_CASES[case]
    fmt = toolwire.get_format(name)
    try:
        prompt = fmt.render(messages, tools, **options)
    except ToolwireError as exc:
        assert case != "control_tool_result", f"a well-formed result is refused: {exc}"
        if where is not None and isinstance(exc, InvalidRequest):
            assert exc.message_index == where, str(exc)
        return
    codes = [w.code for w in prompt.warnings]  # the warnings of any renderable request can be computed
    assert not REPR.search(prompt.text) or "tool_result_repr" in codes  # a template's own repr is never silent
    if case.startswith("content_huge_bounded"):
        assert len(prompt.text) < 30_000


@settings(max_examples=300, derandomize=not RANDOM, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(result_cases.mcp_results())
def test_mcp_results_from_random_blocks_convert_or_name_the_field(result):
    try:
        converted = ToolResult.from_mcp(result, result_cases.CALL)
    except InvalidToolResult as exc:
        assert exc.field and exc.field.split(".")[0].split("[")[0] in ("content", "structuredContent", "isError")
        return
    assert result_cases.envelope_round_trips(converted)
    text = converted.envelope_text()
    for block_text in result_cases.texts_of(result):
        assert json.dumps(block_text, ensure_ascii=False)[1:-1] in text or (
            converted.data is not None and json.loads(block_text or "null") == converted.data)
    for name in ("qwen35", "deepseek_v4", "gemma4", "glm47"):
        try:
            prompt = toolwire.get_format(name).render(result_cases._conv(converted), [result_cases.TOOL])
        except UnsupportedByFormat as exc:
            assert converted.media and exc.message_index == 2 and exc.field.startswith("content[")
            continue
        assert not REPR.search(prompt.text)


@settings(max_examples=300, derandomize=not RANDOM, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(result_cases.result_data())
def test_result_data_is_json_or_refused_naming_the_field(data):
    try:
        result = ToolResult.success(result_cases.CALL, data)
    except InvalidToolResult as exc:
        assert exc.field.startswith("data")
        return
    assert result_cases.envelope_round_trips(result)
