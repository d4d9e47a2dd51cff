"""Token-level training samples (SFT and RL), the bridge between turns, and prefix checks.

Everything here is built from the provenance segments of :meth:`Format.render`, so control tokens can only
come from the format, and from the format's own rendering of shorter conversations:

* :func:`render_tokens`: ids, the message index of every token, a mask of the tokens the model itself
  produced (each assistant turn as the model wrote it: after the generation prompt that opened it, through
  the turn's end marker) and a mask of content tokens versus format tokens;
* :func:`training_sample`: ids and a loss mask over the assistant turns chosen by ``train_on``;
* :func:`bridge`: the next prompt's ids when they extend ``prompt_ids + completion_ids`` exactly, or a
  typed refusal saying why they cannot (history re-rendered, a BPE merge across the boundary, a truncated
  completion);
* :func:`prefix_report`: whether a second request's prompt extends the first's, and where and why not.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass, field
from typing import Any, Literal, Sequence

from .errors import InvalidOption, ToolwireError
from .models import normalize_messages
from .tokenize import TokenDecoder

TrainOn = Literal["last_assistant", "all_assistant", "none"]
BridgeReason = Literal["history_rerendered", "reasoning_dropped", "bpe_boundary_merge", "completion_truncated",
                       "prompt_mismatch"]


class TokenizerMismatch(ToolwireError, ValueError):
    """The tokenizer does not decode its own ids back to the prompt text (it does not fit this format)."""

    code = "tokenizer_mismatch"


@dataclass(frozen=True)
class TokenizedPrompt:
    """A rendered conversation as token ids, with per-token provenance (all lists have ``len(ids)`` items).

    ``message_index``: the message each token's first character belongs to (None for prompt-level text).
    ``model_mask``: the token is part of an assistant turn as the model itself produced it.
    ``content_mask``: the token starts in request text (``content`` segments), not in format markup.
    ``char_offsets``: where each token starts in ``text``.
    """

    text: str
    ids: list[int]
    message_index: list[int | None]
    model_mask: list[bool]
    content_mask: list[bool]
    char_offsets: list[int]
    opens_reasoning: bool = False


@dataclass(frozen=True)
class TrainingSample:
    """``ids`` and a ``loss_mask`` (True where the loss applies), plus the provenance they came from."""

    ids: list[int]
    loss_mask: list[bool]
    tokens: TokenizedPrompt


@dataclass(frozen=True)
class BridgeResult:
    """The next prompt's ids (``ids``, starting with ``prompt_ids + completion_ids``), or why there are none.

    ``ok`` is False exactly when ``ids`` is None; ``reason`` is one of ``history_rerendered`` (the template
    writes earlier turns differently from how the model produced them), ``reasoning_dropped`` (a special
    case of it: the family's context policy drops the reasoning the model wrote), ``bpe_boundary_merge``
    (the text extends, but the tokenizer merges across the boundary), ``completion_truncated`` (the
    completion did not finish its turn) or ``prompt_mismatch`` (``prompt_ids`` is not this conversation's
    prompt); ``detail`` says where."""

    ok: bool
    ids: list[int] | None = None
    reason: BridgeReason | None = None
    detail: str = ""
    message_index: int | None = None


@dataclass(frozen=True)
class PrefixReport:
    """Whether the second prompt extends the first (``extends``); otherwise where they diverge
    (``char``: the first differing character, ``message_index``: the second request's message there) and
    ``why``: the context policy's decision when it drops reasoning there, else what differs."""

    extends: bool
    char: int | None = None
    message_index: int | None = None
    why: str = ""
    first_context: str = ""
    second_context: str = ""
    token: int | None = None
    decisions: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- render_tokens

def _token_offsets(ids: Sequence[int], tokenizer: Any, text: str) -> list[int]:
    decoder = TokenDecoder(tokenizer)
    offsets, pos = [], 0
    for tid in ids:
        offsets.append(pos)
        pos += sum(len(p.text) for p in decoder.feed([tid]))
    pos += sum(len(p.text) for p in decoder.flush())
    if pos != len(text):
        raise TokenizerMismatch(f"the tokenizer decodes the prompt's ids to {pos} characters, not {len(text)}: "
                                "it does not fit this format (see toolwire fidelity --tokenizer)")
    return offsets


def _model_spans(fmt: Any, messages: list, tools: Any, prompt: Any, options: dict) -> list[tuple[int, int, int]]:
    """(start, end, message index) of every assistant turn as the model produced it, in ``prompt.text``.

    A turn's text starts after what the generation prompt that opened it wrote: the prompt for the history
    before the turn (see :class:`_Opening`). Rendering that history for every turn makes the cost quadratic in
    the number of turns, so the opening found for one turn serves the later turns that follow the same kind
    of message (:func:`_history_key`), and a turn's history is rendered again only where the two ways the
    opening can meet the turn (the history written as in the whole prompt, or re-rendered) would mask it
    differently."""
    regions: dict[int, list[int]] = {}
    kinds: dict[int, list[tuple[int, int, str]]] = {}
    pos = 0
    for kind, text, index in prompt.segments:
        if index is not None:
            region = regions.setdefault(index, [pos, pos])
            region[1] = pos + len(text)
            kinds.setdefault(index, []).append((pos, pos + len(text), kind))
        pos += len(text)
    turns = []
    seen_user, caller = False, None  # caller: the last message that is not a tool result
    for i, m in enumerate(messages):
        if m.role == "assistant" and i in regions:
            turns.append((i, _history_key(messages[i - 1] if i else None, caller, seen_user)))
        seen_user = seen_user or m.role == "user"
        caller = caller if m.role == "tool" else m
    spans = []
    known: dict[tuple, _Opening] = {}
    for i, key in reversed(turns):  # the latest turns first: their history is the least likely to be re-rendered
        start, end = regions[i]
        region_text = prompt.text[start:end]
        learned = known.get(key)
        skip = None if learned is None else learned.skip(region_text, start, kinds[i], exact=False)
        if skip is None:
            opening = _Opening.of(fmt, messages[:i], tools, options, prompt.text[:start])
            skip = opening.skip(region_text, start, kinds[i], exact=True)
            if opening.follows is None and learned is not None:
                opening = _Opening(learned.follows, opening.header)
            known[key] = opening
        while kinds[i] and kinds[i][-1][2] == "template" and kinds[i][-1][0] >= start + skip:
            end = kinds[i].pop()[0]  # the template's own text after the turn's end marker (a newline)
        spans.append((start + skip, end, i))
    return spans[::-1]


@dataclass(frozen=True)
class _Opening:
    """How the prompt that opened a turn meets it. ``follows``: the text the generation prompt writes after the
    history when the prompt for the history is the whole prompt's text up to the turn (None when it is not:
    the history is re-rendered); ``header``: what the generation prompt adds to the history's own prompt."""

    follows: str | None
    header: str

    @classmethod
    def of(cls, fmt: Any, history: list, tools: Any, options: dict, before: str) -> "_Opening":
        """The opening of the turn after ``history`` (written as ``before`` in the whole prompt), rendered."""
        opened = _prompt_text(fmt, history, tools, options, True)
        if opened is None:
            return cls(None, "")
        without = _prompt_text(fmt, history, tools, options, False)
        header = opened[len(without):] if without is not None and opened.startswith(without) else ""
        return cls(opened[len(before):] if opened.startswith(before) else None, header)

    def skip(self, region_text: str, start: int, kinds: list, *, exact: bool) -> int | None:
        """Where the model's text starts in the turn ``region_text`` (at ``start``, with segments ``kinds``):
        after ``follows`` when the history is written as in the whole prompt and the turn starts with it, else
        after the part of ``header`` the turn repeats (:func:`_header_skip`). An opening learned on another
        turn (not ``exact``) cannot tell whether this turn's history is re-rendered: None when that would
        change the answer, or when it knows no ``follows`` (the caller then renders this turn's history)."""
        if not exact and self.follows is None:
            return None
        rerendered = _header_skip(region_text, start, kinds, self.header)
        as_written = len(self.follows) if self.follows is not None and region_text.startswith(self.follows) \
            else rerendered
        return as_written if exact or as_written == rerendered else None


def _history_key(last: Any, caller: Any, seen_user: bool) -> tuple:
    """The kind of history a generation prompt may depend on (besides the options): the shape
    (:func:`_shape`) of the ``last`` message before the turn and, after tool results, of the ``caller`` (the
    message before them), and whether a user message came before."""
    if last is None:
        return (None, seen_user)
    return (_shape(last), _shape(caller) if last.role == "tool" and caller is not None else None, seen_user)


def _shape(message: Any) -> tuple:
    """A message's role, whether it has calls, reasoning (None, empty or not), blank text, and extra fields."""
    reasoning = message.reasoning_content
    return (message.role, bool(message.tool_calls), reasoning is None, bool(reasoning), not message.text("").strip(),
            tuple(sorted(message.model_extra or ())))


def _prompt_text(fmt: Any, history: list, tools: Any, options: dict, generation_prompt: bool) -> str | None:
    """The text of the prompt for ``history`` (None when the family refuses that shorter request)."""
    if not history:
        return None
    opts = {k: v for k, v in options.items() if k != "add_generation_prompt"}
    try:
        return fmt.render(history, tools, add_generation_prompt=generation_prompt, **opts).text
    except ToolwireError:
        return None


def _header_skip(region_text: str, start: int, kinds: list, header: str) -> int:
    """Where the model's text starts in a turn whose history is re-rendered: after what the generation prompt
    adds (``header``: ``<|im_start|>assistant\\n``, ``<think>``...) where the region repeats it, cut at a segment
    boundary (a prefix shared only by spelling, as R1's ``<｜`` of two markers, is the model's own text)."""
    shared = len(os.path.commonprefix([region_text, header]))
    if any(b - start == shared for _a, b, _kind in kinds):
        return shared
    return max((a - start for a, _b, _kind in kinds if start <= a <= start + shared), default=0)


def render_tokens(fmt: Any, messages: Sequence[Any], tools: Any, tokenizer: Any, **options: Any) -> TokenizedPrompt:
    """See :meth:`toolwire.Format.render_tokens`."""
    msgs = normalize_messages(messages)
    prompt = fmt.render(msgs, tools, **options)
    ids = prompt.token_ids(tokenizer)
    offsets = _token_offsets(ids, tokenizer, prompt.text)
    starts, seg_index, seg_kind = [], [], []
    pos = 0
    for kind, text, index in prompt.segments:
        starts.append(pos)
        seg_index.append(index)
        seg_kind.append(kind)
        pos += len(text)
    spans = _model_spans(fmt, msgs, tools, prompt, options)
    model = [False] * len(ids)
    message_index, content = [], []
    for t, at in enumerate(offsets):
        s = bisect.bisect_right(starts, at) - 1
        message_index.append(seg_index[s])
        content.append(seg_kind[s] == "content")
    for start, end, _i in spans:
        first = bisect.bisect_left(offsets, start)
        last = bisect.bisect_left(offsets, end)
        for t in range(first, last):
            model[t] = True
    return TokenizedPrompt(prompt.text, ids, message_index, model, content, offsets, prompt.opens_reasoning)


def training_sample(fmt: Any, messages: Sequence[Any], tools: Any, tokenizer: Any, *,
                    train_on: TrainOn = "last_assistant", **options: Any) -> TrainingSample:
    """See :meth:`toolwire.Format.training_sample`."""
    if train_on not in ("last_assistant", "all_assistant", "none"):
        raise InvalidOption(f"train_on must be 'last_assistant', 'all_assistant' or 'none', got {train_on!r}",
                            field="train_on")
    options.setdefault("add_generation_prompt", False)
    tokens = render_tokens(fmt, messages, tools, tokenizer, **options)
    chosen: set[int] | None = None
    if train_on == "last_assistant":
        trained = [i for i, m in zip(tokens.message_index, tokens.model_mask) if m and i is not None]
        chosen = {max(trained)} if trained else set()
    elif train_on == "none":
        chosen = set()
    mask = [m and (chosen is None or i in chosen) for i, m in zip(tokens.message_index, tokens.model_mask)]
    return TrainingSample(tokens.ids, mask, tokens)


# ---------------------------------------------------------------- bridge and prefix

def bridge(fmt: Any, prompt_ids: Sequence[int], completion_ids: Sequence[int], next_messages: Sequence[Any],
           tools: Any, tokenizer: Any, **options: Any) -> BridgeResult:
    """See :meth:`toolwire.Format.bridge`."""
    msgs = normalize_messages(next_messages)
    sampled = list(prompt_ids) + list(completion_ids)
    if not _completion_finished(fmt, completion_ids, tokenizer):
        return BridgeResult(False, reason="completion_truncated",
                            detail="the completion ends inside its turn (no end marker): a fresh render would close "
                                   "the turn with tokens the model never sampled")
    nxt = fmt.render(msgs, tools, **options)
    ids = nxt.token_ids(tokenizer)
    if ids[:len(sampled)] == sampled:
        return BridgeResult(True, ids=ids)
    # why not: compare texts first (re-rendered history), then tokens (a merge across the boundary)
    decode = TokenDecoder(tokenizer)
    sampled_text = "".join(p.text for p in decode.feed(sampled) + decode.flush())
    if nxt.text.startswith(sampled_text):
        at = next((k for k, (a, b) in enumerate(zip(ids, sampled)) if a != b), min(len(ids), len(sampled)))
        return BridgeResult(False, reason="bpe_boundary_merge", message_index=nxt.message_at(len(sampled_text)),
                            detail=f"the text extends, but token {at} differs: a fresh tokenization merges across a "
                                   "boundary (prompt / completion / new messages) that the sampled ids keep apart")
    char = len(os.path.commonprefix([nxt.text, sampled_text]))
    index = nxt.message_at(char)
    prompt_text_len = len("".join(p.text for p in TokenDecoder(tokenizer).feed(list(prompt_ids))))
    reason = _history_reason(fmt, msgs, tools, sampled_text, nxt.text, options)
    if char < prompt_text_len:
        return BridgeResult(False, reason=reason or "history_rerendered", message_index=index,
                            detail=f"the next prompt writes the history differently at char {char} (message {index})")
    return BridgeResult(False, reason=reason or "history_rerendered", message_index=index,
                        detail=f"the next prompt re-renders the sampled turn differently at char {char} (message "
                               f"{index}): {nxt.text[char:char + 40]!r} instead of {sampled_text[char:char + 40]!r}")


def _completion_finished(fmt: Any, completion_ids: Sequence[int], tokenizer: Any) -> bool:
    """Whether the completion closed its turn: the parse of its text is not truncated, and it ends with one of
    the format's end-of-turn markers when the format has them (``stop_tokens``)."""
    decoder = TokenDecoder(tokenizer)
    pieces = decoder.feed(list(completion_ids)) + decoder.flush()
    text = "".join(p.text for p in pieces)
    stops = tuple(getattr(fmt, "stop_tokens", None) or ())
    if stops:
        return any(text.endswith(s) for s in stops)
    return bool(pieces) and pieces[-1].special



def _history_reason(fmt: Any, msgs: list, tools: Any, before: str, after: str, options: dict) -> BridgeReason | None:
    """``reasoning_dropped`` when the family's context plan drops the reasoning of an assistant message whose
    reasoning the earlier text (``before``) shows and the re-rendered text (``after``) no longer does."""
    return "reasoning_dropped" if _dropped(fmt, msgs, tools, before, after, options) else None


def _dropped(fmt: Any, msgs: list, tools: Any, before: str, after: str, options: dict) -> list[str]:
    """The context plan's decisions that drop reasoning visible in ``before`` but gone from ``after``."""
    from toolwire.context_policy import plan

    p = plan(msgs, fmt, thinking=bool(options.get("thinking")), tools=tools, check=False,
             **{k: v for k, v in options.items() if k in ("drop_thinking", "add_generation_prompt")})
    out = []
    for d in p.decisions:
        reasoning = msgs[d.message_index].reasoning_content
        if d.action == "drop" and reasoning and after.count(reasoning) < before.count(reasoning):
            out.append(f"message {d.message_index}: {d.reason}")
    return out


def prefix_report(fmt: Any, first: dict, second: dict, tokenizer: Any = None) -> PrefixReport:
    """Does the prompt of request ``second`` extend the prompt of request ``first`` (prefix-cache stability)?

    Each request is ``{"messages": [...], "tools": [...], "options": {...}}`` (render options). With a
    ``tokenizer`` the check is on token ids too (the text may extend while a merge across the boundary breaks
    the ids). Otherwise the report names the first differing character, the message of ``second`` there,
    and why: the context policy's decisions that dropped reasoning the first prompt showed, or what else
    differs."""
    a = fmt.render(first["messages"], first.get("tools"), **first.get("options", {}))
    b = fmt.render(second["messages"], second.get("tools"), **second.get("options", {}))
    if b.text.startswith(a.text):
        if tokenizer is not None:
            ia, ib = a.token_ids(tokenizer), b.token_ids(tokenizer)
            if ib[:len(ia)] != ia:
                at = next((k for k, (x, y) in enumerate(zip(ia, ib)) if x != y), min(len(ia), len(ib)))
                return PrefixReport(False, char=len(a.text), message_index=b.message_at(len(a.text)), token=at,
                                    why="the text extends, but the tokenizer merges across the boundary "
                                        f"(token {at} differs)")
        return PrefixReport(True)
    char = len(os.path.commonprefix([a.text, b.text]))
    index = b.message_at(char)
    msgs = normalize_messages(second["messages"])
    dropped = _dropped(fmt, msgs, second.get("tools"), a.text, b.text, second.get("options", {}))
    if dropped:
        why = "the family's context policy drops earlier reasoning: " + "; ".join(dropped)
    elif index is not None and index >= len(normalize_messages(first["messages"])):
        why = (f"the first prompt's generation prompt is not how message {index} begins in the second "
               "(the template writes the turn differently from the prompt that opened it)")
    else:
        why = f"message {index} is written differently in the second prompt"
    return PrefixReport(False, char=char, message_index=index, why=why, first_context=a.text[max(0, char - 30):char + 30],
                        second_context=b.text[max(0, char - 30):char + 30], decisions=dropped)
