"""An XML-style value with no schema to type it is the string as written, in every XML-style family (issue 33,
docs/xml-values.md "A value with no schema").

The XML-style families write a value as text between tags; only the tool's JSON schema says it was a number,
a boolean or an object. Where no schema types the value (no tools declared, a tool without ``parameters``, a
parameter without a ``type``) every family keeps the text byte-exact as a string: ``42`` stays ``"42"``,
``null`` stays ``"null"``, ``[1, 2]`` stays ``"[1, 2]"``, spaces stay. Only a format that types a value on the
wire itself decodes it: GigaChat's ``string="false"`` (JSON) and Kimi K3's ``type="number"``.
"""

from __future__ import annotations

import pytest

import toolwire
from support import check_chunking

VALUES = ["42", "3.5", "true", "null", "None", "[1, 2]", '{"a": 1}', "Paris", '"quoted"', " 7 ", "-0", "1e400"]

NO_SCHEMA = {
    "no tools declared": None,
    "tool without parameters": [{"type": "function", "function": {"name": "f"}}],
    "parameter without a type": [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"k": {"description": "anything"}}}}}],
}
INTEGER = [{"type": "function", "function": {"name": "f", "parameters": {
    "type": "object", "properties": {"k": {"type": "integer"}}}}}]


def _markers(family: str):
    return toolwire.get_format(family).markers


def qwen(family: str, value: str) -> str:
    k = _markers(family)
    f = "" if family == "seed_oss" else "\n"
    return (f"{k.CALL_OPEN}\n{k.FUNCTION_OPEN}f>\n{k.PARAMETER_OPEN}k>{f}{value}{f}{k.PARAMETER_CLOSE}\n"
            f"{k.FUNCTION_CLOSE}\n{k.CALL_CLOSE}")


def glm(family: str, value: str) -> str:
    k = _markers(family)
    return f"{k.CALL_OPEN}f{k.KEY_OPEN}k{k.KEY_CLOSE}{k.VALUE_OPEN}{value}{k.VALUE_CLOSE}{k.CALL_CLOSE}"


def minimax(family: str, value: str) -> str:
    k = _markers(family)
    return (f"x\n{k.THINK_CLOSE}\n\n{k.BLOCK_OPEN}\n{k.INVOKE_OPEN}f{k.ATTR_CLOSE}\n{k.PARAMETER_OPEN}k{k.ATTR_CLOSE}"
            f"{value}{k.PARAMETER_CLOSE}\n{k.INVOKE_CLOSE}\n{k.BLOCK_CLOSE}")


def hy3(family: str, value: str) -> str:
    k = _markers(family)
    return (f"{k.CALLS_OPEN}{k.CALL_OPEN}f{k.SEP}{k.KEY_OPEN}k{k.KEY_CLOSE}{k.VALUE_OPEN}{value}{k.VALUE_CLOSE}"
            f"{k.CALL_CLOSE}{k.CALLS_CLOSE}")


def minimax_m3(family: str, value: str) -> str:
    p = "]<]minimax[>["
    return (f'{p}<tool_call>\n{p}<invoke name="f">{p}<k>{value}{p}</k>{p}</invoke>\n{p}</tool_call>')


def kimi_k3(family: str, value: str, typed: str = 'type="string"') -> str:
    return (f'<|open|>tools<|sep|><|open|>call tool="f" index="1"<|sep|><|open|>argument key="k" {typed}<|sep|>'
            f"{value}<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|>")


def gigachat(family: str, value: str, string: str = "true") -> str:
    return (f'<｜GCML｜tool_calls>\n<｜GCML｜invoke name="f">\n<｜GCML｜parameter name="k" string="{string}">{value}'
            f"</｜GCML｜parameter>\n</｜GCML｜invoke>\n</｜GCML｜tool_calls>")


WRITERS = {
    **dict.fromkeys(["qwen3_coder", "qwen35", "qwen36", "qwen38", "nemotron3", "step35", "seed_oss"], qwen),
    **dict.fromkeys(["glm45", "glm46", "glm47", "glm53", "laguna"], glm),
    "minimax_m2": minimax, "hy3": hy3, "minimax_m3": minimax_m3, "kimi_k3": kimi_k3, "gigachat35": gigachat,
}
OPTIONS = {"minimax_m2": {"thinking": True}}


def _value(family: str, text: str, tools) -> object:
    out = check_chunking(toolwire.get_format(family), text, tools, splits=[list(text)], **OPTIONS.get(family, {}))
    assert len(out.tool_calls) == 1 and out.tool_calls[0].name == "f"
    return out.tool_calls[0].arguments["k"]


@pytest.mark.parametrize("family", sorted(WRITERS))
@pytest.mark.parametrize("why", sorted(NO_SCHEMA))
def test_a_value_with_no_schema_is_the_string_as_written(family, why):
    """Every value, one-shot and at 1-char feeds: the text between the tags, byte-exact, as a string."""
    for value in VALUES:
        assert _value(family, WRITERS[family](family, value), NO_SCHEMA[why]) == value, value


WIRE_TYPED = {"gigachat35", "kimi_k3"}  # the value's tag says its type; the schema does not override it


@pytest.mark.parametrize("family", sorted(set(WRITERS) - WIRE_TYPED))
def test_the_schema_is_what_types_a_value(family):
    """The same text with an integer-typed parameter is the number: the schema typed it, not the family."""
    assert _value(family, WRITERS[family](family, "42"), INTEGER) == 42


def test_a_format_that_types_values_on_the_wire_decodes_them_without_a_schema():
    """GigaChat's ``string="false"`` says the value is JSON; Kimi K3's ``type="number"`` says it is a number: the
    format itself types them, with or without a schema."""
    for tools in NO_SCHEMA.values():
        assert _value("gigachat35", gigachat("gigachat35", "[1, 2]", "false"), tools) == [1, 2]
        assert _value("gigachat35", gigachat("gigachat35", "null", "false"), tools) is None
        assert _value("kimi_k3", kimi_k3("kimi_k3", "42", 'type="number"'), tools) == 42
        assert _value("kimi_k3", kimi_k3("kimi_k3", "42", ""), tools) == "42"  # no type attribute: a string
