"""What a client can see of a conversation, in one canonical form, and the fingerprints the keeper keys by.

Clients echo a history back with changes that do not change what it says: they drop or rename the reasoning,
re-serialize call arguments (``{"city":"Paris"}`` for ``{"city": "Paris"}``), send ``""`` for ``null`` or
strip the text, re-order the tool results of one step, or mint new call ids. The canonical form leaves out
exactly those differences:

* a message is its role and its text (content parts joined, surrounding whitespace stripped), never its
  reasoning, call ids, ``tool_call_id`` or extension fields;
* an assistant message adds its calls in order, each as the name and the canonical JSON of the arguments
  (:func:`toolwire.dispatch.canonical.canonical_json`; arguments that are not JSON stay their stripped text);
* the tool results of one step (a run of ``tool`` messages) are one item whose results are sorted, so their
  order does not count.

:func:`turn_fingerprint` is the SHA-256 of an assistant message's canonical form (the *visible turn*),
:func:`context_fingerprints` the fingerprint of the visible conversation before each message. Both are hex
strings; equal visible text gives equal fingerprints, any visible change gives another.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from typing import Any, Sequence

from toolwire.dispatch.canonical import NotCanonicalizable, canonical_json
from toolwire.models import Message, normalize_messages

_SEP = "\x1f"  # between the fields of one canonical item (never in JSON text written by json.dumps)


def _text(message: Message) -> str:
    return message.text("\n\n").strip()


def canonical_arguments(arguments: Any) -> str:
    """The canonical JSON of a call's arguments (a JSON string or an object); a string that is not JSON (or not
    canonicalizable: NaN, duplicate keys after NFC) is kept as its stripped text, marked so it cannot equal JSON.
    The canonical form of an arguments string is remembered (a history is sent again with every request)."""
    if isinstance(arguments, str):
        return _canonical_text(arguments) if len(arguments) <= _REMEMBERED else _canonical_arguments(arguments)
    return _canonical_arguments(arguments)


_REMEMBERED = 1 << 14  # arguments strings up to this length are remembered (4,096 of them)


@lru_cache(maxsize=4096)
def _canonical_text(arguments: str) -> str:
    return _canonical_arguments(arguments)


def _canonical_arguments(arguments: Any) -> str:
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
        except (ValueError, RecursionError):
            return "\x00" + arguments.strip()
    else:
        value = arguments
    try:
        return canonical_json(value)
    except (NotCanonicalizable, TypeError, ValueError, RecursionError):
        return "\x00" + (arguments.strip() if isinstance(arguments, str) else repr(arguments))


def canonical_calls(message: Message) -> list[tuple[str, str]]:
    """``(name, canonical arguments)`` of each call of an assistant message, in order."""
    return [(c.function.name, canonical_arguments(c.function.arguments)) for c in message.tool_calls or ()]


def canonical_turn(message: Message) -> str:
    """The canonical form of an assistant message as a client sees it: text and calls, no reasoning, no ids."""
    calls = canonical_calls(message)
    return _SEP.join(["assistant", _text(message), *(f"{name}{_SEP}{args}" for name, args in calls)])


def _canonical_message(message: Message) -> str:
    if message.role == "assistant":
        return canonical_turn(message)
    return f"{message.role}{_SEP}{_text(message)}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def turn_fingerprint(message: Any) -> str:
    """The fingerprint of an assistant message's visible turn (:func:`canonical_turn`), a message dict or
    :class:`toolwire.Message`."""
    return _digest(canonical_turn(_one(message)))


def canonical_items(messages: Sequence[Message]) -> list[tuple[int, str]]:
    """``(index of the item's first message, canonical text)`` per item of the conversation: one item per
    message, except that a run of ``tool`` messages is one item with its results sorted."""
    items: list[tuple[int, str]] = []
    run: list[str] = []
    start = 0
    for i, m in enumerate(messages):
        if m.role == "tool":
            if not run:
                start = i
            run.append(_canonical_message(m))
            continue
        if run:
            items.append((start, "\x1e".join(sorted(run))))
            run = []
        items.append((i, _canonical_message(m)))
    if run:
        items.append((start, "\x1e".join(sorted(run))))
    return items


def context_fingerprints(messages: Sequence[Any]) -> list[str]:
    """For each message index ``i`` (and ``len(messages)``), the fingerprint of the visible conversation before
    it: ``result[i]`` covers the items that end before message ``i``. Linear in the conversation (a running
    hash). Inside a run of tool results the value is the one before the run (a run counts as a whole)."""
    return fingerprints(messages)[0]


def fingerprints(messages: Sequence[Any]) -> tuple[list[str], dict[int, str]]:
    """:func:`context_fingerprints` and the :func:`turn_fingerprint` of every assistant message (by index), from
    one canonical pass over the conversation."""
    msgs = normalize_messages(messages)
    items = canonical_items(msgs)
    turns = {i: _digest(text) for i, text in items if msgs[i].role == "assistant"}
    return _contexts(msgs, items), turns


def _contexts(msgs: list[Message], items: list[tuple[int, str]]) -> list[str]:
    running = hashlib.sha256(b"toolwire.history/1")
    out: list[str] = []
    current = running.hexdigest()
    ends = [items[k + 1][0] if k + 1 < len(items) else len(msgs) for k in range(len(items))]
    k = 0
    for i in range(len(msgs) + 1):
        while k < len(items) and ends[k] <= i:
            running.update(items[k][1].encode("utf-8", "surrogatepass") + b"\x1d")
            current = running.hexdigest()
            k += 1
        out.append(current)
    return out


def _one(message: Any) -> Message:
    return message if isinstance(message, Message) else normalize_messages([message])[0]


__all__ = ["canonical_arguments", "canonical_calls", "canonical_turn", "canonical_items", "turn_fingerprint",
           "context_fingerprints", "fingerprints"]
