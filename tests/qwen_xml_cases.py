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
from support import (
    assert_events_consistent, every_split, full_state, golden, golden_params, random_chunks, require_shared,
    stream_parse, summary,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def params(kind: str, families: list[str]):
    return [p for family in families for p in golden_params(kind, family)]


def check_golden_render(row: dict) -> None:
    require_shared()
    fmt = toolwire.get_format(row["family"])
    request = row["request"]
    if "expected_error" in row:
        with pytest.raises(ToolwireError):
            fmt.render(request["messages"], request.get("tools"), **row["options"])
        return
    prompt = fmt.render(request["messages"], request.get("tools"), **row["options"])
    assert prompt.text == row["expected"]
    assert "".join(s.text for s in prompt.segments) == prompt.text


def check_golden_parse_one_shot(row: dict) -> None:
    require_shared()
    fmt = toolwire.get_format(row["family"])
    out = fmt.parse(row["model_output"], row["tools"], **row["options"])
    assert summary(out) == row["expected"]
    assert out.diagnostics == [] and all(c.status == "proposed" for c in out.tool_calls)
    assert not out.truncated


def check_golden_parse_streamed(row: dict) -> None:
    require_shared()
    fmt = toolwire.get_format(row["family"])
    text = row["model_output"]
    one_shot = full_state(fmt.parse(text, row["tools"], **row["options"]))
    result, events = stream_parse(fmt, text, tools=row["tools"], **row["options"])  # 1 character per feed
    assert summary(result) == row["expected"]
    assert full_state(result) == one_shot
    assert_events_consistent(result, events)
    rng = random.Random(row["id"])
    for _ in range(3):
        result, events = stream_parse(fmt, text, random_chunks(text, rng, 24), tools=row["tools"], **row["options"])
        assert full_state(result) == one_shot
        assert_events_consistent(result, events)
    if len(text) <= 300:
        for chunks in every_split(text):
            result, events = stream_parse(fmt, text, chunks, tools=row["tools"], **row["options"])
            assert full_state(result) == one_shot


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
    opts = row.get("options", {})
    use_tools = None if row.get("no_tools") else tools
    out = fmt.parse(row["output"], use_tools, **opts)
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
    one_shot = full_state(out)
    for chunks in every_split(row["output"]):
        result, events = stream_parse(fmt, row["output"], chunks, tools=use_tools, **opts)
        assert full_state(result) == one_shot
        assert_events_consistent(result, events)
    result, events = stream_parse(fmt, row["output"], tools=use_tools, **opts)
    assert full_state(result) == one_shot
    assert_events_consistent(result, events)
