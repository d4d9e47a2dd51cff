"""Qwen/Hermes JSON stream parser: golden vectors one-shot and streamed at any chunking, raw argument
streaming, truncation, unknown tools, calls inside reasoning, the bare-JSON option, robustness."""

from __future__ import annotations


import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolwire
from toolwire.output import ArgumentsDelta
from support import (
    assert_events_consistent, check_golden_parse_oneshot, check_golden_parse_streamed, chunkings, golden_params,
    executed_lines, golden_parse_kwargs, require_shared, stream_parse, summary,
)

from support.hermes_json import FAMILIES, accounted, check_chunking, declared

GOLDEN = [p for fam in FAMILIES for p in golden_params("parse", fam)]
WITH_CALLS = [p for p in GOLDEN if p.values[0] is not None and p.values[0]["expected"]["tool_calls"]]
TOOLS = declared("get_weather", "search")
QWEN25 = toolwire.get_format("qwen25")
QWEN3 = toolwire.get_format("qwen3")
THINKING_2507 = toolwire.get_format("qwen3_thinking_2507")


@pytest.mark.parametrize("row", GOLDEN)
def test_golden_parse_one_shot(row):
    check_golden_parse_oneshot(row)


@pytest.mark.parametrize("row", GOLDEN)
def test_golden_parse_streamed(row):
    """1-char feeds, every two-piece split and random splits give the one-shot result; events agree."""
    check_golden_parse_streamed(row, chunkings(row["model_output"], seed=len(row["id"]), max_len=(2, 5, 16, 64)))


@pytest.mark.parametrize("row", WITH_CALLS)
def test_golden_arguments_stream_as_the_raw_json(row):
    """Each call's fragments are exactly the JSON text the model wrote, and they arrive before the call ends."""
    require_shared()
    fmt = toolwire.get_format(row["family"])
    text = row["model_output"]
    result, events = stream_parse(fmt, text, None, row["tools"], **golden_parse_kwargs(row))
    for call in result.tool_calls:
        frags = [e for e in events if isinstance(e, ArgumentsDelta) and e.index == call.index]
        assert "".join(e.fragment for e in frags) == call.raw_arguments
        assert '"arguments": ' + call.raw_arguments + "}" in text
        finished = next(i for i, e in enumerate(events) if e.type == "tool_call_finished" and e.index == call.index)
        first = events.index(frags[0])
        assert first < finished and (call.arguments == {} or len(frags) > 1)


@pytest.mark.parametrize("row", WITH_CALLS)
def test_golden_outputs_cut_anywhere_are_truncated_never_complete(row):
    require_shared()
    fmt = toolwire.get_format(row["family"])
    text = row["model_output"]
    closes = [i + len("</tool_call>") for i in range(len(text)) if text.startswith("</tool_call>", i)]
    for cut in range(0, len(text), 3):
        part = text[:cut]
        result, events = stream_parse(fmt, part, [part[i:i + 7] for i in range(0, len(part), 7)], row["tools"],
                                      **golden_parse_kwargs(row))
        assert_events_consistent(result, events)
        complete = sum(1 for c in closes if c <= cut)
        assert [c.status for c in result.tool_calls][:complete] == ["proposed"] * complete
        for call in result.tool_calls[complete:]:
            assert call.status == "truncated", (cut, call)
            assert result.truncated
        if len(result.tool_calls) == complete:  # truncated only when the cut fell inside a call's header
            assert result.truncated == ("truncated_call_header" in [d.code for d in result.diagnostics])


# ---------------------------------------------------------------- behaviour beyond the vectors

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def test_unknown_tools_are_rejected_not_dropped():
    out = check_chunking(QWEN25, CALL.replace("get_weather", "launch_rockets"), TOOLS)
    [call] = out.tool_calls
    assert (call.name, call.status, call.arguments) == ("launch_rockets", "rejected", {"city": "Paris"})
    assert out.codes() == ["unknown_tool"]


def test_without_declared_tools_every_name_is_accepted():
    [call] = QWEN25.parse(CALL.replace("get_weather", "anything"), None).tool_calls
    assert (call.name, call.status) == ("anything", "proposed")


@pytest.mark.parametrize("promote", [False, True])
def test_calls_inside_reasoning_are_reported_not_promoted(promote):
    text = "<think>\nI might call\n" + CALL + "\nno.\n</think>\n\nDone."
    out = check_chunking(QWEN3, text, TOOLS, thinking=False, promote_reasoning_calls=promote)  # the model's <think>
    assert (out.reasoning, out.content) == ("I might call\nno.", "Done.")
    [call] = out.tool_calls
    assert (call.source, call.arguments) == ("reasoning", {"city": "Paris"})
    if promote:
        assert call.status == "proposed" and out.codes() == []
    else:
        assert call.status == "rejected" and out.codes() == ["call_in_reasoning"]
        assert summary(out)["tool_calls"] == []


def test_thinking_2507_starts_inside_reasoning():
    out = check_chunking(THINKING_2507, "step one\nstep two\n</think>\n\n" + CALL, TOOLS, thinking=True)
    assert (out.reasoning, out.content, len(out.tool_calls)) == ("step one\nstep two", "", 1)
    out = check_chunking(THINKING_2507, "still thinking", TOOLS, thinking=True)
    assert (out.reasoning, out.content, out.codes()) == ("still thinking", "", ["reasoning_not_closed"])


def test_qwen3_think_tag_only_counts_at_the_start():
    out = check_chunking(QWEN3, "Hello <think>x</think>", TOOLS)
    # a closer with no reasoning open: the text before it stays content, the closer is not content
    assert (out.content, out.reasoning) == ("Hello <think>x", "")
    assert [(d.code, d.raw) for d in out.diagnostics] == [("reasoning_close_in_content", "</think>")]
    out = check_chunking(QWEN3, "<think>x</think>y", TOOLS)
    assert (out.content, out.reasoning) == ("y", "x")


def test_markers_inside_argument_strings_are_data():
    text = ('<tool_call>\n{"name": "search", "arguments": {"q": "</tool_call>\\n<tool_call> </think>"}}\n'
            "</tool_call>\nafter")
    out = check_chunking(QWEN3, text, TOOLS)
    [call] = out.tool_calls
    assert call.arguments == {"q": "</tool_call>\n<tool_call> </think>"} and call.status == "proposed"
    assert out.content == "\nafter"


def test_a_missing_close_tag_ends_the_call_at_the_next_one():
    text = CALL.replace("\n</tool_call>", "") + "\n" + CALL
    out = check_chunking(QWEN25, text, TOOLS)
    assert [c.status for c in out.tool_calls] == ["proposed", "proposed"]
    assert "call_not_closed" in [d.code for d in out.tool_calls[0].diagnostics]


def test_a_long_argument_streams_while_it_arrives():
    value = "x" * 20000
    text = '<tool_call>\n{"name": "search", "arguments": {"q": "' + value + '"}}\n</tool_call>'
    parser = QWEN25.stream(TOOLS)
    sent = []
    for i in range(0, len(text) - 20, 100):
        sent += [e.fragment for e in parser.feed(text[i:i + 100]) if isinstance(e, ArgumentsDelta)]
    assert len("".join(sent)) > 19000  # streamed before </tool_call> arrived


def test_per_delta_cost_stays_flat():
    """Streaming a 64x longer argument in 4-char deltas runs ~64x the parser's Python lines (linear), not ~4096x
    (counted, not timed; the per-delta CPU cost is bench/bench_qwen.py's flatness table)."""
    from pathlib import Path

    import toolwire.parsers

    roots = (str(Path(toolwire.parsers.__file__).parent), str(Path(toolwire.__file__).parent))

    def work(n: int) -> float:
        text = '<tool_call>\n{"name": "search", "arguments": {"q": "' + "ab c" * (n // 4) + '"}}\n</tool_call>'

        def run():
            parser = QWEN25.stream(TOOLS)
            for i in range(0, len(text), 4):
                parser.feed(text[i:i + 4])
            parser.finish()
        return executed_lines(run, *roots) / len(text)

    assert work(64_000) < 2 * work(1_000)


# ---------------------------------------------------------------- the bare-JSON option (Qwen2.5)

BARE = '{"name": "get_weather", "arguments": {"city": "Paris"}}'


def test_bare_json_is_content_when_the_option_is_off():
    out = check_chunking(QWEN25, BARE, TOOLS, bare_json_calls=False)
    assert (out.content, out.tool_calls) == (BARE, [])


def test_bare_json_naming_a_declared_tool_is_a_repaired_call():
    out = check_chunking(QWEN25, "  " + BARE + "\n", TOOLS)
    [call] = out.tool_calls
    assert (out.content, call.name, call.arguments, call.status) == ("", "get_weather", {"city": "Paris"},
                                                                     "repaired")
    assert out.codes() == ["missing_call_wrapper"]


@pytest.mark.parametrize("text", [
    BARE + " and more text",                                          # not the whole output
    BARE.replace("get_weather", "undeclared"),                        # not a declared tool
    '{"city": "Paris"}',                                              # no name
    BARE[:-5],                                                        # unfinished
    "Sure: " + BARE,                                                  # text before it
])
def test_bare_json_needs_the_whole_output_to_name_a_declared_tool(text):
    out = check_chunking(QWEN25, text, TOOLS, bare_json_calls=True)
    assert (out.content, out.tool_calls) == (text, [])


def test_bare_json_option_still_parses_tagged_calls():
    out = check_chunking(QWEN25, '{"a": 1} then\n' + CALL, TOOLS, bare_json_calls=True)
    assert out.content == '{"a": 1} then' and [c.name for c in out.tool_calls] == ["get_weather"]


# ---------------------------------------------------------------- robustness (fuzz)

PIECES = ["<tool_call>", "</tool_call>", "<think>", "</think>", "\n", '{"name": "search", "arguments": ',
          '{"name": "nope", "arguments": ', "{", "}", "[", "]", '"', "\\", ",", ":", "True", "'q'", '"q"', " ",
          "```json\n", "```", "1", "-", "é", "<tool_", "</think", '"x"', "null", '"arguments"']


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(st.sampled_from(PIECES), max_size=30), family=st.sampled_from(
    ["qwen25", "qwen3", "qwen3_thinking_2507"]), bare=st.booleans())
def test_any_output_parses_the_same_at_any_chunking_and_keeps_every_character(pieces, family, bare):
    text = "".join(pieces)
    fmt = toolwire.get_format(family)
    out = check_chunking(fmt, text, TOOLS, thinking=True, bare_json_calls=bare)
    kept = accounted(out)
    # nothing lost: every non-blank character of the output is kept somewhere (markers are structure)
    stripped = text
    for marker in ("<tool_call>", "</tool_call>", "<think>", "</think>"):
        stripped = stripped.replace(marker, "")
    for ch in set(stripped) - set(" \n"):
        assert ch in kept, (ch, text)
    for call in out.tool_calls:
        assert call.status in ("proposed", "repaired", "rejected", "truncated")
        assert isinstance(call.arguments, dict)
    if out.truncated:  # a cut-off call, or a cut-off header (no call: its name was not complete)
        assert any(c.status in ("truncated", "rejected") for c in out.tool_calls) or \
            "truncated_call_header" in [d.code for d in out.diagnostics]
