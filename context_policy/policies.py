"""Reasoning-retention policies: for each assistant message, keep, drop or require its reasoning.

A family's built-in policy reproduces what its reference encoder or chat template does (the golden
vectors of every family pass through these). Overrides (``keep_all``, ``drop_all``, ``keep_tool_loop``)
let a caller deviate; the plan then warns where the result differs from what the model was trained on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import wraps
from typing import Callable, Literal, Sequence

from pydantic import BaseModel, ConfigDict

from toolwire.models import Message

from .boundaries import Boundaries

Action = Literal["keep", "drop", "required"]


class Decision(BaseModel):
    """What happens to one assistant message's reasoning, and why. ``required`` means kept, and the
    family's API refuses the request when it is missing."""

    model_config = ConfigDict(frozen=True)

    message_index: int
    action: Action
    reason: str
    has_reasoning: bool = False

    @property
    def kept(self) -> bool:
        return self.action != "drop"


@dataclass(frozen=True)
class Context:
    """What a rule sees: the messages, their boundaries, and the render switches that matter."""

    messages: Sequence[Message]
    boundaries: Boundaries
    thinking: bool
    drop_thinking: bool = True
    extra: dict = field(default_factory=dict)
    has_tools: bool = False
    add_generation_prompt: bool = True
    memo: dict = field(default_factory=dict)

    def last(self, key: str, predicate: Callable[[Message], bool]) -> int:
        """Index of the last message matching ``predicate`` (-1 if none), computed once per plan under
        ``key``, so rules stay linear in the conversation length."""
        memo = self.memo
        if key not in memo:
            messages = self.messages
            memo[key] = next((j for j in range(len(messages) - 1, -1, -1) if predicate(messages[j])), -1)
        return memo[key]

    def last_of_roles(self, roles: tuple[str, ...]) -> int:
        """Index of the last message whose role is in ``roles`` (-1 if none): :meth:`last` for the commonest test,
        memoized under the ``roles`` tuple itself (rules ask it once per assistant message)."""
        memo = self.memo
        last = memo.get(roles)
        if last is None:
            messages = self.messages
            last = memo[roles] = next((j for j in range(len(messages) - 1, -1, -1) if messages[j].role in roles), -1)
        return last


Rule = Callable[[Context, int], tuple[Action, str]]


# ---- rules: (context, assistant message index) -> (action, reason)

def keep_all(ctx: Context, i: int) -> tuple[Action, str]:
    return "keep", "every earlier reasoning is kept"


def drop_all(ctx: Context, i: int) -> tuple[Action, str]:
    return "drop", "all earlier reasoning is dropped"


def keep_tool_loop(ctx: Context, i: int) -> tuple[Action, str]:
    if ctx.boundaries.in_current_turn(i):
        return "keep", "in the current tool loop (after the last user message)"
    return "drop", "before the last user message"


def thinking_off(ctx: Context, i: int) -> tuple[Action, str]:
    return "drop", "thinking mode is off: the template renders no earlier reasoning"


def thinking_only(rule: Rule) -> Rule:
    """``rule`` for thinking mode; with thinking off, :func:`thinking_off` decides (nothing is kept). The rule
    returned says so (``drops_all_without_thinking``), so a render with thinking off need not ask it per message."""
    @wraps(rule)
    def decide(ctx: Context, i: int) -> tuple[Action, str]:
        if not ctx.thinking:
            return thinking_off(ctx, i)
        return rule(ctx, i)

    decide.drops_all_without_thinking = True  # type: ignore[attr-defined]
    return decide


Scope = Literal["history", "current_turn"]


@dataclass(frozen=True)
class PassbackRule:
    """What a provider's API requires passed back in the request, and for which turns.

    In thinking mode, every assistant message that made tool calls must carry its ``reasoning_content``
    (an empty string counts as passed back; a missing field does not), within ``scope``: ``history``
    means every such message of the whole conversation, in every later request; ``current_turn`` means
    the messages after the last real user message. ``enforced`` says whether the provider refuses the
    request (HTTP 400, with ``error`` as its message) or only documents the rule (quality degrades).
    The ``reasoning_missing_for_tool_turn`` warnings and the ``required`` decisions derive from this.
    """

    provider: str
    scope: Scope
    error: str
    enforced: bool = True

    def turns(self, ctx: Context) -> list[int]:
        """The assistant messages whose reasoning this rule requires (thinking mode only)."""
        if not ctx.thinking:
            return []
        b, msgs = ctx.boundaries, ctx.messages
        return [i for i in b.steps if msgs[i].tool_calls and (self.scope == "history" or b.in_current_turn(i))]


@dataclass(frozen=True)
class FamilyPolicy:
    """A family's retention behaviour and the notes its warnings use. ``passback`` is the provider's rule
    for what must be passed back (None: no provider enforces or documents one)."""

    rule: Rule
    passback: PassbackRule | None = None
    user_text_note: str = ""
    think_in_content_note: str = "the template renders the content as is, so the model sees that reasoning as answer text."
    description: str = ""


OVERRIDES: dict[str, Rule] = {"keep_all": keep_all, "drop_all": drop_all, "keep_tool_loop": keep_tool_loop}
