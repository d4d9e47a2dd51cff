"""The fuzz suite, per format: marker soup (tests/fuzz/strategies.py) through the one invariant checker
(tests/fuzz/invariants.py). A fixed, derandomized budget in the normal suite; long runs set
``TOOLWIRE_FUZZ_EXAMPLES`` (examples per format) and ``TOOLWIRE_FUZZ_RANDOM=1`` (fresh examples each run).
See docs/fuzzing.md."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings

import toolwire
from fuzz import families, invariants, strategies

EXAMPLES = 40  # per format, in the normal suite
# Formats whose parsers break an invariant within EXAMPLES derandomized examples on main today (the failures
# are in /work/fuzz-findings.md and tests/test_fuzz_known_findings.py): the largest budget that passes there.
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
