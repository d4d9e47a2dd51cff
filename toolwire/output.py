"""Parse results: diagnostics, tool-call candidates, stream events and ParsedOutput."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

CandidateStatus = Literal["proposed", "repaired", "rejected", "truncated", "validated"]
CandidateSource = Literal["content", "reasoning"]
Severity = Literal["info", "warning", "error"]


class Diagnostic(BaseModel):
    """Something the parser noticed. ``code`` is stable; ``raw`` keeps any text not placed elsewhere."""

    model_config = ConfigDict(frozen=True)

    code: str
    message: str
    severity: Severity = "warning"
    raw: Optional[str] = None
    call_index: Optional[int] = None


class ToolCallCandidate(BaseModel):
    """A tool call the model proposed. It is a request, never an execution.

    ``arguments`` are JSON values (typed by the format or the tool schema); ``raw_arguments`` is the exact
    text the model wrote for them. ``status`` is ``proposed`` (well formed), ``repaired`` (well formed
    after a repair that a diagnostic describes), ``rejected`` (unusable, e.g. unknown tool), ``truncated``
    (the output ended inside the call) or ``validated`` (after schema validation).
    """

    index: int
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str = ""
    status: CandidateStatus = "proposed"
    source: CandidateSource = "content"
    diagnostics: list[Diagnostic] = Field(default_factory=list)

    def arguments_json(self) -> str:
        """The arguments as a JSON string (non-ASCII kept), as OpenAI's ``function.arguments``."""
        return json.dumps(self.arguments, ensure_ascii=False)


class ParsedOutput(BaseModel):
    """Everything found in one model output. Nothing is dropped: text not placed in content, reasoning
    or a call's raw arguments is kept in a diagnostic's ``raw``."""

    content: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCallCandidate] = Field(default_factory=list)
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    truncated: bool = False

    def codes(self) -> list[str]:
        """All diagnostic codes, output-level then per call, in order (handy in tests and logs)."""
        out = [d.code for d in self.diagnostics]
        for call in self.tool_calls:
            out.extend(d.code for d in call.diagnostics)
        return out


# ---- stream events (plain dataclasses: they are made per delta, in the hot loop) ----

@dataclass(frozen=True, slots=True)
class ContentDelta:
    text: str
    type: str = "content"


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    text: str
    type: str = "reasoning"


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    index: int
    id: str
    name: str
    source: str = "content"
    type: str = "tool_call_started"


@dataclass(frozen=True, slots=True)
class ArgumentsDelta:
    """A fragment of the call's arguments JSON; a call's fragments concatenate to its final arguments."""

    index: int
    fragment: str
    type: str = "arguments"


@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    index: int
    candidate: ToolCallCandidate
    type: str = "tool_call_finished"


Event = Union[ContentDelta, ReasoningDelta, ToolCallStarted, ArgumentsDelta, ToolCallFinished]
