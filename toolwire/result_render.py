"""Tool results on their way into a prompt: what ``Format.render`` does to tool messages before the family's
renderer sees them.

Always (it costs nothing when no message has list or object content): every content part of a tool result must
have a place in the family's template. A text part is text; an image, audio or video part goes in the family's
media slot (``Format.tool_result_media``) or is refused by name (``UnsupportedByFormat`` at
``messages[i].content[k]``), never dropped silently; any other part (an MCP block sent as is) is refused by name;
a JSON object as a result's content is written as JSON where the template does so (``Format.tool_result_json``)
and refused elsewhere.

On request only, each one a documented departure from the template (docs/tool-results.md, "Divergences"):

* ``limits=Limits(max_result_chars=N)``: a result's text keeps its head and tail around one
  ``[truncated: ...]`` line (:func:`toolwire.results.bound_text`); a ToolResult envelope gets
  ``meta.truncated: true``;
* ``escape_result_markup=True``: a result that spells its family's plain-text result framing
  (:mod:`toolwire.result_facts`) gets its ``<`` written ``\\u003c`` (``\\u003c/tool_result>``: in a JSON envelope,
  JSON's own escape of the same character, so the envelope still reads the same; DSML escapes ``<`` in values so);
* ``results_in_call_order=True``: the results that follow an assistant message are put in the order of its
  calls (matched by ``tool_call_id``), as DeepSeek's own encoder does;
* ``media_fallback="user_turn"``: media a family has no tool-result slot for are moved into a user message
  right after the results, where the family has a user media slot (``Format.user_media``), and the result's text
  says so.

The messages the renderer sees may then be reordered or hold an extra user message; :class:`Prepared` maps each
back to its request index, so the prompt's provenance segments (and token ids) still name request messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import InvalidOption, UnsupportedByFormat
from .models import Message
from .results import ENVELOPE_HEAD, bound_text

MEDIA_PARTS = {"image": "image", "image_url": "image", "audio": "audio", "input_audio": "audio", "video": "video"}
"""Content-part types that carry media, and the kind of each."""

MEDIA_FALLBACKS = (None, "user_turn")


@dataclass
class Prepared:
    """The messages the family renders, ``index`` (the request index of each; None when nothing moved) and the
    render notes (``(code, message, message_index)``) the prompt's warnings carry."""

    messages: list[Message]
    index: list[int] | None = None
    notes: list[tuple[str, str, int | None]] = field(default_factory=list)
    added: set[int] = field(default_factory=set)  # positions of the user messages media_fallback added


def prepare(fmt: Any, messages: list[Message], *, structured: bool, limits: Any, results_in_call_order: bool,
            escape_result_markup: bool, media_fallback: Any) -> Prepared:
    """The tool messages of ``messages`` as ``fmt`` may render them (see the module doc)."""
    if media_fallback not in MEDIA_FALLBACKS:
        raise InvalidOption(f"media_fallback must be None or 'user_turn', not {media_fallback!r}",
                            field="media_fallback")
    max_chars = getattr(limits, "max_result_chars", None) if limits is not None else None
    if limits is not None and not hasattr(limits, "max_result_chars"):
        raise InvalidOption(f"limits must be a toolwire.Limits, not {type(limits).__name__}", field="limits")
    out = Prepared(list(messages))
    moved: dict[int, list[dict[str, Any]]] = {}  # tool message index -> media parts for the user turn after it
    if structured:
        for i, m in enumerate(messages):
            content = m.content
            if m.role == "tool" and content.__class__ is not str and content is not None:
                out.messages[i] = _check_parts(fmt, m, i, media_fallback, moved)
    if max_chars is not None or escape_result_markup:
        framing = _framing(fmt) if escape_result_markup else ()
        for i, m in enumerate(out.messages):
            if m.role == "tool":
                out.messages[i] = _rewrite_text(m, i, max_chars, framing, out.notes)
    if results_in_call_order:
        _call_order(out)
    if moved:
        _insert_user_turns(out, moved, messages)
    return out


def remap(pieces: list, index: list[int]) -> list:
    """``pieces`` with each rendered message position replaced by its request index."""
    return [(kind, text, index[i] if i is not None else None) for kind, text, i in pieces]


def remap_error(exc: Any, prepared: Prepared) -> Any:
    """A refusal raised on the messages as rendered, naming the request's message instead (and saying so when the
    message is a user turn ``media_fallback`` added)."""
    index = exc.message_index
    if index is None or prepared.index is None or not 0 <= index < len(prepared.index):
        return exc
    detail = exc.detail
    if prepared.messages[index].role == "user" and index in prepared.added:
        detail += " (in the user message media_fallback='user_turn' adds after this tool result)"
    return type(exc)(detail, message_index=prepared.index[index], field=exc.field)


# ---- parts

def _check_parts(fmt: Any, m: Message, i: int, fallback: Any, moved: dict) -> Message:
    content = m.content
    if content.__class__ is dict:
        if not fmt.tool_result_json:
            raise UnsupportedByFormat(f"the {fmt.name} template cannot write a tool result given as a JSON object "
                                      "(it prints a Python repr, drops it or fails); send its JSON text, as "
                                      "ToolResult.to_tool_message() does", message_index=i, field="content")
        return m
    keep: list[Any] = []
    media: list[dict[str, Any]] = []
    for k, part in enumerate(content):
        kind = MEDIA_PARTS.get(part.type)
        if kind is None:
            if part.type != "text" and part.type not in fmt.tool_result_parts:
                raise UnsupportedByFormat(f"a {part.type!r} content part has no rendering in a chat template (an MCP "
                                          "content block? convert the MCP result with ToolResult.from_mcp)",
                                          message_index=i, field=f"content[{k}].type")
            keep.append(part)
        elif part.type in fmt.tool_result_media:
            keep.append(part)
        elif fallback == "user_turn" and part.type in fmt.user_media:
            media.append(part.model_dump(exclude_none=True))
        else:
            raise UnsupportedByFormat(_no_slot(fmt, part.type, kind), message_index=i, field=f"content[{k}]")
    if not media:
        return m
    moved[i] = media
    text = "\n".join(p.text or "" for p in keep if p.type == "text")
    words = ", ".join(f"{MEDIA_PARTS[p['type']]} {n}" for n, p in enumerate(media, 1))
    text += ("\n" if text else "") + f"[{words} of this result: in the next user message]"
    rest = [p for p in keep if p.type != "text"]
    return m.model_copy(update={"content": [{"type": "text", "text": text}, *rest] if rest else text})


def _no_slot(fmt: Any, part_type: str, kind: str) -> str:
    where = (f" (it takes {', '.join(repr(t) for t in sorted(fmt.tool_result_media))} parts there)"
             if fmt.tool_result_media else "")
    hint = ("; render with media_fallback='user_turn' to move it into a user message after the results"
            if part_type in fmt.user_media else
            f"; the {fmt.name} template has no place for {_article(kind)} {kind} in a user message either")
    return f"the {fmt.name} template has no place for {_article(kind)} {kind} in a tool result{where}{hint}"


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


# ---- text: bounds and escapes

def _framing(fmt: Any) -> tuple[str, ...]:
    from .result_facts import result_facts

    return result_facts(fmt).framing


def _rewrite_text(m: Message, i: int, max_chars: int | None, framing: tuple[str, ...], notes: list) -> Message:
    content = m.content
    if content.__class__ is str:
        text = _rewrite(content, i, max_chars, framing, notes)
        return m if text is content else m.model_copy(update={"content": text})
    if content.__class__ is list:
        parts = []
        changed = False
        for part in content:
            if part.type == "text" and part.text:
                text = _rewrite(part.text, i, max_chars, framing, notes)
                if text is not part.text:
                    part = part.model_copy(update={"text": text})
                    changed = True
            parts.append(part)
        return m.model_copy(update={"content": parts}) if changed else m
    return m


def _rewrite(text: str, i: int, max_chars: int | None, framing: tuple[str, ...], notes: list) -> str:
    if framing:
        escaped = text
        for tag in framing:
            if tag in escaped:
                escaped = escaped.replace(tag, "\\u003c" + tag[1:])
        if escaped != text:
            notes.append(("tool_result_markup_escaped", f"tool message {i} spelled its result framing "
                          f"({', '.join(t for t in framing if t in text)}); written escaped (escape_result_markup)", i))
            text = escaped
    if max_chars is not None and len(text) > max_chars:
        bounded = bound_result(text, max_chars)
        notes.append(("tool_result_truncated", f"tool message {i}: {len(text):,} characters cut to {max_chars:,} "
                      "around a [truncated: ...] line (Limits.max_result_chars)", i))
        return bounded
    return text


def bound_result(text: str, max_chars: int) -> str:
    """``text`` bounded by :func:`~toolwire.results.bound_text`; a ToolResult envelope first gets
    ``meta.truncated: true`` (and its ``meta.reference`` names where the whole result is)."""
    reference = None
    if text.startswith(ENVELOPE_HEAD):
        import json

        try:
            envelope = json.loads(text)
        except (ValueError, RecursionError):
            envelope = None
        if isinstance(envelope, dict) and isinstance(envelope.get("meta"), dict) and "status" in envelope:
            envelope["meta"]["truncated"] = True
            reference = envelope["meta"].get("reference")
            text = json.dumps(envelope, ensure_ascii=False)
    return bound_text(text, max_chars, reference if isinstance(reference, str) else None)


# ---- order and user turns

def _call_order(out: Prepared) -> None:
    """Each run of tool messages after an assistant message with calls, in the order of those calls."""
    msgs = out.messages
    index = list(range(len(msgs)))
    changed = False
    i = 0
    while i < len(msgs):
        m = msgs[i]
        if m.role == "assistant" and m.tool_calls:
            position = {c.id: n for n, c in enumerate(m.tool_calls) if c.id}
            end = i + 1
            while end < len(msgs) and msgs[end].role == "tool":
                end += 1
            run = list(range(i + 1, end))
            ordered = sorted(run, key=lambda j: position.get(msgs[j].tool_call_id or "", len(position)))
            if ordered != run:
                changed = True
                out.notes.append(("tool_results_reordered", f"the results after message {i} are rendered in the "
                                  "order of its calls (results_in_call_order)", i))
                msgs[i + 1:end] = [msgs[j] for j in ordered]
                index[i + 1:end] = [index[j] for j in ordered]
            i = end
        else:
            i += 1
    if changed:
        out.index = index


def _insert_user_turns(out: Prepared, moved: dict[int, list[dict[str, Any]]], request: list[Message]) -> None:
    """After each run of tool messages holding moved media: a user message with those media, in order."""
    msgs, index = out.messages, out.index or list(range(len(out.messages)))
    names = {c.id: c.function.name for m in request if m.tool_calls for c in m.tool_calls if c.id}
    new_msgs: list[Message] = []
    new_index: list[int] = []
    pending: list[tuple[int, list[dict[str, Any]]]] = []
    for pos, m in enumerate(msgs):
        new_msgs.append(m)
        new_index.append(index[pos])
        if index[pos] in moved and m.role == "tool":
            pending.append((index[pos], moved[index[pos]]))
        last_of_run = pos + 1 == len(msgs) or msgs[pos + 1].role != "tool"
        if pending and last_of_run:
            parts: list[dict[str, Any]] = []
            for at, media in pending:
                call_id = request[at].tool_call_id
                parts.append({"type": "text", "text": f"Media returned by {names.get(call_id, 'the tool')} "
                                                      f"(call {call_id}):"})
                parts.extend(media)
            out.added.add(len(new_msgs))
            new_msgs.append(Message(role="user", content=parts))
            new_index.append(pending[0][0])
            out.notes.append(("tool_result_media_moved", f"the media of tool message(s) "
                              f"{', '.join(str(at) for at, _ in pending)} are rendered in a user message after the "
                              "results (media_fallback='user_turn')", pending[0][0]))
            pending = []
    out.messages, out.index = new_msgs, new_index


__all__ = ["Prepared", "prepare", "remap", "remap_error", "bound_result", "MEDIA_PARTS"]
