"""Regression tests for every finding of issue 11 section 3 (P1-P5 and the rest) and the issue 21 bug, each
an explicit input through the fuzz suite's invariant checker (tests/fuzz/invariants.py), which must pass.

Each case failed on the code before the fixes (checked when the case was written) and must pass now."""

from __future__ import annotations

import pytest

import toolwire
from fuzz import families, invariants
from toolwire import Limits


def case(name: str, text: str, thinking: bool = False, answer: str | None = None, *, label: str):
    return pytest.param(name, text, thinking, answer, id=f"{label}-{name}")


def invoke_open(name: str) -> str:
    m = toolwire.get_format(name).markers
    return f'{m["tool_calls_open"]}\n{m["invoke_open"]}'


M2_EMPTY_INVOKE = ('<minimax:tool_call>\n<invoke name="">\n<parameter name="city">Oslo</parameter>\n</invoke>\n'
                   '</minimax:tool_call>')
M3 = "]<]minimax[>["
M3_EMPTY_INVOKE = (f'{M3}<tool_call>\n{M3}<invoke name="">\n{M3}<city>Oslo{M3}</city>\n{M3}</invoke>\n'
                   f'{M3}</tool_call>')
HY3_EMPTY_NAME = ("<tool_calls:opensource>\n<tool_call:opensource><tool_sep:opensource>\n<arg_key:opensource>city"
                  "</arg_key:opensource>\n<arg_value:opensource>Oslo</arg_value:opensource>\n</tool_call:opensource>\n"
                  "</tool_calls:opensource>")
HY3_NO_SEP = ("<tool_calls:opensource>\n<tool_call:opensource><arg_key:opensource>city</arg_key:opensource>\n"
              "<arg_value:opensource>Oslo</arg_value:opensource>\n</tool_call:opensource>\n</tool_calls:opensource>")

KNOWN = [
    # P1: llama31 raises on a raw control character or a bad escape inside "name"
    case("llama31", '{"name": "get_weather\n", "parameters": {}}', label="P1-raw-newline-in-name"),
    case("llama31", '{"name": "get_\\x", "parameters": {}}', label="P1-bad-escape-in-name"),
    # P2: the output ends inside a string holding a raw control character: streamed != parse()
    case("mistral_small32", '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris\n', label="P2"),
    case("kimi_k2", '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0'
                    '<|tool_call_argument_begin|>{"city": "Paris\n', label="P2"),
    case("kimi_k2_thinking", '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0'
                             '<|tool_call_argument_begin|>{"city": "Paris\n', label="P2"),
    case("deepseek_v31", '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris\n',
         label="P2"),
    case("deepseek_r1", '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n'
                        '{"city": "Paris\n', label="P2"),
    case("llama31", '{"name": "get_weather", "parameters": {"city": "Paris\n', label="P2"),
    case("gpt_oss", '<|channel|>commentary to=functions.get_weather<|constrain|>json<|message|>{"city": "Paris\n',
         label="P2"),
    # P3: DSML loses the text after the name when the output ends inside an invoke tag
    *[case(n, invoke_open(n) + 'get_weather" 𝔘 junk', label="P3") for n in ("deepseek_v32", "deepseek_v4",
                                                                              "deepseek_v41")],
    # P4: non-ASCII whitespace between DSML tags and in the mistral, kimi and V3.1 headers is dropped
    case("mistral_small32", '[TOOL_CALLS]get_weather\u3000[ARGS]{"city": "P"}', label="P4"),
    case("kimi_k2", '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0\u3000'
                    '<|tool_call_argument_begin|>{"city": "P"}<|tool_call_end|><|tool_calls_section_end|>', label="P4"),
    case("deepseek_v31", '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather\u00a0<｜tool▁sep｜>{"city": "P"}'
                         '<｜tool▁call▁end｜><｜tool▁calls▁end｜>', label="P4"),
    case("deepseek_v4", '\n\n<｜DSML｜tool_calls>\n\u3000<｜DSML｜invoke name="get_weather">\n</｜DSML｜invoke>\n'
                        '</｜DSML｜tool_calls>', label="P4"),
    # P5: gpt_oss drops header text, makes a call named "0", keeps unknown channels only in a message
    case("gpt_oss", '<|channel|>commentary to=functions.get_weather 中<|message|>{"city": "P"}<|call|>', label="P5"),
    case("gpt_oss", '0 中<|message|>{"city": "P"}', label="P5-call-named-0"),
    case("gpt_oss", '<|channel|>bogus中<|message|>hi', label="P5-unknown-channel"),
    # a call header cut short: no ToolCallStarted with an empty name
    *[case(n, t, label="truncated-header") for n, t in [
        ("qwen3", '<tool_call>\n{"name": "g'), ("mistral_small32", "[TOOL_CALLS]"), ("glm45", "<tool_call>"),
        ("deepseek_v32", 'Call.</think>\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name="')]],
    # the streamed argument text is the string to_openai_message() returns (1.50 and caf\u00e9 kept)
    *[case(n, t, label="arguments-bytes") for n, t in [
        ("qwen3", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "caf\\u00e9", "days": 1.50}}\n</tool_call>'),
        ("mistral_small32", '[TOOL_CALLS]get_weather[ARGS]{"city": "caf\\u00e9", "days": 1.50}'),
        ("llama31", '{"name": "get_weather", "parameters": {"city": "caf\\u00e9", "days": 1.50}}'),
        ("gpt_oss", '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>'
                    '{"city": "caf\\u00e9", "days": 1.50}<|call|>')]],
    # issue 21: a call marker inside reasoning swallows the reasoning close and the answer
    *[case(n, f"I might call {toolwire.get_format(n).markers[k]} later.\n</think>\n\nFinal answer.", True,
           "Final answer.", label="issue21")
      for n, k in [("qwen35", "call_open"), ("qwen36", "call_open"), ("glm45", "call_open"), ("glm47", "call_open"),
                   ("minimax_m2", "block_open")]],
    # found by CI's atheris run after the merges: a GLM-style <tool_call> with no name before <arg_key>
    case("laguna", "<assistant></assistant><assistant></assistant>>>><｜end▁of▁sentence｜>><assistant><arg_key>"
                   "<tool_call><arg_key><tool_call>", True, label="empty-name"),
    case("glm47", "<tool_call><arg_key>city</arg_key><arg_value>Oslo</arg_value></tool_call>", label="empty-name"),
    # found in review: a MiniMax-M3 <invoke name=""> and a Hy3 call with no name started a (then rejected) call
    *[case(n, t, thinking, label="empty-name") for n, t in [
        ("minimax_m2", M2_EMPTY_INVOKE), ("minimax_m3", M3_EMPTY_INVOKE), ("hy3", HY3_EMPTY_NAME), ("hy3", HY3_NO_SEP)]
      for thinking in (False, True)],
    # found by the marker-soup suite after the stop-23 merges: a Hermes-JSON <tool_call> whose "name" is empty
    *[case(n, t, label="empty-name") for n in ("qwen25", "qwen3_instruct_2507", "hermes3") for t in (
        'ure.\n<tool_call>\n{"name": ""', '<tool_call>\n{"name": "", "arguments": {}}\n</tool_call>',
        '<tool_call>\n{"name": " ", "arguments": {"a"')],
]


@pytest.mark.parametrize("name, text, thinking, answer", KNOWN)
def test_known_finding_holds_every_invariant(name, text, thinking, answer):
    invariants.check(name, text, thinking=thinking, answer=answer)


TRUNCATED_OVER_LIMIT = {
    "mistral_small32": '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris' + "x" * 40,
    "qwen3": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris' + "x" * 40,
}


@pytest.mark.parametrize("name", sorted(TRUNCATED_OVER_LIMIT))
def test_a_truncated_over_limit_call_is_truncated_in_the_json_families_too(name):
    """One status for one situation: DSML and XML already say ``truncated`` here."""
    out = toolwire.get_format(name).parse(TRUNCATED_OVER_LIMIT[name], families.TOOLS,
                                          limits=Limits(max_argument_bytes=10))
    assert [c.status for c in out.tool_calls] == ["truncated"]
    assert "too_large" in out.codes() and out.truncated


def test_calls_past_max_calls_keep_their_text_not_candidates():
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "P"}}\n</tool_call>\n'
    text = call * 6
    out = toolwire.get_format("qwen3").parse(text, families.TOOLS, limits=Limits(max_calls=2))
    assert [c.status for c in out.tool_calls] == ["proposed", "proposed"]
    assert out.codes().count("too_large") == 1
    invariants.check_nothing_lost("qwen3", text, out)


EMPTY_NAMES = [
    # (format, output, the text the not_a_tool_call diagnostic keeps, the stray text kept after it)
    ("minimax_m2", M2_EMPTY_INVOKE, '<invoke name="">', ['\n<parameter name="city">Oslo</parameter>\n</invoke>\n']),
    ("minimax_m2", M2_EMPTY_INVOKE.replace('name=""', 'name=" "'), '<invoke name=" ">',
     ['\n<parameter name="city">Oslo</parameter>\n</invoke>\n']),
    ("minimax_m3", M3_EMPTY_INVOKE, f'{M3}<invoke name="">', [f"{M3}<city>", "Oslo", f"{M3}</city>", f"{M3}</invoke>"]),
    ("minimax_m3", M3_EMPTY_INVOKE.replace('name=""', 'name="  "'), f'{M3}<invoke name="  ">',
     [f"{M3}<city>", "Oslo", f"{M3}</city>", f"{M3}</invoke>"]),
    ("hy3", HY3_EMPTY_NAME, "<tool_call:opensource>",
     ["<tool_sep:opensource>\n<arg_key:opensource>city</arg_key:opensource>\n<arg_value:opensource>Oslo"
      "</arg_value:opensource>\n</tool_call:opensource>\n"]),
    ("hy3", HY3_EMPTY_NAME.replace("opensource><tool_sep", "opensource> \t<tool_sep"), "<tool_call:opensource> \t",
     ["<tool_sep:opensource>\n<arg_key:opensource>city</arg_key:opensource>\n<arg_value:opensource>Oslo"
      "</arg_value:opensource>\n</tool_call:opensource>\n"]),
    ("hy3", HY3_NO_SEP, "<tool_call:opensource>",
     ["<arg_key:opensource>city</arg_key:opensource>\n<arg_value:opensource>Oslo</arg_value:opensource>\n"
      "</tool_call:opensource>\n"]),
]


@pytest.mark.parametrize("name, text, head, stray", EMPTY_NAMES, ids=[f"{n}-{k}" for k, (n, *_r) in
                                                                     enumerate(EMPTY_NAMES)])
def test_a_call_that_names_no_tool_is_not_started(name, text, head, stray):
    """Like GLM's ``<tool_call>`` with no name: no call starts (a call starts only once its name is complete, and
    a blank name is none), the text stays in a ``not_a_tool_call`` diagnostic and what followed it in the
    block's stray text; a call after it is read as usual."""
    fmt = toolwire.get_format(name)
    stream = fmt.stream(families.TOOLS, thinking=False)
    events = stream.feed(text) + stream.flush()
    out = stream.finish()
    assert not [e for e in events if isinstance(e, toolwire.ToolCallStarted)]
    assert out.tool_calls == [] and out.content == ""
    assert [(d.code, d.raw) for d in out.diagnostics] == [("not_a_tool_call", head)] + [("stray_text", t)
                                                                                       for t in stray]
