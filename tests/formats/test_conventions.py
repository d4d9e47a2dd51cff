"""Conventions users bring from the ecosystem: ToolSet wherever tools go, Hugging Face template kwargs as
aliases, one options dict for render and parse, the reasoning field name, call ids, the engine's stop reason
and each format's stop tokens."""

from __future__ import annotations

import itertools
import json

import pytest

import toolwire
from support import REAL, require_shared
from toolwire.dispatch.specs import ToolSpec
from toolwire.dispatch.validation import ToolSet
from toolwire.errors import InvalidOption
from toolwire.integrations.openai import ChatCompletionsStream, accumulate_deltas, finish_reason, to_openai_message

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
MESSAGES = [{"role": "user", "content": "Weather in Paris?"}]
QWEN3_CALL = '<think>\nCheck it.\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


# ---------------------------------------------------------------- ToolSet

def test_toolset_renders_exactly_as_its_definitions():
    fmt = toolwire.get_format("qwen3")
    assert fmt.render(MESSAGES, ToolSet(TOOLS)).text == fmt.render(MESSAGES, TOOLS).text
    assert '"name": "get_weather"' in fmt.render(MESSAGES, ToolSet(TOOLS)).text


def test_toolset_of_specs_renders_their_openai_definitions():
    spec = ToolSpec.create("get_weather", description="Weather.", input_schema=TOOLS[0]["function"]["parameters"])
    text = toolwire.get_format("qwen3").render(MESSAGES, ToolSet([spec])).text
    assert '"name": "get_weather"' in text and '"required": ["city"]' in text


def test_toolset_in_parse_and_stream_declares_the_names():
    fmt = toolwire.get_format("qwen3")
    out = fmt.parse(QWEN3_CALL, ToolSet(TOOLS))
    assert [(c.name, c.status) for c in out.tool_calls] == [("get_weather", "proposed")]
    unknown = fmt.parse(QWEN3_CALL.replace("get_weather", "get_wether"), ToolSet(TOOLS))
    assert "unknown_tool" in unknown.codes()
    parser = fmt.stream(ToolSet(TOOLS))
    parser.feed(QWEN3_CALL)
    assert parser.finish().tool_calls[0].arguments == {"city": "Paris"}


# ---------------------------------------------------------------- Hugging Face kwargs as aliases

def test_enable_thinking_is_thinking():
    fmt = toolwire.get_format("qwen3")
    assert fmt.render(MESSAGES, enable_thinking=True).text == fmt.render(MESSAGES, thinking=True).text
    assert fmt.render(MESSAGES, enable_thinking=False).text.endswith("<think>\n\n</think>\n\n")
    with pytest.raises(InvalidOption) as err:
        fmt.render(MESSAGES, thinking=True, enable_thinking=False)
    assert err.value.field == "enable_thinking"


def test_chat_template_kwargs_passed_whole():
    fmt = toolwire.get_format("glm47")
    want = fmt.render(MESSAGES, thinking=True, clear_thinking=False).text
    assert fmt.render(MESSAGES, chat_template_kwargs={"enable_thinking": True, "clear_thinking": False}).text == want
    with pytest.raises(InvalidOption) as err:
        fmt.render(MESSAGES, chat_template_kwargs="enable_thinking")
    assert err.value.field == "chat_template_kwargs"


@pytest.mark.parametrize("option, hint", [("thinking_mode", "use thinking=True"), ("date", "use current_date"),
                                          ("continue_final_message", "use add_generation_prompt=False")])
def test_unknown_option_names_the_option_to_use(option, hint):
    with pytest.raises(InvalidOption) as err:
        toolwire.get_format("qwen3").render(MESSAGES, **{option: "x"})
    assert f"{option!r}: {hint}" in str(err.value)


def test_one_options_dict_serves_render_and_parse():
    options = {"thinking": True, "current_date": "2025-03-14", "reasoning_effort": "high",
               "add_generation_prompt": True, "drop_thinking": True, "policy": "keep_all"}
    fmt = toolwire.get_format("qwen3")
    fmt.render(MESSAGES, TOOLS, **options)
    out = fmt.parse(QWEN3_CALL, TOOLS, **{**options, "thinking": False})
    assert out.reasoning == "Check it." and out.tool_calls[0].arguments == {"city": "Paris"}
    with pytest.raises(InvalidOption):  # a real typo is still refused
        fmt.parse(QWEN3_CALL, TOOLS, promote_reasoning_cals=True)


def test_family_render_options_ignored_by_parse_but_parser_options_kept():
    llama = toolwire.get_format("llama31")
    text = '<|python_tag|>brave_search.call(query="paris weather")'
    out = llama.parse(text, builtin_tools=["brave_search"], tools_in_user_message=True)
    assert [c.name for c in out.tool_calls] == ["brave_search"]  # builtin_tools reached the parser


# ---------------------------------------------------------------- OpenAI adapter: reasoning field, stop reason

def test_reasoning_field_reasoning_content_or_reasoning():
    out = toolwire.get_format("qwen3").parse(QWEN3_CALL, TOOLS)
    assert to_openai_message(out)["reasoning_content"] == "Check it."
    message = to_openai_message(out, reasoning_field="reasoning")
    assert message["reasoning"] == "Check it." and "reasoning_content" not in message
    with pytest.raises(InvalidOption):
        to_openai_message(out, reasoning_field="thoughts")


def test_stream_deltas_use_the_chosen_reasoning_field():
    parser = toolwire.get_format("qwen3").stream(TOOLS)
    stream = ChatCompletionsStream(reasoning_field="reasoning")
    deltas = stream.deltas(parser.feed(QWEN3_CALL) + parser.flush())
    assert any("reasoning" in d for d in deltas) and not any("reasoning_content" in d for d in deltas)
    merged = accumulate_deltas(deltas)
    assert merged["reasoning_content"] == "Check it."
    assert json.loads(merged["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}


@pytest.mark.parametrize("stop_reason, expected", [(None, "stop"), ("stop", "stop"), ("length", "length"),
                                                   ("max_tokens", "length"), ("content_filter", "content_filter"),
                                                   (151645, "stop")])
def test_final_chunk_takes_the_engines_stop_reason(stop_reason, expected):
    out = toolwire.get_format("qwen3").parse("Plain text that ran out of tokens")
    final = ChatCompletionsStream().final_chunk(out, stop_reason=stop_reason)
    assert final["choices"][0]["finish_reason"] == expected
    assert out.finish_reason(stop_reason=stop_reason) == expected


def test_length_stop_wins_over_complete_calls():
    out = toolwire.get_format("qwen3").parse(QWEN3_CALL, TOOLS)
    assert finish_reason(out) == "tool_calls" and finish_reason(out, stop_reason="length") == "length"


# ---------------------------------------------------------------- call ids

def test_call_ids_prefix_and_factory():
    fmt = toolwire.get_format("qwen3")
    two = QWEN3_CALL + "\n" + QWEN3_CALL.split("\n\n", 1)[1]
    assert [c.id for c in fmt.parse(two, TOOLS).tool_calls] == ["call_0", "call_1"]
    assert [c.id for c in fmt.parse(two, TOOLS, call_ids="chatcmpl-9-").tool_calls] == ["chatcmpl-9-0", "chatcmpl-9-1"]
    counter = itertools.count(41)
    parser = fmt.stream(TOOLS, call_ids=lambda i: f"srv-{next(counter)}")
    events = parser.feed(two) + parser.flush()
    started = [e.id for e in events if e.type == "tool_call_started"]
    assert started == ["srv-41", "srv-42"] == [c.id for c in parser.finish().tool_calls]


def test_model_ids_are_kept_and_bad_factories_refused():
    kimi = toolwire.get_format("kimi_k2")
    text = ("<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
            '{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>')
    assert kimi.parse(text, TOOLS, call_ids="x-").tool_calls[0].id == "functions.get_weather:0"
    with pytest.raises(InvalidOption) as err:
        toolwire.get_format("qwen3").stream(TOOLS, call_ids=7)
    assert err.value.field == "call_ids"


# ---------------------------------------------------------------- stop tokens

STOP = {  # each model's generation_config eos tokens, written from the model cards
    "qwen25": ("<|im_end|>", "<|endoftext|>"), "qwen3": ("<|im_end|>", "<|endoftext|>"),
    "qwen35": ("<|im_end|>", "<|endoftext|>"), "qwen3_coder": ("<|im_end|>", "<|endoftext|>"),
    "glm45": ("<|endoftext|>", "<|user|>", "<|observation|>"), "kimi_k2": ("<|im_end|>",),
    "deepseek_v4": ("<｜end▁of▁sentence｜>",), "deepseek_v31": ("<｜end▁of▁sentence｜>",),
    "llama31": ("<|eot_id|>", "<|eom_id|>", "<|end_of_text|>"), "minimax_m2": ("[e~[",),
    "mistral_small32": ("</s>",), "gpt_oss": ("<|return|>", "<|call|>", "<|endoftext|>"), "seed_oss": ("<seed:eos>",),
}


def test_every_format_names_its_stop_tokens():
    for name, tokens in STOP.items():
        assert toolwire.get_format(name).stop_tokens == tokens, name
    for name in {"qwen3_instruct_2507", "qwen3_thinking_2507", "qwen36", "glm46", "glm47", "kimi_k2_thinking",
                 "deepseek_v32", "deepseek_v41", "deepseek_r1"}:  # the rest of the families, by their base's table
        assert toolwire.get_format(name).stop_tokens, name


@pytest.mark.parametrize("fmt, tokenizer, ids", [
    ("qwen3", "Qwen3", [151645, 151643]),
    ("llama31", "Llama-3", [128009, 128008, 128001]),
    ("deepseek_v31", "DeepSeek-V3", [1]),
])
def test_stop_token_ids_with_a_tokenizer(fmt, tokenizer, ids):
    require_shared()
    from toolwire.tokenize import MarkerNotInVocabulary, load_tokenizer

    tok = load_tokenizer(str(REAL / "tokenizers" / tokenizer))
    assert toolwire.get_format(fmt).stop_token_ids(tok) == ids
    other = "qwen3" if fmt != "qwen3" else "llama31"
    with pytest.raises(MarkerNotInVocabulary):
        toolwire.get_format(other).stop_token_ids(tok)
