"""The toolwire reasoning parser used alone (``--reasoning-parser toolwire_<f>`` without
``--tool-call-parser``), through vLLM's own composition: ``ParserManager.get_parser`` with a reasoning parser
only, driven by ``ChatStreamProcessor.step`` (which calls ``set_prompt_token_ids`` / ``is_reasoning_end`` on
the prompt, then ``extract_reasoning_streaming`` with previous/current/delta text and ids, then
``finish_streaming``), and ``Parser.parse`` for the non-streaming path. For every golden vector of every
format with a reasoning block, the reasoning rebuilt from the deltas must equal toolwire's own ``parse()`` of
the output, and the content must be the rest of the output as the model wrote it (nothing lost: read again
by toolwire in content mode it gives the same content and calls as ``parse()``), since no tool parser reads
it. Then vLLM's id helpers on the output's ids: ``is_reasoning_end`` and ``extract_content_ids``. Then vLLM's id helpers on the output's ids: ``is_reasoning_end`` and ``extract_content_ids``.
"""

from __future__ import annotations

import json

import pytest

import toolwire
from toolwire.integrations.engine_stream import EngineStream, reasoning_pair
from conftest import expected_calls, golden_params, opens_reasoning, split_points, tokenizer_for
from test_vllm_adapter import make_request, prompt_ids, rebuild

import toolwire.integrations.vllm  # noqa: F401  (registers toolwire_<format>)
from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
from vllm.parser import ParserManager

WITH_REASONING = [f for f in toolwire.formats() if reasoning_pair(f)[0]]
WITHOUT = [f for f in toolwire.formats() if f not in WITH_REASONING]


def reasoning_only_parser(family, tokenizer, request):
    cls = ParserManager.get_parser(reasoning_parser_name=f"toolwire_{family}", enable_auto_tools=False)
    parser = cls(tokenizer, request.tools, chat_template_kwargs={}, model_config=None)
    assert parser.tool_parser is None
    return parser


@pytest.mark.parametrize("size", [1, None], ids=["1-unit", "whole"])
@pytest.mark.parametrize("row", golden_params(exclude=WITHOUT))
def test_reasoning_parser_alone_streamed(row, size):
    family = row["family"]
    tokenizer, as_ids = tokenizer_for(family)
    request = make_request(row)
    parser = reasoning_only_parser(family, tokenizer, request)
    processor = ChatStreamProcessor(request, parser, enable_auto_tools=False, parser_cls=type(parser))
    prompt = prompt_ids(family, tokenizer, opens_reasoning(row))
    output = row["model_output"]
    units = tokenizer.encode(output, add_special_tokens=False) if as_ids else output
    cuts = split_points(len(units), size)
    messages, sent = [], ""
    for n, (a, b) in enumerate(cuts):
        last = n == len(cuts) - 1
        if as_ids:  # the delta text as vLLM's incremental detokenizer gives it: a split character waits
            ids = units[a:b]
            whole = tokenizer.decode(units[:b], skip_special_tokens=False)
            text = "" if whole.endswith("\ufffd") and not last else whole[len(sent):]
            sent += text
        else:
            ids, text = [], units[a:b]
        step = processor.step(text, ids, "stop" if last else None, prompt)
        if step.delta is not None:
            messages.append(step.delta)
    content, reasoning, calls = rebuild(messages)
    check_split(row, reasoning, content)
    assert calls == {}


def check_split(row, reasoning, content):
    """Reasoning as toolwire's ``parse()`` reads it; content: the rest, raw, which toolwire reads in content
    mode to the same content and calls."""
    family = row["family"]
    truth = toolwire.get_format(family).parse(row["model_output"], row["tools"], thinking=opens_reasoning(row))
    assert reasoning == truth.reasoning
    assert row["model_output"].endswith(content)  # the rest as the model wrote it
    rest = EngineStream(family, row["tools"], thinking=False)
    rest.feed(content)
    rest.flush()
    assert rest.parsed.content == truth.content
    assert [(c.name, c.arguments) for c in rest.parsed.tool_calls] == expected_calls(truth)


@pytest.mark.parametrize("row", golden_params(exclude=WITHOUT))
def test_reasoning_parser_alone_one_shot(row):
    family = row["family"]
    tokenizer, as_ids = tokenizer_for(family)
    request = make_request(row, stream=False)
    parser = reasoning_only_parser(family, tokenizer, request)
    parser.set_prompt_token_ids(prompt_ids(family, tokenizer, opens_reasoning(row)))
    reasoning, content = parser.reasoning_parser.extract_reasoning(row["model_output"], request)
    check_split(row, reasoning or "", content or "")
    if as_ids:  # vLLM's id helpers on the output's ids (the tokenizer ../shared has)
        ids = tokenizer.encode(row["model_output"], add_special_tokens=False)
        closer = tokenizer.convert_tokens_to_ids(reasoning_pair(family)[1])
        rp = parser.reasoning_parser
        if closer in ids:
            assert rp.is_reasoning_end(ids)
            last = len(ids) - 1 - ids[::-1].index(closer)
            assert rp.extract_content_ids(ids) == ids[last + 1:]
            assert rp.is_reasoning_end_streaming(ids[:last + 1], [closer])


def test_the_prompt_check_keeps_the_reasoning_parser_in_charge():
    """A Qwen3 prompt ends without ``<think>`` (the model writes it): vLLM asks ``is_reasoning_end`` of the
    prompt it has just passed to ``set_prompt_token_ids``; True would make vLLM pass ``<think>...`` through
    as content when no tool parser follows. The same question about other ids is answered from the markers."""
    tokenizer, _ = tokenizer_for("qwen3")
    request = make_request({"tools": None})
    rp = reasoning_only_parser("qwen3", tokenizer, request).reasoning_parser
    prompt = tokenizer.encode("<|im_start|>assistant\n", add_special_tokens=False)
    rp.set_prompt_token_ids(prompt)
    assert rp.is_reasoning_end(prompt) is False
    assert rp.is_reasoning_end(list(prompt)) is True  # other ids: no opener after the last closer
    think, end = tokenizer.convert_tokens_to_ids("<think>"), tokenizer.convert_tokens_to_ids("</think>")
    assert rp.is_reasoning_end([think, 11]) is False
    assert rp.is_reasoning_end([think, 11, end, 12]) is True
    assert rp.extract_content_ids([think, 11, end, 12, 13]) == [12, 13]
    assert rp.extract_content_ids([think, 11]) == []
    assert rp.is_reasoning_end_streaming([think, 11, end], [end]) is True
    assert rp.is_reasoning_end_streaming([think, 11, 12], [12]) is False
