"""One-shot parsing of an output with one long string argument, in the XML-style and DSML families: while it
parses, the memory it allocates stays close to what the result keeps (the raw argument text and the value),
because a closed value's pieces become one string in the raw text (``CallBuilder.end_string``) and the
streamed arguments JSON, which is ``json.dumps(arguments)``, is not kept (``CallBuilder._emit``;
``arguments_json()`` writes it). Before that the peak was about three more copies of the value."""

from __future__ import annotations

import json
import sys

import pytest

import toolwire
from toolwire import Limits

from support import traced_parse

WRITE = [{"type": "function", "function": {"name": "write_file", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"]}}}]
LINE = "if a < b and c </par> d:\n        print('</parameter x', \"\u00e9\") # {x: [1]}\n"
VALUE = (LINE * (3_000_000 // len(LINE)))[:-1] + "end"  # ~3 MB; ends in a letter


def _dsml_output(family: str) -> str:
    m = toolwire.get_format(family).markers
    return (f"{m['tool_calls_open']}\n{m['invoke_open']}write_file\">\n"
            f"{m['parameter_open']}path\" string=\"true\">a.py{m['parameter_close']}\n"
            f"{m['parameter_open']}content\" string=\"true\">{VALUE}{m['parameter_close']}\n"
            f"{m['invoke_close']}\n{m['tool_calls_close']}")


OUTPUTS = {
    "qwen3_coder": lambda: ("<tool_call>\n<function=write_file>\n<parameter=path>\na.py\n</parameter>\n"
                            f"<parameter=content>\n{VALUE}\n</parameter>\n</function>\n</tool_call>"),
    "glm45": lambda: ("<tool_call>write_file\n<arg_key>path</arg_key>\n<arg_value>a.py</arg_value>\n"
                      f"<arg_key>content</arg_key>\n<arg_value>{VALUE}</arg_value>\n</tool_call>"),
    "minimax_m2": lambda: ('<minimax:tool_call>\n<invoke name="write_file">\n<parameter name="path">a.py</parameter>\n'
                           f'<parameter name="content">{VALUE}</parameter>\n</invoke>\n</minimax:tool_call>'),
    "deepseek_v4": lambda: _dsml_output("deepseek_v4"),
    "deepseek_v32": lambda: _dsml_output("deepseek_v32"),
}


@pytest.mark.parametrize("family", sorted(OUTPUTS))
def test_one_shot_peak_is_what_the_call_keeps_plus_little(family):
    fmt = toolwire.get_format(family)
    limits = Limits(max_argument_bytes=1 << 30)  # the default 1 MiB would refuse the value (too_large)
    text = OUTPUTS[family]()
    fmt.parse(text[:200], WRITE, limits=limits, thinking=False)  # imports, compiled patterns: not part of the measure
    result, peak = traced_parse(fmt, text, WRITE, limits=limits, thinking=False)
    (call,) = result.tool_calls
    assert call.status == "proposed"
    assert call.arguments == {"path": "a.py", "content": VALUE}
    assert call.arguments_text is None  # the streamed JSON is json.dumps(arguments): not kept a second time
    assert call.arguments_json() == json.dumps(call.arguments, ensure_ascii=False)
    kept = sum(sys.getsizeof(s) for s in (call.raw_arguments, call.arguments["content"]))
    # what the call keeps, plus a quarter of the value (the 64 KiB pieces in flight, events, small objects);
    # keeping the value's pieces next to the joined value, joining the raw text while the fragments still
    # lived, or keeping the fragments at all, was a whole value more
    assert peak <= kept + len(VALUE) // 4, (peak / len(VALUE), kept / len(VALUE))
