"""Retention switches: where a family's own template offers more than one way to keep earlier reasoning, the
one that keeps the prompt prefix.

A template that drops the reasoning of answered turns when a new user message arrives rewrites the middle of
the prompt: the prefix cache holds ``... <think>reasoning</think>answer`` and the next prompt has
``... answer``, so everything after the first dropped reasoning is prefilled again. Several families let the
caller keep it instead, through a switch of their own template (the value the model's authors ship for it):
:data:`RETENTION` names it per family, and :func:`stable_options` gives the render options that set it. Only
the template's own switch is used, never a :func:`toolwire.context_policy.plan` override, so the prompt stays
one the template itself writes. docs/history.md has the table with what each choice costs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolwire.registry import get_format


@dataclass(frozen=True)
class RetentionSwitch:
    """A family's retention switch: render option ``option`` set to ``stable`` keeps the earlier reasoning the
    default drops. ``default`` is what the template does without it; ``note`` what still breaks the prefix."""

    option: str
    stable: Any
    default: str
    note: str = ""


RETENTION: dict[str, RetentionSwitch] = {
    "qwen36": RetentionSwitch("preserve_thinking", True,
                              "drops reasoning before the last real user query"),
    "qwen38": RetentionSwitch("preserve_thinking", True,
                              "keeps every earlier reasoning (preserve_thinking=False drops it before the last "
                              "real user query)"),
    "glm47": RetentionSwitch("clear_thinking", False, "drops reasoning before the last user message"),
    "deepseek_v4": RetentionSwitch("drop_thinking", False,
                                   "keeps everything when tools are declared; otherwise drops reasoning before the "
                                   "last user message"),
    "deepseek_v41": RetentionSwitch("drop_thinking", False,
                                    "keeps everything when tools are declared; otherwise drops reasoning before the "
                                    "last real user message"),
    "gemma4": RetentionSwitch("preserve_thinking", True, "drops reasoning before the last user message",
                              "only tool-call turns keep their reasoning: an answer turn's reasoning is still "
                              "dropped when the next user message arrives"),
    "hy3": RetentionSwitch("preserved_thinking", True,
                           "keeps everything when tools are declared; otherwise drops reasoning before the last "
                           "user message"),
    "nemotron3": RetentionSwitch("truncate_history_thinking", False,
                                 "drops reasoning before the last user message"),
    "laguna": RetentionSwitch("preserve_thinking", True,
                              "keeps every reasoning with thinking on; none with thinking off"),
}
"""Families whose template offers a switch that keeps earlier reasoning. Every other family has one retention
(docs/history.md says which keep everything, which keep only the current tool loop, and which never render
earlier reasoning)."""


def stable_options(format: Any) -> dict[str, Any]:
    """The render options that make ``format`` (a name or :class:`toolwire.Format`) keep earlier reasoning with
    its own template's switch: ``{"preserve_thinking": True}`` for Qwen3.6, ``{"clear_thinking": False}`` for
    GLM-4.7, ... ; ``{}`` for a family with one retention."""
    name = format if isinstance(format, str) else format.name
    if isinstance(format, str):
        get_format(name)  # an unknown name raises UnknownFormat
    switch = RETENTION.get(name)
    return {} if switch is None else {switch.option: switch.stable}


__all__ = ["RETENTION", "RetentionSwitch", "stable_options"]
