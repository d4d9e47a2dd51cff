"""The shared incremental lexer: find the earliest marker in streamed text, hold back only a prefix.

Every stream parser keeps a small pending buffer and asks a :class:`MarkerScanner` for the next
marker among the ones valid in its current state. The scanner uses the ``regex`` module's partial
matching: when the buffer ends with what could still become a marker, only that tail is held back,
so text streams out as soon as it cannot be part of a marker. Each character is scanned a bounded
number of times (once, plus at most the longest marker's length while held back), which keeps
streaming linear in the output size. Literal alternations cannot backtrack catastrophically.

With token-id input a marker counts only where the model wrote it with its control-token ids; the scan's
``literal`` callback (built by the parser) skips marker text that came from ordinary tokens.
"""

from __future__ import annotations

from typing import Callable, Iterable, NamedTuple

import regex

LiteralCheck = Callable[[str, int, str], bool]
"""``literal(text, start, marker)``: whether ``marker`` found at ``text[start]`` is only its spelling."""


class Hit(NamedTuple):
    """A scan result. ``marker`` is None when no complete marker was found: then ``start`` is the end
    of the text that is safe to emit (a held-back possible marker prefix follows it)."""

    start: int
    marker: str | None

    @property
    def end(self) -> int:
        return self.start + (len(self.marker) if self.marker else 0)


class MarkerScanner:
    """Finds the earliest of a fixed set of literal markers (longest wins at the same position)."""

    __slots__ = ("markers", "_pattern", "max_len", "_extendable")

    def __init__(self, markers: Iterable[str]):
        self.markers = tuple(sorted(set(markers), key=len, reverse=True))
        if not self.markers or any(not m for m in self.markers):
            raise ValueError("MarkerScanner needs non-empty markers")
        self.max_len = len(self.markers[0])
        self._pattern = regex.compile("|".join(regex.escape(m) for m in self.markers))
        # markers that are a proper prefix of another marker: a match at the very end may still grow
        self._extendable = frozenset(a for a in self.markers for b in self.markers if a != b and b.startswith(a))

    def scan(self, text: str, pos: int = 0, *, final: bool = False, literal: LiteralCheck | None = None) -> Hit:
        """Scan ``text[pos:]``. With ``final`` no prefix is held back (the output has ended).

        ``literal`` (token-id input, see :class:`~toolwire.parsers.base.StreamParser`) tells a marker's text
        written with ordinary tokens from the marker itself: a hit for which ``literal(text, start, marker)``
        is true is text, and the scan goes on past it."""
        m = self._pattern.search(text, pos, partial=not final)
        if m is None:
            return Hit(len(text), None)
        if m.partial:
            return Hit(m.start(), None)
        if not final and m.group() in self._extendable:
            rest = text[m.start():]
            if any(len(b) > len(rest) and b.startswith(rest) for b in self.markers):
                return Hit(m.start(), None)
        if literal is not None and literal(text, m.start(), m.group()):
            return self._past_literal(text, Hit(m.start(), m.group()), final, literal)
        return Hit(m.start(), m.group())

    def _past_literal(self, text: str, hit: Hit, final: bool, literal: LiteralCheck) -> Hit:
        """The first genuine hit from a literal one on: a shorter marker at the same place, or a later hit."""
        while True:
            for shorter in self.markers:  # longest first
                if len(shorter) < len(hit.marker) and text.startswith(shorter, hit.start) \
                        and not literal(text, hit.start, shorter):
                    return Hit(hit.start, shorter)
            hit = self.scan(text, hit.start + 1, final=final)
            if hit.marker is None or not literal(text, hit.start, hit.marker):
                return hit


def held_back_prefix(text: str, marker: str) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of ``marker`` (0 if none)."""
    for k in range(min(len(text), len(marker) - 1), 0, -1):
        if marker.startswith(text[-k:]):
            return k
    return 0
