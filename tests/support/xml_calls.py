"""Test bodies shared by the Qwen XML (qwen3_coder, qwen35, qwen36) and Seed-OSS suites.

The families share one parser implementation; their tests share these checks, parametrized by family.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import toolwire
from toolwire.errors import ToolwireError
import support
from support import (
    assert_events_consistent, check_chunking, chunkings, every_split, full_state, golden, golden_params,
    random_chunks, require_shared, stream_parse, turn_output,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def params(kind: str, families: list[str]):
    return [p for family in families for p in golden_params(kind, family)]


def golden_streamed_splits(row: dict) -> list[list[str]]:
    """1-char feeds, 3 random splittings (seeded by the row's id) and, for outputs up to 300 characters,
    every two-piece split."""
    return chunkings(row["model_output"], seed=row["id"], random_splits=3, max_len=24)


def golden_tools(family: str) -> list[dict]:
    """The richest tool list the family's golden vectors use (for hand-written cases)."""
    rows = [r for r in golden("parse", family) if r.get("tools")]
    return max((r["tools"] for r in rows), key=len) if rows else []


def load_corpus(family_dir: str) -> list:
    """Malformed-output corpus rows from fixtures/<family_dir>/malformed.jsonl as pytest params."""
    path = FIXTURES / family_dir / "malformed.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [pytest.param(r, id=r["name"]) for r in rows]


def corpus_tools(family_dir: str) -> list[dict]:
    """The tools the corpus outputs were written against (fixtures/<family_dir>/tools.json)."""
    return json.loads((FIXTURES / family_dir / "tools.json").read_text(encoding="utf-8"))


def check_corpus_row(row: dict, tools: list[dict]) -> None:
    """A malformed output gives exactly the expected result, the same for every split, and loses no text."""
    fmt = toolwire.get_format(row["format"])
    opts = {"thinking": False, **row.get("options", {})}  # the corpus: rows without thinking start in content
    use_tools = None if row.get("no_tools") else tools
    out = check_chunking(fmt, row["output"], use_tools, splits=[*every_split(row["output"]), list(row["output"])],
                         **opts)
    expect = row["expect"]
    assert out.content == expect["content"]
    assert out.reasoning == expect.get("reasoning", "")
    got_calls = [{"name": c.name, "arguments": c.arguments, "status": c.status, "source": c.source,
                  "codes": [d.code for d in c.diagnostics]} for c in out.tool_calls]
    want_calls = [{"source": "content", "codes": [], "status": "proposed", **c} for c in expect.get("calls", [])]
    assert got_calls == want_calls
    assert [d.code for d in out.diagnostics] == expect.get("codes", [])
    for d in out.diagnostics:
        if d.code in expect.get("raw", {}):
            assert d.raw == expect["raw"][d.code]
    assert out.truncated == expect.get("truncated", False)


# ---------------------------------------------------------------- round trip (hypothesis)

from hypothesis import assume, strategies as st  # noqa: E402

from toolwire.errors import UnrepresentableValue  # noqa: E402

RT_TOOLS = [
    {"type": "function", "function": {"name": "do_it", "description": "Every JSON type.", "parameters": {
        "type": "object", "properties": {
            "s": {"type": "string"}, "i": {"type": "integer"}, "n": {"type": "number"}, "b": {"type": "boolean"},
            "z": {"type": "null"}, "a": {"type": "array"}, "o": {"type": "object"},
            "ns": {"type": ["string", "null"]}, "e": {"enum": ["red", "green"]}}}}},
    {"type": "function", "function": {"name": "other_tool", "description": "Strings only.", "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}, "body": {"type": "string"}}}}},
]
"""Round-trip tools: one typed parameter per JSON type (``u`` is undeclared, so it stays a string)."""

_MARKUP = st.sampled_from(["</parameter>", "<parameter=x>", "<parameter=s>", "\n<parameter=path>", "</function>", "<function=y>", "</tool_call>",
                           "<tool_call>", "<seed:tool_call>", "</seed:tool_call>", "</think>", "\n", " ", "\t",
                           "\r\n", "<", ">", "&amp;", "\"'\\"])
texts = st.lists(st.text(max_size=6) | _MARKUP, max_size=6).map("".join)
"""Strings with unicode, whitespace-only runs and markup that spells the format's own tags."""

plain_texts = st.text(st.characters(blacklist_characters="<", blacklist_categories=("Cs",)), max_size=30).map(str.strip)
"""Content and reasoning: no ``<`` (a marker spelled in free text is ambiguous by nature)."""

json_values = support.json_values(support.json_scalars(texts, int_bound=10**30), st.text(max_size=5), max_size=3,
                                  max_leaves=8)
_NULL_SPELLINGS = ("null", "None")

typed_args = st.fixed_dictionaries({}, optional={
    "s": texts, "u": texts, "i": st.integers(min_value=-10**30, max_value=10**30),
    "n": st.floats(allow_nan=False, allow_infinity=False) | st.integers(min_value=-10**20, max_value=10**20),
    "b": st.booleans(), "z": st.none(), "a": st.lists(json_values, max_size=4),
    "o": st.dictionaries(st.text(max_size=5), json_values, max_size=4),
    "ns": st.none() | texts.filter(lambda t: t.strip() not in _NULL_SPELLINGS), "e": st.sampled_from(["red", "green"]),
})
calls = st.lists(st.one_of(
    typed_args.map(lambda a: ("do_it", a)),
    st.fixed_dictionaries({}, optional={"path": texts, "body": texts}).map(lambda a: ("other_tool", a)),
), max_size=3)

END_OF_TURN = {"qwen3_coder": "<|im_end|>\n", "qwen35": "<|im_end|>\n", "qwen36": "<|im_end|>\n",
               "qwen38": "<|im_end|>\n", "nemotron3": "<|im_end|>\n", "step35": "<|im_end|>\n",
               "laguna": "</assistant>\n", "hy3": "<｜hy_eos:opensource｜>",
               "seed_oss": "<seed:eos>"}


def model_output(family: str, turn: dict, thinking: bool, **options) -> str:
    """What the model generates for ``turn``: the render with it minus the generation prompt, minus the stop."""
    out = turn_output(toolwire.get_format(family), [{"role": "user", "content": "go"}], turn, RT_TOOLS,
                      thinking=thinking, **options)
    return out[:-len(END_OF_TURN[family])] if out.endswith(END_OF_TURN[family]) else out


def typed(value) -> str:
    """JSON with types visible (1 vs 1.0 vs true), for exact comparisons."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def check_round_trip(family: str, thinking: bool, content: str, reasoning: str, turn_calls, rng_seed: int) -> None:
    """parse(render(assistant turn)) == the turn, one-shot and in random chunks; unsafe values are refused."""
    turn = {"role": "assistant", "content": content,
            "tool_calls": [{"id": f"c{i}", "type": "function",
                            "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
                           for i, (name, args) in enumerate(turn_calls)]}
    if reasoning:
        turn["reasoning_content"] = reasoning
    if not turn["tool_calls"]:
        del turn["tool_calls"]
    if family == "seed_oss":
        assume(content or reasoning or turn_calls)  # an empty Seed turn renders without the prompt's "\n"
    try:
        text = model_output(family, turn, thinking)
    except UnrepresentableValue as exc:
        assert exc.message_index == 1 and ".function.arguments." in exc.field
        assume(False)
    fmt = toolwire.get_format(family)
    out = fmt.parse(text, RT_TOOLS, thinking=thinking)
    assert out.content == content
    assert out.reasoning == reasoning
    assert [(c.name, typed(c.arguments)) for c in out.tool_calls] == [(n, typed(a)) for n, a in turn_calls]
    assert all(c.status == "proposed" and not c.diagnostics for c in out.tool_calls)
    assert out.diagnostics == [] and not out.truncated
    chunks = random_chunks(text, random.Random(rng_seed), 7)
    result, events = stream_parse(fmt, text, chunks, tools=RT_TOOLS, thinking=thinking)
    assert full_state(result) == full_state(out)
    assert_events_consistent(result, events)


# ---------------------------------------------------------------- differential rendering against the reference

REFERENCE_TEMPLATES = {"qwen3_coder": "Qwen3-Coder", "qwen35": "Qwen3.5-4B", "qwen36": "Qwen3.6-35B-A3B",
                       "qwen38": "Qwen3.8-27B", "nemotron3": "extra/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
                       "step35": "extra/StepFun3.5-Flash", "laguna": "extra/poolside-Laguna-S-2.1",
                       "hy3": "extra/tencent-Hy3",
                       "seed_oss": "Seed-OSS-36B-Instruct"}


def reference_render(family: str, messages: list[dict], tools: list[dict] | None, *, add_generation_prompt: bool,
                     **template_kwargs) -> str:
    """The model's own Jinja template, rendered by transformers as the golden vectors were (arguments as objects)."""
    return support.reference_render(REFERENCE_TEMPLATES[family], messages, tools,
                                    add_generation_prompt=add_generation_prompt, **template_kwargs)


def _assistant_with_calls(draw_calls, content, reasoning):
    msg = {"role": "assistant", "content": content,
           "tool_calls": [{"id": f"t{i}", "type": "function",
                           "function": {"name": n, "arguments": json.dumps(a, ensure_ascii=False)}}
                          for i, (n, a) in enumerate(draw_calls)]}
    if reasoning is not None:
        msg["reasoning_content"] = reasoning
    return msg


@st.composite
def conversations(draw):
    """Random OpenAI-style conversations: optional system, user turns, assistant turns with or without calls
    and reasoning, tool results; sometimes ending with an assistant turn (rendered as history)."""
    messages = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(texts)})
    for _ in range(draw(st.integers(1, 3))):
        messages.append({"role": "user", "content": draw(texts)})
        for _ in range(draw(st.integers(0, 2))):
            reasoning = draw(st.none() | texts)
            turn_calls = draw(calls.filter(bool))
            messages.append(_assistant_with_calls(turn_calls, draw(texts), reasoning))
            messages.extend({"role": "tool", "tool_call_id": f"t{i}", "content": draw(texts)}
                            for i in range(len(turn_calls)))
        if draw(st.booleans()):
            msg = {"role": "assistant", "content": draw(texts)}
            reasoning = draw(st.none() | texts)
            if reasoning is not None:
                msg["reasoning_content"] = reasoning
            messages.append(msg)
    return messages


def check_against_reference(family: str, messages: list[dict], tools: list[dict] | None, options: dict,
                            template_kwargs: dict) -> None:
    """toolwire's native render equals the reference template's, or both refuse."""
    require_shared()
    fmt = toolwire.get_format(family)
    agp = options.get("add_generation_prompt", True)
    try:
        expected = reference_render(family, messages, tools, add_generation_prompt=agp, **template_kwargs)
    except Exception as exc:  # the reference refuses: toolwire must refuse too
        if isinstance(exc, pytest.skip.Exception):
            raise
        with pytest.raises(ToolwireError):
            fmt.render(messages, tools, **options)
        return
    try:
        prompt = fmt.render(messages, tools, **options)
    except UnrepresentableValue:
        assume(False)  # the reference would write an ambiguous value; toolwire refuses it by design
    assert prompt.text == expected
    assert "".join(s.text for s in prompt.segments) == expected


# ---------------------------------------------------------------- where parsing starts (issue 11 §1)

START_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]
AFTER_USER = [{"role": "user", "content": "Weather in Oslo?"}]
AFTER_TOOL = AFTER_USER + [
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c0", "type": "function", "function": {
        "name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]},
    {"role": "tool", "tool_call_id": "c0", "content": "4 C"}]


def check_start_state(family: str, thinking: bool, history: list, tail: str, output: str, opened: bool,
                      in_reasoning: tuple[str, str], in_content: tuple[str, str]) -> None:
    """The prompt for ``history`` ends with ``tail`` (read off the reference template by hand) and opens the
    reasoning exactly when ``opened``; ``parse(output, prompt=...)`` then starts where the prompt left off:
    ``(reasoning, content)`` is ``in_reasoning`` when it opened, else ``in_content`` (the closer diagnosed)."""
    fmt = toolwire.get_format(family)
    prompt = fmt.render(history, START_TOOLS, thinking=thinking)
    assert prompt.text.endswith(tail)
    assert prompt.opens_reasoning is opened
    out = fmt.parse(output, START_TOOLS, prompt=prompt)
    assert (out.reasoning, out.content) == (in_reasoning if opened else in_content)
    assert [d.code for d in out.diagnostics] == ([] if opened else ["reasoning_close_in_content"])
    streamed, _ = stream_parse(fmt, output, list(output), tools=START_TOOLS, prompt=prompt)
    assert full_state(streamed) == full_state(out)


# ---------------------------------------------------------------- truncation (issue 11 §3)

def check_truncated_header(family: str, output: str, header: str) -> None:
    """Output ending inside a call header: no ToolCallStarted at any chunking, a ``truncated_call_header``
    diagnostic holding the header text, ``truncated``."""
    from toolwire.output import ToolCallStarted

    fmt = toolwire.get_format(family)
    for chunks in (list(output), [output]):
        result, events = stream_parse(fmt, output, chunks, tools=START_TOOLS)
        assert not [e for e in events if isinstance(e, ToolCallStarted)]
        assert [(d.code, d.raw) for d in result.diagnostics] == [("truncated_call_header", header)]
        assert result.truncated and not result.tool_calls


def check_truncated_over_limit(family: str, output: str) -> None:
    """A string value over ``max_argument_bytes`` that the output also cuts short: ``truncated``, not rejected."""
    from toolwire.limits import Limits

    out = toolwire.get_format(family).parse(output, START_TOOLS, limits=Limits(max_argument_bytes=20))
    (call,) = out.tool_calls
    assert call.status == "truncated" and "too_large" in [d.code for d in call.diagnostics] and out.truncated


# ---------------------------------------------------------------- markers inside reasoning, then its close (issue 21)

REASONING_SHAPES = {
    # family: (thinking, text before the reasoning, the closer and its framing before the answer)
    "qwen35": (True, "", "\n</think>\n\n"), "qwen36": (True, "", "\n</think>\n\n"),
    "seed_oss": (False, "<seed:think>", "</seed:think>\n"),
    "glm45": (False, "\n<think>", "</think>\n"), "glm46": (False, "\n<think>", "</think>\n"),
    "glm47": (True, "", "</think>"), "minimax_m2": (True, "", "\n</think>\n\n"),
}
MENTION_PIECES = ["<tool_call>", "</tool_call>", "<function=", "<function=get_weather>", "</function>",
                  "<parameter=", "<parameter=city>", "</parameter>", "<seed:tool_call>", "</seed:tool_call>",
                  "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "<minimax:tool_call>",
                  "</minimax:tool_call>", '<invoke name="', '<invoke name="get_weather">', '<parameter name="', '">',
                  "</invoke>", "get_weather", "city", "\n", " ", "x"]
mention_soup = st.lists(st.sampled_from(MENTION_PIECES) | st.text(st.characters(blacklist_characters="<>",
                        blacklist_categories=("Cs",)), max_size=4), max_size=12).map("".join)
answers = st.text(st.characters(blacklist_characters="<\n", blacklist_categories=("Cs",)), min_size=1, max_size=12)


def check_reasoning_mention(family: str, soup: str, answer: str) -> None:
    """Whatever call markup the reasoning holds, its closer ends it: the answer after it is the content,
    exactly, for every chunking."""
    thinking, before, close = REASONING_SHAPES[family]
    assume(answer.strip() == answer and answer)
    output = before + soup + close + answer
    fmt = toolwire.get_format(family)
    out = fmt.parse(output, START_TOOLS, thinking=thinking)
    assert out.content == answer, (output, out)
    for chunks in (list(output), random_chunks(output, random.Random(len(output)), 5)):
        streamed, events = stream_parse(fmt, output, chunks, tools=START_TOOLS, thinking=thinking)
        assert full_state(streamed) == full_state(out)
        assert_events_consistent(streamed, events)
