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
from typing import Any, Iterable, Literal, NamedTuple

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
    """The result of ``Format.render``: ``text`` and the ``segments`` that concatenate to it."""

    text: str
    segments: tuple[Segment, ...]
    opens_reasoning: bool = False
    format: str = ""

    def token_ids(self, tokenizer: Any) -> list[int]:
        """Token ids in which only ``special`` segments can become control tokens.

        ``tokenizer`` is a Hugging Face tokenizer (``transformers`` or ``tokenizers.Tokenizer``) or any
        object with ``encode_ordinary(text)`` and ``encode_special(marker)`` (see
        :mod:`toolwire.tokenize`). Runs of non-special segments are encoded together, as plain text, so
        where no content spells a marker the ids equal ``tokenizer(prompt.text)``.
        """
        from .tokenize import encode_segments

        return encode_segments(self.segments, tokenizer)

    def special_markers(self) -> list[str]:
        """The distinct special markers this prompt uses, in first-use order."""
        seen: dict[str, None] = {}
        for seg in self.segments:
            if seg.kind == "special":
                seen.setdefault(seg.text, None)
        return list(seen)


@dataclass
class PromptBuilder:
    """Accumulates segments; adjacent pieces of the same kind and message are merged."""

    _segments: list[list[Any]] = field(default_factory=list)

    def add(self, kind: SegmentKind, text: str, message_index: int | None = None) -> "PromptBuilder":
        if not text:
            return self
        last = self._segments[-1] if self._segments else None
        if last is not None and kind != "special" and last[0] == kind and last[2] == message_index:
            last[1].append(text)
        else:
            self._segments.append([kind, [text], message_index])
        return self

    def special(self, text: str, message_index: int | None = None) -> "PromptBuilder":
        return self.add("special", text, message_index)

    def template(self, text: str, message_index: int | None = None) -> "PromptBuilder":
        return self.add("template", text, message_index)

    def content(self, text: str, message_index: int | None = None) -> "PromptBuilder":
        return self.add("content", text, message_index)

    def fixed(self, text: str, message_index: int | None, specials: "re.Pattern[str]") -> "PromptBuilder":
        """Fixed template wording in which any control-token spelling (matched by ``specials``, see
        :func:`special_pattern`) is emitted as ``special`` and the rest as ``template``."""
        pos = 0
        for m in specials.finditer(text):
            self.template(text[pos:m.start()], message_index).special(m.group(), message_index)
            pos = m.end()
        return self.template(text[pos:], message_index)

    def extend(self, segments: Iterable[Segment]) -> "PromptBuilder":
        for seg in segments:
            self.add(seg.kind, seg.text, seg.message_index)
        return self

    @property
    def text(self) -> str:
        return "".join("".join(s[1]) for s in self._segments)

    def endswith(self, suffix: str) -> bool:
        return self.text.endswith(suffix)

    def build(self, *, opens_reasoning: bool = False, format: str = "") -> RenderedPrompt:
        segments = tuple(Segment(k, "".join(parts), i) for k, parts, i in self._segments)
        return RenderedPrompt("".join(s.text for s in segments), segments, opens_reasoning, format)
