"""Render never raises a raw exception: request values no encoder can write are refused as toolwire errors
naming the message and field, in every format (issue: 160 of 2,420 malformed requests raised RecursionError,
ValueError, TypeError or, from token_ids, UnicodeEncodeError)."""

from __future__ import annotations

import pytest

import toolwire
from toolwire.errors import InvalidOption, InvalidRequest, UnrepresentableValue

TOOL = {"type": "function", "function": {"name": "get_weather", "description": "w", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}


def with_arguments(arguments):
    return [{"role": "user", "content": "hi"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "abcdefgh1", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}]},
            {"role": "tool", "tool_call_id": "abcdefgh1", "content": "sunny"}]


def nested_dict(depth):
    value = {"city": "Paris"}
    for _ in range(depth):
        value = {"a": value}
    return value


def cyclic():
    value = {"city": "Paris"}
    value["self"] = value
    return value


def deep_parameters(depth):
    schema = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


ARGUMENT_CASES = {
    "json_text_100k_deep": ("[" * 100_000 + "]" * 100_000, "nest deeper"),
    "dict_5000_deep": (nested_dict(5000), "nests deeper than 256"),
    "int_5000_digits_text": ('{"city": ' + "7" * 5000 + "}", "cannot be decoded"),
    "int_5000_digits_dict": ({"city": 10 ** 5000}, "more than 4300 digits"),
    "cyclic_dict": (cyclic(), "contains itself"),
    "set_value": ({"city": {"Paris", "Lima"}}, "set, which is not a JSON value"),
    "bytes_value": ({"city": b"Paris"}, "bytes, which is not a JSON value"),
    "non_string_key": ({1: "Paris"}, "valid string"),   # refused by the request model itself
    "lone_surrogate_escape": ('{"city": "Par\\ud800is"}', "lone surrogate U+D800"),
}


@pytest.mark.parametrize("case", sorted(ARGUMENT_CASES))
@pytest.mark.parametrize("fmt", toolwire.formats())
def test_unwritable_arguments_are_refused_naming_the_field(fmt, case):
    arguments, words = ARGUMENT_CASES[case]
    with pytest.raises(InvalidRequest) as err:
        toolwire.get_format(fmt).render(with_arguments(arguments), [TOOL])
    assert err.value.message_index == 1
    assert err.value.field.startswith("tool_calls[0].function.arguments")
    assert words in str(err.value)


@pytest.mark.parametrize("parameters, words", [
    (deep_parameters(3000), "nests deeper than 256"),
    (cyclic(), "contains itself"),
    ({"type": "object", "properties": {"a": {"enum": [{1, 2}]}}}, "set, which is not a JSON value"),
], ids=["3000_deep", "cyclic", "set"])
@pytest.mark.parametrize("fmt", toolwire.formats())
def test_unwritable_tool_parameters_are_refused_naming_the_tool(fmt, parameters, words):
    tool = {"type": "function", "function": {"name": "f", "parameters": parameters}}
    with pytest.raises(UnrepresentableValue) as err:
        toolwire.get_format(fmt).render([{"role": "user", "content": "hi"}], [tool])
    assert err.value.field.startswith("tools[0].function.parameters")
    assert words in str(err.value)


@pytest.mark.parametrize("field, message", [
    ("content", {"role": "user", "content": "caf\udce9"}),
    ("content[0].text", {"role": "user", "content": [{"type": "text", "text": "\ud83d"}]}),
    ("reasoning_content", {"role": "assistant", "content": "a", "reasoning_content": "\udfff"}),
])
@pytest.mark.parametrize("fmt", toolwire.formats())
def test_lone_surrogates_are_refused_at_render(fmt, field, message):
    """The rule for text no tokenizer can encode: refused when rendering, so ``token_ids`` never meets it."""
    messages = [{"role": "user", "content": "hi"}, message] if message["role"] == "assistant" else [message]
    with pytest.raises(UnrepresentableValue) as err:
        toolwire.get_format(fmt).render(messages + ([{"role": "user", "content": "ok"}]
                                                    if message["role"] == "assistant" else []))
    assert (err.value.message_index, err.value.field) == (len(messages) - 1, field)
    assert "lone surrogate" in str(err.value)


@pytest.mark.parametrize("effort", [["high"], {"level": "high"}, 1.5, True])
@pytest.mark.parametrize("fmt", ["deepseek_v4", "deepseek_v41", "gpt_oss"])
def test_a_reasoning_effort_of_the_wrong_type_is_an_invalid_option(fmt, effort):
    with pytest.raises(InvalidOption) as err:
        toolwire.get_format(fmt).render([{"role": "user", "content": "hi"}], thinking=True, reasoning_effort=effort)
    assert err.value.field == "reasoning_effort"


def test_values_that_can_be_written_still_render():
    """The checks refuse only what no encoder can write: deep-but-bounded values, big integers, tuples and
    valid non-BMP text render as before."""
    fmt = toolwire.get_format("qwen3")
    prompt = fmt.render(with_arguments({"city": "Zürich 😀", "n": 10 ** 300, "path": (1, 2), "deep": nested_dict(200)}),
                        [TOOL])
    assert "Zürich 😀" in prompt.text and "1" + "0" * 300 in prompt.text


def _nested(depth, wrap):
    value = 1
    for _ in range(depth):
        value = wrap(value)
    return value


class _Text(str):
    pass


def test_the_plain_value_test_agrees_with_the_full_walk():
    """_plain_json_value (one loop over the containers) passes the plain values, at the depth limit too, and
    passes nothing that check_json_value's full walk refuses (cycles, too deep, bad keys, types, surrogates, huge
    integers); a subclass is sent to the full walk, which accepts it."""
    from toolwire.request_values import _plain_json_value, check_json_value

    cyclic_dict, cyclic_list = {}, []
    cyclic_dict["self"] = cyclic_dict
    cyclic_list += [cyclic_list, cyclic_list]
    wraps = (lambda v: [v], lambda v: {"k": v}, lambda v: (v,))
    plain = [None, True, 1.5, float("nan"), "é", 2 ** 1000, [[], {}, ()], {"k": [1, {"é": (2, 3.0)}]},
             {"type": "object", "properties": {"q": {"type": "string", "enum": ["a", "é", None]}}},
             *(_nested(depth, wrap) for depth in (255, 256) for wrap in wraps)]
    refused = ["a\ud800", 2 ** 20_000, b"x", {1, 2}, cyclic_dict, cyclic_list, {"\udc00": 1}, {1: "a"},
               [{"a": "b\udfff"}], {"a": [True, 10 ** 5000]}, {"a": {"b": {"c": set()}}},
               *(_nested(depth, wrap) for depth in (257, 258) for wrap in wraps)]
    for value in plain:
        assert _plain_json_value(value), value
        check_json_value(value, field="f")
    for value in refused:
        assert not _plain_json_value(value)
        with pytest.raises(UnrepresentableValue):
            check_json_value(value, field="f")
    for value in (_Text("x"), {_Text("k"): 1}, [1, _Text("y")]):  # the full walk decides, and accepts
        assert not _plain_json_value(value)
        check_json_value(value, field="f")
