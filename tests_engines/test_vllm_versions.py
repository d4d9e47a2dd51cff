"""What changed between vLLM 0.33 and 0.34 that the adapters meet (run in both venvs: ``make test-engines``).

* 0.34's reasoning parsers answer ``reasoning_end_token_ids``, ``implicit_reasoning_end_token_ids`` and
  ``find_reasoning_end(token_ids)`` (its structured-output manager and speculative decoding read them); the
  toolwire reasoning parser answers them from the format's reasoning markers and call openers, in both versions.
* 0.34 reads ``tools: []`` as no tools (0.33 refuses the request); the adapter reads no tools as "no call is
  declared": a call the model writes anyway stays text in the content.
"""

from __future__ import annotations

import pytest

import toolwire
import vllm
from conftest import REAL_TOKENIZER, golden_rows, tokenizer_for
from toolwire.integrations.engine_stream import reasoning_pair
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
from vllm.parser import ParserManager
from vllm.reasoning import ReasoningParserManager

import toolwire.integrations.vllm as tw_vllm  # registers toolwire_<format>

VERSION = tuple(int(part) for part in vllm.__version__.split(".")[:2])
REASONING_FAMILIES = [f for f in REAL_TOKENIZER if reasoning_pair(f)[1]]


def reasoning_parser(family: str):
    tokenizer, _ = tokenizer_for(family)
    return ReasoningParserManager.get_reasoning_parser(f"toolwire_{family}")(tokenizer), tokenizer


@pytest.mark.parametrize("family", REASONING_FAMILIES)
def test_reasoning_end_ids_are_the_closer(family):
    parser, tokenizer = reasoning_parser(family)
    closer = reasoning_pair(family)[1]
    closer_id = tokenizer.convert_tokens_to_ids(closer)
    assert parser.reasoning_end_token_ids == frozenset({closer_id})
    assert parser.implicit_reasoning_end_token_ids == frozenset()  # no toolwire format ends reasoning at a call
    ids = tokenizer.encode("thinking about it" + closer + "answer", add_special_tokens=False)
    end = parser.find_reasoning_end(ids)
    assert (end.offset, end.implicit) == (ids.index(closer_id), False)
    assert tuple(parser.find_reasoning_end(ids[:ids.index(closer_id)])) == (ids.index(closer_id), False)
    if VERSION >= (0, 34):  # vLLM's own type, as its structured-output manager reads it
        from vllm.parser.engine.parser_engine import ReasoningEnd

        assert isinstance(end, ReasoningEnd)


@pytest.mark.parametrize("family", REASONING_FAMILIES)
def test_find_reasoning_end_on_golden_outputs(family):
    """On every golden output that closes a reasoning block the prompt or the model opened, the first end is
    the closer's position; on one without, there is none (``len(ids)``)."""
    parser, tokenizer = reasoning_parser(family)
    closer_id = tokenizer.convert_tokens_to_ids(reasoning_pair(family)[1])
    rows = golden_rows(family)
    assert rows
    for row in rows:
        ids = tokenizer.encode(row["model_output"], add_special_tokens=False)
        end = parser.find_reasoning_end(ids)
        want = ids.index(closer_id) if closer_id in ids else len(ids)
        assert (end.offset, end.implicit) == (want, False), row["id"]


def test_a_family_without_a_one_token_closer_reports_no_end_ids():
    """Llama 3.1 has no reasoning block: no end ids, and ``find_reasoning_end`` says it cannot tell (None)."""
    tokenizer, _ = tokenizer_for("llama31")
    parser = ReasoningParserManager.get_reasoning_parser("toolwire_llama31")(tokenizer)
    assert parser.reasoning_end_token_ids == frozenset()
    assert parser.find_reasoning_end([1, 2, 3]) is None


CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def _run(request: ChatCompletionRequest, output: str, *, stream: bool):
    tokenizer, _ = tokenizer_for("qwen3")
    parser_cls = ParserManager.get_parser(tool_parser_name="toolwire_qwen3", reasoning_parser_name="toolwire_qwen3",
                                          enable_auto_tools=True)
    parser = parser_cls(tokenizer, request.tools, chat_template_kwargs={}, model_config=None)
    prompt = tokenizer.encode("<|im_start|>assistant\n<think>\n\n</think>\n\n", add_special_tokens=False)
    if not stream:
        parser.set_prompt_token_ids(prompt)
        reasoning, content, calls = parser.parse(output, request, enable_auto_tools=True)
        return content, calls or []
    processor = ChatStreamProcessor(request, parser, enable_auto_tools=True, parser_cls=parser_cls)
    ids = tokenizer.encode(output, add_special_tokens=False)
    content, calls = [], []
    for n, tid in enumerate(ids):
        step = processor.step(tokenizer.decode([tid], skip_special_tokens=False), [tid],
                              "stop" if n == len(ids) - 1 else None, prompt)
        if step.delta is not None:
            content.append(step.delta.content or "")
            calls += step.delta.tool_calls
    return "".join(content), calls


def test_empty_tools_means_no_tools():
    """``tools: []``: 0.34 reads it as no tools (and ``tool_choice`` ``none``), 0.33 refuses it. With no tools
    declared, a call the model writes is not a call: its text stays in the content, whole and streamed."""
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": []}
    if VERSION < (0, 34):
        with pytest.raises(Exception, match="must not be an empty array"):
            ChatCompletionRequest.model_validate(body)
        request = ChatCompletionRequest.model_validate({k: v for k, v in body.items() if k != "tools"})
    else:
        request = ChatCompletionRequest.model_validate(body)
        assert request.tools is None and request.tool_choice == "none"
    for stream in (False, True):
        content, calls = _run(request, "Sure. " + CALL, stream=stream)
        assert calls == [] and content == "Sure. " + CALL


def test_declared_tools_still_call():
    """The same output with the tool declared is a call (the rule is about declaration, not the output)."""
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    request = ChatCompletionRequest.model_validate({"model": "m", "messages": [{"role": "user", "content": "hi"}],
                                                    "tools": tools})
    for stream in (False, True):
        content, calls = _run(request, "Sure. " + CALL, stream=stream)
        assert content == "Sure. " and len({call.index if stream else call.id for call in calls}) == 1


def test_the_renderer_is_registered_for_every_format():
    from vllm.renderers.registry import RENDERER_REGISTRY
    from vllm.tokenizers.registry import TokenizerRegistry

    from toolwire.integrations.vllm_render import ToolwireRenderer

    for family in toolwire.formats():
        assert RENDERER_REGISTRY.load_renderer_cls(f"toolwire_{family}") is ToolwireRenderer
        assert TokenizerRegistry.load_tokenizer_cls(f"toolwire_{family}").__name__ == "CachedHfTokenizer"
    assert tw_vllm.PREFIX == "toolwire_"
