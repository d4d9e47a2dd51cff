"""The deepseek_legacy malformed-output corpus (fixtures/deepseek_legacy/malformed.jsonl): outputs that are
not clean tool calls, with the exact result each must give (written by hand from the format's rules: the
repair ladder, truncation, unknown tools, calls inside reasoning, stray text). Each is also checked at every
chunking, for consistent events, and for nothing lost."""

from __future__ import annotations

import pytest

from toolwire.parsers.deepseek_legacy import MARKERS
from support.family_checks import check_corpus_row, declared, load_corpus

ROWS = load_corpus("deepseek_legacy")


def test_the_corpus_covers_every_rung_and_failure():
    codes = {code for row in ROWS for call in row["expected"]["calls"] for code in call["codes"]}
    assert {"repaired_trailing_comma", "repaired_code_fence", "repaired_python_literal", "repaired_single_quotes",
            "repaired_missing_brace", "unescaped_quote", "unknown_tool", "call_in_reasoning", "truncated"} <= codes
    # the field variants (issue 11 §2, issue 21), each pinned by a row
    assert {'missing_closing_brace', 'arguments_json_string', 'call_outside_section'} <= codes
    assert {'duplicate_reasoning_open', 'stop_token_in_output', 'reasoning_close_in_content'} <= {code for row in ROWS for code in row["expected"]["codes"]}
    assert {c["status"] for row in ROWS for c in row["expected"]["calls"]} == {
        "proposed", "repaired", "rejected", "truncated"}


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_malformed_output(row):
    check_corpus_row(row, declared("get_weather", "search"), tuple(MARKERS.values()) + ("function", "json"))
