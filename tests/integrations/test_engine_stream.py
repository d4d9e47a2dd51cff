"""toolwire.integrations.engine_stream: the engine-neutral part of the vLLM / SGLang adapters (no engine needed).

Expected values are written by hand from the wire formats."""

from __future__ import annotations

import json

import pytest

from toolwire.integrations.engine_stream import EngineStream, prompt_opens_reasoning, start_in_reasoning

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]
QWEN = ('<think>Paris?</think>\n\nLooking. <tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
        '</tool_call>')
KIMI = ('<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:3<|tool_call_argument_begin|>'
        '{"city": "Oslo"}<|tool_call_end|><|tool_calls_section_end|>')


def run(stream: EngineStream, text: str, size: int):
    folds = [stream.feed(text[i:i + size]) for i in range(0, len(text), size)] + [stream.flush()]
    content = "".join(f.content for f in folds)
    reasoning = "".join(f.reasoning for f in folds)
    calls: dict[int, dict] = {}
    for fold in folds:
        for piece in fold.calls:
            call = calls.setdefault(piece.index, {"ids": [], "name": None, "arguments": ""})
            if piece.id:
                call["ids"].append(piece.id)
            call["name"] = call["name"] or piece.name
            call["arguments"] += piece.arguments
    return content, reasoning, calls


@pytest.mark.parametrize("size", [1, 2, 5, 1000])
def test_qwen_output_folds_the_same_for_every_delta_size(size):
    content, reasoning, calls = run(EngineStream("qwen3", TOOLS), QWEN, size)
    assert (content, reasoning) == ("Looking. ", "Paris?")
    assert list(calls) == [0] and calls[0]["name"] == "get_weather"
    assert json.loads(calls[0]["arguments"]) == {"city": "Paris"}
    assert len(calls[0]["ids"]) == 1 and calls[0]["ids"][0].startswith("chatcmpl-tool-")


def test_generated_ids_differ_between_requests():
    first = run(EngineStream("qwen3", TOOLS), QWEN, 7)[2][0]["ids"][0]
    second = run(EngineStream("qwen3", TOOLS), QWEN, 7)[2][0]["ids"][0]
    assert first != second


def test_kimi_keeps_the_id_the_model_wrote():
    calls = run(EngineStream("kimi_k2", TOOLS), KIMI, 3)[2]
    assert calls[0]["ids"] == ["functions.get_weather:3"]
    assert json.loads(calls[0]["arguments"]) == {"city": "Oslo"}


def test_held_back_prefix_comes_out_at_flush_once():
    stream = EngineStream("qwen3", TOOLS)
    assert stream.feed("Hi <tool").content == "Hi "
    assert stream.flush().content == "<tool"
    assert not stream.flush() and stream.parsed.content == "Hi <tool"
    assert not stream.feed("more")  # after the end nothing is taken


def test_a_call_in_reasoning_is_not_streamed_but_reported():
    text = '<think><tool_call>\n{"name": "get_weather", "arguments": {}}\n</tool_call></think>Done.'
    stream = EngineStream("qwen3", TOOLS)
    content, _, calls = run(stream, text, 4)
    assert calls == {} and content == "Done."
    assert [c.source for c in stream.parsed.tool_calls] == ["reasoning"]


def test_start_state_from_the_prompt_then_the_request():
    assert prompt_opens_reasoning("qwen3", "<|im_start|>assistant\n<think>\n") is True
    assert prompt_opens_reasoning("qwen3", "<think>x</think><|im_start|>assistant\n") is False
    assert prompt_opens_reasoning("llama31", "anything") is False  # no reasoning markers
    # the prompt wins over the request's switch
    assert start_in_reasoning("qwen3", prompt_tail="assistant\n", chat_template_kwargs={"enable_thinking": True}) is False
    # no prompt: the family's generation prompt decides (Qwen3 lets the model open <think>; DeepSeek-V3.1 opens it)
    assert start_in_reasoning("qwen3", chat_template_kwargs={"enable_thinking": True}) is False
    assert start_in_reasoning("deepseek_v31", chat_template_kwargs={"thinking": True}) is True
    assert start_in_reasoning("deepseek_v31", chat_template_kwargs={"thinking": False}) is False
    # nothing set means what the template does: Qwen3.5's and GLM-4.7's open <think> unless told otherwise
    for family in ("qwen35", "glm47"):
        assert start_in_reasoning(family) is True
        assert start_in_reasoning(family, chat_template_kwargs={}) is True
        assert start_in_reasoning(family, chat_template_kwargs={"enable_thinking": False}) is False
        # keys the template does not read are ignored, as a chat template ignores them (vLLM passes its own)
        assert start_in_reasoning(family, chat_template_kwargs={"enable_thinking": True, "tools": [{}],
                                                                 "cohere_format": False, "x": [1]}) is True


class _TokenizerThatRaises:
    """A tokenizer object whose every attribute raises something no tokenizer contract names (as a test
    double's spec error does)."""

    def __getattr__(self, name):
        raise RuntimeError(f"no attribute {name}")


def test_a_tokenizer_whose_reading_raises_means_text():
    stream = EngineStream("qwen3", TOOLS, tokenizer=_TokenizerThatRaises())
    stream.feed('Hi <tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>', ids=[1, 2])
    stream.flush()
    assert not stream.feeds_ids
    assert stream.parsed.content == "Hi " and [c.name for c in stream.calls] == ["get_weather"]


def test_an_id_stream_folds_as_its_text_and_tracks_no_spans():
    """Fed the sampled ids of a real tokenizer, one a delta as an engine sends them: the folds are the text
    stream's, the markers count as control ids, and no event or candidate carries a token span (the wire has
    no field for them; the library's own streams do, see tests/tokens/test_token_spans.py)."""
    from support import real_tokenizer
    from toolwire.tokenize import vocabulary

    tok = real_tokenizer("Qwen3")
    ids = vocabulary(tok).encode(QWEN)
    stream = EngineStream("qwen3", TOOLS, tokenizer=tok)
    folds = [stream.feed(ids=[tid]) for tid in ids] + [stream.flush()]
    assert stream.feeds_ids
    assert "".join(f.content for f in folds) == "Looking. " and "".join(f.reasoning for f in folds) == "Paris?"
    assert [c.name for c in stream.calls] == ["get_weather"]
    assert json.loads(stream.calls[0].arguments) == {"city": "Paris"}
    assert [c.span for c in stream.parsed.tool_calls] == [None] and stream.parsed.trailing_span is None
    assert stream._parser._tokens.spans is False  # noqa: SLF001 - the stream was made with spans=False
