"""Every format's stream parser takes ``limits=`` (:class:`toolwire.limits.Limits`): calls past ``max_calls``,
arguments past ``max_argument_bytes`` and values nested past ``max_depth`` (100,000 deep included) become
``rejected`` candidates with a ``too_large`` diagnostic, never an exception, a hang or a kept string.

Outputs are the golden vectors' (an output with two or more calls, a call with an array argument); DeepSeek-R1,
Llama 3.1 / 3.2, Hermes 3 and gpt-oss have no such vector (gpt-oss's parallel vector is lossy: its output holds one
call), so theirs are written with the family's own syntax.
"""

from __future__ import annotations

import json

import pytest

import toolwire
from support import assert_events_consistent, golden, require_shared
from toolwire.limits import Limits, value_depth

FORMATS = toolwire.formats()
DEEP = "[" * 100_000 + "]" * 100_000
TOOLS = [{"type": "function", "function": {"name": "store", "parameters": {
    "type": "object", "properties": {"items": {"type": "array"}, "note": {"type": "string"}}}}}]


def _r1(*arguments: str) -> str:
    """DeepSeek-R1 calls of ``store`` with these JSON argument texts."""
    from toolwire.parsers.deepseek_legacy import MARKERS as M, R1_FENCE_CLOSE, R1_FENCE_OPEN

    calls = "\n".join(M["call_begin"] + "function" + M["sep"] + "store" + R1_FENCE_OPEN + args + R1_FENCE_CLOSE
                      + M["call_end"] for args in arguments)
    return M["calls_begin"] + calls + M["calls_end"]


def _llama(*arguments: str) -> str:
    """Llama 3.1 calls of ``store`` (``;``-separated) with these JSON argument texts."""
    return "; ".join(f'{{"name": "store", "parameters": {args}}}' for args in arguments)


def _hermes3(*arguments: str) -> str:
    """Hermes 3 calls of ``store`` with these JSON argument texts (its few golden vectors have no array)."""
    return "\n".join(f'<tool_call>\n{{"name": "store", "arguments": {args}}}\n</tool_call>' for args in arguments)


def _gpt_oss(*arguments: str) -> str:
    """gpt-oss calls of ``store`` (one message each) with these JSON argument texts."""
    from toolwire.parsers.harmony import MARKERS as M

    return (M["start"] + "assistant").join(f" to=functions.store{M['channel']}commentary json{M['message']}{args}"
                                            f"{M['call']}" for args in arguments)


WRITTEN = {"deepseek_r1": _r1, "llama31": _llama, "llama32": _llama, "hermes3": _hermes3, "gpt_oss": _gpt_oss}


def _row(output: str) -> dict:
    return {"model_output": output, "tools": TOOLS, "options": {}}


def two_calls(family: str) -> dict:
    """An output with at least two calls."""
    if family in WRITTEN:
        return _row(WRITTEN[family]('{"note": "a"}', '{"note": "b"}'))
    require_shared()
    return next(r for r in golden("parse", family) if len(r["expected"]["tool_calls"]) >= 2)


def _spellings(value) -> list[str]:
    return [json.dumps(value, ensure_ascii=False), json.dumps(value, ensure_ascii=False, separators=(",", ":")),
            str(value)]


def array_argument(family: str) -> tuple[dict, int, str]:
    """An output with a call holding an array argument: (row, the call's index, how the output spells it)."""
    if family in WRITTEN:
        return _row(WRITTEN[family]('{"items": ["a", "b"]}')), 0, '["a", "b"]'
    require_shared()
    for row in golden("parse", family):
        for n, call in enumerate(row["expected"]["tool_calls"]):
            for value in call["arguments"].values():
                if isinstance(value, list) and value:
                    spelled = [s for s in _spellings(value) if row["model_output"].count(s) == 1]
                    if spelled:
                        return row, n, spelled[0]
    pytest.skip(f"no golden {family} call with an array argument")


def parse(family: str, row: dict, output: str | None = None, **options):
    fmt = toolwire.get_format(family)
    parser = fmt.stream(row["tools"], thinking=bool(row["options"].get("thinking")), **options)
    events = parser.feed(row["model_output"] if output is None else output) + parser.flush()
    out = parser.finish()
    assert_events_consistent(out, events)
    return out


def too_large(call) -> bool:
    return call.status == "rejected" and [d.code for d in call.diagnostics].count("too_large") == 1


@pytest.mark.parametrize("family", FORMATS)
def test_calls_past_max_calls_are_kept_as_text_not_candidates(family):
    # past the limit no candidate is built (memory stays bounded by the output), and nothing is lost:
    # one too_large diagnostic keeps each later call's name and raw text
    row = two_calls(family)
    free = parse(family, row)
    out = parse(family, row, limits=Limits(max_calls=1))
    assert len(free.tool_calls) >= 2 and free.tool_calls[0].status == "proposed"
    assert [c.model_dump() for c in out.tool_calls] == [free.tool_calls[0].model_dump()]
    [diag] = [d for d in out.diagnostics if d.code == "too_large"]
    assert diag.severity == "error"
    for call in free.tool_calls[1:]:
        assert call.name in diag.raw and call.raw_arguments in diag.raw


@pytest.mark.parametrize("family", FORMATS)
@pytest.mark.parametrize("limits", [Limits(max_calls=1), Limits(max_argument_bytes=8)],
                         ids=["max_calls", "max_argument_bytes"])
def test_limits_give_the_same_result_when_streamed_in_small_deltas(family, limits):
    # the streaming fast paths (a delta inside an open string value goes straight to the call) must keep a
    # past-limit call's text and reject an oversized one at the same place as one-shot parsing
    row = two_calls(family)
    whole = parse(family, row, limits=limits)
    parser = toolwire.get_format(family).stream(row["tools"], thinking=bool(row["options"].get("thinking")),
                                                limits=limits)
    text = row["model_output"]
    events = [e for i in range(0, len(text), 3) for e in parser.feed(text[i:i + 3])] + parser.flush()
    out = parser.finish()
    assert_events_consistent(out, events)
    assert out.model_dump() == whole.model_dump()
    assert any(d.code == "too_large" for c in out.tool_calls for d in c.diagnostics) or any(
        d.code == "too_large" for d in out.diagnostics)


@pytest.mark.parametrize("family", FORMATS)
def test_arguments_past_max_argument_bytes_are_rejected(family):
    out = parse(family, two_calls(family), limits=Limits(max_argument_bytes=8))
    assert out.tool_calls and all(too_large(c) for c in out.tool_calls)


@pytest.mark.parametrize("family", FORMATS)
def test_a_value_nested_100k_deep_is_too_large(family):
    row, n, spelled = array_argument(family)
    output = row["model_output"].replace(spelled, DEEP)
    out = parse(family, row, output)  # its CPU time: bench/bench_bounds.py
    assert too_large(out.tool_calls[n])
    assert "too_large" in [e.code for e in out.validate(row["tools"]).tool_calls[n].errors]


@pytest.mark.parametrize("family", FORMATS)
def test_max_depth_counts_as_validation_does(family):
    """The parser's depth bound is the one ``validate`` applies: the arguments object is one level."""
    row, n, _ = array_argument(family)
    depth = value_depth(row["expected"]["tool_calls"][n]["arguments"]) if "expected" in row else 2
    assert not too_large(parse(family, row, limits=Limits(max_depth=depth)).tool_calls[n])
    assert too_large(parse(family, row, limits=Limits(max_depth=depth - 1)).tool_calls[n])
