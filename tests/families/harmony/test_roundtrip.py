"""gpt_oss round trip: parse(render(assistant turn)) == turn, as text and as token ids, for every JSON value
type; and chunking invariance on those outputs (every split point for short ones, 1-char, random splits)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings, strategies as st

import toolwire
from support import assert_events_consistent, check_chunking, chunkings, full_state, json_values
from support.harmony_oracles import prompt_ids, tiktoken_encoding

FMT = toolwire.get_format("gpt_oss")
DAY = "2026-11-29"
NAMES = ["get_weather", "search", "noop_tool"]
TOOLS = [{"type": "function", "function": {"name": n, "description": f"{n} tool"}} for n in NAMES]
MARKERS = tuple(FMT.markers.values())
HISTORY = [{"role": "user", "content": "Go."}]

_ANY_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40) | st.sampled_from(
    ["", " ", "  \n\t ", "<b>bold</b> &amp; <tool_call>", "{\"json\": 1}", "ünïcödé 🚀 杭州", *MARKERS,
     "a<|call|>b", "x<|end|><|start|>assistant<|channel|>commentary<|message|>y"])
# plain text can carry no marker (harmony has no escape for it); token ids can
PLAIN_TEXT = _ANY_TEXT.filter(lambda s: not any(m in s for m in MARKERS))
JSON_VALUES = json_values(
    st.none() | st.booleans() | st.integers() | st.integers(min_value=10 ** 18, max_value=10 ** 40)
    | st.floats(allow_nan=False, allow_infinity=False) | _ANY_TEXT, _ANY_TEXT, max_size=3, max_leaves=8)
ARGS = st.dictionaries(_ANY_TEXT, JSON_VALUES, max_size=4)


def _call(name, args, n):
    return {"id": f"c{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def _output(turn: dict, **options) -> tuple[str, str]:
    """The text the model would have generated for ``turn``, with and without its stop token."""
    full = FMT.render(HISTORY + [turn], TOOLS, add_generation_prompt=False, current_date=DAY, **options).text
    prompt = FMT.render(HISTORY, TOOLS, current_date=DAY, **options).text
    assert full.startswith(prompt)
    out = full[len(prompt):]
    stop = next(m for m in (FMT.markers["call"], FMT.markers["return"]) if out.endswith(m))
    return out, out[:-len(stop)]


def _output_ids(turn: dict, **options) -> list[int]:
    enc = tiktoken_encoding()
    full = prompt_ids(FMT.render(HISTORY + [turn], TOOLS, add_generation_prompt=False, current_date=DAY, **options),
                      enc)
    head = prompt_ids(FMT.render(HISTORY, TOOLS, current_date=DAY, **options), enc)
    assert full[:len(head)] == head
    return full[len(head):-1]  # without the stop token


def _expected(turn: dict) -> dict:
    return {"content": turn.get("content") or "", "reasoning": turn.get("reasoning_content") or "",
            "tool_calls": [{"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
                           for c in turn.get("tool_calls") or []]}


def _summary(out, stop: str | None = None) -> dict:
    """The result of a clean output; ``stop``: the stop token the output ends with (stripped, diagnosed)."""
    assert all(c.status == "proposed" for c in out.tool_calls), out.codes()
    assert [(d.code, d.raw) for d in out.diagnostics] == ([("stop_token_in_output", stop)] if stop else [])
    assert not out.truncated
    return {"content": out.content, "reasoning": out.reasoning,
            "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in out.tool_calls]}


def _check_streaming(text: str, one_shot) -> None:
    out = check_chunking(FMT, text, TOOLS, splits=chunkings(text, seed=text, every_split_upto=200, random_splits=3,
                                                            max_len=24))
    assert full_state(out) == full_state(one_shot)


@st.composite
def hf_turns(draw, text=PLAIN_TEXT):
    """Turns the HF template renders without loss: a final answer, or one call (reasoning optional)."""
    reasoning = draw(st.none() | text)
    if draw(st.booleans()):
        return {"role": "assistant", "content": draw(text), "reasoning_content": reasoning}
    return {"role": "assistant", "content": None, "reasoning_content": reasoning,
            "tool_calls": [_call(draw(st.sampled_from(NAMES)), draw(ARGS), 0)]}


@st.composite
def call_turns(draw, text=PLAIN_TEXT):
    """Content, reasoning and several calls: lossless with all_tool_calls and a commentary preamble."""
    calls = [_call(draw(st.sampled_from(NAMES)), draw(ARGS), n) for n in range(draw(st.integers(1, 3)))]
    return {"role": "assistant", "content": draw(st.none() | text), "reasoning_content": draw(st.none() | text),
            "tool_calls": calls}


LOSSLESS_CALLS = {"all_tool_calls": True, "tool_call_content_channel": "commentary"}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hf_turns())
def test_round_trip_default_profile(turn):
    expected = _expected(turn)
    with_stop, without = _output(turn)
    stop = with_stop[len(without):]
    assert stop in (FMT.markers["call"], FMT.markers["return"])
    assert _summary(FMT.parse(with_stop, TOOLS), stop) == expected
    assert _summary(FMT.parse(without, TOOLS)) == expected
    for call in FMT.parse(without, TOOLS).tool_calls:
        assert json.loads(call.raw_arguments) == call.arguments


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(call_turns(), st.booleans())
def test_round_trip_several_calls_with_preamble(turn, constrain):
    _with_stop, text = _output(turn, constrain_json=constrain, **LOSSLESS_CALLS)
    assert _summary(FMT.parse(text, TOOLS)) == _expected(turn)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(call_turns(text=_ANY_TEXT), st.booleans())
def test_round_trip_as_token_ids_with_marker_text_anywhere(turn, escape):
    """Over token ids even content and reasoning may spell markers: they are ordinary tokens."""
    ids = _output_ids(turn, escape_markers_in_arguments=escape, **LOSSLESS_CALLS)
    parser = FMT.stream(TOOLS, encoding=tiktoken_encoding())
    parser.feed(ids=ids)
    assert _summary(parser.finish()) == _expected(turn)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hf_turns() | call_turns().map(lambda t: {**t, "content": None, "tool_calls": t["tool_calls"][:1]}))
def test_chunking_invariance_on_rendered_turns(turn):
    _with_stop, text = _output(turn)
    _check_streaming(text, FMT.parse(text, TOOLS))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(call_turns())
def test_chunking_invariance_over_ids(turn):
    ids = _output_ids(turn, **LOSSLESS_CALLS)
    enc = tiktoken_encoding()
    results = []
    for size in (len(ids) or 1, 1, 3):
        parser = FMT.stream(TOOLS, encoding=enc)
        events = []
        for k in range(0, len(ids), size):
            events += parser.feed(ids=ids[k:k + size])
        events += parser.flush()
        result = parser.finish()
        assert_events_consistent(result, events)
        results.append(full_state(result))
    assert results[0] == results[1] == results[2]
