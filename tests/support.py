"""Shared test helpers: golden-vector loading from ../shared, and stream/one-shot comparison."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

import toolwire

SHARED = Path(os.environ.get("TOOLWIRE_SHARED", Path(__file__).resolve().parents[1].parent / "shared"))
GOLDEN = SHARED / "golden"
REAL = SHARED / "real"


def require_shared() -> None:
    if not GOLDEN.is_dir():
        pytest.skip(f"../shared is absent (looked for {GOLDEN}); golden vectors cannot be checked here")


def golden(kind: str, family: str) -> list[dict]:
    """Rows of ../shared/golden/<kind>/<family>.jsonl (kind is 'render' or 'parse')."""
    path = GOLDEN / kind / f"{family}.jsonl"
    if not path.exists():
        return []
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def golden_params(kind: str, family: str):
    """pytest params for a family's vectors, one per row, id = the row's id. A placeholder that skips
    (with the reason) when ../shared is absent, so nothing is silently counted as a pass."""
    rows = golden(kind, family)
    if not rows:
        return [pytest.param(None, id=f"{family}-no-shared",
                             marks=pytest.mark.skip(reason=f"no golden vectors at {GOLDEN}/{kind}/{family}.jsonl"))]
    return [pytest.param(r, id=r["id"]) for r in rows]


def render_kwargs(options: dict) -> dict:
    """Golden ``options`` to ``Format.render`` keyword arguments."""
    return dict(options or {})


def summary(out: toolwire.ParsedOutput, *, include_reasoning_calls: bool = False) -> dict:
    """The comparable part of a ParsedOutput, in the golden ``expected`` shape."""
    calls = [c for c in out.tool_calls if include_reasoning_calls or c.source == "content"]
    return {
        "content": out.content,
        "reasoning": out.reasoning,
        "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in calls],
    }


def full_state(out: toolwire.ParsedOutput) -> dict:
    """Everything in a ParsedOutput, for chunking-invariance comparisons."""
    return out.model_dump()


def stream_parse(fmt, text: str, chunks: list[str] | None = None, tools=None, **kw):
    """Feed ``chunks`` (default: 1 character at a time), then finish. Returns (result, events)."""
    parser = fmt.stream(tools, **kw)
    events = []
    for piece in chunks if chunks is not None else list(text):
        events.extend(parser.feed(piece))
    events.extend(parser.flush())
    return parser.finish(), events


def random_chunks(text: str, rng: random.Random, max_len: int = 16) -> list[str]:
    out, i = [], 0
    while i < len(text):
        n = rng.randint(1, max_len)
        out.append(text[i:i + n])
        i += n
    return out


def every_split(text: str):
    """All two-piece splits of ``text`` (for short outputs)."""
    for i in range(len(text) + 1):
        yield [text[:i], text[i:]]


def assert_events_consistent(result: toolwire.ParsedOutput, events: list) -> None:
    """Stream events agree with the final result: content/reasoning deltas concatenate to the final
    fields, and each call's argument fragments concatenate to JSON of its final arguments."""
    content = "".join(e.text for e in events if e.type == "content")
    reasoning = "".join(e.text for e in events if e.type == "reasoning")
    assert content == result.content
    assert reasoning == result.reasoning
    frags: dict[int, list[str]] = {}
    started: dict[int, str] = {}
    for e in events:
        if e.type == "tool_call_started":
            assert e.index not in started, "a call was started twice"
            started[e.index] = e.name
        elif e.type == "arguments":
            assert e.index in started, "arguments before tool_call_started"
            frags.setdefault(e.index, []).append(e.fragment)
    assert sorted(started) == sorted(c.index for c in result.tool_calls)
    for c in result.tool_calls:
        assert started[c.index] == c.name
        assert json.loads("".join(frags.get(c.index, ["{}"]))) == c.arguments
