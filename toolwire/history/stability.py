"""Cache stability: does a request's prompt extend what the engine already holds for the previous turn?

After turn *n* an engine's prefix cache holds the prompt of request *n* followed by the completion the model
sampled. Request *n+1* reuses that cache up to the first token where its prompt differs, and prefills the rest.
:func:`cache_report` compares the two (text, and token ids with a tokenizer) and names the cause of the first
difference:

``policy_drop``
    the family's context policy leaves out reasoning that the previous prompt or completion showed (a new user
    message in Qwen3, GLM, ...): :mod:`toolwire.history.retention` lists the families that offer a switch to
    keep it;
``client_dropped_reasoning``
    the client echoed an assistant turn without the reasoning the model wrote, and the family would have
    rendered it (:class:`toolwire.history.HistoryKeeper` restores it);
``client_rewrite``
    the client changed an earlier message (its text, its calls, its reasoning, the order of tool results, or
    removed messages);
``effort_line`` / ``date`` / ``options_changed`` / ``tools_changed``
    a render option (``reasoning_effort``, ``current_date``, another option) or the tool list differs, and
    rendering the new request with the previous value would have kept the prefix further;
``template_rerenders``
    the template itself writes the history differently from the previous prompt and completion (a generation
    prompt the history form does not repeat, a turn written back in another form);
``tokenization``
    the text extends, but the ids do not: a fresh tokenisation merges across the previous prompt's end or
    re-tokenises the completion (token-faithful turns, :mod:`toolwire.history.faithful`, keep the ids).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Sequence

from toolwire.errors import InvalidOption
from toolwire.models import Message, normalize_messages
from toolwire.tokenize import encode_segments, token_pieces, vocabulary
from toolwire.training import _model_spans

from .faithful import TOKEN_IDS_FIELD, _clip, splice_token_ids
from .policy import render_plan
from .visible import canonical_items


@dataclass(frozen=True)
class StabilityReport:
    """Whether the current prompt extends the previous turn's prompt and completion (``extends``: the text,
    and the ids when a tokenizer was given), how much of that cached sequence it reuses (``reused_chars`` of
    ``cached_chars``; ``reused_tokens`` of ``cached_tokens`` with a tokenizer), and otherwise where it first
    differs (``char`` and ``token`` in the current prompt, ``message_index`` of the current request there) and
    the ``cause`` (see :mod:`toolwire.history.stability`) with a ``detail``. ``previous_found`` is False when
    there was nothing to compare with (``cause`` ``no_previous``)."""

    previous_found: bool = True
    extends: bool = False
    extends_text: bool = False
    cached_chars: int = 0
    reused_chars: int = 0
    cached_tokens: int | None = None
    reused_tokens: int | None = None
    char: int | None = None
    token: int | None = None
    message_index: int | None = None
    cause: str = ""
    detail: str = ""
    decisions: list[str] = field(default_factory=list)

    @property
    def fraction(self) -> float:
        """The share of the cached sequence the current prompt reuses: tokens when counted, else characters
        (1.0 when it extends it; 0.0 without a previous prompt)."""
        if self.cached_tokens:
            return (self.reused_tokens or 0) / self.cached_tokens
        return self.reused_chars / self.cached_chars if self.cached_chars else 0.0


def _completion_pieces(fmt: Any, messages: Sequence[Any], turn: Any, tools: Any, options: dict) -> list:
    msgs = normalize_messages([*messages, turn])
    opts = {**options, "add_generation_prompt": False}
    full = fmt.render(msgs, tools, **opts)
    spans = [(a, b) for a, b, i in _model_spans(fmt, msgs, tools, full, opts) if i == len(msgs) - 1]
    return _clip(full.pieces, *spans[0]) if spans else []


def model_completion(fmt: Any, messages: Sequence[Any], turn: Any, tools: Any = None, **options: Any) -> str:
    """The text the model wrote for ``turn`` after the prompt of ``messages``: the turn as the format writes it
    when the conversation ends with it, from the end of the generation prompt through its end marker (the
    ``model_mask`` span of :meth:`toolwire.Format.render_tokens`). ``options`` are render options."""
    return "".join(p[1] for p in _completion_pieces(fmt, messages, turn, tools, options))


def model_completion_ids(fmt: Any, messages: Sequence[Any], turn: Any, tools: Any = None, tokenizer: Any = None,
                         **options: Any) -> list[int]:
    """The ids of :func:`model_completion` as the model samples them when it writes the format's markers as
    their control tokens and all other text as text (the format's own tokenisation of the turn on its own, as
    :meth:`~toolwire.prompt.RenderedPrompt.token_ids` does it): what an engine's cache holds after the turn when
    the sampled ids themselves are not known."""
    if tokenizer is None:
        raise InvalidOption("model_completion_ids needs the model's tokenizer", field="tokenizer")
    return encode_segments([p for p in _completion_pieces(fmt, messages, turn, tools, options) if p[1]], tokenizer)


def _render_ids(fmt: Any, request: dict, tokenizer: Any) -> tuple[Any, list[int] | None]:
    msgs = normalize_messages(request["messages"])
    options = dict(request.get("options") or {})
    if tokenizer is not None and any((m.__pydantic_extra__ or {}).get(TOKEN_IDS_FIELD) is not None for m in msgs):
        spliced = splice_token_ids(fmt, msgs, request.get("tools"), tokenizer, bridge="report", on_refusal="skip",
                                   **options)
        return spliced.prompt, spliced.ids
    prompt = fmt.render(msgs, request.get("tools"), **options)
    return prompt, (prompt.token_ids(tokenizer) if tokenizer is not None else None)



def _common(a: Sequence, b: Sequence) -> int:
    if isinstance(a, str):
        return len(os.path.commonprefix([a, b]))
    return next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def cache_report(fmt: Any, previous: dict, current: dict, *, turn: Any = None, completion: Any = None,
                 tokenizer: Any = None) -> StabilityReport:
    """Compare request ``current`` with the previous turn of the same conversation: request ``previous`` and
    what the model sampled for it. Each request is ``{"messages", "tools", "options"}`` (render options).
    ``completion``: the sampled turn as token ids (decoded with ``tokenizer``, and compared as ids) or as text
    (tokenised on its own, control tokens recognised); without it, the turn as the format writes it for ``turn``
    (the assistant message returned for ``previous``: :func:`model_completion`, :func:`model_completion_ids`);
    with neither, the previous prompt alone is compared. A current request whose
    assistant messages carry sampled ids (``token_ids``) is tokenised with them spliced
    (:func:`toolwire.history.faithful.splice_token_ids`, turns that cannot be spliced tokenised as usual)."""
    prev_prompt, prev_ids = _render_ids(fmt, previous, tokenizer)
    completion_ids: list[int] | None = None
    if completion is None and turn is not None:
        pieces = _completion_pieces(fmt, previous["messages"], turn, previous.get("tools"),
                                    dict(previous.get("options") or {}))
        completion = "".join(p[1] for p in pieces)
        if tokenizer is not None:
            completion_ids = encode_segments([p for p in pieces if p[1]], tokenizer)
    if isinstance(completion, (list, tuple)):
        if tokenizer is None:
            raise InvalidOption("completion token ids need the tokenizer", field="completion")
        completion_ids = list(completion)
        completion = "".join(p.text for p in token_pieces(completion_ids, tokenizer))
    completion = completion or ""
    cached_text = prev_prompt.text + completion
    cached_ids = None
    if tokenizer is not None:
        cached_ids = prev_ids + (completion_ids if completion_ids is not None else vocabulary(tokenizer).encode(completion))
    prompt, ids = _render_ids(fmt, current, tokenizer)
    reused_chars = _common(cached_text, prompt.text)
    extends_text = reused_chars == len(cached_text)
    reused_tokens = _common(cached_ids, ids) if cached_ids is not None else None
    extends = extends_text and (cached_ids is None or reused_tokens == len(cached_ids))
    base = dict(extends=extends, extends_text=extends_text, cached_chars=len(cached_text), reused_chars=reused_chars,
                cached_tokens=len(cached_ids) if cached_ids is not None else None, reused_tokens=reused_tokens)
    if extends:
        return StabilityReport(**base)
    token = reused_tokens
    if extends_text:
        return StabilityReport(**base, char=len(cached_text), token=token,
                               message_index=prompt.message_at(reused_chars), cause="tokenization",
                               detail=f"the text extends, but token {token} differs: the ids of the cached sequence "
                                      "are not a fresh tokenisation's (a merge across the previous prompt's end, or a "
                                      "completion sampled as other ids)")
    index = prompt.message_at(reused_chars)
    here = f"at char {reused_chars} (message {index}): {prompt.text[reused_chars:reused_chars + 40]!r} where the " \
           f"cache holds {cached_text[reused_chars:reused_chars + 40]!r}"
    cause, detail, decisions = _cause(fmt, previous, current, turn, cached_text, prompt.text, reused_chars, index)
    return StabilityReport(**base, char=reused_chars, token=token, message_index=index, cause=cause,
                           detail=f"{detail}; {here}" if detail else here, decisions=decisions)


_OPTION_CAUSES = (("reasoning_effort", "effort_line"), ("current_date", "date"))


def _cause(fmt: Any, previous: dict, current: dict, turn: Any, cached: str, text: str, common: int,
           index: int | None) -> tuple[str, str, list[str]]:
    prev_opts, cur_opts = dict(previous.get("options") or {}), dict(current.get("options") or {})

    def reaches(request: dict) -> bool:
        try:
            return _common(cached, fmt.render(request["messages"], request.get("tools"),
                                              **request.get("options", {})).text) > common
        except Exception:  # noqa: BLE001 - a trial render the request refuses: not the cause
            return False

    for name, cause in _OPTION_CAUSES:
        if prev_opts.get(name) != cur_opts.get(name):
            trial = {**cur_opts, name: prev_opts.get(name)}
            if prev_opts.get(name) is None:
                trial.pop(name)
            if reaches({**current, "options": trial}):
                return cause, f"{name} changed from {prev_opts.get(name)!r} to {cur_opts.get(name)!r}", []
    if prev_opts != cur_opts and reaches({**current, "options": prev_opts}):
        changed = sorted(k for k in set(prev_opts) | set(cur_opts) if prev_opts.get(k) != cur_opts.get(k))
        return "options_changed", f"render options {changed} changed", []
    if _dump_tools(previous.get("tools")) != _dump_tools(current.get("tools")) and \
            reaches({**current, "tools": previous.get("tools")}):
        return "tools_changed", "the tool list changed", []

    prev_msgs = normalize_messages(previous["messages"])
    cur_msgs = normalize_messages(current["messages"])
    turn_msg = normalize_messages([turn])[0] if turn is not None else None
    earlier = prev_msgs + ([turn_msg] if turn_msg is not None else [])
    dropped = _policy_drops(fmt, earlier, cur_msgs, current, cached, text)
    if dropped:
        return "policy_drop", "the family's context policy drops earlier reasoning: " + "; ".join(dropped), dropped
    rewrite = _client_rewrite(earlier, cur_msgs)
    if rewrite is not None:
        return rewrite
    return "template_rerenders", "the template writes the history differently from the previous prompt and the " \
                                 "turn the model wrote", []


def _dump_tools(tools: Any) -> Any:
    if tools is None:
        return None
    return [t.model_dump(mode="json", exclude_none=True) if hasattr(t, "model_dump") else t for t in tools]


def _policy_drops(fmt: Any, earlier: list[Message], cur: list[Message], current: dict, cached: str,
                  text: str) -> list[str]:
    """The assistant messages whose reasoning the cached sequence showed and the current render leaves out
    because the context plan drops it."""
    p = render_plan(fmt, cur, current.get("tools"), **(current.get("options") or {}))
    kept = p.kept_indices
    out = []
    for j, m in enumerate(cur):
        if m.role != "assistant" or j in kept:
            continue
        reasoning = m.reasoning_content or (earlier[j].reasoning_content if j < len(earlier)
                                            and earlier[j].role == "assistant" else None)
        if reasoning and text.count(reasoning) < cached.count(reasoning):
            decision = p.decision(j)
            out.append(f"message {j}: {decision.reason if decision else 'dropped'}")
    return out


def _plain(m: Message) -> dict:
    data = m.model_dump(mode="json", exclude_none=True)
    data.pop(TOKEN_IDS_FIELD, None)
    for alias in ("reasoning", "thinking"):
        data.pop(alias, None)
    return data


def _client_rewrite(earlier: list[Message], cur: list[Message]) -> tuple[str, str, list[str]] | None:
    """The first message of the previous request (and the turn) that the current request changed, classified."""
    if len(cur) < len(earlier):
        return "client_rewrite", f"the request has {len(cur)} messages, fewer than the {len(earlier)} the cache " \
                                 "holds", []
    prev_items, cur_items = canonical_items(earlier), canonical_items(cur[:len(earlier)])
    for k, (a, b) in enumerate(zip(earlier, cur)):
        if _plain(a) == _plain(b):
            continue
        if a.role == "tool" or b.role == "tool":
            if sorted(prev_items) == sorted(cur_items) or prev_items == cur_items:
                return "client_rewrite", f"the tool results from message {k} were re-ordered", []
            return "client_rewrite", f"tool result message {k} changed", []
        if a.role != b.role or a.text("").strip() != b.text("").strip() or \
                [c.function.name for c in a.tool_calls or ()] != [c.function.name for c in b.tool_calls or ()]:
            return "client_rewrite", f"message {k} ({b.role}) changed its text or calls", []
        if a.reasoning_content and not b.reasoning_content:
            return "client_dropped_reasoning", f"assistant message {k} came back without the reasoning the model " \
                                               "wrote", []
        if a.reasoning_content != b.reasoning_content:
            return "client_rewrite", f"the reasoning of message {k} changed", []
        if a.text("") != b.text(""):
            return "client_rewrite", f"the text of message {k} changed (whitespace)", []
        if [c.function.arguments for c in a.tool_calls or ()] != [c.function.arguments for c in b.tool_calls or ()]:
            return "client_rewrite", f"the call arguments of message {k} were written differently", []
        return "client_rewrite", f"message {k} changed", []
    return None


__all__ = ["StabilityReport", "cache_report", "model_completion", "model_completion_ids"]
