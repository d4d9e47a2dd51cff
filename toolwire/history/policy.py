"""Which earlier reasoning a render keeps: the context plan for the options exactly as ``Format.render`` reads
them (the family's declared options)."""

from __future__ import annotations

from typing import Any, Sequence

from toolwire.format import Format
from toolwire.models import normalize_messages


def render_plan(fmt: Format, messages: Sequence[Any], tools: Any = None, **options: Any):
    """The :class:`toolwire.context_policy.ContextPlan` of ``fmt.render(messages, tools, **options)`` (with the
    reasons of each decision), without the pre-flight warnings."""
    from toolwire.context_policy import plan

    return plan(messages, fmt, tools=tools, check=False, **options)


def kept_by_render(fmt: Format, messages: Sequence[Any], tools: Any = None, **options: Any) -> frozenset[int]:
    """The indices of the assistant messages whose reasoning ``fmt.render(messages, tools, **options)`` writes:
    the ``kept_indices`` of :func:`render_plan`, computed as the render computes them (no reasons)."""
    from toolwire.context_policy.plan import kept_reasoning

    family = fmt.family
    values = family.options.resolve(options, family.name)
    extra = {k: v for k, v in values.items() if k not in family.options.COMMON}
    return kept_reasoning(normalize_messages(messages), family.policy, thinking=values["thinking"],
                          policy=values.get("policy"), drop_thinking=values["drop_thinking"],
                          tools=list(tools or ()), add_generation_prompt=values["add_generation_prompt"], extra=extra)


__all__ = ["render_plan", "kept_by_render"]
