"""Helpers of the pythonic families' tests (LFM2.5, Llama 4 pythonic): the reference template's own output for a
turn, round trips that check every refusal against the reference, and conversations for differential rendering."""

from __future__ import annotations

import json
import random

from hypothesis import strategies as st

import toolwire
from support import assert_events_consistent, full_state, random_chunks, reference_render, stream_parse, turn_output
from support.xml_calls import RT_TOOLS, calls, texts
from toolwire.errors import ToolwireError, UnrepresentableValue, UnsupportedByFormat

HISTORY = [{"role": "user", "content": "go"}]

FAMILIES = {  # format: (reference template, its variables, what ends an assistant turn)
    "lfm25": ("extra/LFM2.5-8B-A1B", {"bos_token": "<|startoftext|>"}, "<|im_end|>\n"),
    "llama4_pythonic": ("extra/Llama-4-pythonic-vllm", {"bos_token": "<|begin_of_text|>"}, "<|eot|>"),
}


def typed(value) -> str:
    """JSON with types visible (1 vs 1.0 vs true), for exact comparisons."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def reference(family: str, messages: list, tools=None, **kw) -> str:
    template, variables, _ = FAMILIES[family]
    kw.setdefault("add_generation_prompt", True)
    return reference_render(template, messages, tools, drop_none=True, **variables, **kw)


def reference_turn_output(family: str, turn: dict, tools) -> str:
    """What the model wrote for ``turn`` according to the reference template (its generation prompt and end of
    turn taken off)."""
    head = reference(family, HISTORY, tools)
    full = reference(family, HISTORY + [turn], tools, add_generation_prompt=False)
    stop = FAMILIES[family][2]
    assert full.startswith(head) and full.endswith(stop)
    return full[len(head):len(full) - len(stop)]


def assistant_turn(content: str, reasoning: str | None, turn_calls) -> dict:
    turn = {"role": "assistant", "content": content}
    if turn_calls:
        turn["tool_calls"] = [{"id": f"c{i}", "type": "function", "function": {
            "name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
            for i, (name, args) in enumerate(turn_calls)]
    if reasoning is not None:
        turn["reasoning_content"] = reasoning
    return turn


def check_round_trip(family: str, content: str, reasoning: str | None, turn_calls, seed: int,
                     tools=RT_TOOLS) -> bool:
    """parse(render(assistant turn)) == the turn, one-shot and in random chunks. A refused turn is checked
    against the reference: the template's own writing of it does not read back (so refusing was needed).
    Returns whether the turn was rendered."""
    fmt = toolwire.get_format(family)
    turn = assistant_turn(content, reasoning, turn_calls)
    stop = FAMILIES[family][2]
    try:
        text = turn_output(fmt, HISTORY, turn, tools, stop=stop)
    except UnrepresentableValue as exc:
        assert exc.message_index == 1 and exc.field.startswith("tool_calls[")
        written = reference_turn_output(family, turn, tools)
        back = fmt.parse(written, tools)
        assert [(c.name, typed(c.arguments), c.status) for c in back.tool_calls] != [
            (n, typed(a), "proposed") for n, a in turn_calls], "refused, yet the template's own text reads back"
        return False
    out = fmt.parse(text, tools)
    assert out.content == content
    assert out.reasoning == (reasoning or "")
    assert [(c.name, typed(c.arguments)) for c in out.tool_calls] == [(n, typed(a)) for n, a in turn_calls]
    assert all(c.status == "proposed" and not c.diagnostics for c in out.tool_calls), out.codes()
    assert out.diagnostics == [] and not out.truncated
    result, events = stream_parse(fmt, text, random_chunks(text, random.Random(seed), 7), tools)
    assert full_state(result) == full_state(out)
    assert_events_consistent(result, events)
    return True


def check_against_reference(family: str, messages: list, tools, **options) -> str:
    """toolwire's render equals the reference template's (``"match"``), or both refuse (``"both refuse"``), or
    toolwire refuses by design (``"refused"``: a value it could not read back, or data the template would drop
    silently; tests of their own check those refusals)."""
    fmt = toolwire.get_format(family)
    try:
        expected = reference(family, messages, tools, **options)
    except Exception as exc:  # noqa: BLE001 - the reference refuses: toolwire must refuse too
        if type(exc).__name__ == "Skipped":
            raise
        try:
            fmt.render(messages, tools, **options)
        except ToolwireError:
            return "both refuse"
        raise AssertionError(f"the reference refuses ({exc!r}); toolwire rendered") from None
    try:
        prompt = fmt.render(messages, tools, **options)
    except (UnrepresentableValue, UnsupportedByFormat):
        return "refused"
    assert prompt.text == expected
    assert "".join(s.text for s in prompt.segments) == expected
    return "match"


@st.composite
def conversations(draw, content=texts):
    """Random conversations: an optional system message, user turns, assistant turns with or without calls to
    the round-trip tools (every JSON type) and reasoning, tool results, sometimes a final assistant turn."""
    messages = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(content)})
    for _ in range(draw(st.integers(1, 3))):
        messages.append({"role": "user", "content": draw(content)})
        for _ in range(draw(st.integers(0, 2))):
            turn_calls = draw(calls.filter(bool))
            messages.append(assistant_turn(draw(content), draw(st.none() | content), turn_calls))
            messages.extend({"role": "tool", "tool_call_id": f"c{i}", "content": draw(content)}
                            for i in range(len(turn_calls)))
        if draw(st.booleans()):
            messages.append(assistant_turn(draw(content), draw(st.none() | content), None))
    return messages


__all__ = ["FAMILIES", "HISTORY", "RT_TOOLS", "assistant_turn", "check_against_reference", "check_round_trip",
           "conversations", "reference", "reference_turn_output", "typed"]


def golden_turns(family: str):
    """Every assistant turn of the family's golden render requests, as ``(row id, history, turn, tools)``."""
    from support import golden

    for row in golden("render", family):
        if "expected" not in row:
            continue
        messages, tools = row["request"]["messages"], row["request"].get("tools")
        for i, message in enumerate(messages):
            if message["role"] == "assistant":
                yield row["id"], messages[:i], message, tools


def check_golden_turn_reads_back(family: str, history: list, turn: dict, tools) -> bool:
    """The turn, rendered after ``history`` as the model would have written it, parses back to its content,
    reasoning and calls (arguments as the request's JSON). Returns False when the render refuses it (a value the
    format cannot carry; the caller counts those)."""
    fmt = toolwire.get_format(family)
    stop = FAMILIES[family][2]
    try:
        text = turn_output(fmt, history, turn, tools, stop=stop)
    except UnrepresentableValue:
        return False
    out = fmt.parse(text, tools)
    calls = [(c["function"]["name"], json.loads(c["function"]["arguments"]) if isinstance(
        c["function"]["arguments"], str) else c["function"]["arguments"]) for c in turn.get("tool_calls") or ()]
    assert [(c.name, typed(c.arguments)) for c in out.tool_calls] == [(n, typed(a)) for n, a in calls]
    assert out.content == (turn.get("content") or "")
    assert all(c.status == "proposed" for c in out.tool_calls) and not out.diagnostics
    return True
