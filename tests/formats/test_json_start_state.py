"""Where parsing starts for every JSON-bodied family (issue 11 §1): ``parse(out, prompt=render(...))`` starts
exactly where the rendered prompt left off. Expected states are read off the reference templates by hand:
DeepSeek V3.1 opens ``<think>`` in thinking mode after a user turn but not after tool results; R1 opens it
after a user turn whatever the switch; Qwen3-Thinking-2507 always opens it; Qwen3 and Kimi-K2-Thinking leave
it to the model; the others have no reasoning block."""

from __future__ import annotations

import pytest

import toolwire

from support import check_chunking

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]
USER = [{"role": "user", "content": "Weather in Paris?"}]


def after_tool_result(call_id: str) -> list[dict]:
    return USER + [
        {"role": "assistant", "content": "", "tool_calls": [{"id": call_id, "type": "function", "function": {
            "name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": call_id, "content": "18 C"},
    ]


CALL_IDS = {"kimi_k2": "functions.get_weather:0", "kimi_k2_thinking": "functions.get_weather:0",
            "mistral_small32": "abcDEF123"}

# family -> {(thinking, after a tool result): whether the prompt opened reasoning}
OPENS = {
    "qwen25": {}, "qwen3": {}, "qwen3_instruct_2507": {}, "kimi_k2": {}, "kimi_k2_thinking": {}, "llama31": {},
    "mistral_small32": {},
    "qwen3_thinking_2507": {(False, False): True, (False, True): True, (True, False): True, (True, True): True},
    "deepseek_v31": {(True, False): True},
    "deepseek_r1": {(False, False): True, (True, False): True},
}
CASES = [(family, thinking, tool) for family in OPENS for thinking in (False, True) for tool in (False, True)]


@pytest.mark.parametrize("family,thinking,tool", CASES)
def test_parsing_starts_where_the_prompt_left_off(family, thinking, tool):
    fmt = toolwire.get_format(family)
    messages = after_tool_result(CALL_IDS.get(family, "call_1")) if tool else USER
    prompt = fmt.render(messages, TOOLS, thinking=thinking)
    opened = OPENS[family].get((thinking, tool), False)
    assert prompt.opens_reasoning is opened
    out = fmt.parse("Hello", TOOLS, prompt=prompt)
    assert (out.reasoning, out.content) == (("Hello", "") if opened else ("", "Hello"))
    # prompt= wins over the switch
    assert fmt.parse("Hello", TOOLS, prompt=prompt, thinking=not opened) == out


def test_deepseek_v31_hello_after_a_tool_result_is_content():
    fmt = toolwire.get_format("deepseek_v31")
    assert fmt.parse("Hello", TOOLS, prompt=fmt.render(USER, TOOLS, thinking=True)).reasoning == "Hello"
    out = fmt.parse("Hello", TOOLS, prompt=fmt.render(after_tool_result("call_1"), TOOLS, thinking=True))
    assert (out.reasoning, out.content, out.codes()) == ("", "Hello", [])


@pytest.mark.parametrize("family", ["qwen3_thinking_2507", "kimi_k2_thinking", "deepseek_v31", "deepseek_r1",
                                    "qwen3"])
def test_thinking_false_starts_in_content_and_a_closer_there_is_diagnosed(family):
    # output a serving stack's reasoning parser already split: thinking=False starts in content
    out = check_chunking(toolwire.get_format(family), "tail of thought</think>Answer.", TOOLS, thinking=False)
    assert (out.reasoning, out.content) == ("", "tail of thoughtAnswer.")
    assert [(d.code, d.raw, d.severity) for d in out.diagnostics] == [
        ("reasoning_close_in_content", "</think>", "warning")]


@pytest.mark.parametrize("family", ["qwen3", "qwen3_thinking_2507", "kimi_k2_thinking"])
def test_the_models_own_think_at_the_start_still_opens_reasoning_in_content_mode(family):
    out = check_chunking(toolwire.get_format(family), "<think>plan</think>Answer.", TOOLS, thinking=False)
    assert (out.reasoning, out.content, out.codes()) == ("plan", "Answer.", [])


@pytest.mark.parametrize("family", ["qwen3", "qwen3_thinking_2507", "kimi_k2_thinking", "deepseek_v31",
                                    "deepseek_r1"])
def test_a_repeated_opener_at_the_start_of_opened_reasoning_is_dropped(family):
    out = check_chunking(toolwire.get_format(family), "<think>plan</think>Answer.", TOOLS, thinking=True)
    assert (out.reasoning, out.content) == ("plan", "Answer.")
    assert [(d.code, d.raw) for d in out.diagnostics] == [("duplicate_reasoning_open", "<think>")]
    # only at the very start: later it is reasoning text
    out = check_chunking(toolwire.get_format(family), "a <think>plan</think>Answer.", TOOLS, thinking=True)
    assert (out.reasoning, out.content, out.codes()) == ("a <think>plan", "Answer.", [])


@pytest.mark.parametrize("family", ["qwen25", "qwen3_instruct_2507", "kimi_k2"])
def test_thinking_true_opens_reasoning_in_every_family_that_shares_the_think_markers(family):
    # their prompts never open it (see OPENS), but thinking=True means "the prompt opened it", for every family
    out = check_chunking(toolwire.get_format(family), "a</think>b", TOOLS, thinking=True)
    assert (out.reasoning, out.content, out.codes()) == ("a", "b", [])
    # in content mode their think tags are plain content (they write no reasoning of their own)
    out = check_chunking(toolwire.get_format(family), "a</think>b", TOOLS, thinking=False)
    assert (out.reasoning, out.content, out.codes()) == ("", "a</think>b", [])


@pytest.mark.parametrize("family", ["llama31", "mistral_small32"])
def test_families_without_think_markers_ignore_the_switch(family):
    out = check_chunking(toolwire.get_format(family), "a</think>b", TOOLS, thinking=True)
    assert (out.reasoning, out.content, out.codes()) == ("", "a</think>b", [])


REASONING_MENTIONS = {
    "qwen25": "I might call <tool_call> later.\n</think>\n\nFinal answer.",
    "qwen3": "I might call <tool_call> later.\n</think>\n\nFinal answer.",
    "qwen3_thinking_2507": "I might call <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"x</think>Final answer.",
    "kimi_k2": "I might call <|tool_call_begin|>\n</think>Final answer.",
    "kimi_k2_thinking": "I might call <|tool_calls_section_begin|><|tool_call_begin|> get_weather</think>Final answer.",
    "deepseek_v31": "I might call <｜tool▁call▁begin｜> later.\n\n</think>\n\nFinal answer.",
    "deepseek_r1": "I might call <｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"x</think>"
                   "\n\nFinal answer.",
}


@pytest.mark.parametrize("family", sorted(REASONING_MENTIONS))
def test_a_call_marker_in_reasoning_never_swallows_the_close(family):
    # issue 21: an unclosed call inside reasoning ends at the reasoning's close; the answer is the content
    out = check_chunking(toolwire.get_format(family), REASONING_MENTIONS[family], TOOLS, thinking=True)
    assert out.content.endswith("Final answer.") and out.reasoning.startswith("I might call")
    assert all(c.source == "reasoning" and c.status != "proposed" for c in out.tool_calls)


# ---- stream edge cases (issue 11 §3), every JSON family

CUT_IN_HEADER = {
    "qwen25": '<tool_call>\n{"name": "get_wea',
    "qwen3": '<tool_call>\n{"name": "get_wea',
    "qwen3_instruct_2507": '<tool_call>\n{"name": "get_wea',
    "qwen3_thinking_2507": '</think><tool_call>\n{"name": "get_wea',
    "kimi_k2": "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_wea",
    "kimi_k2_thinking": "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_wea",
    "deepseek_v31": "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_wea",
    "deepseek_r1": "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_wea",
    "llama31": '{"name": "get_wea',
    "mistral_small32": "[TOOL_CALLS]get_wea",
}
LONG_STRING = {
    "qwen25": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "' + "x" * 64,
    "kimi_k2": "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
               '{"city": "' + "x" * 64,
    "deepseek_v31": '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "' + "x" * 64,
    "deepseek_r1": "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
                   '{"city": "' + "x" * 64,
    "llama31": '{"name": "get_weather", "parameters": {"city": "' + "x" * 64,
    "mistral_small32": '[TOOL_CALLS]get_weather[ARGS]{"city": "' + "x" * 64,
}


@pytest.mark.parametrize("family", sorted(CUT_IN_HEADER))
def test_flush_inside_a_call_header_starts_no_call(family):
    fmt = toolwire.get_format(family)
    text = CUT_IN_HEADER[family]
    parser = fmt.stream(TOOLS)
    events = [e for ch in text for e in parser.feed(ch)] + parser.flush()
    out = parser.finish()
    assert not [e for e in events if e.type == "tool_call_started"] and out.tool_calls == []
    [diag] = [d for d in out.diagnostics if d.code == "truncated_call_header"]
    assert diag.raw.endswith("get_wea") and out.truncated


@pytest.mark.parametrize("family", sorted(LONG_STRING))
def test_a_truncated_over_limit_string_is_truncated_with_too_large(family):
    out = check_chunking(toolwire.get_format(family), LONG_STRING[family], TOOLS,
                         limits=toolwire.Limits(max_argument_bytes=16))
    [call] = out.tool_calls
    assert call.status == "truncated" and "too_large" in [d.code for d in call.diagnostics]
