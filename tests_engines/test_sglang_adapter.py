"""toolwire's SGLang detectors driven by SGLang's own classes (SGLang 0.5.23): ``ReasoningParser`` and
``FunctionCallParser`` built from ``toolwire_<format>``, chained as SGLang's chat serving chains them (the
reasoning parser's ``normal_text`` feeds the tool parser), over random splits of every golden parse vector.
The rebuilt content, reasoning and calls must equal toolwire's own ``parse()`` and the vector's expectation.
"""

from __future__ import annotations

import json
import zlib

import pytest

import toolwire
from conftest import check_expected, expected_calls, golden_params, opens_reasoning, split_points

import toolwire.integrations.sglang as tw_sglang  # registers toolwire_<format>
from sglang.srt.entrypoints.openai.protocol import Tool
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import ReasoningParser


def sglang_tools(row):
    return [Tool.model_validate(t) for t in row["tools"] or []]


def replay(row, size=None, seed=None):
    family = row["family"]
    reasoning_parser = ReasoningParser(model_type=f"toolwire_{family}", stream_reasoning=True,
                                       force_reasoning=opens_reasoning(row))
    tool_parser = FunctionCallParser(sglang_tools(row), f"toolwire_{family}")
    output = row["model_output"]
    content, reasoning, calls = [], [], {}

    def take(normal, items):
        content.append(normal or "")
        for item in items:
            call = calls.setdefault(item.tool_index, {"name": None, "arguments": ""})
            if item.name is not None:
                assert call["name"] is None, "a call's name was sent twice"
                call["name"] = item.name
            call["arguments"] += item.parameters or ""

    for a, b in split_points(len(output), size, seed):
        r_text, normal = reasoning_parser.parse_stream_chunk(output[a:b])
        reasoning.append(r_text or "")
        if normal:
            take(*tool_parser.parse_stream_chunk(normal))
    r_text, normal = reasoning_parser.parse_stream_end()
    reasoning.append(r_text or "")
    if normal:
        take(*tool_parser.parse_stream_chunk(normal))
    take(*tool_parser.parse_stream_end())
    return "".join(content), "".join(reasoning), calls


def check(row, got):
    content, reasoning, calls = got
    truth = toolwire.get_format(row["family"]).parse(row["model_output"], row["tools"], thinking=opens_reasoning(row))
    assert reasoning == truth.reasoning
    assert content == truth.content
    assert sorted(calls) == list(range(len(calls)))
    assert [(calls[i]["name"], json.loads(calls[i]["arguments"])) for i in sorted(calls)] == expected_calls(truth)
    check_expected(row, truth, content, reasoning, expected_calls(truth))


@pytest.mark.parametrize("row", golden_params(exclude=tw_sglang.UNSUPPORTED))
def test_golden_random_splits_through_sglang(row):
    for seed in range(3):
        check(row, replay(row, seed=(zlib.crc32(row["id"].encode()) + seed) & 0xFFFF))


@pytest.mark.parametrize("row", golden_params(exclude=tw_sglang.UNSUPPORTED))
def test_golden_one_char_and_whole_through_sglang(row):
    check(row, replay(row, 1))
    check(row, replay(row, None))


@pytest.mark.parametrize("row", golden_params(exclude=tw_sglang.UNSUPPORTED))
def test_golden_non_stream_through_sglang(row):
    family = row["family"]
    reasoning, normal = ReasoningParser(model_type=f"toolwire_{family}",
                                        force_reasoning=opens_reasoning(row)).parse_non_stream(row["model_output"])
    text, calls = FunctionCallParser(sglang_tools(row), f"toolwire_{family}").parse_non_stream(normal or "")
    truth = toolwire.get_format(family).parse(row["model_output"], row["tools"], thinking=opens_reasoning(row))
    got = (text, reasoning or "", [(c.name, json.loads(c.parameters)) for c in calls])
    assert got == (truth.content, truth.reasoning, expected_calls(truth))
    check_expected(row, truth, *got)


def test_every_format_is_registered():
    assert set(tw_sglang.UNSUPPORTED) == {"gpt_oss"}
    assert "toolwire_gpt_oss" not in FunctionCallParser.ToolCallParserEnum
    for family in set(toolwire.formats()) - set(tw_sglang.UNSUPPORTED):
        assert FunctionCallParser.ToolCallParserEnum[f"toolwire_{family}"].format_name == family
        assert ReasoningParser.DetectorMap[f"toolwire_{family}"].format_name == family
