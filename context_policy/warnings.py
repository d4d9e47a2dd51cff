"""Pre-flight warnings: conversations that will render, but will make the model behave badly.

Each warning has a stable ``code`` (part of the API) and a human message. The checks are linear in the
conversation size except history duplication, which compares runs (bounded by the conversation length).
"""

from __future__ import annotations

from typing import Sequence

from pydantic import BaseModel, ConfigDict

from toolwire.models import Message

from .boundaries import is_wrapped_tool_result
from .policies import PassbackRule

CODES = (
    "tool_result_as_user_text",
    "reasoning_missing_for_tool_turn",
    "history_duplicated",
    "reasoning_in_content",
    "orphan_tool_result",
    "missing_tool_result",
    "reasoning_dropped",
    "policy_override",
    "duplicate_tool_result",
    "reused_call_id",
    "tool_results_out_of_order",
    "retry_after_unknown",
    "tool_result_large",
    "tool_result_spells_markup",
    "tool_result_empty",
    "tool_result_repr",
)
"""Every warning code ``plan()`` gives (the tool-result ones are in :mod:`.result_warnings`)."""


class PlanWarning(BaseModel):
    """A warning about a conversation. ``message_index`` points at the message concerned, when one is."""

    model_config = ConfigDict(frozen=True)

    code: str
    message: str
    message_index: int | None = None


def tool_result_as_user_text(messages: Sequence[Message], family_note: str) -> list[PlanWarning]:
    """User messages that carry tool results as plain text, instead of ``role: tool`` messages."""
    out = []
    for i, m in enumerate(messages):
        if m.role != "user":
            continue
        prev = messages[i - 1] if i else None
        answers_calls = prev is not None and prev.role == "assistant" and bool(prev.tool_calls)
        if is_wrapped_tool_result(m) or answers_calls:
            out.append(PlanWarning(
                code="tool_result_as_user_text", message_index=i,
                message=("tool results were passed as plain user text instead of tool messages; this starts a "
                         f"new turn for the template. {family_note} Send them as role 'tool' messages with "
                         "tool_call_id, or use non-thinking mode for such scaffolds.")))
    return out


def reasoning_missing(messages: Sequence[Message], required: Sequence[int], family: str,
                      rule: "PassbackRule") -> list[PlanWarning]:
    """Required tool-call messages (:class:`~toolwire.context_policy.policies.PassbackRule`) sent without their
    reasoning: a missing ``reasoning_content``; an empty string counts as passed back."""
    where = "in every later request" if rule.scope == "history" else "in the current tool loop"
    consequence = (f"its API refuses the request (HTTP 400: {rule.error!r})" if rule.enforced
                   else f"{rule.error}")
    return [
        PlanWarning(code="reasoning_missing_for_tool_turn", message_index=i,
                    message=(f"assistant message {i} made tool calls but carries no reasoning_content; {family} in "
                             f"thinking mode needs the reasoning of tool-call turns passed back {where} "
                             f"({rule.provider}): {consequence}. Pass it back (an empty string if there was none)."))
        for i in required
        if messages[i].reasoning_content is None
    ]


def _key(m: Message) -> str:
    return m.model_dump_json(exclude_none=True)


def history_duplicated(messages: Sequence[Message]) -> list[PlanWarning]:
    """A run of two or more messages (holding an assistant message) appended twice in a row."""
    keys = [_key(m) for m in messages]
    n = len(keys)
    for length in range(n // 2, 1, -1):
        for start in range(0, n - 2 * length + 1):
            if keys[start] == keys[start + length] and keys[start:start + length] == keys[start + length:start + 2 * length] and any(
                    messages[j].role == "assistant" for j in range(start, start + length)):
                return [PlanWarning(
                    code="history_duplicated", message_index=start + length,
                    message=(f"messages {start}..{start + length - 1} appear again at {start + length}.."
                             f"{start + 2 * length - 1}: the client appended the same history twice"))]
    return []


def reasoning_in_content(messages: Sequence[Message], family_note: str) -> list[PlanWarning]:
    """Assistant content holding a ``<think>…</think>`` block."""
    return [
        PlanWarning(code="reasoning_in_content", message_index=i,
                    message=f"assistant content holds <think>…</think>; {family_note}")
        for i, m in enumerate(messages)
        if m.role == "assistant" and "</think>" in m.text()
    ]
