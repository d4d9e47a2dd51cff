"""MiniMax-M2 golden vectors: byte-exact render, parse one-shot and streamed (every split point for
short outputs, 1-char feeds, random splits; stream events consistent with the result)."""

from __future__ import annotations

from support import golden_tests

FAMILIES = ("minimax_m2",)


test_golden_render, test_golden_parse_oneshot, test_golden_parse_streamed = golden_tests(FAMILIES)
