"""Where Qwen3-Coder / Qwen3.5 / Qwen3.6 / Seed-OSS parsing starts: ``parse(out, prompt=render(...))`` starts
where the prompt left off, after a user turn and after tool results (issue 11 §1). The prompt tails are read
off the reference templates (../shared/real/templates) by hand."""

from __future__ import annotations

import pytest

from support.xml_calls import AFTER_TOOL, AFTER_USER, check_start_state

QWEN_OUT = "R\n</think>\n\nC"
SEED_OUT = "R</seed:think>\nC"

CASES = [
    # family, thinking, prompt tail, opens reasoning
    ("qwen3_coder", False, "<|im_start|>assistant\n", False),
    ("qwen3_coder", True, "<|im_start|>assistant\n", False),  # no reasoning channel in the template
    ("qwen35", True, "<|im_start|>assistant\n<think>\n", True),
    ("qwen35", False, "<|im_start|>assistant\n<think>\n\n</think>\n\n", False),
    ("qwen36", True, "<|im_start|>assistant\n<think>\n", True),
    ("qwen36", False, "<|im_start|>assistant\n<think>\n\n</think>\n\n", False),
    ("seed_oss", True, "<seed:bos>assistant\n", False),  # the model writes <seed:think> itself
    ("seed_oss", False, "<seed:bos>assistant\n", False),
]


@pytest.mark.parametrize("history", [AFTER_USER, AFTER_TOOL], ids=["after_user", "after_tool_result"])
@pytest.mark.parametrize("family, thinking, tail, opened", CASES)
def test_parsing_starts_where_the_prompt_left_off(family, thinking, tail, opened, history):
    if family == "seed_oss":
        check_start_state(family, thinking, history, tail, SEED_OUT, opened, ("R", "C"), ("", "R\nC"))
    else:
        check_start_state(family, thinking, history, tail, QWEN_OUT, opened, ("R", "C"), ("", "R\n\n\nC"))


@pytest.mark.parametrize("family", ["qwen3_coder", "qwen35", "qwen36"])
def test_thinking_switch_means_the_prompt_opened_reasoning(family):
    """Without ``prompt=``, ``thinking=True`` starts in reasoning for every family (a serving stack that
    split the reasoning itself passes ``thinking=False`` and the content only)."""
    import toolwire

    fmt = toolwire.get_format(family)
    out = fmt.parse(QWEN_OUT, thinking=True)
    assert (out.reasoning, out.content, out.diagnostics) == ("R", "C", [])
    out = fmt.parse("<think>\nR\n</think>\n\nC", thinking=False)  # the model opening reasoning itself, at the start
    assert (out.reasoning, out.content, out.diagnostics) == ("R", "C", [])
