"""The streamed argument text and the final message's ``arguments`` are one string (issue 11 §3): for every
golden output of every format, streamed in random chunks, each call's ``ArgumentsDelta`` fragments joined
equal its ``arguments_json()`` and the ``function.arguments`` of ``to_openai_message()``, byte for byte; its
``arguments_text`` is that text, or None exactly when the text is ``json.dumps(arguments)`` (not kept twice)."""

from __future__ import annotations

import json
import random

import pytest

import toolwire
from toolwire.integrations.openai import listed_calls

from support import golden, golden_parse_kwargs, random_chunks, require_shared

ROWS = [row for name in toolwire.formats() for row in golden("parse", name)]


def _stream(fmt, text, tools, rng, **kw):
    parser = fmt.stream(tools, **kw)
    events = []
    for piece in random_chunks(text, rng, rng.choice([1, 3, 17])):
        events.extend(parser.feed(piece))
    events.extend(parser.flush())
    return parser.finish(), events


def test_every_format_has_golden_outputs_here():
    require_shared()
    assert {row["family"] for row in ROWS} == set(toolwire.formats())


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_joined_fragments_are_the_final_arguments_string(row):
    fmt = toolwire.get_format(row["family"])
    out, events = _stream(fmt, row["model_output"], row.get("tools"), random.Random(row["id"]), **golden_parse_kwargs(row))
    joined: dict[int, str] = {}
    for event in events:
        if event.type == "arguments":
            joined[event.index] = joined.get(event.index, "") + event.fragment
    for call in out.tool_calls:
        assert call.arguments_json() == joined.get(call.index, "")
        _assert_kept_only_when_needed(call)
    message = out.to_openai_message(promote_reasoning_calls=True)
    listed = listed_calls(out, promote_reasoning_calls=True)
    assert [c["function"]["arguments"] for c in message.get("tool_calls", [])] == [joined[c.index] for c in listed]


@pytest.mark.parametrize("family", ["qwen3", "kimi_k2", "deepseek_v31", "deepseek_r1", "llama31", "mistral_small32",
                                    "qwen35", "glm45", "deepseek_v4", "gpt_oss"])
def test_numbers_and_escapes_reach_the_message_as_streamed(family):
    # JSON families stream the model's own text: 1.50 and caf\\u00e9 stay so in the final message
    fmt = toolwire.get_format(family)
    tools = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {
        "q": {"type": "string"}, "n": {"type": "number"}}}}}]
    out, events = _stream(fmt, _model_text(family), tools, random.Random(7), thinking=False)
    [call] = out.tool_calls
    joined = "".join(e.fragment for e in events if e.type == "arguments")
    assert out.to_openai_message()["tool_calls"][0]["function"]["arguments"] == joined == call.arguments_json()
    _assert_kept_only_when_needed(call)
    if family in JSON_TEXT:
        assert joined == '{"q": "caf\\u00e9", "n": 1.50}'


JSON_TEXT = {
    "qwen3": '<tool_call>\n{"name": "search", "arguments": {"q": "caf\\u00e9", "n": 1.50}}\n</tool_call>',
    "kimi_k2": '<|tool_calls_section_begin|><|tool_call_begin|>functions.search:0<|tool_call_argument_begin|>'
               '{"q": "caf\\u00e9", "n": 1.50}<|tool_call_end|><|tool_calls_section_end|>',
    "deepseek_v31": '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>search<｜tool▁sep｜>{"q": "caf\\u00e9", "n": 1.50}'
                    '<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    "deepseek_r1": '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n```json\n'
                   '{"q": "caf\\u00e9", "n": 1.50}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    "llama31": '{"name": "search", "parameters": {"q": "caf\\u00e9", "n": 1.50}}',
    "mistral_small32": '[TOOL_CALLS]search[ARGS]{"q": "caf\\u00e9", "n": 1.50}',
    "gpt_oss": '<|channel|>commentary to=functions.search <|constrain|>json<|message|>{"q": "caf\\u00e9", "n": 1.50}'
               '<|call|>',
}
OTHER_TEXT = {
    "qwen35": "<tool_call>\n<function=search>\n<parameter=q>\ncafé\n</parameter>\n<parameter=n>\n1.50\n</parameter>\n"
              "</function>\n</tool_call>",
    "glm45": "<tool_call>search\n<arg_key>q</arg_key>\n<arg_value>café</arg_value>\n<arg_key>n</arg_key>\n"
             "<arg_value>1.50</arg_value>\n</tool_call>",
    "deepseek_v4": '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="search">\n<｜DSML｜parameter name="q" string="true">café'
                   '</｜DSML｜parameter>\n<｜DSML｜parameter name="n" string="false">1.50</｜DSML｜parameter>\n'
                   '</｜DSML｜invoke>\n</｜DSML｜tool_calls>',
}


def _model_text(family: str) -> str:
    return JSON_TEXT.get(family) or OTHER_TEXT[family]


def _assert_kept_only_when_needed(call) -> None:
    """``arguments_text`` is None exactly where ``arguments_json()`` is ``json.dumps`` of the arguments; a JSON
    family's text is the model's own (the raw text itself, not a copy)."""
    try:
        dumped = json.dumps(call.arguments, ensure_ascii=False)
    except (TypeError, ValueError):
        dumped = None
    if call.arguments_text is None:
        assert call.arguments_json() == dumped
    elif call.arguments_text != dumped:
        assert call.arguments_text == call.arguments_json()
    else:  # kept although it is the dump: only as the raw text itself (the model's JSON, no extra copy)
        assert call.arguments_text is call.raw_arguments, (call.arguments_text, call.raw_arguments)


REPEATED_KEY = {
    "qwen3_coder": "<tool_call>\n<function=search>\n<parameter=q>\na\n</parameter>\n<parameter=n>\n2\n</parameter>\n"
                   "<parameter=q>\nb\n</parameter>\n</function>\n</tool_call>",
    "glm45": "<tool_call>search\n<arg_key>q</arg_key>\n<arg_value>a</arg_value>\n<arg_key>n</arg_key>\n"
             "<arg_value>2</arg_value>\n<arg_key>q</arg_key>\n<arg_value>b</arg_value>\n</tool_call>",
    "deepseek_v4": '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="search">\n<｜DSML｜parameter name="q" string="true">a'
                   '</｜DSML｜parameter>\n<｜DSML｜parameter name="n" string="false">2</｜DSML｜parameter>\n'
                   '<｜DSML｜parameter name="q" string="true">b</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>',
}


@pytest.mark.parametrize("family", sorted(REPEATED_KEY))
def test_a_repeated_key_keeps_the_streamed_text(family):
    # the deltas carry both values of q; json.dumps(arguments) only the last, so the text is kept as sent
    fmt = toolwire.get_format(family)
    tools = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {
        "q": {"type": "string"}, "n": {"type": "integer"}}}}}]
    for seed in range(5):
        out, events = _stream(fmt, REPEATED_KEY[family], tools, random.Random(seed))
        [call] = out.tool_calls
        joined = "".join(e.fragment for e in events if e.type == "arguments")
        assert call.arguments == {"q": "b", "n": 2}
        assert "duplicate_argument" in [d.code for d in call.diagnostics]
        assert joined == '{"q": "a", "n": 2, "q": "b"}' == call.arguments_text == call.arguments_json()
        assert out.to_openai_message()["tool_calls"][0]["function"]["arguments"] == joined
