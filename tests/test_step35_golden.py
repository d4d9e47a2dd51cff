"""Step 3.5 against ../shared/golden: byte-exact render, parse one-shot and streamed."""

from __future__ import annotations

import pytest

from support import check_golden_parse_oneshot, check_golden_parse_streamed, check_golden_render
from qwen_xml_cases import golden_streamed_splits, params

FAMILIES = ["step35"]


@pytest.mark.parametrize("row", params("render", FAMILIES))
def test_render_matches_golden(row):
    check_golden_render(row)


@pytest.mark.parametrize("row", params("parse", FAMILIES))
def test_parse_one_shot_matches_golden(row):
    check_golden_parse_oneshot(row)


@pytest.mark.parametrize("row", params("parse", FAMILIES))
def test_parse_streamed_matches_golden(row):
    check_golden_parse_streamed(row, golden_streamed_splits(row))
