"""RenderedPrompt: the prompt text plus its provenance segments.

Each segment is ``(kind, text, message_index)``:

* ``special``  a control marker the format itself emits (``<|im_start|>``, ``<｜DSML｜tool_calls>``...);
* ``template`` fixed wording the template adds (role names, tool preambles, newlines);
* ``content``  text that came from the request: user, assistant, tool and tool-schema text. It stays
  ``content`` even when it spells a marker, so :meth:`RenderedPrompt.token_ids` never turns it into a
  control token.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, Callable, Iterable, Literal, NamedTuple

SegmentKind = Literal["special", "template", "content"]


class Segment(NamedTuple):
    """One provenance-tagged piece of a rendered prompt. ``message_index`` is None for prompt-level text."""

    kind: SegmentKind
    text: str
    message_index: int | None


def special_pattern(tokens: Iterable[str]) -> "re.Pattern[str]":
    """A pattern matching any of ``tokens`` (longest first), for :meth:`PromptBuilder.fixed`."""
    return re.compile("|".join(re.escape(t) for t in sorted(set(tokens), key=len, reverse=True)))


@dataclass(frozen=True)
class RenderedPrompt:
    """The result of ``Format.render``: ``text`` and the ``segments`` that concatenate to it.

    Segments are assembled from the renderer's pieces on first use, so a caller that needs only the text
    does not pay for them.
    """

    text: str
    pieces: tuple[tuple[SegmentKind, str, int | None], ...] = field(repr=False)
    opens_reasoning: bool = False
    format: str = ""
    warnings_source: Callable[[], list] | None = field(default=None, repr=False, compare=False)
    """What computes :attr:`warnings` on first read (``Format.render`` sets it: the context plan's checks)."""

    @cached_property
    def warnings(self) -> list:
        """The context plan's pre-flight warnings for this request (``toolwire.context_policy.PlanWarning``:
        unanswered or duplicated tool results, a retry after an unknown outcome, markup spelled in a result ...) and
        what the render options changed (results truncated, reordered, escaped, media moved). Computed when first
        read, so a render that never asks costs nothing more; empty for a prompt built by hand."""
        source = self.warnings_source
        return list(source()) if source is not None else []

    @cached_property
    def segments(self) -> tuple[Segment, ...]:
        """The provenance segments: adjacent pieces of the same kind and message merged (never specials)."""
        merged: list[tuple[SegmentKind, str, int | None]] = []
        last_kind = last_index = None
        for piece in self.pieces:
            kind, text, index = piece
            if kind == last_kind and index == last_index and kind != "special":
                merged[-1] = (kind, merged[-1][1] + text, index)  # runs are a few pieces long
            else:
                merged.append(piece)
                last_kind, last_index = kind, index
        return tuple(map(_segment, merged))

    def token_ids(self, tokenizer: Any) -> list[int]:
        """Token ids in which only ``special`` segments can become control tokens.

        ``tokenizer`` is a Hugging Face tokenizer (``transformers`` or ``tokenizers.Tokenizer``) or any
        object with ``encode_ordinary(text)`` and ``encode_special(marker)`` (see
        :mod:`toolwire.tokenize`). Runs of non-special segments are encoded together, as plain text, so
        where no content spells a marker the ids equal ``tokenizer(prompt.text)``.
        """
        from .tokenize import encode_segments

        # the pieces, not the segments: merging adjacent plain pieces changes no run, and specials never merge
        return encode_segments(self.pieces, tokenizer)

    def message_at(self, char: int) -> int | None:
        """The request message index of the segment holding character ``char`` of the text (None past the end, or
        for template text that belongs to no message)."""
        pos = 0
        for _kind, text, index in self.segments:
            if pos + len(text) > char:
                return index
            pos += len(text)
        return None

    def special_markers(self) -> list[str]:
        """The distinct special markers this prompt uses, in first-use order."""
        seen: dict[str, None] = {}
        for seg in self.segments:
            if seg.kind == "special":
                seen.setdefault(seg.text, None)
        return list(seen)


_segment = Segment._make
"""``Segment(kind, text, message_index)`` from a ``(kind, text, message_index)`` tuple."""


@lru_cache(maxsize=256)
def _split_fixed(text: str, message_index: int | None,
                 specials: "re.Pattern[str]") -> tuple[tuple[SegmentKind, str, int | None], ...]:
    """The pieces of :meth:`PromptBuilder.fixed`. Fixed wording is a small set of strings, so each is cut once."""
    pieces: list[tuple[SegmentKind, str, int | None]] = []
    pos = 0
    for m in specials.finditer(text):
        pieces += [("template", text[pos:m.start()], message_index), ("special", m.group(), message_index)]
        pos = m.end()
    pieces.append(("template", text[pos:], message_index))
    return tuple(piece for piece in pieces if piece[1])


class PromptBuilder:
    """Accumulates ``(kind, text, message_index)`` pieces; :meth:`build` merges adjacent pieces of the same
    kind and message (never two ``special`` ones) into segments.

    Renderers call :meth:`special`, :meth:`template` and :meth:`content` once per piece, so these only append
    (empty text is left out); all merging happens once, in :meth:`build`.
    """

    __slots__ = ("_pieces",)

    def __init__(self) -> None:
        self._pieces: list[tuple[SegmentKind, str, int | None]] = []

    def add(self, kind: SegmentKind, text: str, message_index: int | None = None) -> "PromptBuilder":
        if text:
            self._pieces.append((kind, text, message_index))
        return self

    def special(self, text: str, message_index: int | None = None) -> "PromptBuilder":
        if text:
            self._pieces.append(("special", text, message_index))
        return self

    def template(self, text: str, message_index: int | None = None) -> "PromptBuilder":
        if text:
            self._pieces.append(("template", text, message_index))
        return self

    def content(self, text: str, message_index: int | None = None) -> "PromptBuilder":
        if text:
            self._pieces.append(("content", text, message_index))
        return self

    def appender(self) -> Callable[[tuple[SegmentKind, str, int | None]], None]:
        """The builder's own ``append`` of one ``(kind, text, message_index)`` piece, for a renderer's hot loop
        (no method call per piece). Unlike :meth:`add`, it does not leave out empty text: use it only for text
        that cannot be empty (markers, fixed wording)."""
        return self._pieces.append

    def extender(self) -> Callable[[Iterable[tuple[SegmentKind, str, int | None]]], None]:
        """The builder's own ``extend`` by ``(kind, text, message_index)`` pieces, for runs of pieces a renderer
        computes once (fixed wording with its markers). As with :meth:`appender`, no piece may have empty text."""
        return self._pieces.extend

    def fixed(self, text: str, message_index: int | None, specials: "re.Pattern[str]") -> "PromptBuilder":
        """Fixed template wording in which any control-token spelling (matched by ``specials``, see
        :func:`special_pattern`) is emitted as ``special`` and the rest as ``template``."""
        self._pieces += _split_fixed(text, message_index, specials)
        return self

    def extend(self, segments: Iterable[Segment]) -> "PromptBuilder":
        for seg in segments:
            self.add(seg.kind, seg.text, seg.message_index)
        return self

    @property
    def text(self) -> str:
        return "".join([text for _, text, _ in self._pieces])

    def endswith(self, suffix: str) -> bool:
        """Whether the text so far ends with ``suffix`` (reads only the last pieces)."""
        tail = ""
        for _, text, _ in reversed(self._pieces):
            tail = text + tail
            if len(tail) >= len(suffix):
                break
        return tail.endswith(suffix)

    def build(self, *, opens_reasoning: bool = False, format: str = "",
              warnings: Callable[[], list] | None = None) -> RenderedPrompt:
        return RenderedPrompt(self.text, tuple(self._pieces), opens_reasoning, format, warnings)
