"""Token-faithful turns: render a conversation whose assistant turns carry the token ids they were sampled as,
with those ids spliced in verbatim, or a typed refusal saying why they cannot be.

A re-rendered turn is re-tokenised: the model may have written ``Par`` + ``is`` where a fresh tokenisation has
``Paris``, or a prompt may end where a merge across it would have gone. Then the prefix cache misses from there
on, and an RL trainer trains on ids the model never sampled. An assistant message may carry its sampled ids in
the extension field :data:`TOKEN_IDS_FIELD` (``"token_ids"``: the completion's ids, from the first id after
the generation prompt through the end-of-turn marker; an end marker left out is written by the format).
:func:`splice_token_ids` renders the conversation, finds each such turn's text as the model produced it (after
the generation prompt that opened it, through its end marker: the ``model_mask`` of
:meth:`toolwire.Format.render_tokens`), and puts the ids there in place of the text's own tokenisation, once it
has proved that:

1. the ids decode to exactly that text (``text_mismatch``, or ``reasoning_dropped`` when the family's context
   policy leaves out reasoning the ids hold);
2. their control-token ids are exactly the format's markers in that text, at the same places
   (``control_token_mismatch``: a marker written as plain text, or plain text that became a marker);
3. the bridge holds: the ids before the turn are the ids of the prompt that opened it (with the earlier
   spliced turns), so the spliced prompt continues each sampled turn token for token (``history_rerendered``:
   the template writes the history before the turn differently from that prompt).

A refusal is a :class:`TokenSpliceError` (a :class:`toolwire.errors.InvalidRequest` naming the message and
the field) with a ``reason``; ``on_refusal="skip"`` renders that turn with its own tokenisation instead and
lists the refusal. ``bridge="report"`` splices a turn whose bridge does not hold (``Splice.bridged`` False)
rather than refusing it: the ids are still verbatim, the prompt is just not a continuation of that turn's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Sequence

from toolwire.errors import InvalidOption, InvalidRequest, ToolwireError
from toolwire.models import normalize_messages
from toolwire.prompt import RenderedPrompt
from toolwire.tokenize import encode_segments, token_pieces, vocabulary
from toolwire.training import _model_spans

TOKEN_IDS_FIELD = "token_ids"
"""The extension field of an assistant message that holds the token ids it was sampled as."""

SpliceReason = Literal["invalid_token_ids", "not_an_assistant_turn", "no_turn_text", "text_mismatch",
                       "reasoning_dropped", "control_token_mismatch", "boundary_inside_marker", "history_rerendered"]


class TokenSpliceError(InvalidRequest):
    """An assistant turn's sampled ids (:data:`TOKEN_IDS_FIELD`) cannot be spliced into the prompt; ``reason``
    says why (see :mod:`toolwire.history.faithful`), ``message_index`` which message, ``field`` is
    ``token_ids``."""

    code = "token_splice_refused"

    def __init__(self, reason: SpliceReason, detail: str, *, message_index: int):
        self.reason = reason
        super().__init__(f"{reason}: {detail}", message_index=message_index, field=TOKEN_IDS_FIELD)


@dataclass(frozen=True)
class Splice:
    """One spliced turn: message ``message_index``'s ids are ``ids[start:end]`` of the prompt's ids, in place of
    the text ``prompt.text[char_start:char_end]``. ``bridged``: the ids before ``start`` are the ids of the
    prompt that opened the turn. ``end_marker_added``: the sampled ids stopped before the turn's end marker (the
    engine left out the stop token), and the marker's id was written after them."""

    message_index: int
    start: int
    end: int
    char_start: int
    char_end: int
    bridged: bool
    end_marker_added: bool = False


@dataclass(frozen=True)
class SplicedPrompt:
    """The result of :func:`splice_token_ids`: the rendered ``prompt``, its ``ids`` with the sampled ids spliced
    in, the ``splices`` made and the turns ``refused`` (only with ``on_refusal="skip"``)."""

    prompt: RenderedPrompt
    ids: list[int]
    splices: list[Splice] = field(default_factory=list)
    refused: list[TokenSpliceError] = field(default_factory=list)


def sampled_ids(message: Any) -> list[int] | None:
    """The :data:`TOKEN_IDS_FIELD` value of a :class:`toolwire.Message` as the client sent it, or None
    (:func:`splice_token_ids` checks it is a non-empty list of non-negative integers)."""
    extra = message.__pydantic_extra__ or {}
    return extra.get(TOKEN_IDS_FIELD)


def _check_ids(ids: Any, index: int) -> list[int]:
    if not isinstance(ids, (list, tuple)) or not all(type(t) is int and t >= 0 for t in ids):
        raise TokenSpliceError("invalid_token_ids", "must be a list of non-negative integers", message_index=index)
    if not ids:
        raise TokenSpliceError("invalid_token_ids", "is empty", message_index=index)
    return list(ids)


def _clip(pieces: Sequence[tuple[str, str, Any]], a: int, b: int) -> list[tuple[str, str, Any]]:
    """The pieces of ``[a, b)`` of the text, cut where the bounds fall inside one."""
    out, pos = [], 0
    for kind, text, index in pieces:
        end = pos + len(text)
        if end > a and pos < b:
            out.append((kind, text[max(a - pos, 0):min(b, end) - pos], index))
        pos = end
        if pos >= b:
            break
    return out


def _cuts_marker(pieces: Sequence[tuple[str, str, Any]], at: int) -> bool:
    """Whether position ``at`` falls strictly inside a special piece."""
    pos = 0
    for kind, text, _index in pieces:
        end = pos + len(text)
        if pos < at < end:
            return kind == "special"
        if pos >= at:
            return False
        pos = end
    return False


def _expected_controls(pieces: Sequence[tuple[str, str, Any]], vocab: Any) -> list[tuple[int, str]]:
    """``(offset, marker)`` of every control token :func:`encode_segments` writes for these pieces."""
    out, pos = [], 0
    for kind, text, _index in pieces:
        if kind == "special":
            out.extend((pos + m.start(), m.group()) for m in vocab.find_controls(text))
        pos += len(text)
    return out


def _encode(pieces: Sequence[tuple[str, str, Any]], tokenizer: Any) -> list[int]:
    return encode_segments([p for p in pieces if p[1]], tokenizer)


def _spliced_ids(pieces: Sequence[tuple[str, str, Any]], total: int, splices: Sequence[tuple[int, int, list[int]]],
                 tokenizer: Any, upto: int | None = None) -> tuple[list[int], list[tuple[int, int]]]:
    """The ids of the text ``[0, upto)`` (default: all of it) with each ``(a, b, ids)`` of ``splices`` (sorted,
    inside the range) in place of ``[a, b)``; also each splice's ``(start, end)`` in the ids."""
    upto = total if upto is None else upto
    ids: list[int] = []
    where = []
    pos = 0
    for a, b, sampled in splices:
        ids += _encode(_clip(pieces, pos, a), tokenizer)
        where.append((len(ids), len(ids) + len(sampled)))
        ids += sampled
        pos = b
    ids += _encode(_clip(pieces, pos, upto), tokenizer)
    return ids, where


def _first_difference(a: str, b: str) -> int:
    return next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def _prove(fmt: Any, prompt: RenderedPrompt, pieces: list, i: int, a: int, b: int, ids: list[int], tokenizer: Any,
           vocab: Any, message: Any) -> tuple[list[int], bool]:
    """The ids to splice for turn ``i`` at ``[a, b)`` (with the end marker appended where the engine left it
    out) once the ids decode to the turn's text with control ids exactly at the format's markers; else raises."""
    unknown = next((t for t in ids if not vocab.known(t)), None)
    if unknown is not None:
        raise TokenSpliceError("invalid_token_ids", f"id {unknown} is not in the tokenizer's vocabulary",
                               message_index=i)
    for at in (a, b):
        if _cuts_marker(pieces, at):
            raise TokenSpliceError("boundary_inside_marker", f"the turn's text starts or ends inside a marker at "
                                   f"char {at}", message_index=i)
    expected = prompt.text[a:b]
    decoded = token_pieces(ids, tokenizer)
    text = "".join(p.text for p in decoded)
    added = False
    if text != expected:
        marker = next((s for s in getattr(fmt, "stop_tokens", ()) or () if expected.endswith(s)
                       and text == expected[:-len(s)] and s in vocab.control), None)
        if marker is not None and not _cuts_marker(pieces, b - len(marker)):
            ids = ids + [vocab.control[marker]]
            decoded = token_pieces(ids, tokenizer)
            text, added = expected, True
    if text != expected:
        at = _first_difference(text, expected)
        reasoning = message.reasoning_content
        if reasoning and reasoning in text and reasoning not in expected:
            raise TokenSpliceError("reasoning_dropped", "the ids hold the turn's reasoning, which the family's "
                                   "context policy leaves out of this render", message_index=i)
        raise TokenSpliceError("text_mismatch", f"the ids decode to {text[max(0, at - 20):at + 20]!r} where the turn "
                               f"has {expected[max(0, at - 20):at + 20]!r} (char {at} of the turn)", message_index=i)
    got, pos = [], 0
    for piece in decoded:
        if piece.special:
            got.append((pos, piece.text))
        pos += len(piece.text)
    want = _expected_controls(_clip(pieces, a, b), vocab)
    if got != want:
        bad = next((x for x in zip(got, want) if x[0] != x[1]), None)
        where = (f"the ids have {bad[0][1]!r} at char {bad[0][0]}, the format {bad[1][1]!r} at char {bad[1][0]}"
                 if bad else f"the ids have {len(got)} control tokens, the format {len(want)}")
        raise TokenSpliceError("control_token_mismatch", where + " (of the turn)", message_index=i)
    return ids, added


def splice_token_ids(fmt: Any, messages: Sequence[Any], tools: Any = None, tokenizer: Any = None, *,
                     bridge: Literal["require", "report"] = "require",
                     on_refusal: Literal["raise", "skip"] = "raise", **options: Any) -> SplicedPrompt:
    """Render ``messages`` (render ``options`` as :meth:`toolwire.Format.render` takes them) and tokenise the
    prompt with every assistant turn that carries :data:`TOKEN_IDS_FIELD` spliced in verbatim, each splice
    proven (see the module docs). ``fmt`` is a :class:`toolwire.Format`; ``tokenizer`` any tokenizer
    :mod:`toolwire.tokenize` accepts. Turns without the field are tokenised as
    :meth:`~toolwire.prompt.RenderedPrompt.token_ids` does, so a conversation without any gives exactly its
    ``token_ids``. Raises :class:`TokenSpliceError` for the first turn that cannot be spliced, unless
    ``on_refusal="skip"``."""
    if bridge not in ("require", "report"):
        raise InvalidOption(f"bridge must be 'require' or 'report', got {bridge!r}", field="bridge")
    if on_refusal not in ("raise", "skip"):
        raise InvalidOption(f"on_refusal must be 'raise' or 'skip', got {on_refusal!r}", field="on_refusal")
    if tokenizer is None:
        raise InvalidOption("splice_token_ids needs the model's tokenizer", field="tokenizer")
    msgs = normalize_messages(messages)
    prompt = fmt.render(msgs, tools, **options)
    pieces = list(prompt.pieces)
    total = len(prompt.text)
    vocab = vocabulary(tokenizer)
    carried = [(i, m) for i, m in enumerate(msgs) if sampled_ids(m) is not None]
    refused: list[TokenSpliceError] = []
    accepted: list[tuple[int, int, list[int]]] = []
    info: list[tuple[int, bool, bool]] = []  # (message index, bridged, end marker added) per accepted splice

    def refuse(error: TokenSpliceError) -> None:
        if on_refusal == "raise":
            raise error
        refused.append(error)

    spans = {}
    if carried:
        spans = {i: (a, b) for a, b, i in _model_spans(fmt, msgs, tools, prompt, dict(options))}
    opening_options = {k: v for k, v in options.items() if k != "add_generation_prompt"}
    for i, m in carried:
        try:
            if m.role != "assistant":
                raise TokenSpliceError("not_an_assistant_turn", f"only assistant turns carry sampled ids, not "
                                       f"{m.role!r}", message_index=i)
            ids = _check_ids(sampled_ids(m), i)
            if i not in spans or spans[i][0] >= spans[i][1]:
                raise TokenSpliceError("no_turn_text", "the format writes no model text for this turn",
                                       message_index=i)
            a, b = spans[i]
            ids, added = _prove(fmt, prompt, pieces, i, a, b, ids, tokenizer, vocab, m)
            try:
                opening = fmt.render(msgs[:i], tools, add_generation_prompt=True, **opening_options)
            except ToolwireError as error:  # the family refuses the shorter request: there is no such prompt
                opening, detail = None, f"the family refuses the prompt that would open message {i}: {error}"
            bridged = opening is not None and opening.text == prompt.text[:a]
            if opening is not None and not bridged:
                detail = f"the prompt that opened message {i} differs from the history before it at char " \
                         f"{_first_difference(opening.text, prompt.text[:a])}"
            if bridged:
                before, _ = _spliced_ids(pieces, total, accepted, tokenizer, upto=a)
                opened, _ = _spliced_ids(list(opening.pieces), len(opening.text), accepted, tokenizer)
                bridged = before == opened
                detail = f"the ids before message {i} are not the ids of the prompt that opened it"
            if not bridged and bridge == "require":
                raise TokenSpliceError("history_rerendered", detail, message_index=i)
        except TokenSpliceError as error:
            refuse(error)
            continue
        accepted.append((a, b, ids))
        info.append((i, bridged, added))
    if not accepted:
        return SplicedPrompt(prompt, prompt.token_ids(tokenizer), [], refused)
    ids, where = _spliced_ids(pieces, total, accepted, tokenizer)
    splices = [Splice(i, start, end, a, b, bridged, added)
               for (a, b, _s), (start, end), (i, bridged, added) in zip(accepted, where, info)]
    return SplicedPrompt(prompt, ids, splices, refused)


__all__ = ["TOKEN_IDS_FIELD", "TokenSpliceError", "Splice", "SplicedPrompt", "splice_token_ids", "sampled_ids"]
