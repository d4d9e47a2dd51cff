"""Pre-flight warnings about tool results: pairing and order, a retry after an unknown outcome, size, untrusted
text that spells the family's markup, results the template drops or prints as a repr.

Codes (stable): ``missing_tool_result`` (a call with no result before the next model step, the next user turn,
or the end of a history that asks for the next step: Chat Completions and the Anthropic API answer this with HTTP
400), ``orphan_tool_result``, ``duplicate_tool_result``, ``reused_call_id``, ``tool_results_out_of_order``
(where the family's rendered results carry neither the call id nor a telling tool name), ``retry_after_unknown``,
``tool_result_large``, ``tool_result_spells_markup``, ``tool_result_empty``, ``tool_result_repr``. What each
family does is learned from its renderer (:mod:`toolwire.result_facts`).
"""

from __future__ import annotations

from typing import Any, Sequence

from toolwire.errors import ToolwireError
from toolwire.models import Message
from toolwire.results import UNKNOWN_OUTCOME, read_envelope

from .boundaries import Boundaries
from .warnings import PlanWarning

RESULT_CODES = (
    "missing_tool_result", "orphan_tool_result", "duplicate_tool_result", "reused_call_id",
    "tool_results_out_of_order", "retry_after_unknown", "tool_result_large", "tool_result_spells_markup",
    "tool_result_empty", "tool_result_repr",
)

DEFAULT_LARGE_RESULT_CHARS = 100_000
"""``Limits.large_result_chars``: past this many characters, a result with no bound set is ``tool_result_large``."""


def pairing(messages: Sequence[Message], b: Boundaries, *, add_generation_prompt: bool) -> list[PlanWarning]:
    """Calls left without a result (before the next model step, the next user turn, or the end of a history that
    asks for a generation), results whose id no call has, two results for one call, and a call id used twice."""
    out: list[PlanWarning] = []
    pending: dict[str, int] = {}  # call id -> the assistant message that made it, until a result comes
    answered: dict[str, int] = {}  # call id -> the tool message that answered it
    made: dict[str, int] = {}  # every call id seen -> the assistant message that made it last
    turn_starts = set(b.turns)

    def flush(reason: str) -> None:
        for call_id, at in pending.items():
            out.append(PlanWarning(code="missing_tool_result", message_index=at,
                                   message=f"call {call_id!r} of message {at} has no tool result {reason}"))
        pending.clear()

    for i, m in enumerate(messages):
        if i in turn_starts and pending:
            flush(f"before the next user turn (message {i})")
        if m.role == "assistant":
            if pending:
                flush(f"before the next model step (message {i}); Chat Completions and the Anthropic API refuse "
                      "such a request (HTTP 400)")
            for c in m.tool_calls or ():
                if not c.id:
                    continue
                if c.id in made:
                    where = "the same message" if made[c.id] == i else f"message {made[c.id]}"
                    out.append(PlanWarning(code="reused_call_id", message_index=i,
                                           message=f"message {i} makes a call with id {c.id!r}, which {where} already "
                                                   "used: its results cannot be told apart; give every call its own "
                                                   "id"))
                made[c.id] = i
                pending[c.id] = i
                answered.pop(c.id, None)
        elif m.role == "tool":
            call_id = m.tool_call_id or ""
            if m.tool_call_id and call_id not in made:
                out.append(PlanWarning(code="orphan_tool_result", message_index=i,
                                       message=f"tool message {i} answers id {m.tool_call_id!r}, which no earlier "
                                               "call has"))
            elif call_id in pending:
                del pending[call_id]
                answered[call_id] = i
            elif call_id in answered:
                out.append(PlanWarning(code="duplicate_tool_result", message_index=i,
                                       message=f"tool message {i} answers call {call_id!r} again (message "
                                               f"{answered[call_id]} already did): the model sees two results for "
                                               "one call"))
    if pending and add_generation_prompt:
        flush("before the end of the history: the model would take its next step without it")
    return out


def out_of_order(messages: Sequence[Message], facts: Any, *, in_call_order: bool) -> list[PlanWarning]:
    """Results of parallel calls sent in another order than the calls, where the family shows neither the call id
    nor a telling tool name with a result (its position is then the model's only link to the call)."""
    if facts is None or facts.carries_id or facts.call_order or in_call_order:
        return []
    out: list[PlanWarning] = []
    for a, m in enumerate(messages):
        calls = [c for c in (m.tool_calls or ()) if c.id] if m.role == "assistant" else []
        if len(calls) < 2:
            continue
        position = {c.id: n for n, c in enumerate(calls)}
        names = [c.function.name for c in calls]
        if facts.carries_name and len(set(names)) == len(names):
            continue  # each result shows a tool name that only one call has
        last, j, seen = -1, a + 1, set()
        while j < len(messages) and messages[j].role == "tool":
            at = position.get(messages[j].tool_call_id or "")
            if at is not None and at not in seen:  # (a second result for a call is duplicate_tool_result's)
                seen.add(at)
                if at < last:
                    shown = ("shows neither the call id nor the tool name with a result" if not facts.carries_name
                             else "shows no call id with a result, and the tool name it shows does not tell these "
                                  "calls apart")
                    out.append(PlanWarning(
                        code="tool_results_out_of_order", message_index=j,
                        message=f"the results of message {a} come in another order than its calls; the "
                                f"{facts.format} template {shown}, so the model matches results to calls by "
                                "position. Send them in call order, or render with results_in_call_order=True"))
                    break
                last = at
            j += 1
    return out


def retry_after_unknown(messages: Sequence[Message], tools: Any) -> list[PlanWarning]:
    """A call repeated (same tool, same canonical arguments: the same fingerprint) after its outcome came back
    unknown, for a tool whose side effect is not ``none``, with no reconcile call in a step between: the side
    effect may happen twice. A reconcile call is a call to a tool the unknown result names in ``reconcile_with``
    (or, when it names none, to any other tool), made in an earlier step than the repeat."""
    unknown_at = [i for i, m in enumerate(messages) if m.role == "tool" and _unknown_envelope(m) is not None]
    if not unknown_at:
        return []  # (no fingerprints to compute: the common case costs one look at each tool message)
    side_effects = _side_effects(tools)
    calls: dict[str, Any] = {}  # call id -> the call
    pending: dict[str, dict[str, Any]] = {}  # fingerprint -> the unknown outcome
    out: list[PlanWarning] = []
    for i, m in enumerate(messages):
        if i < unknown_at[0]:
            if m.role == "assistant":
                calls.update((c.id, c) for c in m.tool_calls or () if c.id)
            continue
        if m.role == "assistant" and m.tool_calls:
            tools_pending = {u["tool"] for u in pending.values()}
            for c in m.tool_calls:
                if c.id:
                    calls[c.id] = c
                unknown = pending.get(_call_key(c)) if c.function.name in tools_pending else None
                if unknown is not None:
                    effect = unknown["side_effect"] or side_effects.get(c.function.name) or "irreversible"
                    if effect != "none":
                        out.append(PlanWarning(
                            code="retry_after_unknown", message_index=i,
                            message=f"message {i} calls {c.function.name} again with the same arguments after "
                                    f"its outcome came back unknown (message {unknown['at']}), with no "
                                    f"{_reconcile_words(unknown)} in between: its side effect ({effect}) may "
                                    "happen twice. Reconcile first (check whether the first call took effect)"))
            for c in m.tool_calls:  # calls of this step reconcile the unknown outcomes for later steps
                for key, unknown in list(pending.items()):
                    if (c.function.name in unknown["reconcile"] if unknown["reconcile"]
                            else c.function.name != unknown["tool"]):
                        del pending[key]
        elif m.role == "tool":
            envelope = _unknown_envelope(m)
            made = calls.get(m.tool_call_id or "")
            if envelope is not None and made is not None:
                reconcile = envelope.get("reconcile_with")
                effect = envelope.get("side_effect")
                pending[_call_key(made)] = {
                    "at": i, "tool": made.function.name, "side_effect": effect if isinstance(effect, str) else None,
                    "reconcile": frozenset(r for r in reconcile if isinstance(r, str))
                    if isinstance(reconcile, list) else frozenset()}
    return out


def content_checks(messages: Sequence[Message], facts: Any, *, limits: Any,
                   escape_result_markup: bool) -> list[PlanWarning]:
    """Per tool message: a result past ``Limits.large_result_chars`` with no bound, markup the result spells, an
    empty result, content parts the template prints as a repr."""
    max_chars = getattr(limits, "max_result_chars", None) if limits is not None else None
    large = getattr(limits, "large_result_chars", None) if limits is not None else None
    large = large or DEFAULT_LARGE_RESULT_CHARS
    out: list[PlanWarning] = []
    for i, m in enumerate(messages):
        if m.role != "tool":
            continue
        content = m.content
        texts = [content] if content.__class__ is str else (
            [p.text or "" for p in content if p.type == "text"] if content.__class__ is list else [])
        size = sum(map(len, texts))
        if max_chars is None and size > large:
            out.append(PlanWarning(code="tool_result_large", message_index=i,
                                   message=f"tool message {i} holds {size:,} characters, all of which go into the "
                                           "prompt; bound results with Limits(max_result_chars=...) (head, tail and "
                                           "a [truncated: ...] line naming where the whole result is)"))
        if facts is not None:
            framing, specials = [], []
            for text in texts:
                f, s = facts.spelled(text)
                framing += [t for t in f if t not in framing]
                specials += [t for t in s if t not in specials]
            if framing and not escape_result_markup:
                out.append(PlanWarning(
                    code="tool_result_spells_markup", message_index=i,
                    message=f"tool message {i} spells the {facts.format} result framing {', '.join(framing)} as plain "
                            "text: token ids cannot neutralise it (it is not a control token), and in the prompt it "
                            "ends the result early; render with escape_result_markup=True to escape it"))
            if specials:
                out.append(PlanWarning(
                    code="tool_result_spells_markup", message_index=i,
                    message=f"tool message {i} spells {facts.format} control token(s) {', '.join(specials)}: "
                            "RenderedPrompt.token_ids neutralises them (writes them as plain text), but a stack that "
                            "tokenizes the prompt text would read them as control tokens"))
        if content is None or (not size and content.__class__ is not dict and not _has_media(content)):
            out.append(PlanWarning(code="tool_result_empty", message_index=i,
                                   message=_empty_message(i, content is None, facts)))
        elif content.__class__ is list and facts is not None and facts.parts == "repr" and not _has_media(content):
            out.append(PlanWarning(code="tool_result_repr", message_index=i,
                                   message=f"the {facts.format} template prints tool message {i}'s content parts "
                                           "as their Python repr (or the JSON of the part objects); send the text as "
                                           "a string (ToolResult.to_tool_message() does)"))
    return out


# ---- helpers

def _has_media(content: Any) -> bool:
    return content.__class__ is list and any(p.type != "text" for p in content)


def _empty_message(i: int, none: bool, facts: Any) -> str:
    what = "no content (None)" if none else "empty content"
    if none and facts is not None and facts.none_content == "dropped":
        consequence = f"the {facts.format} template renders no result block for it at all"
    elif none and facts is not None and facts.none_content == "repr":
        consequence = f"the {facts.format} template writes it as the text None"
    else:
        consequence = "the model reads an empty result"
    return (f"tool message {i} has {what}: {consequence}, with nothing that says whether the call succeeded. Say "
            "so: ToolResult.success(call, None, note='no matches for ...') for an empty success, "
            "ToolResult.failure(...) or ToolResult.unknown(...) otherwise")


def _unknown_envelope(m: Message) -> dict[str, Any] | None:
    content = m.content
    text = content if content.__class__ is str else (
        next((p.text for p in content if p.type == "text" and p.text), None) if content.__class__ is list else None)
    if text is None or '"unknown"' not in text[:64]:
        return None
    envelope = read_envelope(text)
    if envelope is None or envelope.get("status") != "unknown":
        return None
    error = envelope.get("error")
    return envelope if not isinstance(error, dict) or error.get("type", UNKNOWN_OUTCOME) == UNKNOWN_OUTCOME else None


def _call_key(call: Any) -> str:
    """The call's fingerprint (tool name and canonical arguments), or its name and raw arguments text when the
    arguments cannot be canonicalised."""
    function = call.function
    arguments = function.arguments
    try:
        import json

        value = json.loads(arguments) if isinstance(arguments, str) else arguments
        from toolwire.dispatch.canonical import fingerprint

        return fingerprint(function.name, value)
    except (ValueError, TypeError, RecursionError, ToolwireError):
        return f"{function.name}\x00{arguments!r}"


def _side_effects(tools: Any) -> dict[str, str]:
    """Tool name -> side effect, from whatever ``tools`` says: ToolSpecs (or a ToolSet), MCP definitions
    (``annotations.readOnlyHint``). Tools it says nothing about are taken as irreversible."""
    if tools is None:
        return {}
    specs = getattr(tools, "specs", None)
    items = list(specs.values()) if isinstance(specs, dict) else (list(tools) if isinstance(tools, (list, tuple))
                                                                   else [])
    out: dict[str, str] = {}
    for item in items:
        name = getattr(item, "name", None)
        effect = getattr(item, "side_effect", None)
        if isinstance(item, dict):
            name = item.get("name")
            annotations = item.get("annotations")
            if isinstance(annotations, dict) and annotations:
                effect = ("none" if annotations.get("readOnlyHint") else
                          "irreversible" if annotations.get("destructiveHint", True) else "reversible")
        if isinstance(name, str) and isinstance(effect, str):
            out[name] = effect
    return out


def _reconcile_words(unknown: dict[str, Any]) -> str:
    names = sorted(unknown["reconcile"])
    return f"call to {' or '.join(names)}" if names else "call to another tool"


__all__ = ["RESULT_CODES", "pairing", "out_of_order", "retry_after_unknown", "content_checks"]
