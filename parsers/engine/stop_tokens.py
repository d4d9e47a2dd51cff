"""End-of-turn tokens left at the very end of an output (``<|im_end|>``, ``<|eot_id|>``, ``</s>`` ...).

A serving stack usually strips the stop token; when one is left in the text it is not content. A parser that
mixes in :class:`TrailingStopToken` holds back the end of its buffer while it may still be one of its family's
stop tokens (``family.stop_tokens``, the declaration's), and strips a complete one found at the very end of the output, with a
``stop_token_in_output`` diagnostic (``raw`` = the token). A stop token followed by more text is ordinary text
for the family's own rules. The check costs one ``rfind`` per delta.
"""

from __future__ import annotations

from typing import ClassVar


def stop_token_tail(text: str, tokens: tuple[str, ...]) -> int:
    """Length of the longest end of ``text`` that is a prefix of (or equal to) one of ``tokens``, else 0.
    Each token must hold its first character only once (true of every family's stop token)."""
    if not tokens or not text:
        return 0
    longest = max(map(len, tokens))
    low = max(0, len(text) - longest)
    best = 0
    for first in {t[0] for t in tokens}:
        i = text.rfind(first, low)
        if i >= 0 and len(text) - i > best:
            tail = text[i:]
            if any(t.startswith(tail) for t in tokens):
                best = len(tail)
    return best


class TrailingStopToken:
    """Mixin for a :class:`~toolwire.parsers.engine.stream.StreamParser`: call :meth:`_hold_stop_token` first in
    ``_advance`` and add what it returns back to ``self._buf`` after the step."""

    stop_tokens: ClassVar[tuple[str, ...]] = ()
    _stop_first: ClassVar[str] = ""   # the tokens' shared first character ("" when they differ)
    _stop_len: ClassVar[int] = 0

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        family = cls.__dict__.get("family")
        if family is not None and not any("stop_tokens" in k.__dict__ and k.__dict__.get("family") is None
                                          and k is not TrailingStopToken for k in cls.__mro__):
            cls.stop_tokens = family.stop_tokens  # the declaration's, unless an engine class says which it strips
        firsts = {t[0] for t in cls.stop_tokens}
        cls._stop_first = firsts.pop() if len(firsts) == 1 else ""
        cls._stop_len = max(map(len, cls.stop_tokens), default=0)

    def _hold_stop_token(self, final: bool) -> str:
        """Take a possible stop token off the end of the buffer: returned (to put back) while more may
        follow; at the end of the output a complete one is stripped with its diagnostic. With token-id input
        the held length is told to the literal check (:attr:`~toolwire.parsers.engine.token_input.TokenInput.held`)."""
        tokens = self._tokens
        if tokens is not None:
            tokens.held = 0
        buf = self._buf
        first = self._stop_first
        if first:  # the usual case: one rfind per delta
            i = buf.rfind(first, max(0, len(buf) - self._stop_len))
            if i < 0:
                return ""
            tail = buf[i:]
            if not any(t.startswith(tail) for t in self.stop_tokens):
                return ""
            n = len(tail)
        else:
            n = stop_token_tail(buf, self.stop_tokens)
            if not n:
                return ""
            tail = buf[-n:]
        if not final:
            self._buf = buf[:-n]
            if tokens is not None:
                tokens.held = n
            return tail
        if tail in self.stop_tokens and self._marker_at(buf, len(buf) - n, tail):
            self._buf = buf[:-n]
            self._diag("stop_token_in_output", f"the end-of-turn token {tail!r} was left at the end of the "
                       "output; it is not content", raw=tail)
        return ""
