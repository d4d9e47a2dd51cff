"""Nemotron 3 against ../shared/golden: byte-exact render, parse one-shot and streamed."""

from __future__ import annotations

from support import golden_tests
from support.xml_calls import golden_streamed_splits

FAMILIES = ["nemotron3"]


test_render_matches_golden, test_parse_one_shot_matches_golden, test_parse_streamed_matches_golden = \
    golden_tests(FAMILIES, splits=golden_streamed_splits)
