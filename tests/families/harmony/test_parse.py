"""gpt_oss parsing: golden vectors (one-shot, streamed, as token ids, and as openai-harmony reads them),
header variants, analysis-channel calls, several messages, truncation, unknown tools, streaming."""

from __future__ import annotations

import json

import pytest

import toolwire
from toolwire.errors import InvalidOption
from toolwire.limits import Limits
from toolwire.output import ArgumentsDelta, ToolCallStarted
from support import (
    assert_events_consistent, check_chunking, check_golden_parse_oneshot, chunkings, full_state, golden_params,
    require_shared, stream_parse, summary,
)
from support.harmony_oracles import harmony_encoding, tiktoken_encoding

FMT = toolwire.get_format("gpt_oss")
WEATHER = [{"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]

# The HF template loses data when it renders these turns, so their model_output cannot hold what `expected`
# says (docs/harmony.md, "Golden parse vectors the output cannot satisfy"). The exact comparison is an
# expected failure; _adjusted() applies the template rule that lost the data to `expected`.
LOSSY = {
    "gpt_oss/parallel_results_out_of_order@1/thinking=True":
        ("first_call_only", "the template renders only tool_calls[0]; the output holds one of the two calls"),
    "gpt_oss/content_and_calls@1/thinking=True":
        ("content_as_analysis", "the template writes a tool-call message's content on the analysis channel"),
}


def _golden(strict_marks: bool):
    out = []
    for p in golden_params("parse", "gpt_oss"):
        if p.id in LOSSY and strict_marks:
            out.append(pytest.param(*p.values, id=p.id, marks=pytest.mark.xfail(strict=True, reason=LOSSY[p.id][1])))
        else:
            out.append(p)
    return out


def _adjusted(row: dict) -> dict:
    expected = json.loads(json.dumps(row["expected"]))
    rule = LOSSY.get(row["id"], (None,))[0]
    if rule == "first_call_only":
        expected["tool_calls"] = expected["tool_calls"][:1]
    elif rule == "content_as_analysis":
        assert expected["reasoning"] == ""
        expected["reasoning"], expected["content"] = expected["content"], ""
    return expected


def _parse(row: dict, **kw):
    return FMT.parse(row["model_output"], row["tools"], thinking=row["options"].get("thinking", True), **kw)


# ---------------------------------------------------------------------------------------------- golden

@pytest.mark.parametrize("row", _golden(strict_marks=True))
def test_golden_parse_one_shot(row):
    check_golden_parse_oneshot(row, thinking=row["options"].get("thinking", True))


@pytest.mark.parametrize("row", [p for p in golden_params("parse", "gpt_oss") if p.id in LOSSY])
def test_golden_lossy_vectors_give_what_the_output_holds(row):
    require_shared()
    assert summary(_parse(row)) == _adjusted(row)


@pytest.mark.parametrize("row", _golden(strict_marks=False))
def test_golden_parse_streamed(row):
    """Every split point (short outputs), 1-char feeds and random chunkings give the one-shot result."""
    require_shared()
    text = row["model_output"]
    out = check_chunking(FMT, text, row["tools"], thinking=True, splits=chunkings(
        text, seed=row["id"], every_split_upto=600, random_splits=20, max_len=64))
    assert summary(out) == _adjusted(row)


@pytest.mark.parametrize("row", _golden(strict_marks=False))
def test_golden_parse_as_token_ids(row):
    """The same output as o200k_harmony ids: all at once and one id at a time."""
    require_shared()
    enc = tiktoken_encoding()
    ids = enc.encode(row["model_output"], allowed_special="all")
    expected = full_state(_parse(row))
    for pieces in ([ids], [[t] for t in ids]):
        parser = FMT.stream(row["tools"], thinking=True, encoding=enc)
        events = []
        for piece in pieces:
            events += parser.feed(ids=piece)
        events += parser.flush()
        result = parser.finish()
        assert full_state(result) == expected
        assert_events_consistent(result, events)


@pytest.mark.parametrize("row", _golden(strict_marks=False))
def test_golden_parse_agrees_with_openai_harmony_parser(row):
    """openai-harmony's own parser splits the output into the same channels, recipients and bodies."""
    require_shared()
    oh = pytest.importorskip("openai_harmony")
    enc = harmony_encoding()
    tokens = enc.encode(row["model_output"], allowed_special="all")
    messages = enc.parse_messages_from_completion_tokens(tokens, oh.Role.ASSISTANT)
    reasoning, content, calls = [], [], []
    for m in messages:
        text = "".join(c.text for c in m.content)
        if m.recipient:
            calls.append({"name": m.recipient.removeprefix("functions."), "arguments": json.loads(text)})
        elif m.channel == "analysis":
            reasoning.append(text)
        else:
            content.append(text)
    assert summary(_parse(row)) == {"content": "".join(content), "reasoning": "".join(reasoning),
                                    "tool_calls": calls}


# -------------------------------------------------------------------------------------- header variants

CALL = '{"city": "Paris"}'


@pytest.mark.parametrize("output", [
    " to=functions.get_weather<|channel|>commentary json<|message|>" + CALL,
    " to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>" + CALL,
    " to=functions.get_weather<|channel|>commentary<|message|>" + CALL,
    "<|channel|>commentary to=functions.get_weather json<|message|>" + CALL,
    "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>" + CALL,
    "<|channel|>commentary to=functions.get_weather<|constrain|>json<|message|>" + CALL,
    "<|channel|>commentary to=functions.get_weather<|message|>" + CALL,
    "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>" + CALL,
    " to=functions.get_weather<|channel|>commentary json<|message|>" + CALL + "<|call|>",
])
def test_recipient_in_either_place_constrain_optional(output):
    out = FMT.parse(output, WEATHER)
    assert summary(out) == {"content": "", "reasoning": "", "tool_calls": [
        {"name": "get_weather", "arguments": {"city": "Paris"}}]}
    assert out.tool_calls[0].status == "proposed" and out.tool_calls[0].raw_arguments == CALL
    stop = [("stop_token_in_output", "<|call|>")] if output.endswith("<|call|>") else []
    assert [(d.code, d.raw) for d in out.diagnostics] == stop and not out.truncated


def test_call_on_the_analysis_channel_is_accepted_by_default():
    output = "<|channel|>analysis to=functions.get_weather code<|message|>" + CALL
    out = FMT.parse(output, WEATHER)
    call = out.tool_calls[0]
    assert (call.source, call.status, call.arguments) == ("content", "repaired", {"city": "Paris"})
    assert [(d.code, d.severity) for d in call.diagnostics] == [("analysis_channel_call", "warning")]
    assert summary(out)["tool_calls"] == [{"name": "get_weather", "arguments": {"city": "Paris"}}]
    assert out.reasoning == "" and out.content == ""
    assert FMT.parse(output, WEATHER, promote_reasoning_calls=True).tool_calls[0].status == "repaired"


def test_analysis_calls_option_is_checked():
    with pytest.raises(InvalidOption) as err:
        FMT.stream(WEATHER, analysis_calls="maybe")
    assert err.value.field == "analysis_calls"


def test_call_on_the_analysis_channel_rejected_on_request():
    output = "<|channel|>analysis to=functions.get_weather code<|message|>" + CALL
    out = FMT.parse(output, WEATHER, analysis_calls="reject")
    call = out.tool_calls[0]
    assert (call.source, call.status, call.arguments) == ("reasoning", "rejected", {"city": "Paris"})
    assert [d.code for d in call.diagnostics] == ["call_in_reasoning"]
    assert "about half the time" in call.diagnostics[0].message
    assert "promote_reasoning_calls=True" in call.diagnostics[0].message
    assert summary(out)["tool_calls"] == []
    promoted = FMT.parse(output, WEATHER, analysis_calls="reject", promote_reasoning_calls=True).tool_calls[0]
    assert (promoted.source, promoted.status) == ("reasoning", "proposed")
    assert [(d.code, d.severity) for d in promoted.diagnostics] == [("call_in_reasoning_promoted", "info")]


def test_new_message_after_end_is_read():
    output = ("<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>commentary<|message|>"
              "Checking.<|end|><|start|>assistant<|channel|>final<|message|>Done.<|return|>")
    out = FMT.parse(output)
    assert (out.reasoning, out.content) == ("think", "Checking.Done.")
    assert [(d.code, d.severity, d.raw) for d in out.diagnostics] == [("stop_token_in_output", "info", "<|return|>")]
    # only at the very end: a <|call|> between messages is the message's end, no diagnostic
    assert FMT.parse(output.replace("<|end|><|start|>assistant<|channel|>final", "<|call|><|start|>assistant"
                                    "<|channel|>final")[:-len("<|return|>")]).diagnostics == []


def test_several_calls_and_their_order():
    output = ("<|channel|>analysis<|message|>two<|end|><|start|>assistant to=functions.get_weather<|channel|>"
              'commentary json<|message|>{"city": "Oslo"}<|call|><|start|>assistant to=functions.get_weather'
              '<|channel|>commentary json<|message|>{"city": "Lima"}')
    out = FMT.parse(output, WEATHER)
    assert [(c.index, c.arguments["city"], c.status) for c in out.tool_calls] == [
        (0, "Oslo", "proposed"), (1, "Lima", "proposed")]
    assert out.reasoning == "two"


@pytest.mark.parametrize("output,partial", [
    (' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Par', {"city": "Par"}),
    (' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris", "da', {"city": "Paris"}),
    (" to=functions.get_weather<|channel|>commentary json<|message|>", {}),
])
def test_truncated_call_is_truncated(output, partial):
    for out in (FMT.parse(output, WEATHER), stream_parse(FMT, output, tools=WEATHER)[0]):
        assert out.truncated
        assert len(out.tool_calls) == 1
        call = out.tool_calls[0]
        assert (call.name, call.status, call.arguments) == ("get_weather", "truncated", partial)


@pytest.mark.parametrize("output", [" to=functions.get_weather<|channel|>comm", " to=functions.get_weather",
                                    " to=functions.get_wea", "<|start|>assistant to=functions.get_weather<|chan"])
def test_output_ending_inside_a_call_header_starts_no_call(output):
    parser = FMT.stream(WEATHER)
    events = [e for ch in output for e in parser.feed(ch)] + parser.flush()
    out = parser.finish()
    assert not any(isinstance(e, ToolCallStarted) for e in events)
    assert out.tool_calls == [] and out.truncated
    raw = output.removeprefix("<|start|>")
    assert [(d.code, d.raw) for d in out.diagnostics] == [("truncated_call_header", raw)]


def test_unknown_tool_is_rejected_not_dropped():
    out = FMT.parse(' to=functions.delete_all<|channel|>commentary json<|message|>{"x": 1}', WEATHER)
    call = out.tool_calls[0]
    assert (call.name, call.status, call.arguments) == ("delete_all", "rejected", {"x": 1})
    assert [d.code for d in call.diagnostics] == ["unknown_tool"]


def test_builtin_tool_recipient_keeps_its_name():
    out = FMT.parse('<|channel|>analysis to=browser.search code<|message|>{"query": "x"}', WEATHER,
                    promote_reasoning_calls=True)
    call = out.tool_calls[0]
    assert (call.name, call.status, call.arguments) == ("browser.search", "rejected", {"query": "x"})
    assert "unknown_tool" in [d.code for d in call.diagnostics]


def test_invalid_arguments_are_rejected_with_the_raw_text():
    out = FMT.parse(" to=functions.get_weather<|channel|>commentary json<|message|>city=Paris<|call|>", WEATHER)
    call = out.tool_calls[0]
    assert (call.status, call.raw_arguments) == ("rejected", "city=Paris")
    assert "invalid_json" in [d.code for d in call.diagnostics]


def test_trailing_text_after_the_arguments():
    out = FMT.parse(' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Rome"} ok', WEATHER)
    call = out.tool_calls[0]
    assert (call.status, call.arguments, call.raw_arguments) == ("repaired", {"city": "Rome"}, '{"city": "Rome"} ok')
    assert [(d.code, d.raw) for d in call.diagnostics] == [("trailing_text", " ok")]


def test_call_limit():
    one = ' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "A"}<|call|>'
    out = FMT.parse(one + "<|start|>assistant" + one, WEATHER, limits=Limits(max_calls=1))
    assert [c.status for c in out.tool_calls] == ["proposed"]  # past the limit: text only, no candidate
    [diag] = [d for d in out.diagnostics if d.code == "too_large"]
    assert '{"city": "A"}' in diag.raw


def test_long_string_arguments_stream_before_the_call_ends():
    parser = FMT.stream(WEATHER)
    parser.feed(' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "')
    events = parser.feed("x" * 1000)
    streamed = "".join(e.fragment for e in events if isinstance(e, ArgumentsDelta))
    assert streamed.endswith("x" * 1000)
    parser.feed('"}')
    out = parser.finish()
    assert out.tool_calls[0].arguments == {"city": "x" * 1000}


def test_content_and_reasoning_stream_as_they_arrive():
    parser = FMT.stream()
    first = parser.feed("<|channel|>analysis<|message|>thinking about")
    assert [e.text for e in first if e.type == "reasoning"] == ["thinking about"]
    second = parser.feed(" it<|e")  # a possible marker prefix is held back, nothing else
    assert [e.text for e in second if e.type == "reasoning"] == [" it"]
    third = parser.feed("nd|><|start|>assistant<|channel|>final<|message|>Hi")
    assert [e.text for e in third if e.type == "content"] == ["Hi"]
    assert parser.finish().content == "Hi"


def test_feed_after_finish_raises_and_modes_do_not_mix():
    from toolwire.errors import StreamClosed

    parser = FMT.stream()
    parser.feed("<|channel|>final<|message|>x")
    with pytest.raises(ValueError):
        parser.feed(ids=[1])  # no encoding given
    parser.finish()
    with pytest.raises(StreamClosed):
        parser.feed("y")


# -------------------------------------------------------------------------------------- where the output starts

@pytest.mark.parametrize("thinking", [True, False])
def test_start_state_is_the_header_whatever_thinking_or_the_prompt_says(thinking):
    """The prompt ends ``<|start|>assistant`` in both modes (``opens_reasoning`` is False: no reasoning block is
    open yet); each message's channel says whether it is reasoning. ``thinking=`` changes nothing."""
    prompt = FMT.render([{"role": "user", "content": "Weather in Paris?"}], WEATHER, thinking=thinking)
    assert prompt.text.endswith("<|start|>assistant") and prompt.opens_reasoning is False
    output = ("<|channel|>analysis<|message|>Need the tool.<|end|><|start|>assistant<|channel|>final<|message|>"
              "Sunny.")
    for kw in ({"prompt": prompt}, {"thinking": True}, {"thinking": False}):
        out = FMT.parse(output, WEATHER, **kw)
        assert (out.reasoning, out.content, out.codes()) == ("Need the tool.", "Sunny.", [])
    # text without a header is content (with a diagnostic), never reasoning, in either mode
    for kw in ({"prompt": prompt}, {"thinking": True}, {"thinking": False}):
        out = FMT.parse("Just text.", WEATHER, **kw)
        assert (out.reasoning, out.content, out.codes()) == ("", "Just text.", ["missing_header"])


def test_a_truncated_call_over_a_limit_is_truncated_with_too_large():
    output = ' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "' + "x" * 200
    for out in (FMT.parse(output, WEATHER, limits=Limits(max_argument_bytes=64)),
                stream_parse(FMT, output, tools=WEATHER, limits=Limits(max_argument_bytes=64))[0]):
        call = out.tool_calls[0]
        assert call.status == "truncated" and out.truncated
        assert "too_large" in [d.code for d in call.diagnostics]
