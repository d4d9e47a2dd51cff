"""A call left inside reasoning that never closed (issue 33, class ``missing_markers``), in every reasoning family.

Public reports (vLLM, SGLang, llama.cpp: Qwen3 and Qwen3.5 thinking models, GLM-4.5+, DeepSeek, Kimi K2-Thinking,
MiniMax-M2 writing ``<tool_call>`` before ``</think>`` and stopping there, the reasoning parser then swallowing the
call) show the shape: the reasoning (often opened by the prompt) holds a complete call and the output ends without
the reasoning closer. With declared tools, each complete call the output ends with whose name is declared and whose
arguments fit is ``repaired`` (``drift_call_in_unclosed_reasoning``); every other case stays what it was (``rejected``
with ``call_in_reasoning``), with an ``info`` diagnostic saying why when the reasoning never closed.

Outputs are written by each family's own renderer (an assistant turn with reasoning and calls, rendered as history),
then the reasoning closer is taken out: no marker is spelled here. Each case is checked one-shot, at every split
point, 1 character at a time, in random chunks and, where the family has a real tokenizer in ../shared, as its token
ids; the stream's ``ToolCallFinished`` events carry the final candidates (nothing sent is taken back).
"""

from __future__ import annotations

import json
import random
from functools import cache

import pytest

import toolwire
from support import REAL, assert_events_consistent, chunkings, full_state, require_shared
from toolwire.output import ToolCallFinished
from toolwire.parsers.engine.drift import DRIFT_CODES, Drift
from toolwire.parsers.engine.reasoning_calls import CODE, recovered_in_reasoning
from toolwire.registry import families

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city.", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"]}}},
    {"type": "function", "function": {"name": "exec", "description": "Run a command.", "parameters": {
        "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}},
]
# what the renderer needs to write a call to a tool the parse does not declare
RENDER_TOOLS = TOOLS + [{"type": "function", "function": {"name": "search", "description": "Search.", "parameters": {
    "type": "object", "properties": {"q": {"type": "string"}}}}}]

REASONING_FAMILIES = sorted(name for name, fam in families().items() if fam.reasoning)
TOKENIZER = {**dict.fromkeys(("qwen25", "qwen3", "qwen3_instruct_2507", "qwen3_thinking_2507", "qwen3_coder",
                              "qwen35", "qwen36"), "Qwen3"),
             **dict.fromkeys(("deepseek_r1", "deepseek_v31", "deepseek_v32"), "DeepSeek-V3"),
             **dict.fromkeys(("deepseek_v4", "deepseek_v41"), "DeepSeek-V4")}
PLAN = "I need the weather first."
WEATHER = ("get_weather", {"city": "Paris", "days": 2})
EXEC = ("exec", {"command": "ls -la"})


def _call(family: str, i: int, name: str, arguments: dict) -> dict:
    call_id = f"functions.{name}:{i}" if family.startswith("kimi_k2") else f"abcdefgh{i}"
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def _strip_stop(family: str, text: str) -> str:
    text = text.rstrip()
    for stop in toolwire.get_format(family).stop_tokens:
        if text.endswith(stop):
            return text[:-len(stop)].rstrip()
    return text


@cache
def written(family: str, calls: tuple) -> tuple[str, str, str, bool]:
    """``(reasoning part, closer, call part, prompt opens reasoning)`` of an assistant turn with reasoning
    :data:`PLAN` and ``calls``, as the family's renderer writes it: the turn's output is their concatenation."""
    fmt = toolwire.get_format(family)
    closer = toolwire.registry.family(family).reasoning[1]
    tool_calls = [_call(family, i, name, json.loads(args)) for i, (name, args) in enumerate(calls)]
    history = [{"role": "user", "content": "Weather in Paris?"}]
    turn = {"role": "assistant", "content": "", "reasoning_content": PLAN, "tool_calls": tool_calls}
    head = fmt.render(history, RENDER_TOOLS, thinking=True)
    full = fmt.render(history + [turn], RENDER_TOOLS, thinking=True, add_generation_prompt=False).text
    tail = full[len(head.text):] if full.startswith(head.text) else None
    if tail is not None and closer in tail:
        at = tail.index(closer)
        before, after = tail[:at], tail[at + len(closer):]
        if family == "kimi_k3":  # the empty response section the template writes before the tools
            m = fmt.markers
            after = after.replace(f"{m['open']}response{m['sep']}{m['close']}response{m['sep']}", "", 1)
            after = after.rsplit(f"{m['close']}message", 1)[0]
        return before, closer, _strip_stop(family, after), head.opens_reasoning
    # a family whose render of the turn holds no reasoning (its template drops it, or has none of its own): the
    # prompt opens the reasoning and the call block follows the plan
    block = tail if tail is not None else full.rsplit(fmt.markers["assistant"], 1)[1]
    if closer in block:
        block = block.split(closer, 1)[1]
    return PLAN + "\n\n", closer, _strip_stop(family, block.lstrip()), True


def _calls(*calls) -> tuple:
    return tuple((name, json.dumps(args)) for name, args in calls)


def build(family: str, case: str):
    """``(output, tools, thinking, options)`` of one case."""
    options = {}
    tools = TOOLS
    calls = _calls(WEATHER)
    if case == "two_calls":
        calls = _calls(WEATHER, EXEC)
    elif case == "undeclared":
        calls = _calls(("search", {"q": "Paris weather"}))
    elif case == "off_schema":
        calls = _calls(("get_weather", {"town": "Paris"}))
    before, closer, after, thinking = written(family, calls)
    output = before + after
    if case == "reasoning_closed":
        output = before + after + closer
    elif case == "stop_token_after" and family != "gemma4":  # an end-of-turn token the server left at the end
        output = before + after + toolwire.get_format(family).stop_tokens[0] + "\n"  # (Gemma's render ends in one)
    elif case == "text_after":
        output = before + after + "\nThen I will answer."
    elif case == "cut_off":
        output = output[:output.rindex("Paris") + 3]
    elif case == "no_tools":
        tools = None
    elif case == "promoted":
        options["promote_reasoning_calls"] = True
    return output, tools, thinking, options


CASES = ["recovered", "two_calls", "stop_token_after", "undeclared", "off_schema", "cut_off", "reasoning_closed",
         "text_after", "no_tools", "promoted"]
PARAMS = [pytest.param(f, c, id=f"{f}-{c}") for f in REASONING_FAMILIES for c in CASES]


def drift_notes(out):
    """The drift diagnostics of this recovery: (on calls, on the output)."""
    on_calls = [(c.index, d) for c in out.tool_calls for d in c.diagnostics if d.code == CODE]
    return on_calls, [d for d in out.diagnostics if d.code == CODE]


@pytest.mark.parametrize("family, case", PARAMS)
def test_case(family, case):
    """One-shot: the recovered calls are ``repaired`` with the drift diagnostic (class ``missing_markers``, the
    model's text as ``raw``) and no ``call_in_reasoning``; every negative keeps today's reading, with an ``info``
    diagnostic naming the call where the reasoning never closed."""
    output, tools, thinking, options = build(family, case)
    fmt = toolwire.get_format(family)
    out = fmt.parse(output, tools, thinking=thinking, **options)
    on_calls, on_output = drift_notes(out)
    if case in ("recovered", "two_calls", "stop_token_after"):
        want = [WEATHER, EXEC] if case == "two_calls" else [WEATHER]
        assert [(c.name, c.arguments, c.status, c.source) for c in out.tool_calls] == \
            [(name, args, "repaired", "reasoning") for name, args in want]
        for c in out.tool_calls:
            assert recovered_in_reasoning(c)
            assert not [d for d in c.diagnostics if d.code == "call_in_reasoning"]
            (note,) = [d for d in c.diagnostics if d.code == CODE]
            assert note.severity == "warning" and note.call_index == c.index
            assert note.message.startswith("missing_markers:")
            assert note.raw and note.raw in output
        assert not on_output
        assert out.content == ""
        return
    assert not [c for c in out.tool_calls if c.status == "repaired" and c.source == "reasoning"]
    assert not on_calls
    if case in ("reasoning_closed", "no_tools", "promoted"):  # nothing changes, nothing is said
        assert not on_output
        bare = fmt.parse(output, tools, thinking=thinking, **options)
        assert bare.tool_calls and all(
            (c.status == "proposed") if case == "promoted" else (c.status == "rejected" and "call_in_reasoning" in
                                                                  [d.code for d in c.diagnostics])
            for c in bare.tool_calls)
        return
    if case == "cut_off" and not out.tool_calls:  # cut inside a header the family holds whole: no call started
        assert not on_output
        return
    assert out.tool_calls and all(c.status in ("rejected", "truncated") for c in out.tool_calls)
    (note,) = on_output
    assert note.severity == "info" and "not recovered" in note.message and note.call_index == out.tool_calls[0].index
    why = {"undeclared": "'search' is not a declared tool", "off_schema": "do not fit",
           "cut_off": "cut off", "text_after": "goes on after the call"}[case]
    assert why in note.message


def _finished_agree(result, events) -> None:
    """Never taken back: each call is finished once, and its ToolCallFinished carries the final candidate."""
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert sorted(e.index for e in finished) == [c.index for c in result.tool_calls]
    final = {c.index: c for c in result.tool_calls}
    for e in finished:
        assert e.candidate.model_dump() == final[e.index].model_dump()


def _stream(fmt, chunks, tools, **kw):
    parser = fmt.stream(tools, **kw)
    events = []
    for piece in chunks:
        events.extend(parser.feed(piece))
    events.extend(parser.flush())
    return parser.finish(), events


@pytest.mark.parametrize("family, case", PARAMS)
def test_case_streams_to_the_one_shot_result(family, case):
    """Every split point, 1 character at a time and random chunks give the one-shot result; the events agree with
    it (text deltas join to the final text, fragments to the final arguments, ToolCallFinished to the final
    candidates)."""
    output, tools, thinking, options = build(family, case)
    fmt = toolwire.get_format(family)
    want = full_state(fmt.parse(output, tools, thinking=thinking, **options))
    for chunks in chunkings(output, seed=hash((family, case)) & 0xFFFF, every_split_upto=600):
        result, events = _stream(fmt, chunks, tools, thinking=thinking, **options)
        assert full_state(result) == want, chunks
        assert_events_consistent(result, events)
        _finished_agree(result, events)


@cache
def _tokenizer(name: str):
    require_shared()
    pytest.importorskip("tokenizers")
    from toolwire.tokenize import load_tokenizer
    return load_tokenizer(str(REAL / "tokenizers" / name))


@pytest.mark.parametrize("family, case", [p for p in PARAMS if p.values[0] in TOKENIZER])
def test_case_as_token_ids(family, case):
    """The family's real tokenizer: the output's ids, fed at once, one at a time and in random runs, give the
    text result; the recovered call's candidate carries the span of its ids."""
    from toolwire.tokenize import vocabulary
    tokenizer = _tokenizer(TOKENIZER[family])
    output, tools, thinking, options = build(family, case)
    fmt = toolwire.get_format(family)
    ids = vocabulary(tokenizer).encode(output)
    want = full_state(fmt.parse(output, tools, thinking=thinking, **options))
    rng = random.Random(len(output))
    runs: list[list[int]] = []
    pos = 0
    while pos < len(ids):
        n = rng.randint(1, 5)
        runs.append(ids[pos:pos + n])
        pos += n
    for split in ([ids], [[i] for i in ids], runs):
        parser = fmt.stream(tools, tokenizer=tokenizer, thinking=thinking, **options)
        events = []
        for run in split:
            events += parser.feed(ids=run)
        events += parser.flush()
        result = parser.finish()
        assert full_state(result) == want
        assert_events_consistent(result, events)
        _finished_agree(result, events)
        for c in result.tool_calls:
            if c.status != "truncated":
                assert c.span is not None and c.span[0] < c.span[1] <= len(ids)


def test_the_code_is_a_missing_markers_recovery():
    assert DRIFT_CODES[CODE] is Drift.MISSING_MARKERS


def test_the_finished_event_waits_only_while_blanks_follow():
    """Streamed a character at a time: the call's ToolCallFinished is not sent when its closer is read but at the
    end of the output, repaired; reasoning text after the call sends it at once, rejected as before."""
    fmt = toolwire.get_format("qwen3")
    before, _, after, thinking = written("qwen3", _calls(WEATHER))
    parser = fmt.stream(TOOLS, thinking=thinking)
    sent = [e for ch in before + after + "\n" for e in parser.feed(ch)]
    assert not [e for e in sent if isinstance(e, ToolCallFinished)]
    assert [e.source for e in sent if e.type == "tool_call_started"] == ["reasoning"]
    (done,) = [e for e in parser.flush() if isinstance(e, ToolCallFinished)]
    assert done.candidate.status == "repaired"
    parser = fmt.stream(TOOLS, thinking=thinking)
    sent = [e for ch in before + after + "\nHmm" for e in parser.feed(ch)]
    (done,) = [e for e in sent if isinstance(e, ToolCallFinished)]
    assert done.candidate.status == "rejected"
    result = parser.finish()
    assert result.tool_calls[0].status == "rejected" and result.reasoning.endswith("\nHmm")


def test_harmony_analysis_calls_are_not_this_drift():
    """gpt-oss: a call on the analysis channel is a closed message (``<|call|>`` ends it), never reasoning left
    open, so it stays as before: rejected with call_in_reasoning, no drift diagnostic."""
    fmt = toolwire.get_format("gpt_oss")
    m = fmt.markers
    output = (f"{m['channel']}analysis{m['message']}Need weather.{m['end']}{m['start']}assistant{m['channel']}"
              f"analysis to=functions.get_weather {m['constrain']}json{m['message']}{{\"city\": \"Paris\"}}{m['call']}")
    out = fmt.parse(output, TOOLS, analysis_calls="reject")
    assert [(c.name, c.status, c.source) for c in out.tool_calls] == [("get_weather", "rejected", "reasoning")]
    assert not drift_notes(out)[0] and not drift_notes(out)[1]


# ---------------------------------------------------------------- what the serving adapters send

def _recovered_output(family: str = "qwen3"):
    before, _, after, thinking = written(family, _calls(WEATHER))
    return before + after, thinking


@pytest.mark.parametrize("family", ["qwen3", "glm47", "deepseek_v4", "minimax_m2"])
def test_engine_streams_send_the_recovered_call_whole_at_the_end(family):
    """EngineStream and the fail-closed wire policy behind vLLM: nothing of the call is sent while the output
    streams; the flush sends it whole (id, name, complete arguments), finished, and the non-streaming lists hold
    it. With the reasoning closed, no call is sent, as before."""
    from toolwire.integrations.engine_stream import EngineStream, streamed_calls
    from toolwire.integrations.wire_policy import FailClosedStream

    output, thinking = _recovered_output(family)
    for cls in (EngineStream, FailClosedStream):
        stream = cls(family, TOOLS, thinking=thinking)
        sent = [piece for ch in output for piece in stream.feed(ch).calls]
        assert sent == []
        (piece,) = stream.flush().calls
        assert (piece.name, json.loads(piece.arguments)) == (WEATHER[0], WEATHER[1]) and piece.id
        assert [(c.name, c.finished) for c in stream.calls] == [(WEATHER[0], True)]
        assert [c.id for c in streamed_calls(stream.parsed)] == [piece.id]
        if cls is FailClosedStream:
            assert [c.id for c in stream.usable_calls] == [piece.id]
    before, closer, after, thinking = written(family, _calls(WEATHER))
    stream = EngineStream(family, TOOLS, thinking=thinking)
    stream.feed(before + after + closer)
    assert not stream.flush().calls and not stream.calls and not streamed_calls(stream.parsed)


def test_openai_message_and_deltas_carry_the_recovered_call():
    """The OpenAI adapters: the message lists the call and finish_reason is tool_calls; the delta writer sends one
    tool_calls delta with the whole call when its ToolCallFinished comes (the flush), and its arguments are the
    message's."""
    from toolwire.integrations.openai import ChatCompletionsStream, finish_reason, to_openai_message

    output, thinking = _recovered_output()
    fmt = toolwire.get_format("qwen3")
    out = fmt.parse(output, TOOLS, thinking=thinking)
    message = to_openai_message(out)
    (call,) = message["tool_calls"]
    assert call["function"]["name"] == "get_weather" and json.loads(call["function"]["arguments"]) == WEATHER[1]
    assert finish_reason(out) == "tool_calls"
    writer = ChatCompletionsStream()
    parser = fmt.stream(TOOLS, thinking=thinking)
    streamed = [d for ch in output for d in writer.deltas(parser.feed(ch)) if "tool_calls" in d]
    assert streamed == []
    (delta,) = [d for d in writer.deltas(parser.flush()) if "tool_calls" in d]
    assert delta["tool_calls"][0]["function"] == call["function"] and delta["tool_calls"][0]["index"] == 0


def test_validation_accepts_the_recovered_call_and_still_refuses_others_in_reasoning():
    """``validate()``: the recovered call validates; a call in reasoning that closed is still refused with
    call_in_reasoning."""
    output, thinking = _recovered_output()
    fmt = toolwire.get_format("qwen3")
    (call,) = fmt.parse(output, TOOLS, thinking=thinking).tool_calls
    assert call.validate(TOOLS).status == "validated"
    before, closer, after, thinking = written("qwen3", _calls(WEATHER))
    (closed,) = fmt.parse(before + after + closer, TOOLS, thinking=thinking).tool_calls
    checked = closed.validate(TOOLS)
    assert checked.status == "rejected" and [e.code for e in checked.errors] == ["call_in_reasoning"]
