"""Test helpers for the GLM (glm45/glm46/glm47) and MiniMax-M2 families.

* ``reference_render``: the real chat template from ../shared/real/templates rendered by transformers' own
  Jinja renderer (arguments decoded to objects, as serving stacks do), for request shapes the golden vectors
  do not cover;
* ``turn_output``: what the model generates for an assistant turn (render with the turn minus render of the
  generation prompt, stop token removed), the way the golden parse vectors were derived;
* hypothesis strategies for round trips, with the schema each value is typed by;
* ``accounted_chars``: the "nothing lost" check on malformed output.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import strategies as st

import toolwire
from toolwire.errors import ToolwireError
from support import (
    REAL, assert_events_consistent, every_split, full_state, random_chunks, render_kwargs, require_shared,
    stream_parse, summary,
)

TEMPLATE_FILES = {"glm45": "GLM-4.5", "glm46": "GLM-4.6", "glm47": "GLM-4.7-Flash", "minimax_m2": "MiniMax-M2"}
STOP = {"minimax_m2": "[e~[\n"}
"""Text the reference writes after an assistant turn that is the stop token (not model output)."""


# ---- golden vectors

def check_golden_render(row: dict) -> None:
    """The row renders byte for byte to ``expected`` (or is refused with a toolwire error); segments
    concatenate to the text and only the family's own markers are special."""
    require_shared()
    fmt = toolwire.get_format(row["family"])
    req = row["request"]
    if "expected_error" in row:
        with pytest.raises(ToolwireError):
            fmt.render(req["messages"], req.get("tools"), **render_kwargs(row["options"]))
        return
    prompt = fmt.render(req["messages"], req.get("tools"), **render_kwargs(row["options"]))
    assert prompt.text == row["expected"]
    assert "".join(s.text for s in prompt.segments) == prompt.text
    assert set(prompt.special_markers()) <= set(fmt.markers.values())


def _parse_kwargs(row: dict) -> dict:
    return {"thinking": bool(row["options"].get("thinking", False))}


def check_golden_parse_oneshot(row: dict) -> None:
    """One-shot parse equals ``expected``; every call is a clean ``proposed`` candidate, no diagnostics."""
    require_shared()
    out = toolwire.get_format(row["family"]).parse(row["model_output"], row["tools"], **_parse_kwargs(row))
    assert summary(out) == row["expected"]
    assert all(c.status == "proposed" and not c.diagnostics for c in out.tool_calls), out.codes()
    assert out.diagnostics == [] and not out.truncated


def check_golden_parse_streamed(row: dict) -> None:
    """1-char feeds and every two-piece split (or 60 random splittings of long outputs) give the one-shot
    result exactly, with stream events consistent with it."""
    require_shared()
    fmt = toolwire.get_format(row["family"])
    text, tools, kw = row["model_output"], row["tools"], _parse_kwargs(row)
    want = full_state(fmt.parse(text, tools, **kw))
    if len(text) <= 400:
        splits = [list(text)] + list(every_split(text))
    else:
        rng = random.Random(row["id"])
        splits = [list(text)] + [random_chunks(text, rng, rng.choice([3, 16, 64])) for _ in range(60)]
    for chunks in splits:
        result, events = stream_parse(fmt, text, chunks, tools, **kw)
        assert full_state(result) == want, chunks
        assert_events_consistent(result, events)
    assert summary(result) == row["expected"]


def check_chunking(fmt, text: str, tools=None, *, seed: int = 0, exhaustive: bool = True, **kw):
    """Asserts 1-char feeds, every two-piece split (short outputs, when ``exhaustive``) and random splits
    give the one-shot result, with consistent events; returns the one-shot result."""
    ref = fmt.parse(text, tools, **kw)
    want = full_state(ref)
    pieces = [list(text)] + (list(every_split(text)) if exhaustive and len(text) <= 300 else [])
    rng = random.Random(seed)
    pieces += [random_chunks(text, rng, rng.choice([2, 7, 64])) for _ in range(8 if exhaustive else 2)]
    for chunks in pieces:
        result, events = stream_parse(fmt, text, chunks, tools, **kw)
        assert full_state(result) == want, chunks
        assert_events_consistent(result, events)
    return ref


# ---- the real templates

def reference_render(family: str, messages: list, tools: list | None = None, *, thinking: bool | None = None,
                     add_generation_prompt: bool = True, **variables) -> str:
    """The real template's output through transformers, fed as ``apply_chat_template`` feeds it
    (top-level None-valued keys dropped, arguments decoded to objects)."""
    require_shared()
    path = REAL / "templates" / f"{TEMPLATE_FILES[family]}.jinja"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    hf = pytest.importorskip("transformers.utils.chat_template_utils")
    msgs = [{k: v for k, v in m.items() if v is not None} for m in json.loads(json.dumps(messages))]
    for m in msgs:
        for call in m.get("tool_calls") or []:
            if isinstance(call["function"].get("arguments"), str):
                call["function"]["arguments"] = json.loads(call["function"]["arguments"])
    if thinking is not None and family != "minimax_m2":
        variables["enable_thinking"] = thinking
    out, _ = hf.render_jinja_template(conversations=[msgs], tools=tools, chat_template=path.read_text(encoding="utf-8"),
                    add_generation_prompt=add_generation_prompt, **variables)
    return out[0]


def turn_output(fmt, history: list, turn: dict, tools=None, *, thinking: bool = False, **options) -> str:
    """The model output for ``turn`` after ``history``'s generation prompt (asserts the prompt is a prefix)."""
    prompt = fmt.render(history, tools, thinking=thinking, **options).text
    full = fmt.render(history + [turn], tools, thinking=thinking, add_generation_prompt=False, **options).text
    assert full.startswith(prompt), "the generation prompt is not a prefix of the rendered turn"
    out = full[len(prompt):]
    stop = STOP.get(fmt.name)
    if stop:
        assert out.endswith(stop)
        out = out[:-len(stop)]
    return out


def json_type(value) -> str:
    """The JSON schema type of a decoded JSON value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def schema_for(arguments: dict) -> dict:
    """A parameters schema that types each argument by its own JSON type (so typing is unambiguous)."""
    return {"type": "object", "properties": {k: {"type": json_type(v)} for k, v in arguments.items()}}


def tool_for(name: str, arguments: dict) -> dict:
    return {"type": "function", "function": {"name": name, "parameters": schema_for(arguments)}}


def without(*markers: str):
    """A filter: text holding none of ``markers``."""
    return lambda text: not any(m in text for m in markers)


_MARKUP = st.sampled_from(["<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>",
                           "<think>", "</think>", "<minimax:tool_call>", "</minimax:tool_call>", '<invoke name="',
                           "</invoke>", '<parameter name="', "</parameter>", '">', "{", "}", "[", '"', "\\",
                           "\n", "\t", " ", "&amp;", "'", "True", "None", "null", "007", "1e5"])
strings = st.one_of(
    st.text(max_size=30),
    st.text(alphabet=st.sampled_from(" \t\n\r"), max_size=6),
    st.lists(_MARKUP, max_size=6).map("".join),
    st.text(alphabet=st.characters(min_codepoint=0x80, max_codepoint=0x1FAFF, exclude_categories=("Cs",)),
            max_size=10),
)
"""Strings of every kind: plain, whitespace-only, markup and marker soup, non-ASCII."""

_VALUE = st.recursive(
    st.one_of(st.none(), st.booleans(), strings, st.integers(min_value=-(2 ** 70), max_value=2 ** 70),
              st.floats(allow_nan=False, allow_infinity=False)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(strings, inner, max_size=3)),
    max_leaves=8)
keys = st.text(min_size=1, max_size=12).filter(lambda k: k.strip() == k and "<" not in k and '"' not in k)
argument_sets = st.dictionaries(keys, _VALUE, max_size=4)
names = st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True)
calls = st.lists(st.tuples(names, argument_sets), max_size=3)


def merged_tools(call_list: list[tuple[str, dict]]) -> list[dict] | None:
    """One tool per distinct name whose schema types every argument any of its calls uses (use with
    :func:`consistent_types`)."""
    props: dict[str, dict] = {}
    for name, args in call_list:
        props.setdefault(name, {}).update(schema_for(args)["properties"])
    return [{"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": p}}}
            for n, p in props.items()] or None


def consistent_types(call_list: list[tuple[str, dict]]) -> bool:
    """Every (tool, argument) pair has one JSON type across the calls."""
    seen: dict[tuple[str, str], str] = {}
    for name, args in call_list:
        for key, value in args.items():
            if seen.setdefault((name, key), json_type(value)) != json_type(value):
                return False
    return True


def accounted_chars(out, markers) -> Counter:
    """Non-whitespace characters a result keeps (content, reasoning, names, raw arguments, diagnostics'
    raw text), with the family's markers removed."""
    parts = [out.content, out.reasoning]
    parts += [c.name + c.raw_arguments for c in out.tool_calls]
    parts += [d.raw or "" for d in out.diagnostics]
    parts += [d.raw or "" for c in out.tool_calls for d in c.diagnostics]
    return visible_chars("".join(parts), markers)


def visible_chars(text: str, markers) -> Counter:
    """Non-whitespace characters of ``text`` once every marker in ``markers`` is removed."""
    for marker in sorted(markers, key=len, reverse=True):
        text = text.replace(marker, "")
    return Counter(ch for ch in text if not ch.isspace())


def family(name: str):
    return toolwire.get_format(name)


# ---- conversations for differential tests against the real templates

_texts = strings
_parts = st.lists(st.builds(lambda t: {"type": "text", "text": t}, _texts), min_size=1, max_size=2)


@st.composite
def conversations(draw, *, tool_names=("get_weather", "run_code")) -> list[dict]:
    """Random OpenAI conversations: system/user/assistant (content, reasoning under any alias, calls with
    JSON-string or object arguments)/tool messages (string, parts or no content), in any order."""
    msgs: list[dict] = []
    for _ in range(draw(st.integers(1, 6))):
        role = draw(st.sampled_from(["system", "user", "user", "assistant", "assistant", "tool"]))
        if role in ("system", "user"):
            msgs.append({"role": role, "content": draw(st.one_of(_texts, _parts))})
        elif role == "tool":
            msgs.append({"role": "tool", "tool_call_id": "c0",
                         "content": draw(st.one_of(_texts, _parts, st.none()))})
        else:
            msg = {"role": "assistant", "content": draw(st.one_of(st.none(), _texts, _parts))}
            alias = draw(st.sampled_from([None, "reasoning_content", "reasoning_content", "reasoning"]))
            if alias:
                msg[alias] = draw(_texts)
            calls = draw(st.lists(st.tuples(st.sampled_from(tool_names), argument_sets, st.booleans()), max_size=2))
            if calls:
                msg["tool_calls"] = [
                    {"id": f"c{i}", "type": "function",
                     "function": {"name": n, "arguments": json.dumps(a) if as_text else a}}
                    for i, (n, a, as_text) in enumerate(calls)]
            msgs.append(msg)
    return msgs


DIFF_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather <b>now</b> & \u00e9t\u00e9.",
                                      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "run_code", "parameters": {"type": "object", "properties": {
        "code": {"type": "string"}, "timeout": {"type": ["integer", "null"]}}}}},
]


# ---- malformed-output corpora (fixtures/glm, fixtures/minimax)

FIXTURES = __import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures"


def load_corpus(directory: str) -> list:
    """pytest params for ``fixtures/<directory>/malformed.jsonl``; ``"tools": "tools"`` names the
    directory's ``tools.json``."""
    base = FIXTURES / directory
    tools = json.loads((base / "tools.json").read_text("utf-8"))
    rows = [json.loads(line) for line in (base / "malformed.jsonl").read_text("utf-8").splitlines() if line.strip()]
    for row in rows:
        if row["tools"] == "tools":
            row["tools"] = tools
    return [pytest.param(row, id=row["id"]) for row in rows]


def check_corpus_case(row: dict) -> None:
    """The case's expectations hold one-shot and under every chunking, and nothing of the output is lost."""
    fmt = toolwire.get_format(row["family"])
    out = check_chunking(fmt, row["model_output"], row["tools"], **row["options"])
    want = row["expect"]
    got_calls = [{"name": c.name, "arguments": c.arguments, "status": c.status, "source": c.source,
                  "codes": [d.code for d in c.diagnostics]} for c in out.tool_calls]
    assert got_calls == want["calls"]
    assert (out.content, out.reasoning, out.truncated) == (want["content"], want["reasoning"], want["truncated"])
    assert [d.code for d in out.diagnostics] == want["codes"]
    markers = set(fmt.markers.values())
    assert not visible_chars(row["model_output"], markers) - accounted_chars(out, markers), "output text was lost"


# ---- fuzzing: marker soup never crashes a parser

def marker_soup(markers) -> st.SearchStrategy[str]:
    """Outputs made of the family's markers, their prefixes, whitespace and short text, in any order."""
    pieces = sorted(set(markers))
    return st.lists(st.one_of(
        st.sampled_from(pieces), st.sampled_from(pieces).map(lambda m: m[:max(1, len(m) // 2)]),
        st.sampled_from(["\n", " ", "\n\n", "get_weather", "city", "Oslo", "7", "true", '"', ">", "x" * 40]),
        st.text(max_size=8)), max_size=30).map("".join)


def check_fuzz(fmt, text: str, tools, **kw) -> None:
    """No exception; 1-char and random chunkings agree with one-shot; nothing lost; truncation consistent."""
    out = check_chunking(fmt, text, tools, exhaustive=False, **kw)
    markers = set(fmt.markers.values())
    assert not visible_chars(text, markers) - accounted_chars(out, markers), "output text was lost"
    if any(c.status == "truncated" for c in out.tool_calls):
        assert out.truncated
