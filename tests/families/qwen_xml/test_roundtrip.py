"""Round trip for Qwen3-Coder / 3.5 / 3.6: parse(render(assistant turn)) == turn, for every JSON type."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from support.xml_calls import calls, check_round_trip, plain_texts

SETTINGS = settings(max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])


@pytest.mark.parametrize("family", ["qwen3_coder", "qwen35", "qwen36"])
@SETTINGS
@given(content=plain_texts, turn_calls=calls, seed=st.integers(0, 2**16))
def test_round_trip_without_thinking(family, content, turn_calls, seed):
    check_round_trip(family, False, content, "", turn_calls, seed)


@pytest.mark.parametrize("family", ["qwen35", "qwen36"])
@SETTINGS
@given(content=plain_texts, reasoning=plain_texts, turn_calls=calls, seed=st.integers(0, 2**16))
def test_round_trip_with_thinking(family, content, reasoning, turn_calls, seed):
    check_round_trip(family, True, content, reasoning, turn_calls, seed)
