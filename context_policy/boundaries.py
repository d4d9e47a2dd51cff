"""Turn and step boundaries of a conversation.

A **turn** starts at a real user message. A **step** is one model call inside a turn: an assistant
message, then its tool results, then the next assistant message starts the next step. A tool result
is never a new turn, even when it arrives as a user message whose whole content is a tool-result
wrapper (``<tool_response>…</tool_response>``, ``<tool_result>…</tool_result>``): that is how some
clients and some families transport results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from toolwire.models import Message

# Wrappers some families (and scaffolds imitating them) put around tool results inside user text.
TOOL_RESULT_WRAPPERS = (
    ("<tool_response>", "</tool_response>"),
    ("<tool_result>", "</tool_result>"),
    ("<tool_output>", "</tool_output>"),
    ("<observation>", "</observation>"),
)


_OPENERS = tuple(a for a, _ in TOOL_RESULT_WRAPPERS)


def is_wrapped_tool_result(message: Message) -> bool:
    """A user message whose whole content is a tool-result wrapper (not a real user query)."""
    if message.role != "user":
        return False
    content = message.content
    if content.__class__ is str:  # most user messages: text that does not start with "<" after blanks
        first = content[:1]
        if first != "<" and not first.isspace():
            return False
    text = message.text().strip()
    if not text.startswith(_OPENERS):  # most user messages: no wrapper to look for
        return False
    return any(text.startswith(a) and text.endswith(b) for a, b in TOOL_RESULT_WRAPPERS)


def is_real_user(message: Message) -> bool:
    """A user message that starts a turn: role ``user`` and not a wrapped tool result."""
    return message.role == "user" and not is_wrapped_tool_result(message)


@dataclass(frozen=True)
class Boundaries:
    """Turn starts, step starts and per-message turn numbers (``-1`` before the first turn)."""

    turns: tuple[int, ...]
    steps: tuple[int, ...]
    turn_of: tuple[int, ...]

    @property
    def last_turn_start(self) -> int:
        """Index of the last real user message, or -1."""
        return self.turns[-1] if self.turns else -1

    def in_current_turn(self, index: int) -> bool:
        """True for messages after the last real user message (the current tool loop)."""
        return index > self.last_turn_start


def find_boundaries(messages: Sequence[Message]) -> Boundaries:
    """Compute turn starts (real user messages) and step starts (assistant messages)."""
    turns: list[int] = []
    steps: list[int] = []
    turn_of: list[int] = []
    turn = -1
    for i, m in enumerate(messages):
        role = m.role
        if role == "user":
            content = m.content
            if content.__class__ is str and content[:1] != "<" and not content[:1].isspace() \
                    or not is_wrapped_tool_result(m):  # (the first test: plain text, which is never a wrapper)
                turns.append(i)
                turn += 1
        elif role == "assistant":
            steps.append(i)
        turn_of.append(turn)
    return Boundaries(tuple(turns), tuple(steps), tuple(turn_of))
