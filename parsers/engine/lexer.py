"""The shared incremental lexer: find the earliest marker in streamed text, hold back only a prefix.

Every stream parser keeps a small pending buffer and asks a :class:`MarkerScanner` for the next
marker among the ones valid in its current state. The scanner finds the leftmost complete marker, or a tail
of the buffer that could still become one, with one search of a trie-shaped pattern (the markers' shared
prefixes factored out, so a character that starts no marker is skipped by ``re``'s first-character scan);
a tail is held back (the same answer as the ``regex`` module's partial matching, without its per-search
cost), so text streams out as soon as it cannot be part of a marker. A delta with neither, the usual case,
costs that one search; hot paths ask :attr:`MarkerScanner.find` first and skip building a :class:`Hit`.
Each character is scanned a bounded number of times (once, plus at most the longest marker's length
while held back), which keeps streaming linear in the output size. Literal alternations cannot backtrack
catastrophically.

With token-id input a marker counts only where the model wrote it with its control-token ids; the scan's
``literal`` callback (built by the parser) skips marker text that came from ordinary tokens.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, NamedTuple

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


_hit: Callable[[tuple[int, str | None]], Hit] = Hit._make
"""``Hit`` from a ``(start, marker)`` tuple."""


class MarkerScanner:
    """Finds the earliest of a fixed set of literal markers (longest wins at the same position).

    ``find(text, pos)`` (a compiled pattern's ``search``) is None exactly when ``text[pos:]`` holds no marker
    and does not end with a possible marker prefix: then all of it is text, and :meth:`scan` would return
    ``Hit(len(text), None)``, so a hot path can take it without building a :class:`Hit`. Otherwise it matches
    the leftmost marker or held-back tail (ask :meth:`scan` for the answer)."""

    __slots__ = ("markers", "_pattern", "_search", "find", "max_len", "_marker_set", "_extendable", "_nested")

    def __init__(self, markers: Iterable[str]):
        self.markers = tuple(sorted(set(markers), key=len, reverse=True))
        if not self.markers or any(not m for m in self.markers):
            raise ValueError("MarkerScanner needs non-empty markers")
        self.max_len = len(self.markers[0])
        self._pattern = re.compile(_trie_pattern(self.markers))
        self._search = self._pattern.search
        self.find: Callable[[str, int], re.Match | None] = re.compile(
            _trie_pattern(self.markers, or_tail=True)).search  # see the class docstring
        self._marker_set = frozenset(self.markers)
        # markers that are a proper prefix of another marker: a match at the very end may still grow
        self._extendable = frozenset(a for a in self.markers for b in self.markers if a != b and b.startswith(a))
        # whether a marker can lie inside a held-back tail (a proper prefix of another marker)
        self._nested = any(a in b[:-1] for a in self.markers for b in self.markers)

    def scan(self, text: str, pos: int = 0, *, final: bool = False, literal: LiteralCheck | None = None) -> Hit:
        """Scan ``text[pos:]``. With ``final`` no prefix is held back (the output has ended).

        ``literal`` (token-id input, see :class:`~toolwire.parsers.engine.stream.StreamParser`) tells a marker's text
        written with ordinary tokens from the marker itself: a hit for which ``literal(text, start, marker)``
        is true is text, and the scan goes on past it."""
        m = self.find(text, pos)  # one search: the leftmost marker or held-back tail (usually neither)
        if m is None:
            return _hit((len(text), None))
        marker = m.group()
        start = m.start()
        if marker not in self._marker_set:
            # a tail that could still become a marker: no marker starts before it, but one may start inside it
            # (a shorter marker, or one that starts later), and that one wins; else the tail is held back
            m = self._search(text, start) if self._nested else None
            if m is None:
                return _hit((len(text) if final else start, None))
            marker = m.group()
            start = m.start()
        if not final and marker in self._extendable:
            rest = text[start:]
            if any(len(b) > len(rest) and b.startswith(rest) for b in self.markers):
                return _hit((start, None))
        if literal is not None and literal(text, start, marker):
            return self._past_literal(text, _hit((start, marker)), final, literal)
        return _hit((start, marker))

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


def _trie_pattern(markers: Iterable[str], *, or_tail: bool = False) -> str:
    """A pattern matching any of ``markers``, written as a trie: the longest marker wins at a position (a
    branch that ends a marker is tried after the branches that continue it). With ``or_tail`` it also matches
    a proper prefix of a marker that ends the text (``\\Z`` wherever a marker continues, tried last)."""
    trie: dict = {}
    for marker in markers:
        node = trie
        for char in marker:
            node = node.setdefault(char, {})
        node[""] = {}

    def branch(node: dict, root: bool = False) -> str:
        alternatives = [re.escape(char) + branch(child) for char, child in node.items() if char]
        if "" in node:
            alternatives.append("")
        elif or_tail and not root:
            alternatives.append(r"\Z")
        if len(alternatives) == 1:
            return alternatives[0]
        return "(?:" + "|".join(alternatives) + ")"

    return branch(trie, root=True)


def held_back_prefix(text: str, marker: str) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of ``marker`` (0 if none)."""
    for k in range(min(len(text), len(marker) - 1), 0, -1):
        if marker.startswith(text[-k:]):
            return k
    return 0
