"""The shared incremental lexer: find the earliest marker in streamed text, hold back only a prefix.

Every stream parser keeps a small pending buffer and asks a :class:`MarkerScanner` for the next
marker among the ones valid in its current state. The scanner uses the ``regex`` module's partial
matching: when the buffer ends with what could still become a marker, only that tail is held back,
so text streams out as soon as it cannot be part of a marker. Each character is scanned a bounded
number of times (once, plus at most the longest marker's length while held back), which keeps
streaming linear in the output size. Literal alternations cannot backtrack catastrophically.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

import regex


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

    def scan(self, text: str, pos: int = 0, *, final: bool = False) -> Hit:
        """Scan ``text[pos:]``. With ``final`` no prefix is held back (the output has ended)."""
        m = self._pattern.search(text, pos, partial=not final)
        if m is None:
            return Hit(len(text), None)
        if m.partial:
            return Hit(m.start(), None)
        if not final and m.group() in self._extendable:
            rest = text[m.start():]
            if any(len(b) > len(rest) and b.startswith(rest) for b in self.markers):
                return Hit(m.start(), None)
        return Hit(m.start(), m.group())


def held_back_prefix(text: str, marker: str) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of ``marker`` (0 if none)."""
    for k in range(min(len(text), len(marker) - 1), 0, -1):
        if marker.startswith(text[-k:]):
            return k
    return 0
