"""Which earlier reasoning a render keeps: the context plan for the options exactly as ``Format.render`` reads
them."""

from __future__ import annotations

from typing import Any, Sequence

from toolwire.format import Format, _hf_aliases
from toolwire.models import normalize_messages


def _switches(fmt: Format, options: dict[str, Any]) -> tuple[bool, dict[str, Any], dict[str, Any]]:
    """``thinking``, the plan's own switches and the family's extra options, read as ``Format.render`` reads the
    render ``options`` (``enable_thinking`` and ``chat_template_kwargs`` aliases, the family's switch names)."""
    opts = dict(options)
    thinking = _hf_aliases(opts, opts.pop("thinking", False))
    thinking, _effort, opts = fmt._template_switches(bool(thinking), opts.pop("reasoning_effort", None), opts)
    keep = {k: opts.pop(k) for k in ("policy", "drop_thinking", "add_generation_prompt") if k in opts}
    extra = {k: v for k, v in opts.items() if k in fmt.extra_options}
    return bool(thinking), keep, extra


def render_plan(fmt: Format, messages: Sequence[Any], tools: Any = None, **options: Any):
    """The :class:`toolwire.context_policy.ContextPlan` of ``fmt.render(messages, tools, **options)`` (with the
    reasons of each decision), without the pre-flight warnings."""
    from toolwire.context_policy import plan

    thinking, keep, extra = _switches(fmt, options)
    return plan(messages, fmt, thinking=thinking, tools=tools, check=False, **keep, **extra)


def kept_by_render(fmt: Format, messages: Sequence[Any], tools: Any = None, **options: Any) -> frozenset[int]:
    """The indices of the assistant messages whose reasoning ``fmt.render(messages, tools, **options)`` writes:
    the ``kept_indices`` of :func:`render_plan`, computed as the render computes them (no reasons)."""
    from toolwire.context_policy.plan import kept_reasoning

    thinking, keep, extra = _switches(fmt, options)
    msgs = normalize_messages(messages)
    tool_list = list(tools or ())
    return kept_reasoning(msgs, fmt.name, thinking=thinking, policy=keep.get("policy"),
                          drop_thinking=bool(keep.get("drop_thinking", True)), tools=tool_list,
                          add_generation_prompt=bool(keep.get("add_generation_prompt", True)), extra=extra)


__all__ = ["render_plan", "kept_by_render"]
