"""A stream's token-id input (:class:`TokenInput`): the tokenizer, its decoder once ids arrive, and where control
ids wrote text, so a marker holding a control-token spelling counts only where control ids wrote it."""

from __future__ import annotations

from typing import Any

from .token_spans import SpanTracker


class TokenInput:
    """A stream's token-id input: the tokenizer, its :class:`~toolwire.tokenize.TokenDecoder` once ids arrive,
    and where control ids wrote text. Called as a scan's ``literal`` check (:meth:`MarkerScanner.scan`)."""

    __slots__ = ("tokenizer", "decoder", "fed", "held", "special", "spans", "trailing")

    def __init__(self, tokenizer: Any, spans: bool = True):
        self.tokenizer = tokenizer
        self.decoder: Any = None
        # which ids each event came from (a SpanTracker once ids arrive); False: the stream was told not to track
        self.spans: Any = None if spans else False
        self.trailing: tuple[int, int] | None = None  # ids read after the last event (SpanTracker.finish)
        self.fed = 0                          # characters decoded so far
        self.held = 0                         # of those, how many a stop-token hold took off the buffer's end
        self.special: dict[int, int] = {}     # start -> length of each piece a control id wrote

    def start(self) -> None:
        """The stream starts taking ids."""
        from toolwire.tokenize import TokenDecoder

        self.decoder = TokenDecoder(self.tokenizer)
        if self.spans is None:
            self.spans = SpanTracker()

    def text(self, pieces: list) -> str:
        """The text of decoded :class:`~toolwire.tokenize.TokenPiece` items, recording control pieces' spans."""
        fed, special = self.fed, self.special
        for text, is_special in pieces:
            if is_special:
                special[fed] = len(text)
            fed += len(text)
        self.fed = fed
        return "".join(p.text for p in pieces)

    def __call__(self, text: str, start: int, marker: str) -> bool:
        """Whether ``marker`` at ``text[start]`` holds a control-token spelling that no control id wrote there.
        ``text`` must end where the input decoded so far ends, less the :attr:`held` characters of a possible
        stop token taken off it (:class:`~toolwire.parsers.engine.stop_tokens.TrailingStopToken`), as every parser's
        buffer does."""
        if self.decoder is None:
            return False
        at = self.fed - self.held - len(text) + start
        special = self.special
        return any(special.get(at + offset) != length for offset, length in self.decoder.vocab.control_spans(marker))


__all__ = ["TokenInput"]
