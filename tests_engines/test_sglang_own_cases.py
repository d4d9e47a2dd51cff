"""Cases of the kinds SGLang's own detector tests cover (sgl-project/sglang ``test/srt/test_function_call_parser.py``,
read, not copied: no SGLang sdist on PyPI carries ``test/``), written here from each family's wire format, with
expected results written by hand, through toolwire's SGLang detectors as SGLang calls them
(``FunctionCallParser.parse_non_stream`` and ``parse_stream_chunk`` one character at a time, then
``parse_stream_end``): plain text untouched, text before a call kept as content, a call whose markers arrive
in pieces, two calls in one output (indices 0 and 1), text after the calls kept.
"""

from __future__ import annotations

import json

import pytest

import toolwire.integrations.sglang  # noqa: F401  (registers toolwire_<format>)
from sglang.srt.entrypoints.openai.protocol import Tool
from sglang.srt.function_call.function_call_parser import FunctionCallParser

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
         {"type": "function", "function": {"name": "get_time", "parameters": {
             "type": "object", "properties": {"zone": {"type": "string"}}}}}]

# one call to get_weather(city=Paris) and one to get_time(zone=UTC), in each family's own syntax
CALLS = {
    "qwen25": ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
               '<tool_call>\n{"name": "get_time", "arguments": {"zone": "UTC"}}\n</tool_call>'),
    "qwen3_coder": ("<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n"
                    "</tool_call>",
                    "<tool_call>\n<function=get_time>\n<parameter=zone>\nUTC\n</parameter>\n</function>\n"
                    "</tool_call>"),
    "glm45": ("<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
              "<tool_call>get_time\n<arg_key>zone</arg_key>\n<arg_value>UTC</arg_value>\n</tool_call>"),
    "mistral_small32": ('[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}', '[TOOL_CALLS]get_time[ARGS]{"zone": "UTC"}'),
}
WRAP = {  # families whose calls sit in one section: (section open, section close)
    "kimi_k2": ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>",
                '<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}'
                "<|tool_call_end|>",
                '<|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{"zone": "UTC"}'
                "<|tool_call_end|>"),
    "deepseek_r1": ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>",
                    '<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Paris"}\n```'
                    "<｜tool▁call▁end｜>",
                    '<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{"zone": "UTC"}\n```'
                    "<｜tool▁call▁end｜>"),
}
FAMILIES = sorted(CALLS) + sorted(WRAP)
WEATHER = ("get_weather", {"city": "Paris"})
TIME = ("get_time", {"zone": "UTC"})


def one_call(family):
    if family in CALLS:
        return CALLS[family][0]
    begin, end, first, _ = WRAP[family]
    return begin + first + end


def two_calls(family):
    if family in CALLS:
        return CALLS[family][0] + CALLS[family][1]
    begin, end, first, second = WRAP[family]
    return begin + first + second + end


def tools():
    return [Tool.model_validate(t) for t in TOOLS]


def non_stream(family, text):
    normal, calls = FunctionCallParser(tools(), f"toolwire_{family}").parse_non_stream(text)
    return normal, [(c.name, json.loads(c.parameters)) for c in calls], [c.tool_index for c in calls]


def one_char_stream(family, text):
    parser = FunctionCallParser(tools(), f"toolwire_{family}")
    normal, calls = [], {}
    results = [parser.parse_stream_chunk(ch) for ch in text] + [parser.parse_stream_end()]
    for piece, items in results:
        normal.append(piece or "")
        for item in items:
            call = calls.setdefault(item.tool_index, {"name": None, "arguments": ""})
            if item.name:
                assert call["name"] is None, "a call's name was sent twice"
                call["name"] = item.name
            call["arguments"] += item.parameters or ""
    return "".join(normal), [(calls[i]["name"], json.loads(calls[i]["arguments"])) for i in sorted(calls)], \
        sorted(calls)


@pytest.mark.parametrize("run", [non_stream, one_char_stream], ids=["non-stream", "1-char"])
@pytest.mark.parametrize("family", FAMILIES)
class TestSGLangKindsOfCases:
    def test_plain_text_is_untouched(self, family, run):
        assert run(family, "No tool is needed: it is 18 degrees.") == ("No tool is needed: it is 18 degrees.", [], [])

    def test_text_before_a_call_stays_content(self, family, run):
        assert run(family, "Let me check." + one_call(family)) == ("Let me check.", [WEATHER], [0])

    def test_a_call_alone(self, family, run):
        assert run(family, one_call(family)) == ("", [WEATHER], [0])

    def test_two_calls_in_order(self, family, run):
        assert run(family, two_calls(family)) == ("", [WEATHER, TIME], [0, 1])

    def test_a_lone_bracket_or_angle_is_text(self, family, run):
        assert run(family, "Compare a < b and [x]: done.") == ("Compare a < b and [x]: done.", [], [])
