"""Round trip for Seed-OSS: parse(render(assistant turn)) == turn, for every JSON type (Python-literal values)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from support.xml_calls import calls, check_round_trip, plain_texts


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(content=plain_texts, reasoning=plain_texts, turn_calls=calls, seed=st.integers(0, 2**16))
def test_round_trip(content, reasoning, turn_calls, seed):
    check_round_trip("seed_oss", False, content, reasoning, turn_calls, seed)
