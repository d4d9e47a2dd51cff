"""Parse results: diagnostics, tool-call candidates, stream events and ParsedOutput."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

CandidateStatus = Literal["proposed", "repaired", "rejected", "truncated", "validated"]
ErrorCode = Literal["unknown_tool", "missing_required", "unexpected_field", "type_mismatch", "enum_mismatch",
                    "out_of_range", "pattern_mismatch", "invalid_json", "truncated", "too_large",
                    "tool_choice_violation", "call_in_reasoning"]
CandidateSource = Literal["content", "reasoning"]
Severity = Literal["info", "warning", "error"]

# The convenience methods below (validate, fingerprint, to_error_result, to_openai_message, finish_reason)
# are thin delegations to toolwire.dispatch and toolwire.integrations.openai, imported inside the method: those
# packages import this module, and the method runs after both are loaded (tests/core/test_layout.py allows exactly
# these function-level imports from core).


class Diagnostic(BaseModel):
    """Something the parser noticed. ``code`` is stable; ``raw`` keeps any text not placed elsewhere."""

    model_config = ConfigDict(frozen=True)

    code: str
    message: str
    severity: Severity = "warning"
    raw: Optional[str] = None
    call_index: Optional[int] = None
    span: Optional[tuple[int, int]] = Field(default=None, exclude=True, repr=False)
    """With token-id input: the half-open ``(start, end)`` indexes of the fed ids this diagnostic names when no
    event carries them (a dropped stop token, an id not in the vocabulary); None otherwise. Not in
    ``model_dump``: a result's dump is the same whether its text was fed as text or as ids."""


class CallError(BaseModel):
    """Why a candidate was rejected, in terms the model can act on (see :mod:`toolwire.dispatch.validation`).

    ``pointer`` is a JSON Pointer into the arguments (``""`` is the whole object); ``expected`` and ``got``
    say what the schema wanted and what came (``got`` is abbreviated when large); ``message`` tells the
    model what to change; ``retryable`` is true when re-emitting the call can fix it."""

    model_config = ConfigDict(frozen=True)

    code: ErrorCode
    pointer: str = ""
    expected: Any = None
    got: Any = None
    message: str
    retryable: bool = True


class ToolCallCandidate(BaseModel):
    """A tool call the model proposed. It is a request, never an execution.

    ``arguments`` are JSON values (typed by the format or the tool schema); ``raw_arguments`` is the exact
    text the model wrote for them. :meth:`arguments_json` returns the arguments JSON exactly as it was
    streamed (the call's ``ArgumentsDelta`` fragments joined), as the OpenAI adapter does, so clients that join
    deltas and clients that read the final message get the same bytes. ``arguments_text`` holds that text
    when it is not ``json.dumps(arguments, ensure_ascii=False)``: the model's own JSON text (JSON families,
    kept as written), a repaired or partial value, or a call that repeats a key. Where the streamed JSON is
    exactly that dump (the XML-style and DSML families write it so), ``arguments_text`` is None and
    :meth:`arguments_json` writes it: a long value is not kept twice. Read the text through
    :meth:`arguments_json`, not the field. ``status`` is ``proposed`` (well formed), ``repaired`` (well formed
    after a repair that a diagnostic describes), ``rejected`` (unusable, e.g. unknown tool), ``truncated``
    (the output ended inside the call) or ``validated`` (after schema validation).

    :meth:`validate` fills ``errors`` (why it was rejected), ``canonical_arguments`` (the schema-checked
    canonical value, only when validated) and ``tool_version``.
    """

    index: int
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str = ""
    status: CandidateStatus = "proposed"
    source: CandidateSource = "content"
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    errors: list[CallError] = Field(default_factory=list)
    canonical_arguments: Optional[dict[str, Any]] = None
    tool_version: Optional[str] = None
    arguments_text: Optional[str] = None
    span: Optional[tuple[int, int]] = Field(default=None, exclude=True, repr=False)
    """With token-id input (``feed(ids=...)``): the half-open ``(start, end)`` indexes, into the whole fed id
    sequence, of the ids the call came from (its opening marker to its closing one: the spans of its
    ``ToolCallStarted`` to its ``ToolCallFinished`` event). None for text input. Not in ``model_dump``, so a
    result dumps the same whichever way its text was fed."""

    def arguments_json(self) -> str:
        """The arguments as a JSON string, as OpenAI's ``function.arguments``: the text that was streamed
        (``arguments_text``, or ``json.dumps`` of the arguments, non-ASCII kept, where the streamed text is that
        and the field is None)."""
        if self.arguments_text is not None:
            return self.arguments_text
        return json.dumps(self.arguments, ensure_ascii=False)

    def validate(self, tools: Any, **options: Any) -> "ToolCallCandidate":  # type: ignore[override]
        """This call checked against ``tools`` (definitions in any vocabulary, ToolSpecs or a ToolSet).
        Returns a new candidate, ``validated`` or ``rejected`` with ``errors``; this one is unchanged.
        Options: ``tool_choice``, ``limits``, ``fill_defaults``, ``promote_reasoning_calls``, ``formats``."""
        from toolwire.dispatch.validation import validate_candidate

        return validate_candidate(self, tools, **options)

    def fingerprint(self, scope: Any = None) -> str:
        """Stable SHA-256 over (tool name, tool version, canonical arguments, ``scope``): the base of an
        idempotency key. Only a validated candidate has one (its arguments were checked)."""
        from .errors import ToolwireError

        if self.status != "validated" or self.canonical_arguments is None:
            raise ToolwireError(f"call {self.index} ({self.name!r}) is {self.status}, not validated: "
                                "validate it before fingerprinting")
        from toolwire.dispatch.canonical import fingerprint

        return fingerprint(self.name, self.canonical_arguments, version=self.tool_version, scope=scope)

    def to_error_result(self) -> dict[str, Any]:
        """The uniform error envelope ``{"ok": false, "status", "meta": {"tool", "call_id"}, "error": {"type",
        "retryable", "details"}}`` to send back to the model as this call's tool message: the envelope of
        :meth:`toolwire.ToolResult.from_candidate` (``.to_tool_message()`` of that gives the message itself)."""
        from toolwire.integrations.openai import error_result

        return error_result(self)


class ParsedOutput(BaseModel):
    """Everything found in one model output. Nothing is dropped: text not placed in content, reasoning
    or a call's raw arguments is kept in a diagnostic's ``raw``."""

    content: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCallCandidate] = Field(default_factory=list)
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    truncated: bool = False
    trailing_span: Optional[tuple[int, int]] = Field(default=None, exclude=True, repr=False)
    """With token-id input: the ids read after the last event's span, which no event carries (closing markers
    read after the last call was finished, a stop token the parser dropped), as half-open ``(start, end)``
    indexes; None when the events' spans cover every id, and for text input. The events' spans and this one
    tile the fed ids. Not in ``model_dump``."""

    def validate(self, tools: Any, *, tool_choice: Any = "auto", **options: Any) -> "ParsedOutput":  # type: ignore[override]
        """Every call checked against ``tools`` and ``tool_choice`` (``auto``, ``none``, ``required`` or a
        named tool); returns a new ParsedOutput whose calls are ``validated`` or ``rejected``. Options:
        ``limits``, ``fill_defaults``, ``promote_reasoning_calls``, ``formats`` (see toolwire.dispatch.validation)."""
        from toolwire.dispatch.validation import validate_output

        return validate_output(self, tools, tool_choice=tool_choice, **options)

    def to_openai_message(self, **options: Any) -> dict[str, Any]:
        """The Chat Completions assistant message: ``content``, ``reasoning_content`` and ``tool_calls``
        (``arguments`` as a JSON string). See :func:`toolwire.integrations.openai.to_openai_message`."""
        from toolwire.integrations.openai import to_openai_message

        return to_openai_message(self, **options)

    def finish_reason(self, **options: Any) -> str:
        """``length`` when the output was truncated, ``tool_calls`` when it holds a complete call, else ``stop``."""
        from toolwire.integrations.openai import finish_reason

        return finish_reason(self, **options)

    def codes(self) -> list[str]:
        """All diagnostic codes, output-level then per call, in order (handy in tests and logs)."""
        out = [d.code for d in self.diagnostics]
        for call in self.tool_calls:
            out.extend(d.code for d in call.diagnostics)
        return out


# ---- stream events (plain dataclasses: they are made per delta, in the hot loop) ----

class _Spanned:
    """The token-id span every stream event carries: ``span`` is the half-open ``(start, end)`` indexes, into
    the whole id sequence fed to the stream, of the ids the event came from (see docs/design-notes.md, "Token
    spans"); None when the stream was fed text. It is a slot outside the dataclass fields, set once by the stream
    (:mod:`toolwire.parsers.engine.token_spans`): an event made from text costs nothing more, and equality, repr
    and ``dataclasses.astuple`` stay those of the event's own fields."""

    __slots__ = ("_span",)

    @property
    def span(self) -> Optional[tuple[int, int]]:
        """``(start, end)`` indexes of the fed ids this event came from; None for text input."""
        try:
            return self._span
        except AttributeError:
            return None


@dataclass(frozen=True, slots=True)
class ContentDelta(_Spanned):
    text: str
    type: str = "content"


@dataclass(frozen=True, slots=True)
class ReasoningDelta(_Spanned):
    text: str
    type: str = "reasoning"


@dataclass(frozen=True, slots=True)
class ToolCallStarted(_Spanned):
    """A call opened. With ids, ``span`` holds the ids that opened it (its marker, its name...); the whole call's
    span is on the finished candidate (``ToolCallFinished.candidate.span``)."""

    index: int
    id: str
    name: str
    source: str = "content"
    type: str = "tool_call_started"


@dataclass(frozen=True, slots=True)
class ArgumentsDelta(_Spanned):
    """A fragment of the call's arguments JSON; a call's fragments concatenate to its final arguments."""

    index: int
    fragment: str
    type: str = "arguments"


@dataclass(frozen=True, slots=True)
class ToolCallFinished(_Spanned):
    """A call closed. With ids, ``span`` holds the ids that closed it, and ``candidate.span`` the whole call's."""

    index: int
    candidate: ToolCallCandidate
    type: str = "tool_call_finished"


def _getstate(event) -> tuple:
    """Pickled state: the fields, then the span when the event has one (the dataclass's own keeps fields only)."""
    state = tuple(getattr(event, name) for name in event.__dataclass_fields__)
    try:
        return state + (event._span,)
    except AttributeError:
        return state


def _setstate(event, state: tuple) -> None:
    names = tuple(event.__dataclass_fields__)
    for name, value in zip(names, state):
        object.__setattr__(event, name, value)
    if len(state) > len(names):
        object.__setattr__(event, "_span", state[len(names)])


for _event_class in (ContentDelta, ReasoningDelta, ToolCallStarted, ArgumentsDelta, ToolCallFinished):
    _event_class.__getstate__ = _getstate
    _event_class.__setstate__ = _setstate
del _event_class


Event = Union[ContentDelta, ReasoningDelta, ToolCallStarted, ArgumentsDelta, ToolCallFinished]
