"""Which earlier reasoning a render keeps: the context plan for the options exactly as ``Format.render`` reads
them."""

from __future__ import annotations

from typing import Any, Sequence

from toolwire.format import Format, _hf_aliases


def render_plan(fmt: Format, messages: Sequence[Any], tools: Any = None, **options: Any):
    """The :class:`toolwire.context_policy.ContextPlan` of ``fmt.render(messages, tools, **options)``: the render
    options read as the render reads them (``enable_thinking`` and ``chat_template_kwargs`` aliases, the
    family's own switch names, its extra options), without the pre-flight warnings."""
    from toolwire.context_policy import plan

    opts = dict(options)
    thinking = _hf_aliases(opts, opts.pop("thinking", False))
    thinking, _effort, opts = fmt._template_switches(bool(thinking), opts.pop("reasoning_effort", None), opts)
    keep = {k: opts.pop(k) for k in ("policy", "drop_thinking", "add_generation_prompt") if k in opts}
    extra = {k: v for k, v in opts.items() if k in fmt.extra_options}
    return plan(messages, fmt, thinking=thinking, tools=tools, check=False, **keep, **extra)


def kept_by_render(fmt: Format, messages: Sequence[Any], tools: Any = None, **options: Any) -> frozenset[int]:
    """The indices of the assistant messages whose reasoning ``fmt.render(messages, tools, **options)`` writes
    (the ``kept_indices`` of :func:`render_plan`)."""
    return render_plan(fmt, messages, tools, **options).kept_indices


__all__ = ["render_plan", "kept_by_render"]
