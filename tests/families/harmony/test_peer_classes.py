"""gpt-oss: classes of failure that peers' tests and reported outputs showed, in our own words and values. Each is
checked one-shot and streamed in every split."""

from __future__ import annotations

import pytest

import toolwire
from toolwire.parsers.harmony import MARKERS
from support.family_checks import check_chunking

FMT = toolwire.get_format("gpt_oss")
START, END, MESSAGE, CHANNEL = MARKERS["start"], MARKERS["end"], MARKERS["message"], MARKERS["channel"]
RETURN, CALL = MARKERS["return"], MARKERS["call"]
TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {
    "type": "object", "properties": {"term": {"type": "string"}}}}}]
THINK = f"{CHANNEL}analysis{MESSAGE}Short sums.{END}{START}assistant"


def codes(out):
    return [d.code for d in out.diagnostics]


# ---- a final / analysis header with its text and no <|message|>: the text is that channel's body

@pytest.mark.parametrize("before", ["", THINK])
@pytest.mark.parametrize("after", ["", RETURN, END, f"{END}{START}assistant{CHANNEL}final{MESSAGE} Bye.",
                                   f"{START}assistant{CHANNEL}final{MESSAGE} Bye."])
def test_a_final_answer_written_without_the_message_marker(before, after):
    text = f"{before}{CHANNEL}final Seven plus five is 12.{after}"
    out = check_chunking(FMT, text, TOOLS)
    assert out.content == "Seven plus five is 12." + (" Bye." if "Bye" in after else "")
    assert out.reasoning == ("Short sums." if before else "")
    assert "missing_message_marker" in codes(out) and not out.truncated
    assert "truncated_header" not in codes(out) and "malformed_header" not in codes(out)


def test_the_text_runs_on_past_a_line_break_and_the_header_limit():
    long_line = "ab " * 120
    out = check_chunking(FMT, f"{CHANNEL}final {long_line}\nsecond line", TOOLS)
    assert out.content == long_line + "\nsecond line"
    out = check_chunking(FMT, f"{CHANNEL}final Totals:\n- 3\n- 4{END}", TOOLS)
    assert out.content == "Totals:\n- 3\n- 4"


def test_analysis_text_without_the_message_marker_is_reasoning():
    out = check_chunking(FMT, f"{CHANNEL}analysis Adding them up.{END}{START}assistant{CHANNEL}final{MESSAGE}12", TOOLS)
    assert (out.reasoning, out.content) == ("Adding them up.", "12")
    assert "missing_message_marker" in codes(out)


@pytest.mark.parametrize("text", [
    f"{CHANNEL}final to=functions.lookup",                      # a call header cut short: no body
    f"{CHANNEL}commentary 3?{END}{START}assistant{CHANNEL}final{MESSAGE}ok",  # junk after commentary: not content
    f"{START}user{CHANNEL}final hello there",                   # not an assistant message
    f"{CHANNEL}final",                                          # no text after the channel
])
def test_what_is_not_a_body(text):
    out = check_chunking(FMT, text, TOOLS)
    assert "missing_message_marker" not in codes(out)
    assert "hello" not in out.content and "3?" not in out.content


def test_a_well_formed_output_is_unchanged():
    out = check_chunking(FMT, f"{THINK}{CHANNEL}final{MESSAGE}Twelve.{RETURN}", TOOLS)
    assert (out.content, out.reasoning) == ("Twelve.", "Short sums.")
    assert codes(out) == ["stop_token_in_output"]
