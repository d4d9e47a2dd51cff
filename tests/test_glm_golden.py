"""GLM-4.5 / 4.6 / 4.7 golden vectors: byte-exact render, parse one-shot and streamed (every split point for
short outputs, 1-char feeds, random splits; stream events consistent with the result)."""

from __future__ import annotations

import pytest

from support import check_golden_parse_oneshot, check_golden_parse_streamed, check_golden_render, golden_params

FAMILIES = ("glm45", "glm46", "glm47")


@pytest.mark.parametrize("row", [p for f in FAMILIES for p in golden_params("render", f)])
def test_golden_render(row):
    check_golden_render(row)


@pytest.mark.parametrize("row", [p for f in FAMILIES for p in golden_params("parse", f)])
def test_golden_parse_oneshot(row):
    check_golden_parse_oneshot(row)


@pytest.mark.parametrize("row", [p for f in FAMILIES for p in golden_params("parse", f)])
def test_golden_parse_streamed(row):
    check_golden_parse_streamed(row)
