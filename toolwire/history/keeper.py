"""The history keeper: remember what each assistant turn emitted, and give it back when a client loses it.

A serving stack calls two methods per request:

>>> keeper = HistoryKeeper("qwen36")                        # a MemoryStore by default
>>> restored = keeper.restore(messages, tools, thinking=True)
>>> prompt = fmt.render(restored.messages, tools, thinking=True)
>>> # ... generate, parse ...
>>> keeper.record(restored.messages, assistant_message, tools, token_ids=completion_ids, thinking=True)

:meth:`HistoryKeeper.record` stores the turn (reasoning, content, calls, and the sampled token ids when given)
under the fingerprint of the visible conversation before it and of the visible turn
(:mod:`toolwire.history.visible`), so it is found again whatever the client did to the reasoning, to the
spelling of the arguments or to the order of the tool results. :meth:`HistoryKeeper.restore` puts the recorded
reasoning back where the client dropped it, renamed it (``reasoning`` / ``thinking`` for
``reasoning_content``) or changed only its surrounding whitespace, and only where the family's context policy
keeps that message's reasoning in the render; it says what it restored and why it left each other turn alone.
An entry is used only when both fingerprints it was written under equal the request's (a hash collision, a
stale entry of an edited turn or another conversation's entry with the same visible turn never changes a
prompt). :meth:`HistoryKeeper.stability` says whether the request's prompt extends the previous turn's
prompt and completion (:mod:`toolwire.history.stability`).
"""

from __future__ import annotations

import hashlib
import json
import zlib
from dataclasses import dataclass, field
from typing import Any, Literal, Sequence

from toolwire.errors import InvalidOption
from toolwire.format import Format
from toolwire.models import REASONING_ALIASES, Message, normalize_messages
from toolwire.registry import get_format

from .faithful import TOKEN_IDS_FIELD
from .policy import kept_by_render
from .retention import stable_options
from .stores import HistoryStore, MemoryStore
from .visible import fingerprints, turn_fingerprint

RestoredHow = Literal["dropped", "renamed", "rewritten"]
SkipReason = Literal["not_recorded", "policy_drops", "client_reasoning_differs", "no_reasoning_recorded",
                     "store_error"]


@dataclass(frozen=True)
class RestoredTurn:
    """One assistant message whose reasoning the keeper gave back. ``how``: ``dropped`` (the client sent none,
    or an empty string), ``renamed`` (sent under ``field``, ``reasoning`` or ``thinking``, with the recorded text:
    now ``reasoning_content``), ``rewritten`` (sent with other surrounding whitespace: the recorded text is back).
    ``found_by``: ``turn`` (context and visible turn) or ``call_id``. ``token_ids``: the recorded sampled ids
    were attached (:data:`TOKEN_IDS_FIELD`)."""

    message_index: int
    how: RestoredHow
    field: str
    chars: int
    found_by: Literal["turn", "call_id"] = "turn"
    token_ids: bool = False


@dataclass(frozen=True)
class SkippedTurn:
    """An assistant message the keeper left as it was, and why: ``not_recorded`` (no entry for this context and
    visible turn), ``policy_drops`` (the family's context policy does not render this message's reasoning, so
    restoring it would change nothing), ``client_reasoning_differs`` (the client sent reasoning that is not the
    recorded one: the client's stays), ``no_reasoning_recorded`` (the model wrote none), ``store_error`` (the store
    could not be read: a Redis server down, a locked database; the request goes on as sent)."""

    message_index: int
    reason: SkipReason


@dataclass(frozen=True)
class Restoration:
    """What :meth:`HistoryKeeper.restore` returns: ``messages`` (validated :class:`toolwire.Message` models, the
    request's with reasoning restored) and the report: ``restored`` and ``skipped`` per assistant message."""

    messages: list[Message]
    restored: list[RestoredTurn] = field(default_factory=list)
    skipped: list[SkippedTurn] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Whether a restoration changed what the render writes (a rename alone does not)."""
        return any(r.how != "renamed" for r in self.restored)


@dataclass(frozen=True)
class Prepared:
    """What :meth:`HistoryKeeper.prepare` returns: the ``messages`` to render and later :meth:`~HistoryKeeper.record`
    (reasoning restored, sampled ids attached), the render ``options`` used, the ``restoration`` report, the
    rendered ``prompt``, its ``ids`` (None without a tokenizer) with the ``splices`` made and the turns
    ``refused`` (:class:`toolwire.history.faithful.TokenSpliceError` each)."""

    messages: list[Message]
    options: dict[str, Any]
    restoration: Restoration
    prompt: Any
    ids: list[int] | None
    splices: list[Any]
    refused: list[Any]


@dataclass(frozen=True)
class _Entry:
    format: str
    context: str
    turn: str
    reasoning: str | None
    content: str | None
    calls: list[list[Any]]
    token_ids: list[int] | None


def _pack(data: dict) -> bytes:
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
    return b"z" + zlib.compress(raw, 1) if len(raw) > 512 else b"j" + raw


def _unpack(value: bytes | None) -> dict | None:
    if not value:
        return None
    try:
        raw = zlib.decompress(value[1:]) if value[:1] == b"z" else value[1:] if value[:1] == b"j" else None
        data = json.loads(raw.decode("utf-8", "surrogatepass")) if raw is not None else None
    except (zlib.error, ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _key(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


class HistoryKeeper:
    """Records assistant turns and restores their reasoning (see the module docs).

    ``format``: a format name or :class:`toolwire.Format`. ``store``: a :class:`~toolwire.history.stores.HistoryStore`
    (default a fresh :class:`~toolwire.history.stores.MemoryStore`). ``trust_call_ids``: the server mints call
    ids that are unique across conversations (vLLM's random ``chatcmpl-tool-...``): a turn is then also found by
    its call ids when the client edited the history before it (its visible turn must still match); leave it
    False when ids can repeat across conversations (toolwire's ``call_0``, Kimi's ``functions.NAME:0``), or a
    foreign conversation's reasoning could be found. ``retention``: ``"template"`` (the family's default) or
    ``"stable"``: :meth:`render_options` sets the family's own switch that keeps earlier reasoning (and so the
    prompt prefix), see :func:`toolwire.history.retention.stable_options`. ``track_prompts``: keep the
    latest request of each conversation for :meth:`stability`."""

    def __init__(self, format: Any, store: HistoryStore | None = None, *, trust_call_ids: bool = False,
                 retention: Literal["template", "stable"] = "template", track_prompts: bool = True):
        self.format: Format = get_format(format) if isinstance(format, str) else format
        if not isinstance(self.format, Format):
            raise InvalidOption(f"format must be a format name or a toolwire.Format, got {type(format).__name__}",
                                field="format")
        if retention not in ("template", "stable"):
            raise InvalidOption(f"retention must be 'template' or 'stable', got {retention!r}", field="retention")
        if store is not None and not isinstance(store, HistoryStore):
            raise InvalidOption(f"store must be a HistoryStore, got {type(store).__name__}", field="store")
        self.store = store if store is not None else MemoryStore()
        self.trust_call_ids = bool(trust_call_ids)
        self.retention = retention
        self.track_prompts = bool(track_prompts)

    # ---------------------------------------------------------------- options

    def render_options(self, options: dict[str, Any] | None = None) -> dict[str, Any]:
        """``options`` for :meth:`Format.render` under this keeper's ``retention``: unchanged for ``"template"``;
        for ``"stable"`` the family's own retention switch is added where the caller did not set it."""
        options = dict(options or {})
        if self.retention == "stable":
            for name, value in stable_options(self.format).items():
                options.setdefault(name, value)
        return options

    # ---------------------------------------------------------------- keys

    def _turn_key(self, context: str, turn: str) -> str:
        return f"t:{self.format.name}:{_key(context, turn)}"

    def _call_key(self, call_id: str, turn: str) -> str:
        return f"c:{self.format.name}:{_key(call_id, turn)}"

    def _request_key(self, context: str, turn: str) -> str:
        return f"r:{self.format.name}:{_key(context, turn)}"

    def _conversation_key(self, conversation: str) -> str:
        return f"r:{self.format.name}:conv:{_key(str(conversation))}"

    # ---------------------------------------------------------------- record

    def record(self, messages: Sequence[Any], turn: Any, tools: Any = None, *, token_ids: Sequence[int] | None = None,
               conversation: str | None = None, completion: str | None = None, **options: Any) -> str:
        """Remember the assistant ``turn`` the model produced for the request ``messages`` (as rendered: after
        :meth:`restore`). ``turn`` is the assistant message the client receives (a dict or
        :class:`toolwire.Message`, with ``reasoning_content`` or an alias) or a :class:`toolwire.ParsedOutput`
        (as :func:`toolwire.to_openai_message` writes it). ``token_ids``: the ids the turn was sampled as (the
        completion), kept for token-faithful renders. ``tools``, ``options`` (render options), ``conversation``
        (any id the caller has for the conversation, such as OpenAI's ``prompt_cache_key``) and
        ``completion`` (the turn's text as the model wrote it, when known) are kept for :meth:`stability`.
        Returns the entry's key."""
        msgs = normalize_messages(messages)
        message = _turn_message(turn)
        if token_ids is not None:
            token_ids = _checked_ids(token_ids)
        contexts, turns = fingerprints(msgs)
        context, visible = contexts[len(msgs)], turn_fingerprint(message)
        calls = [[c.id, c.function.name, c.function.arguments] for c in message.tool_calls or ()]
        key = self._turn_key(context, visible)
        self.store.put(key, _pack({"v": 1, "format": self.format.name, "context": context, "turn": visible,
                                   "reasoning": message.reasoning_content, "content": message.text(""),
                                   "calls": calls, "token_ids": token_ids}))
        if self.trust_call_ids:
            for call_id, _name, _args in calls:
                if call_id:
                    self.store.put(self._call_key(call_id, visible), key.encode())
        if self.track_prompts:
            record = {"v": 1, "messages": [m.model_dump(mode="json", exclude_none=True) for m in msgs],
                      "tools": _tool_dump(tools), "options": _json_options(options),
                      "turn": message.model_dump(mode="json", exclude_none=True), "completion": completion,
                      "token_ids": token_ids}
            packed = _pack(record)
            previous = _last_assistant(msgs)
            if previous is not None:  # the conversation's older head: superseded by this one
                self.store.delete(self._request_key(contexts[previous], turns[previous]))
            self.store.put(self._request_key(context, visible), packed)
            if conversation is not None:
                self.store.put(self._conversation_key(conversation), packed)
        return key

    # ---------------------------------------------------------------- restore

    def _find(self, context: str, visible: str, message: Message,
              found: bytes | None | bool = False) -> tuple[_Entry | None, str]:
        """The entry of this visible turn in this context (``found``: its value, already read), else by call id
        when they are trusted."""
        data = _unpack(self.store.get(self._turn_key(context, visible)) if found is False else found)
        entry = self._entry(data, visible, context)
        if entry is not None:
            return entry, "turn"
        if self.trust_call_ids:
            for call in message.tool_calls or ():
                if not call.id:
                    continue
                try:
                    pointer = self.store.get(self._call_key(call.id, visible))
                    value = self.store.get(pointer.decode("utf-8", "replace")) if pointer is not None else None
                except Exception:  # noqa: BLE001 - as in restore: a store error is a miss
                    continue
                entry = self._entry(_unpack(value), visible, None)
                if entry is not None and call.id in [c[0] for c in entry.calls]:
                    return entry, "call_id"
        return None, ""

    def _entry(self, data: dict | None, visible: str, context: str | None) -> _Entry | None:
        """The entry in ``data`` when it is this format's and was written for this visible turn (and this
        context, when given): otherwise None, whatever the key said."""
        if not data or data.get("v") != 1 or data.get("format") != self.format.name or data.get("turn") != visible:
            return None
        if context is not None and data.get("context") != context:
            return None
        reasoning = data.get("reasoning")
        ids = data.get("token_ids")
        if reasoning is not None and not isinstance(reasoning, str):
            return None
        if ids is not None and not (isinstance(ids, list) and all(type(t) is int for t in ids)):
            ids = None
        calls = [c for c in data.get("calls") or () if isinstance(c, list) and len(c) == 3]
        return _Entry(data["format"], data.get("context", ""), visible, reasoning, data.get("content"), calls, ids)

    def restore(self, messages: Sequence[Any], tools: Any = None, *, token_ids: bool = False,
                **options: Any) -> Restoration:
        """The request ``messages`` with each assistant message's recorded reasoning given back where the client
        dropped, renamed or re-spaced it and the family's policy (under ``options``, the render options the
        request will be rendered with) keeps it; the report says what was restored and why each other
        assistant message was left alone. ``token_ids=True`` also attaches the recorded sampled ids
        (:data:`TOKEN_IDS_FIELD`) to the messages whose reasoning the render keeps (or that had none), for
        :func:`toolwire.history.faithful.splice_token_ids`. Never raises for what the store holds: an entry
        that does not match is ignored, and a store that cannot be read leaves every turn as sent
        (``store_error``); a later look-up by call id that fails is a miss."""
        msgs = normalize_messages(messages)
        kept = kept_by_render(self.format, msgs, tools, **self.render_options(options))
        contexts, turns = fingerprints(msgs)
        out = list(msgs)
        restored: list[RestoredTurn] = []
        skipped: list[SkippedTurn] = []
        order = sorted(turns)
        try:
            values = dict(zip(order, self.store.get_many([self._turn_key(contexts[i], turns[i]) for i in order])))
        except Exception:  # noqa: BLE001 - a store that cannot be read must not fail the request
            return Restoration(out, [], [SkippedTurn(i, "store_error") for i in order])
        for i in order:
            m = msgs[i]
            visible = turns[i]
            entry, found_by = self._find(contexts[i], visible, m, values[i])
            if entry is None:
                skipped.append(SkippedTurn(i, "not_recorded"))
                continue
            attach = token_ids and entry.token_ids is not None and (i in kept or not entry.reasoning) \
                and TOKEN_IDS_FIELD not in (m.__pydantic_extra__ or {})  # ids the client sent stay
            if not entry.reasoning:
                skipped.append(SkippedTurn(i, "no_reasoning_recorded"))
                if attach:
                    out[i] = _with(m, None, entry.token_ids)
                continue
            if i not in kept:
                skipped.append(SkippedTurn(i, "policy_drops"))
                continue
            given, given_field = _given_reasoning(m)
            if not given:
                how: RestoredHow = "dropped"
            elif given == entry.reasoning:
                how = "renamed"
                if given_field == "reasoning_content":
                    if attach:
                        out[i] = _with(m, entry.reasoning, entry.token_ids)
                    continue  # nothing to restore
            elif given.strip() == entry.reasoning.strip():
                how = "rewritten"
            else:
                skipped.append(SkippedTurn(i, "client_reasoning_differs"))
                continue
            out[i] = _with(m, entry.reasoning, entry.token_ids if attach else None)
            restored.append(RestoredTurn(i, how, given_field, len(entry.reasoning), found_by, bool(attach)))
        return Restoration(out, restored, skipped)

    # ---------------------------------------------------------------- serving

    def prepare(self, messages: Sequence[Any], tools: Any = None, *, tokenizer: Any = None, token_ids: bool = True,
                bridge: Literal["require", "report"] = "require", **options: Any) -> "Prepared":
        """Everything a serving integration does before generating, in one call: the render options under this
        keeper's retention (:meth:`render_options`), the restored messages (:meth:`restore`, attaching the
        recorded sampled ids when ``token_ids``), the prompt, and with a ``tokenizer`` its ids with every
        assistant turn that carries sampled ids (recorded, or sent by the client in the ``token_ids`` extension
        field) spliced in (:func:`toolwire.history.faithful.splice_token_ids`, ``on_refusal="skip"``: a turn that
        cannot be spliced is tokenised as usual and listed in ``refused``, and ``messages`` no longer carry the ids
        the keeper attached to it, so a server they are handed on to does not refuse them). After generating, call
        ``record(prepared.messages, turn, tools, token_ids=completion_ids, **prepared.options)``."""
        from .faithful import splice_token_ids

        opts = self.render_options(options)
        restoration = self.restore(messages, tools, token_ids=token_ids and tokenizer is not None, **opts)
        if tokenizer is None:
            prompt = self.format.render(restoration.messages, tools, **opts)
            return Prepared(restoration.messages, opts, restoration, prompt, None, [], [])
        spliced = splice_token_ids(self.format, restoration.messages, tools, tokenizer, bridge=bridge,
                                   on_refusal="skip", **opts)
        handed_on = list(restoration.messages)
        refused = {error.message_index for error in spliced.refused}
        if refused:  # ids the keeper attached that do not splice are not handed on: a server would refuse them
            sent_by_client = {i for i, m in enumerate(normalize_messages(messages))
                              if (m.__pydantic_extra__ or {}).get(TOKEN_IDS_FIELD) is not None}
            for i in refused - sent_by_client:
                handed_on[i] = _without_ids(handed_on[i])
        return Prepared(handed_on, opts, restoration, spliced.prompt, spliced.ids, spliced.splices, spliced.refused)

    # ---------------------------------------------------------------- stability

    def previous_request(self, messages: Sequence[Any], *, conversation: str | None = None) -> dict | None:
        """The request record of the turn this request continues: by ``conversation`` when given, else by the
        context and visible turn of the request's last assistant message (its call ids with ``trust_call_ids``).
        ``{"messages", "tools", "options", "turn", "completion", "token_ids"}``, or None."""
        data = None
        if conversation is not None:
            data = _unpack(self.store.get(self._conversation_key(conversation)))
        if data is None:
            msgs = normalize_messages(messages)
            last = _last_assistant(msgs)
            if last is None:
                return None
            contexts, turns = fingerprints(msgs)
            visible = turns[last]
            data = _unpack(self.store.get(self._request_key(contexts[last], visible)))
            if data is None and self.trust_call_ids:
                entry, how = self._find("", visible, msgs[last])
                if entry is not None:
                    data = _unpack(self.store.get(self._request_key(entry.context, visible)))
        if not data or data.get("v") != 1:
            return None
        return data

    def stability(self, messages: Sequence[Any], tools: Any = None, *, tokenizer: Any = None,
                  conversation: str | None = None, **options: Any):
        """Whether this request's prompt (``messages``, as they will be rendered: after :meth:`restore`) extends
        the previous turn's prompt and completion of the same conversation, and where and why not: a
        :class:`toolwire.history.stability.StabilityReport` (``previous_found`` False when no earlier turn of it
        was recorded). With ``tokenizer`` the check is on token ids too."""
        from .stability import StabilityReport, cache_report

        try:
            previous = self.previous_request(messages, conversation=conversation)
        except Exception:  # noqa: BLE001 - a diagnostic: a store that cannot be read is reported, not raised
            return StabilityReport(previous_found=False, extends=False, cause="store_error",
                                   detail="the store could not be read")
        if previous is None:
            return StabilityReport(previous_found=False, extends=False, cause="no_previous",
                                   detail="no earlier turn of this conversation was recorded")
        prev_request = {"messages": previous["messages"], "tools": previous.get("tools"),
                        "options": previous.get("options") or {}}
        current = {"messages": messages, "tools": tools, "options": options}
        completion: Any = previous.get("token_ids") if tokenizer is not None and previous.get("token_ids") else \
            previous.get("completion")
        return cache_report(self.format, prev_request, current, turn=previous.get("turn"), completion=completion,
                            tokenizer=tokenizer)


def _with(m: Message, reasoning: str | None, ids: list[int] | None) -> Message:
    update: dict[str, Any] = {}
    if reasoning is not None:
        update["reasoning_content"] = reasoning
    if ids is not None:
        update[TOKEN_IDS_FIELD] = list(ids)
    new = m.model_copy(update=update)
    if reasoning is not None and new.__pydantic_extra__:
        object.__setattr__(new, "__pydantic_extra__",
                           {k: v for k, v in new.__pydantic_extra__.items() if k not in REASONING_ALIASES})
    return new


def _without_ids(m: Message) -> Message:
    new = m.model_copy()
    object.__setattr__(new, "__pydantic_extra__",
                       {k: v for k, v in (m.__pydantic_extra__ or {}).items() if k != TOKEN_IDS_FIELD})
    return new


def _given_reasoning(m: Message) -> tuple[str | None, str]:
    """The reasoning the client sent and the field it came under (``reasoning_content`` or an alias)."""
    extra = m.__pydantic_extra__ or {}
    for name in REASONING_ALIASES:
        value = extra.get(name)
        if isinstance(value, str) and value == m.reasoning_content:
            return value, name
    return m.reasoning_content, "reasoning_content"


def _turn_message(turn: Any) -> Message:
    if not isinstance(turn, (dict, Message)) and hasattr(turn, "to_openai_message"):
        turn = turn.to_openai_message()
    message = turn if isinstance(turn, Message) else normalize_messages([turn])[0]
    if message.role != "assistant":
        raise InvalidOption(f"the recorded turn must be an assistant message, not {message.role!r}", field="turn")
    return message


def _checked_ids(ids: Sequence[int]) -> list[int]:
    out = list(ids)
    if not all(type(t) is int and t >= 0 for t in out):
        raise InvalidOption("token_ids must be a list of non-negative integers", field="token_ids")
    return out


def _last_assistant(msgs: Sequence[Message]) -> int | None:
    return next((i for i in range(len(msgs) - 1, -1, -1) if msgs[i].role == "assistant"), None)


def _tool_dump(tools: Any) -> Any:
    if tools is None:
        return None
    definitions = getattr(tools, "tool_definitions", None)
    tools = definitions() if callable(definitions) else tools
    return [t.model_dump(mode="json", exclude_none=True) if hasattr(t, "model_dump") else t for t in tools]


def _json_options(options: dict[str, Any]) -> dict[str, Any]:
    try:
        return json.loads(json.dumps(options))
    except (TypeError, ValueError):
        raise InvalidOption("render options must be JSON values to be recorded", field="options") from None


__all__ = ["HistoryKeeper", "Restoration", "RestoredTurn", "SkippedTurn", "Prepared"]
