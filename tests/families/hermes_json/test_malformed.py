"""The malformed-output corpus (fixtures/hermes_json/malformed.jsonl): outputs a Qwen model can produce that
are not clean tool calls, with the exact result each must give (written by hand from the format's rules:
the repair ladder, truncation, unknown tools, calls inside reasoning). Each is also checked at every
chunking, for consistent events, and for nothing lost."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import toolwire

from support.hermes_json import accounted, check_chunking, declared

CORPUS = Path(__file__).resolve().parents[3] / "fixtures" / "hermes_json" / "malformed.jsonl"
ROWS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
TOOLS = declared("get_weather", "search")
MARKERS = ("<tool_call>", "</tool_call>", "<think>", "</think>", "<|im_end|>")  # the stop token: kept in a diagnostic


def test_the_corpus_covers_every_rung_and_failure():
    codes = {code for row in ROWS for call in row["expected"]["calls"] for code in call["codes"]}
    assert {"repaired_trailing_comma", "repaired_code_fence", "repaired_python_literal", "repaired_single_quotes",
            "repaired_missing_brace", "unescaped_quote", "unknown_tool", "call_in_reasoning",
            "truncated_json"} <= codes
    # the field variants (issue 11 §2, issue 21), each pinned by a row
    assert {'raw_control_character', 'missing_call_wrapper', 'missing_closing_brace', 'unclosed_brackets', 'arguments_alias_parameters', 'arguments_json_string'} <= codes
    assert {'duplicate_reasoning_open', 'stop_token_in_output', 'reasoning_close_in_content'} <= {code for row in ROWS for code in row["expected"]["codes"]}
    assert {c["status"] for row in ROWS for c in row["expected"]["calls"]} == {
        "proposed", "repaired", "rejected", "truncated"}


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_malformed_output(row):
    fmt = toolwire.get_format(row["family"])
    out = check_chunking(fmt, row["output"], TOOLS, thinking=row["thinking"], **row["options"])
    want = row["expected"]
    assert (out.content, out.reasoning, out.truncated) == (want["content"], want["reasoning"], want["truncated"])
    assert [d.code for d in out.diagnostics] == want["codes"]
    assert len(out.tool_calls) == len(want["calls"])
    for call, exp in zip(out.tool_calls, want["calls"]):
        assert (call.name, call.status, call.source) == (exp["name"], exp["status"], exp.get("source", "content"))
        assert sorted(d.code for d in call.diagnostics) == sorted(exp["codes"])
        if "arguments" in exp:
            assert call.arguments == exp["arguments"]
        if "raw_arguments" in exp:
            assert call.raw_arguments == exp["raw_arguments"]
    # nothing lost: with each call's raw argument text taken out, every piece between markers is kept
    # somewhere, or is the format's own structure around that call ({"name": NAME, "arguments": RAW})
    kept = accounted(out)
    rest = row["output"]
    for call in out.tool_calls:
        if call.raw_arguments:
            rest = rest.replace(call.raw_arguments, f"\x01{call.index}\x01", 1)
    for marker in MARKERS:
        rest = rest.replace(marker, "\n")
    for piece in rest.split("\n"):
        piece = piece.strip()
        restored = re.sub("\x01(\\d+)\x01", lambda m: out.tool_calls[int(m.group(1))].raw_arguments, piece)
        assert not piece or restored in kept or _framed(piece, out.tool_calls), restored


STRUCTURE = re.compile(r'(?:\{\s*"name"\s*:\s*("(?:[^"\\]|\\.)*")\s*,\s*"(?:arguments|parameters)"\s*:\s*)?\x01(\d+)\x01\}?')
ARRAY = re.compile(r'\[\s*\x01\d+\x01(?:\s*,\s*\x01\d+\x01)*\s*\]')  # a bare array of whole call objects


def _framed(piece: str, calls) -> bool:
    if ARRAY.fullmatch(piece):
        return True
    m = STRUCTURE.fullmatch(piece)
    return bool(m) and (m.group(1) is None or json.loads(m.group(1)) == calls[int(m.group(2))].name)
