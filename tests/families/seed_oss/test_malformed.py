"""Malformed Seed-OSS outputs (fixtures/seed_oss/malformed.jsonl): exact results, never a crash, every split."""

from __future__ import annotations

import pytest

from support.xml_calls import check_corpus_row, corpus_tools, load_corpus


@pytest.mark.parametrize("row", load_corpus("seed_oss"))
def test_malformed_output(row):
    check_corpus_row(row, corpus_tools("seed_oss"))
