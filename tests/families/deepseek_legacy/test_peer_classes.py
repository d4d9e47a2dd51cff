"""A class of DeepSeek V3.1 / R1 output from peers' test cases that toolwire read wrong (inputs written here, in this
project's own words and values).

A call inside the ``<｜tool▁calls▁begin｜>`` section written without its ``<｜tool▁call▁begin｜>``
(``NAME<｜tool▁sep｜>{...}``, R1 ``function<｜tool▁sep｜>NAME`` and its fence): the call was lost from use (its text
kept in an ``unexpected_text`` diagnostic) even when it named a declared tool. Now, as Kimi's headers already were,
it is a call when the name is a declared tool (``missing_call_begin``, ``repaired``); without tools, or for an
undeclared name, the text stays in ``unexpected_text`` as before. Stream and one-shot agree.
"""

from __future__ import annotations

import pytest

import toolwire
from support import check_chunking
from toolwire.families.deepseek_legacy import MARKERS as M

SUN = [{"type": "function", "function": {"name": "sun_times", "parameters": {
    "type": "object", "properties": {"town": {"type": "string"}}, "required": ["town"]}}}]


def v31(*bodies: str) -> str:
    return "Checking.\n" + M.CALLS_BEGIN + "".join(bodies) + M.CALLS_END


def r1(name: str, args: str, *, call_begin: bool) -> str:
    return (M.CALL_BEGIN if call_begin else "") + f"function{M.SEP}{name}\n```json\n{args}\n```" + M.CALL_END


def calls(out):
    return [(c.name, c.arguments, c.status, [d.code for d in c.diagnostics]) for c in out.tool_calls]


@pytest.mark.parametrize("closed", [True, False], ids=["call_end", "no_call_end"])
def test_v31_call_without_its_begin_marker_is_a_call_of_a_declared_tool(closed):
    fmt = toolwire.get_format("deepseek_v31")
    text = v31(f'sun_times{M.SEP}{{"town": "Bergen"}}' + (M.CALL_END if closed else ""))
    out = check_chunking(fmt, text, SUN)
    assert calls(out) == [("sun_times", {"town": "Bergen"}, "repaired", ["missing_call_begin"])]
    assert out.content == "Checking.\n"


def test_v31_second_call_without_its_begin_marker():
    fmt = toolwire.get_format("deepseek_v31")
    text = v31(f'{M.CALL_BEGIN}sun_times{M.SEP}{{"town": "Bergen"}}{M.CALL_END}',
               f'sun_times{M.SEP}{{"town": "Tromsø"}}{M.CALL_END}')
    out = check_chunking(fmt, text, SUN)
    assert [(c.arguments["town"], c.status) for c in out.tool_calls] == [("Bergen", "proposed"), ("Tromsø", "repaired")]


def test_r1_call_without_its_begin_marker_is_a_call_of_a_declared_tool():
    fmt = toolwire.get_format("deepseek_r1")
    text = M.CALLS_BEGIN + r1("sun_times", '{"town": "Bergen"}', call_begin=False) + M.CALLS_END
    out = check_chunking(fmt, text, SUN, thinking=False)
    assert calls(out) == [("sun_times", {"town": "Bergen"}, "repaired", ["missing_call_begin"])]


@pytest.mark.parametrize("family, body", [
    ("deepseek_v31", f'moon_phase{M.SEP}{{"town": "Bergen"}}'),
    ("deepseek_r1", r1("moon_phase", '{"town": "Bergen"}', call_begin=False)),
])
@pytest.mark.parametrize("tools", [SUN, None], ids=["undeclared_name", "no_tools"])
def test_without_a_declared_name_the_text_stays_in_its_diagnostic(family, body, tools):
    fmt = toolwire.get_format(family)
    out = check_chunking(fmt, M.CALLS_BEGIN + body + M.CALLS_END, tools, thinking=False)
    assert out.tool_calls == []
    (kept,) = [d.raw for d in out.diagnostics if d.code == "unexpected_text"]
    assert "moon_phase" in kept and "Bergen" in kept
