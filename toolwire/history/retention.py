"""Retention switches: where a family's own template offers more than one way to keep earlier reasoning, the
one that keeps the prompt prefix.

A template that drops the reasoning of answered turns when a new user message arrives rewrites the middle of
the prompt: the prefix cache holds ``... <think>reasoning</think>answer`` and the next prompt has
``... answer``, so everything after the first dropped reasoning is prefilled again. Several families let the
caller keep it instead, through a switch of their own template: the family's declaration marks that option
(``Option.retains``, the value that keeps it), and :func:`stable_options` gives the render options that set it.
Only the template's own switch is used, never a :func:`toolwire.context_policy.plan` override, so the prompt stays
one the template itself writes. docs/history.md has the table with what each choice costs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolwire.family import UNSET
from toolwire.registry import families, get_format


@dataclass(frozen=True)
class RetentionSwitch:
    """A family's retention switch: render option ``option`` set to ``stable`` keeps the earlier reasoning the
    default drops. ``default`` is what the family's policy does without it; ``note`` is the option's own doc."""

    option: str
    stable: Any
    default: str
    note: str = ""


def retention_switches() -> dict[str, RetentionSwitch]:
    """The families whose template offers a switch that keeps earlier reasoning, read from their declarations.
    Every other family has one retention (docs/history.md says which keep everything, which keep only the current
    tool loop, and which never render earlier reasoning)."""
    out = {}
    for name, family in families().items():
        for option, spec in family.options.fields.items():
            if spec.retains is not UNSET:
                out[name] = RetentionSwitch(option, spec.retains, family.policy.description, spec.doc)
    return out


def stable_options(format: Any) -> dict[str, Any]:
    """The render options that make ``format`` (a name or :class:`toolwire.Format`) keep earlier reasoning with
    its own template's switch: ``{"preserve_thinking": True}`` for Qwen3.6, ``{"clear_thinking": False}`` for
    GLM-4.7, ... ; ``{}`` for a family with one retention."""
    fmt = get_format(format) if isinstance(format, str) else format  # an unknown name raises UnknownFormat
    switch = retention_switches().get(fmt.name)
    return {} if switch is None else {switch.option: switch.stable}


__all__ = ["RetentionSwitch", "retention_switches", "stable_options"]
