"""GLM-4.5 / 4.6 / 4.7 golden vectors: byte-exact render, parse one-shot and streamed (every split point for
short outputs, 1-char feeds, random splits; stream events consistent with the result)."""

from __future__ import annotations

from support import golden_tests

FAMILIES = ("glm45", "glm46", "glm47")


test_golden_render, test_golden_parse_oneshot, test_golden_parse_streamed = golden_tests(FAMILIES)
