"""toolwire's vLLM adapters driven by vLLM's own serving classes (vLLM 0.33.0, real classes, no stand-ins).

The output of every golden parse vector of every toolwire format is replayed through the parser vLLM composes
from ``--tool-call-parser toolwire_<f> --reasoning-parser toolwire_<f>`` (``ParserManager.get_parser``), one
``ChatStreamProcessor.step`` per delta as ``OpenAIServingChat`` does, at 1-token, several-token and
whole-output deltas (speculative decoding sends several tokens per delta). The stream of ``DeltaMessage``
must rebuild the vector's expected result and toolwire's own ``parse()`` exactly: content, reasoning, call
names, arguments; ids set once per call and unique; indices 0, 1, ...; nothing held back at the end.
"""

from __future__ import annotations

import json
import zlib

import pytest

import toolwire
from toolwire.integrations.engine_stream import reasoning_pair
from conftest import check_expected, expected_calls, golden_params, opens_reasoning, split_points, tokenizer_for

import toolwire.integrations.vllm as tw_vllm  # registers toolwire_<format>
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
from vllm.parser import ParserManager
from vllm.reasoning import ReasoningParserManager
from vllm.tool_parsers import ToolParserManager


def make_request(row: dict, *, stream: bool = True) -> ChatCompletionRequest:
    return ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}], tools=row["tools"] or None,
                                 stream=stream)


def make_parser(family: str, tokenizer, request):
    parser_cls = ParserManager.get_parser(tool_parser_name=f"toolwire_{family}",
                                          reasoning_parser_name=f"toolwire_{family}", enable_auto_tools=True)
    return parser_cls(tokenizer, request.tools, chat_template_kwargs={}, model_config=None)


def prompt_ids(family: str, tokenizer, opened: bool) -> list[int]:
    """A generation prompt's last tokens: ending in the family's reasoning opener exactly when ``opened``."""
    opener = reasoning_pair(family)[0]
    return tokenizer.encode("<|im_start|>assistant\n" + (opener if opened else ""), add_special_tokens=False)


def replay(row: dict, size: int | None, seed: int | None = None):
    """Stream the row's output through vLLM's serving loop; returns (messages, parser, request)."""
    family = row["family"]
    tokenizer, as_ids = tokenizer_for(family)
    request = make_request(row)
    parser = make_parser(family, tokenizer, request)
    processor = ChatStreamProcessor(request, parser, enable_auto_tools=True, parser_cls=type(parser))
    prompt = prompt_ids(family, tokenizer, opens_reasoning(row))
    output = row["model_output"]
    units = tokenizer.encode(output, add_special_tokens=False) if as_ids else output
    cuts = split_points(len(units), size, seed)
    messages = []
    for n, (a, b) in enumerate(cuts):
        last = n == len(cuts) - 1
        if as_ids:
            ids = units[a:b]
            text = tokenizer.decode(ids, skip_special_tokens=False)
        else:
            ids, text = [], units[a:b]
        step = processor.step(text, ids, "stop" if last else None, prompt)
        if step.delta is not None:
            messages.append(step.delta)
    return messages, parser, request


def rebuild(messages):
    content, reasoning, calls = [], [], {}
    for m in messages:
        content.append(m.content or "")
        reasoning.append(m.reasoning or "")
        for tc in m.tool_calls:
            call = calls.setdefault(tc.index, {"ids": [], "name": None, "arguments": ""})
            if tc.id is not None:
                call["ids"].append(tc.id)
            if tc.function is not None:
                if tc.function.name is not None:
                    assert call["name"] is None, "a call's name was sent twice"
                    call["name"] = tc.function.name
                call["arguments"] += tc.function.arguments or ""
    return "".join(content), "".join(reasoning), calls


def check_against_parse(row, messages, parser):
    family = row["family"]
    truth = toolwire.get_format(family).parse(row["model_output"], row["tools"], thinking=opens_reasoning(row))
    content, reasoning, calls = rebuild(messages)
    assert content == truth.content
    assert reasoning == truth.reasoning
    assert sorted(calls) == list(range(len(calls))), "indices must be 0, 1, ..."
    want = expected_calls(truth)
    assert [(calls[i]["name"], json.loads(calls[i]["arguments"])) for i in sorted(calls)] == want
    for i in sorted(calls):
        assert len(calls[i]["ids"]) == 1, "one id per call, on its first piece"
    ids = [calls[i]["ids"][0] for i in sorted(calls)]
    assert len(set(ids)) == len(ids)
    wire_ids = [c.id for c in truth.tool_calls if c.source != "reasoning"]
    for got, wire, index in zip(ids, wire_ids, range(len(ids))):
        if wire != f"call_{index}":  # the model wrote an id (Kimi, Mistral): it is the call's id
            assert got == wire
        else:
            assert got.startswith("chatcmpl-tool-")
    # nothing unstreamed: vLLM's end-of-stream logic finds no remaining arguments
    assert parser.tool_parser.get_remaining_unstreamed_args() == ""
    result = parser.tool_parser.result
    assert result is not None and result.content == truth.content
    # one id per call: the same in parser.result and on the wire
    assert [c.id for c in result.tool_calls if c.source != "reasoning"] == ids
    # and the golden vector's own expectation (written from the reference)
    check_expected(row, truth, content, reasoning, want)



@pytest.mark.parametrize("size", [1, 3, None], ids=["1-unit", "3-unit", "whole"])
@pytest.mark.parametrize("row", golden_params())
def test_golden_streamed_through_vllm(row, size):
    messages, parser, _ = replay(row, size)
    check_against_parse(row, messages, parser)


@pytest.mark.parametrize("row", golden_params())
def test_golden_random_deltas_through_vllm(row):
    messages, parser, _ = replay(row, None, seed=zlib.crc32(row["id"].encode()) & 0xFFFF)
    check_against_parse(row, messages, parser)


@pytest.mark.parametrize("row", golden_params())
def test_golden_one_shot_through_vllm(row):
    """The non-streaming path (``Parser.parse``, as ``chat_completion_full_generator`` calls it)."""
    family = row["family"]
    tokenizer, _ = tokenizer_for(family)
    request = make_request(row, stream=False)
    parser = make_parser(family, tokenizer, request)
    parser.set_prompt_token_ids(prompt_ids(family, tokenizer, opens_reasoning(row)))
    reasoning, content, tool_calls = parser.parse(row["model_output"], request, enable_auto_tools=True)
    truth = toolwire.get_format(family).parse(row["model_output"], row["tools"], thinking=opens_reasoning(row))
    calls = [(c.name, json.loads(c.arguments)) for c in tool_calls or []]
    assert ((content or ""), (reasoning or ""), calls) == (truth.content, truth.reasoning, expected_calls(truth))
    check_expected(row, truth, content or "", reasoning or "", calls)


def test_every_format_is_registered_under_its_name():
    for family in toolwire.formats():
        tool_cls = ToolParserManager.get_tool_parser(f"toolwire_{family}")
        reasoning_cls = ReasoningParserManager.get_reasoning_parser(f"toolwire_{family}")
        assert tool_cls.format_name == family and reasoning_cls.format_name == family
        assert tool_cls is getattr(tw_vllm, tool_cls.__name__)  # importable by name (lazy registries need it)


def test_one_stream_per_request_shared_by_both_parsers():
    row = {"family": "qwen3", "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]}
    tokenizer, _ = tokenizer_for("qwen3")
    a = make_parser("qwen3", tokenizer, make_request(row))
    b = make_parser("qwen3", tokenizer, make_request(row))
    assert a.tool_parser.state is a.reasoning_parser.state
    assert b.tool_parser.state is b.reasoning_parser.state
    assert a.tool_parser.state is not b.tool_parser.state


def test_ids_are_per_prompt_and_output():
    """A generated id is derived from the prompt and the output before the call: the same request replayed gives
    the same id (vLLM's stateless streaming derender rebuilds the parser on every chunk), another prompt
    another id; without a prompt, a fresh random id."""
    row = {"family": "qwen3", "model_output": '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>',
           "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
           "options": {}, "prompt_opens_reasoning": False}
    first = rebuild(replay(row, 1)[0])[2][0]["ids"]
    again = rebuild(replay(row, 3)[0])[2][0]["ids"]
    assert first == again and first[0].startswith("chatcmpl-tool-")
    other = dict(row, prompt_opens_reasoning=True, model_output="</think>" + row["model_output"])
    assert rebuild(replay(other, 1)[0])[2][0]["ids"] != first
    tokenizer, _ = tokenizer_for("qwen3")
    parser = ToolParserManager.get_tool_parser("toolwire_qwen3")(tokenizer, make_request(row).tools)
    ids = [parser.extract_tool_calls(row["model_output"], make_request(row, stream=False)).tool_calls[0].id
           for parser in (parser, ToolParserManager.get_tool_parser("toolwire_qwen3")(tokenizer,
                                                                                       make_request(row).tools))]
    assert ids[0] != ids[1]  # no prompt ids: random


def test_injected_marker_text_stays_content_with_token_ids():
    """A ``<tool_call>`` the model spelled with ordinary tokens (e.g. quoting a document) is not a call when
    vLLM hands the adapter token ids."""
    tokenizer, _ = tokenizer_for("qwen3")
    row = {"family": "qwen3", "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]}
    request = make_request(row)
    parser = make_parser("qwen3", tokenizer, request)
    text = '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    control = tokenizer.convert_tokens_to_ids("<tool_call>")
    ids = [i for piece in ["<", "tool", "_call", ">"] for i in tokenizer.encode(piece, add_special_tokens=False)]
    ids += tokenizer.encode(text[len("<tool_call>"):], add_special_tokens=False)
    assert control not in ids
    processor = ChatStreamProcessor(request, parser, enable_auto_tools=True, parser_cls=type(parser))
    deltas = [processor.step(tokenizer.decode([i]), [i], "stop" if n == len(ids) - 1 else None,
                             tokenizer.encode("<|im_start|>assistant\n", add_special_tokens=False)).delta
              for n, i in enumerate(ids)]
    content, _, calls = rebuild([d for d in deltas if d is not None])
    assert calls == {} and content == text


def test_a_reused_tool_parser_reads_each_whole_output():
    """One tool parser object, two non-streamed outputs: the second is parsed, not answered from the first
    one's cache (vLLM's own DeepSeek-V3.2 delimiter case does this)."""
    row = {"family": "qwen3", "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]}
    tokenizer, _ = tokenizer_for("qwen3")
    request = make_request(row, stream=False)
    parser = ToolParserManager.get_tool_parser("toolwire_qwen3")(tokenizer, request.tools)
    call = '<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>'
    first = parser.extract_tool_calls(call, request)
    second = parser.extract_tool_calls("Here: " + call, request)
    third = parser.extract_tool_calls("No call.", request)
    assert (first.content, second.content, third.content) == (None, "Here: ", "No call.")
    assert [len(r.tool_calls) for r in (first, second, third)] == [1, 1, 0]


def test_adjust_request_keeps_control_tokens():
    row = {"family": "qwen3", "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]}
    tokenizer, _ = tokenizer_for("qwen3")
    request = make_request(row)
    assert request.skip_special_tokens is not False  # vLLM default (None: skip them)
    make_parser("qwen3", tokenizer, request).adjust_request(request)
    assert request.skip_special_tokens is False


def test_held_back_text_reaches_the_client_at_the_end():
    """An output ending in a possible marker prefix: toolwire holds ``<tool`` back until the end, and vLLM's
    end-of-stream ``finish_streaming`` call delivers it."""
    row = {"family": "qwen3", "model_output": "Hello <tool", "options": {}, "prompt_opens_reasoning": False,
           "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]}
    messages, _, _ = replay(row, 1)
    assert rebuild(messages)[0] == "Hello <tool"
    assert (messages[-1].content or "").endswith("<tool")
