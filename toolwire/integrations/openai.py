"""OpenAI-compatible adapters: a ParsedOutput as a Chat Completions message, stream events as
``choices[0].delta`` chunks, ``finish_reason``, and the uniform error envelope for rejected calls.

Which calls are listed: every call the model completed in its content, rejected ones included, so that
each one gets its tool message (the tool's result, or :func:`error_result` for a rejected call). A call
cut off by the end of the output is never listed as complete (``finish_reason`` is ``length``), and a call
left inside the reasoning block is not listed unless ``promote_reasoning_calls=True``, or the parser recovered it
from reasoning that never closed (issue 33, ``drift_call_in_unclosed_reasoning``: streamed whole, id, name and
arguments in one delta, when its ``ToolCallFinished`` comes at the end of the output).

The reasoning field: ``reasoning_field="reasoning_content"`` (the default: DeepSeek's API, SGLang, older vLLM)
or ``"reasoning"`` (vLLM's current name, OpenRouter). Input messages may use either, or ``thinking``.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from toolwire.dispatch.canonical import MAX_CANONICAL_DEPTH
from toolwire.errors import InvalidOption
from toolwire.limits import value_depth
from toolwire.results import ToolResult
from toolwire.output import (
    ArgumentsDelta, ContentDelta, Event, ParsedOutput, ReasoningDelta, ToolCallCandidate, ToolCallFinished,
    ToolCallStarted,
)
from toolwire.parsers.engine.reasoning_calls import recovered_in_reasoning


def is_truncated(call: ToolCallCandidate) -> bool:
    """The output ended inside this call (before or after validation)."""
    return call.status == "truncated" or any(e.code == "truncated" for e in call.errors)


def listed_calls(output: ParsedOutput, *, include_rejected: bool = True,
                 promote_reasoning_calls: bool = False) -> list[ToolCallCandidate]:
    """The calls an assistant message carries, in output order (see the module docstring)."""
    return [c for c in output.tool_calls
            if not is_truncated(c)
            and (c.source == "content" or promote_reasoning_calls or recovered_in_reasoning(c))
            and (include_rejected or c.status != "rejected")]


def arguments_text(call: ToolCallCandidate) -> str:
    """``function.arguments`` for a call: the JSON of its arguments, or its raw text when they cannot be
    written as JSON (nested past ``MAX_CANONICAL_DEPTH``, or holding a non-JSON value)."""
    if value_depth(call.arguments, MAX_CANONICAL_DEPTH) > MAX_CANONICAL_DEPTH:
        return call.raw_arguments
    try:
        return call.arguments_json()
    except (TypeError, ValueError):
        return call.raw_arguments


REASONING_FIELDS = ("reasoning_content", "reasoning")
"""The names a reasoning field may be written under (see the module docstring)."""

LENGTH_STOPS = frozenset({"length", "max_tokens", "max_length", "max_new_tokens"})
"""Engine stop reasons that mean the token budget ran out."""


def _reasoning_field(name: str) -> str:
    if name not in REASONING_FIELDS:
        raise InvalidOption(f"reasoning_field must be one of {list(REASONING_FIELDS)}, not {name!r}",
                            field="reasoning_field")
    return name


def to_openai_message(output: ParsedOutput, *, include_rejected: bool = True, promote_reasoning_calls: bool = False,
                      reasoning_field: str = "reasoning_content") -> dict[str, Any]:
    """``{"role": "assistant", "content", "reasoning_content"?, "tool_calls"?}``. ``content`` is None when
    empty; the reasoning (under ``reasoning_field``) and ``tool_calls`` appear when there are any; each call's
    ``function.arguments`` is the JSON string of the arguments the model wrote."""
    field = _reasoning_field(reasoning_field)
    message: dict[str, Any] = {"role": "assistant", "content": output.content or None}
    if output.reasoning:
        message[field] = output.reasoning
    calls = listed_calls(output, include_rejected=include_rejected, promote_reasoning_calls=promote_reasoning_calls)
    if calls:
        message["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.name, "arguments": arguments_text(c)}} for c in calls]
    return message


def finish_reason(output: ParsedOutput, *, include_rejected: bool = True, promote_reasoning_calls: bool = False,
                  stop_reason: Any = None) -> str:
    """``length`` when the output was truncated (even if earlier calls are complete), ``tool_calls`` when
    at least one complete call is listed, else ``stop``. ``stop_reason`` is the engine's own: a token-budget
    stop (``length``, ``max_tokens`` ...) is ``length`` whatever the output holds, ``content_filter`` stays
    ``content_filter``; anything else (``stop``, an eos token, None) leaves the decision to the output."""
    if stop_reason in LENGTH_STOPS:
        return "length"
    if stop_reason == "content_filter":
        return "content_filter"
    if output.truncated or any(is_truncated(c) for c in output.tool_calls):
        return "length"
    if listed_calls(output, include_rejected=include_rejected, promote_reasoning_calls=promote_reasoning_calls):
        return "tool_calls"
    return "stop"


class ChatCompletionsStream:
    """Turns toolwire stream events into Chat Completions deltas (``choices[0].delta``).

    A call's ``index`` is its position among the calls streamed so far (0, 1, ...), not the tool's position
    in the tools list. Its first delta carries ``id``, ``type`` and the name, once; argument fragments
    follow and concatenate to the final ``arguments`` string. The first delta also carries
    ``role: "assistant"``. Calls written inside reasoning are skipped unless ``promote_reasoning_calls``.
    """

    def __init__(self, *, promote_reasoning_calls: bool = False, include_role: bool = True,
                 reasoning_field: str = "reasoning_content"):
        self.promote_reasoning_calls = promote_reasoning_calls
        self.reasoning_field = _reasoning_field(reasoning_field)
        self._positions: dict[int, int] = {}
        self._role_sent = not include_role

    def deltas(self, events: Iterable[Event]) -> list[dict[str, Any]]:
        """The deltas for a batch of events (events with nothing to send give none)."""
        out: list[dict[str, Any]] = []
        for event in events:
            delta = self._delta(event)
            if delta is None:
                continue
            if not self._role_sent:
                delta = {"role": "assistant", **delta}
                self._role_sent = True
            out.append(delta)
        return out

    def chunks(self, events: Iterable[Event], **meta: Any) -> list[dict[str, Any]]:
        """The deltas wrapped as ``chat.completion.chunk`` objects (``meta``: ``id``, ``model``, ``created``)."""
        return [chunk(delta, **meta) for delta in self.deltas(events)]

    def final_chunk(self, output: ParsedOutput, *, stop_reason: Any = None, **meta: Any) -> dict[str, Any]:
        """The last chunk: an empty delta with the ``finish_reason`` of the output and the engine's
        ``stop_reason`` (see :func:`finish_reason`: a max-tokens stop on plain text gives ``length``)."""
        return chunk({}, finish_reason=finish_reason(output, promote_reasoning_calls=self.promote_reasoning_calls,
                                                     stop_reason=stop_reason), **meta)

    def _delta(self, event: Event) -> dict[str, Any] | None:
        if isinstance(event, ContentDelta):
            return {"content": event.text}
        if isinstance(event, ReasoningDelta):
            return {self.reasoning_field: event.text}
        if isinstance(event, ToolCallStarted):
            if event.source != "content" and not self.promote_reasoning_calls:
                return None
            position = self._positions[event.index] = len(self._positions)
            return {"tool_calls": [{"index": position, "id": event.id, "type": "function",
                                    "function": {"name": event.name, "arguments": ""}}]}
        if isinstance(event, ArgumentsDelta):
            position = self._positions.get(event.index)
            if position is None or not event.fragment:
                return None
            return {"tool_calls": [{"index": position, "function": {"arguments": event.fragment}}]}
        if isinstance(event, ToolCallFinished) and event.index not in self._positions and \
                recovered_in_reasoning(event.candidate):  # issue 33: known only at the end, sent whole then
            cand = event.candidate
            position = self._positions[event.index] = len(self._positions)
            return {"tool_calls": [{"index": position, "id": cand.id, "type": "function",
                                    "function": {"name": cand.name, "arguments": arguments_text(cand)}}]}
        return None  # ToolCallFinished: the fragments already said everything


def chunk(delta: dict[str, Any], *, finish_reason: str | None = None, id: str = "chatcmpl-toolwire",
          model: str = "", created: int = 0) -> dict[str, Any]:
    """One ``chat.completion.chunk`` holding ``delta`` as ``choices[0].delta``."""
    return {"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}


def accumulate_deltas(deltas: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Merge deltas into one message, as an OpenAI client does (content and reasoning concatenated, calls
    merged by ``index``; reasoning read from ``reasoning_content`` or ``reasoning``). The result has the shape
    of :func:`to_openai_message` (reasoning under ``reasoning_content``)."""
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for delta in deltas:
        content.append(delta.get("content") or "")
        reasoning.append(delta.get("reasoning_content") or delta.get("reasoning") or "")
        for part in delta.get("tool_calls") or ():
            call = calls.setdefault(part["index"], {"id": None, "type": "function",
                                                    "function": {"name": "", "arguments": ""}})
            if part.get("id"):
                call["id"] = part["id"]
            function = part.get("function") or {}
            call["function"]["name"] += function.get("name") or ""
            call["function"]["arguments"] += function.get("arguments") or ""
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content) or None}
    if "".join(reasoning):
        message["reasoning_content"] = "".join(reasoning)
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return message


# ---- the error envelope

def error_result(call: ToolCallCandidate) -> dict[str, Any]:
    """``{"ok": false, "status", "meta": {"tool", "call_id"}, "error": {"type", "retryable", "details"}}``: the
    envelope of :meth:`toolwire.ToolResult.from_candidate` (status ``error`` when every error is retryable, else
    ``failure``).

    ``type`` is the first (most fundamental) error code, ``retryable`` is true when every error is, and
    ``details`` lists every error (``code``, ``pointer``, ``expected``, ``got``, ``message``, ``retryable``).
    A candidate that was not validated is described from what the parser saw."""
    return ToolResult.from_candidate(call).envelope()


def error_tool_message(call: ToolCallCandidate) -> dict[str, Any]:
    """The Chat Completions tool message carrying :func:`error_result` for this call."""
    return {"role": "tool", "tool_call_id": call.id,
            "content": json.dumps(error_result(call), ensure_ascii=False)}


__all__ = ["to_openai_message", "finish_reason", "listed_calls", "is_truncated", "ChatCompletionsStream", "chunk",
           "accumulate_deltas", "error_result", "error_tool_message"]
