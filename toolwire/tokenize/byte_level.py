"""A byte-level tokenizer with chosen control tokens, for working with a format's token ids when its model's
tokenizer is not at hand (tests, offline research, a format whose tokenizer is not published).

Every UTF-8 byte of ordinary text is one id (0-255); each control token is one id from 256 on, in sorted
order of the tokens, so the same set of tokens always gets the same ids. It speaks the interface
:mod:`toolwire.tokenize` reads from a tiktoken encoding (``encode_ordinary``, ``encode_single_token``,
``decode_single_token_bytes``), so ``prompt.token_ids(tok)``, ``stream(..., tokenizer=tok)`` and the history
keeper's splicing all accept it. It is not a model's tokenizer: use it for what does not depend on the real
merges (which ids are control ids, spans, splicing), never to count a real model's tokens.
"""

from __future__ import annotations

from typing import Any, Iterable


class ByteTokenizer:
    """Bytes as ids 0-255, ``control_tokens`` as ids 256... (sorted). :func:`byte_tokenizer` builds one."""

    def __init__(self, control_tokens: Iterable[str]):
        tokens = sorted(set(control_tokens))
        if any(not isinstance(t, str) or not t for t in tokens):
            raise ValueError("control_tokens must be non-empty strings")
        self._special_tokens = {text: 256 + i for i, text in enumerate(tokens)}
        self._by_id = {i: text.encode("utf-8") for text, i in self._special_tokens.items()}

    @property
    def control_tokens(self) -> dict[str, int]:
        """``{token: id}`` of the control tokens."""
        return dict(self._special_tokens)

    def encode_ordinary(self, text: str) -> list[int]:
        """The UTF-8 bytes of ``text`` as ids; control tokens it spells stay bytes."""
        return list(text.encode("utf-8"))

    def encode_single_token(self, text: str) -> int:
        """The id of one control token (``KeyError`` for any other text)."""
        return self._special_tokens[text]

    def decode_single_token_bytes(self, token_id: int) -> bytes:
        """The bytes of one id (``KeyError`` for an id outside the vocabulary)."""
        if 0 <= token_id < 256:
            return bytes([token_id])
        return self._by_id[token_id]

    def __repr__(self) -> str:
        return f"ByteTokenizer({len(self._special_tokens)} control tokens)"


def byte_tokenizer(control_tokens: Iterable[str] | Any) -> ByteTokenizer:
    """A :class:`ByteTokenizer` whose control tokens are ``control_tokens``, or, given a
    :class:`~toolwire.Format`, the format's own markers (its marker table's entries that are text)."""
    markers = getattr(control_tokens, "markers", None)
    if markers is not None and not isinstance(control_tokens, (str, bytes)):
        control_tokens = (v for v in markers.values() if isinstance(v, str) and v.strip())
    return ByteTokenizer(control_tokens)


__all__ = ["ByteTokenizer", "byte_tokenizer"]
