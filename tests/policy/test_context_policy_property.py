"""Property: rendering the planned messages with the family's default policy equals rendering the
original messages, for random conversations, in every built format."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import toolwire
from toolwire.context_policy import plan
from toolwire.errors import ToolwireError
from support import without_dropped_reasoning_trace

TOOLS = [{"type": "function", "function": {
    "name": "lookup", "description": "Look something up.",
    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}}]

words = st.text(alphabet="abcdefgh ", min_size=1, max_size=8).map(lambda s: s.strip() or "x")


@st.composite
def conversations(draw):
    msgs = []
    if draw(st.booleans()):
        msgs.append({"role": "system", "content": draw(words)})
    n_turns = draw(st.integers(1, 3))
    call_no = 0
    for t in range(n_turns):
        msgs.append({"role": "user", "content": draw(words)})
        for _ in range(draw(st.integers(0, 2))):
            call_no += 1
            cid = f"call{call_no:05d}"[:9].ljust(9, "0")
            msgs.append({"role": "assistant", "content": "", "reasoning_content": draw(words),
                         "tool_calls": [{"id": cid, "type": "function",
                                         "function": {"name": "lookup", "arguments": json.dumps({"q": draw(words)})}}]})
            msgs.append({"role": "tool", "tool_call_id": cid, "content": draw(words)})
        if t < n_turns - 1 or draw(st.booleans()):
            msgs.append({"role": "assistant", "content": draw(words), "reasoning_content": draw(words)})
    return msgs


def _render(fmt, messages, thinking):
    try:
        return fmt.render(messages, TOOLS, thinking=thinking).text
    except ToolwireError as exc:
        return ("refused", exc.code)


@pytest.mark.parametrize("name", toolwire.formats() or ["none-built"])
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(conv=conversations(), thinking=st.booleans())
def test_render_of_plan_equals_render(name, conv, thinking):
    if name == "none-built":
        pytest.skip("no format is built")
    fmt = toolwire.get_format(name)
    p = plan(conv, fmt, thinking=thinking, tools=TOOLS)
    planned, original = _render(fmt, p.messages, thinking), _render(fmt, conv, thinking)
    assert without_dropped_reasoning_trace(name, planned) == without_dropped_reasoning_trace(name, original)
