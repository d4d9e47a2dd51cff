"""Test helpers for the GLM (glm45/glm46/glm47) and MiniMax-M2 families.

* ``reference_render``: the real chat template from ../shared/real/templates rendered by transformers' own
  Jinja renderer (arguments decoded to objects, as serving stacks do), for request shapes the golden vectors
  do not cover;
* ``turn_output``: what the model generates for an assistant turn (render with the turn minus render of the
  generation prompt, stop token removed), the way the golden parse vectors were derived;
* hypothesis strategies for round trips, with the schema each value is typed by;
* the malformed-output corpora and marker-soup fuzzing, with :mod:`support`'s "nothing lost" check
  (``lost_chars``).

The golden-vector checks, chunking checks and the JSON-value strategies are :mod:`support`'s.
"""

from __future__ import annotations

import json
import pytest
from hypothesis import strategies as st

import toolwire
import support
from support import chunkings, json_scalars, json_values, lost_chars, text_of_every_kind

TEMPLATE_FILES = {"glm45": "GLM-4.5", "glm46": "GLM-4.6", "glm47": "GLM-4.7-Flash", "minimax_m2": "MiniMax-M2"}
STOP = {"minimax_m2": "[e~[\n"}
"""Text the reference writes after an assistant turn that is the stop token (not model output)."""


def check_chunking(fmt, text: str, tools=None, *, seed: int = 0, exhaustive: bool = True, **kw):
    """Asserts 1-char feeds, every two-piece split (short outputs, when ``exhaustive``) and random splits
    give the one-shot result, with consistent events; returns the one-shot result."""
    splits = chunkings(text, seed=seed, every_split_upto=300 if exhaustive else -1,
                       random_splits=8 if exhaustive else 2)
    return support.check_chunking(fmt, text, tools, splits=splits, **kw)


# ---- the real templates

def reference_render(family: str, messages: list, tools: list | None = None, *, thinking: bool | None = None,
                     add_generation_prompt: bool = True, **variables) -> str:
    """The real template's output through transformers, fed as ``apply_chat_template`` feeds it
    (top-level None-valued keys dropped, arguments decoded to objects)."""
    if thinking is not None and family != "minimax_m2":
        variables["enable_thinking"] = thinking
    return support.reference_render(TEMPLATE_FILES[family], messages, tools, drop_none=True,
                                    add_generation_prompt=add_generation_prompt, **variables)


def turn_output(fmt, history: list, turn: dict, tools=None, *, thinking: bool = False, **options) -> str:
    """The model output for ``turn`` after ``history``'s generation prompt (asserts the prompt is a prefix)."""
    return support.turn_output(fmt, history, turn, tools, stop=STOP.get(fmt.name, ""), thinking=thinking, **options)


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


strings = text_of_every_kind([
    "<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "<think>", "</think>",
    "<minimax:tool_call>", "</minimax:tool_call>", '<invoke name="', "</invoke>", '<parameter name="', "</parameter>",
    '">', "{", "}", "[", '"', "\\", "\n", "\t", " ", "&amp;", "'", "True", "None", "null", "007", "1e5"])
"""Strings of every kind: plain, whitespace-only, markup and marker soup, non-ASCII."""

_VALUE = json_values(json_scalars(strings), strings, max_size=3, max_leaves=8)
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

FIXTURES = __import__("pathlib").Path(__file__).resolve().parents[2] / "fixtures"


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
    assert not lost_chars(row["model_output"], out, set(fmt.markers.values())), "output text was lost"


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
    assert not lost_chars(text, out, set(fmt.markers.values())), "output text was lost"
    if any(c.status == "truncated" for c in out.tool_calls):
        assert out.truncated
