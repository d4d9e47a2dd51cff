"""Llama 3.1 calls whose arguments span many of the 64 KiB pieces ``Format.parse`` reads: the call object's end,
and the text after it, are found the same whether the arguments stay strict JSON (the object's own scanner
then skips them) or stop being strict after the first pieces (it then reads them all), one-shot or streamed."""

from __future__ import annotations

import pytest

import toolwire
from toolwire import Limits

TOOLS = [{"type": "function", "function": {"name": "search", "parameters": {
    "type": "object", "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}}}}}]
Q = "x" * 150_000  # three pieces of 64 KiB and more
LIMITS = Limits(max_argument_bytes=1 << 30)

CASES = {
    # arguments, text after them, expected status, the call's diagnostic codes, the output's diagnostics
    "strict, another key after": ('{"q": "%s", "limit": 3}' % Q, ', "id": 7} rest', "proposed", [],
                                  [("unexpected_text", ', "id": 7}')]),
    "trailing comma, brace in a string after": ('{"q": "%s", "limit": 3, }' % Q, ', "id": "}"} rest', "repaired",
                                                ["repaired_trailing_comma"], [("unexpected_text", ', "id": "}"}')]),
    "single quotes": ("{'q': '%s', 'limit': 3}" % Q, "} rest", "repaired", ["repaired_single_quotes"], []),
}


def _stream(text: str, step: int):
    parser = toolwire.get_format("llama31").stream(TOOLS, limits=LIMITS)
    for i in range(0, len(text), step):
        parser.feed(text[i:i + step])
    return parser.finish()


@pytest.mark.parametrize("case", sorted(CASES))
def test_long_arguments_end_where_the_object_ends(case):
    arguments, after, status, call_codes, output_diags = CASES[case]
    text = '{"name": "search", "parameters": ' + arguments + after
    whole = toolwire.get_format("llama31").parse(text, TOOLS, limits=LIMITS)
    (call,) = whole.tool_calls
    assert call.name == "search"
    assert call.status == status
    assert call.arguments == {"q": Q, "limit": 3}
    assert [d.code for d in call.diagnostics] == call_codes
    assert whole.content == " rest"
    assert [(d.code, d.raw) for d in whole.diagnostics] == output_diags
    for step in (7, 50_000):
        assert _stream(text, step).model_dump() == whole.model_dump()
