"""DSML start state from the prompt, and the real-world variants and defaults of issues 11 and 21 that need
more than the corpus in ``fixtures/dsml/malformed.jsonl`` (schemas, limits, events, token ids)."""

from __future__ import annotations

import pytest

import toolwire
from support import REAL, assert_events_consistent, require_shared, stream_parse
from toolwire.output import ToolCallStarted
from toolwire.tokenize import load_tokenizer, vocabulary

FAMILIES = ("deepseek_v32", "deepseek_v4", "deepseek_v41")
WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]
USER = [{"role": "user", "content": "Weather in Oslo?"}]
AFTER_RESULT = USER + [
    {"role": "assistant", "content": "", "reasoning_content": "Need the tool.",
     "tool_calls": [{"id": "c0", "type": "function",
                     "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]},
    {"role": "tool", "tool_call_id": "c0", "content": "sunny"},
]


# ---- where the output starts

@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("history", [USER, AFTER_RESULT], ids=["after_user", "after_tool_result"])
@pytest.mark.parametrize("thinking", [True, False])
def test_the_prompt_says_whether_reasoning_is_open(family, history, thinking):
    """Every DSML encoder opens ``<think>`` in thinking mode after a user turn and after tool results alike
    (drop_thinking or not), and writes ``</think>`` otherwise; ``prompt=`` follows it."""
    fmt = toolwire.get_format(family)
    for drop in (True, False):
        prompt = fmt.render(history, WEATHER, thinking=thinking, drop_thinking=drop)
        assert prompt.opens_reasoning is thinking
        assert prompt.text.endswith("<think>" if thinking else "</think>")
        out = fmt.parse("Plan.</think>Sunny.", WEATHER, prompt=prompt)
        if thinking:
            assert (out.reasoning, out.content, out.codes()) == ("Plan.", "Sunny.", [])
        else:
            assert (out.reasoning, out.content, out.codes()) == ("", "Plan.Sunny.", ["reasoning_close_in_content"])
        # the prompt wins over the switch
        assert fmt.parse("Hello", WEATHER, prompt=prompt, thinking=not thinking).reasoning == (
            "Hello" if thinking else "")


def test_reasoning_close_in_content_keeps_streamed_text_and_names_the_closer():
    fmt = toolwire.get_format("deepseek_v4")
    out, events = stream_parse(fmt, "I think.</think>Answer.", list("I think.</think>Answer."), tools=WEATHER)
    assert out.content == "I think.Answer."
    assert [(d.code, d.severity, d.raw) for d in out.diagnostics] == [
        ("reasoning_close_in_content", "warning", "</think>")]
    assert_events_consistent(out, events)


# ---- kept as they are (issue 21)

def test_string_true_values_stay_strings_whatever_the_schema():
    fmt = toolwire.get_format("deepseek_v4")
    text = ('\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_weather">\n'
            '<｜DSML｜parameter name="days" string="true">3</｜DSML｜parameter>\n</｜DSML｜invoke>\n'
            '</｜DSML｜tool_calls>')
    call = fmt.parse(text, WEATHER).tool_calls[0]
    assert (call.arguments, call.status) == ({"days": "3"}, "proposed")


@pytest.mark.parametrize("family", FAMILIES)
def test_a_truncated_call_over_a_limit_is_truncated_with_too_large(family):
    fmt = toolwire.get_format(family)
    m = fmt.markers
    text = (f'{m["tool_calls_open"]}\n{m["invoke_open"]}get_weather">\n{m["parameter_open"]}city" string="true">'
            + "x" * 200)
    out = fmt.parse(text, WEATHER, limits=toolwire.Limits(max_argument_bytes=64))
    call = out.tool_calls[0]
    assert call.status == "truncated" and out.truncated
    assert [d.code for d in call.diagnostics] == ["too_large", "truncated_call"]


# ---- flush inside a call header

@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("cut", ["", "get_wea", "get_weather"])
def test_flush_inside_the_invoke_name_starts_no_call(family, cut):
    fmt = toolwire.get_format(family)
    m = fmt.markers
    text = f'{m["tool_calls_open"]}\n{m["invoke_open"]}{cut}'
    parser = fmt.stream(WEATHER)
    events = [e for ch in text for e in parser.feed(ch)] + parser.flush()
    out = parser.finish()
    assert not any(isinstance(e, ToolCallStarted) for e in events)
    assert out.tool_calls == [] and out.truncated
    assert [(d.code, d.raw) for d in out.diagnostics] == [
        ("missing_block_separator", None), ("truncated_call_header", cut), ("unclosed_block", None)]


@pytest.mark.parametrize("family", FAMILIES)
def test_flush_after_the_name_quote_gives_a_truncated_call_named_once(family):
    fmt = toolwire.get_format(family)
    m = fmt.markers
    parser = fmt.stream(WEATHER)
    events = [e for ch in f'{m["tool_calls_open"]}\n{m["invoke_open"]}get_weather"' for e in parser.feed(ch)]
    events += parser.flush()
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [e.name for e in started] == ["get_weather"]
    assert parser.finish().tool_calls[0].status == "truncated"


# ---- token ids: variants are ordinary text, so fail-closed still decides

def test_variant_spelling_from_ordinary_tokens_is_accepted_fail_closed():
    """The real DeepSeek-V4 tokenizer: ``|DSML|`` tags are ordinary tokens, accepted only for a declared tool,
    exactly as in text; the canonical spelling from ordinary tokens stays text."""
    require_shared()
    pytest.importorskip("tokenizers")
    tokenizer = load_tokenizer(str(REAL / "tokenizers" / "DeepSeek-V4"))
    fmt = toolwire.get_format("deepseek_v4")
    variant = ('\n\n<|DSML|tool_calls>\n<|DSML|invoke name="get_weather">\n<|DSML|parameter name="city" '
               'string="true">Oslo</|DSML|parameter>\n</|DSML|invoke>\n</|DSML|tool_calls>')
    for text, calls in ((variant, [("get_weather", {"city": "Oslo"}, "repaired")]),
                        (variant.replace("|DSML|", "｜DSML｜"), [])):
        parser = fmt.stream(WEATHER, tokenizer=tokenizer)
        parser.feed(ids=vocabulary(tokenizer).encode_plain(text))
        out = parser.finish()
        assert [(c.name, c.arguments, c.status) for c in out.tool_calls] == calls
        assert out.content == ("" if calls else text)
