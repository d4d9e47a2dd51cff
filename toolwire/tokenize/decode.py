"""The token decoder: token ids -> :class:`TokenPiece` items (text, and whether it came from a control id)."""

from __future__ import annotations

import codecs
from typing import Any, Iterable, NamedTuple, Sequence

from .vocabularies import vocabulary


_INT = {int}


class TokenPiece(NamedTuple):
    """Decoded text and whether it came from a control-token id (``special``) or from ordinary tokens."""

    text: str
    special: bool


class TokenDecoder:
    """Incremental ids -> :class:`TokenPiece` decoding for stream parsers fed token ids.

    ``feed(ids)`` returns the pieces those ids complete: a control-token id is one ``special`` piece holding
    its marker text; ordinary ids become ``special=False`` text, with an incomplete UTF-8 sequence held
    back until its last byte arrives. ``flush()`` releases what is held back at the end of output.
    A parser recognises a marker only in ``special`` pieces; marker text inside ordinary pieces is text.

    With a byte-level vocabulary (:attr:`Vocabulary.token_bytes` or :attr:`Vocabulary.plain_bytes`) the text
    of each ordinary id whose bytes are whole UTF-8 characters is remembered on the vocabulary (at most one
    string per id of the vocabulary, shared by every stream of that tokenizer): while nothing is held back,
    such an id costs one dict look-up, and :meth:`plain_text` gives a parser the text of a run of them.
    """

    def __init__(self, tokenizer: Any):
        self.vocab = vocabulary(tokenizer)
        self._utf8 = codecs.getincrementaldecoder("utf-8")("replace") if self.vocab.token_bytes else None
        self._ids: list[int] = []   # left context (already emitted) + ids not yet emitted
        self._read = 0               # ids[:read] are the emitted context
        self._pending: list[bytes] = []  # (plain_bytes) bytes of ids not yet emitted: an incomplete character
        self._id_bytes = self.vocab.token_bytes or self.vocab.plain_bytes  # None: a text-decoding vocabulary
        self._whole = self.vocab.whole_texts if self._id_bytes is not None else None
        self._clean = True  # no byte of an incomplete character is held back

    def plain_text(self, ids: Sequence[int]) -> str | None:
        """The text of ``ids`` when they are one ordinary id (a list or tuple of one ``int``) already seen to
        decode to whole characters by itself and nothing is held back: what :meth:`feed` would return as one
        text piece, without changing the decoder. None otherwise (several ids: :meth:`plain_texts`)."""
        whole = self._whole
        if whole is None or not self._clean or (type(ids) is not list and type(ids) is not tuple) or len(ids) != 1:
            return None
        tid = ids[0]
        return whole.get(tid) if type(tid) is int else None

    def control_text(self, ids: Sequence[int]) -> str | None:
        """The marker of ``ids`` when they are one control id (an ``int``) writing text and nothing is held back:
        what :meth:`feed` would return as one ``special`` piece, without changing the decoder. None otherwise."""
        if self._whole is None or not self._clean or (type(ids) is not list and type(ids) is not tuple) \
                or len(ids) != 1 or type(ids[0]) is not int:
            return None
        return self.vocab.control_ids.get(ids[0]) or None

    def plain_texts(self, ids: Sequence[int]) -> list[str] | None:
        """The text of each of ``ids`` (a list or tuple of several ``int``) when each is an ordinary id already
        seen to decode to whole characters by itself and nothing is held back: :meth:`feed` would return their
        text as one piece. None otherwise."""
        if (type(ids) is not list and type(ids) is not tuple) or len(ids) < 2:  # one id: plain_text
            return None
        texts = self.remembered_texts(ids)
        return texts if texts is not None and None not in texts else None

    def remembered_texts(self, ids: Sequence[int]) -> list[str | None] | None:
        """For ``ids`` (a list or tuple of ``int``) while nothing is held back: each id's remembered whole text,
        None for an id without one (a control id, one not seen yet). None when they cannot be read so (a byte
        is held back, a text-decoding vocabulary, another sequence or element type)."""
        whole = self._whole
        if whole is None or not self._clean or (type(ids) is not list and type(ids) is not tuple):
            return None
        texts = list(map(whole.get, ids))
        return texts if set(map(type, ids)) == _INT else None

    def holds_back(self) -> bool:
        """Whether part of a character is held back (bytes of ids whose text a later id completes)."""
        return not self._clean if self._whole is not None else self._read < len(self._ids)

    def _whole_text(self, tid: int, data: bytes) -> str | None:
        """The text of an ordinary id's ``data`` when it is whole UTF-8 characters (remembered for the id),
        else None. A text ending with U+FFFD is left to :meth:`_decode_held` (the bytes path holds it back)."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return None
        if text.endswith("\ufffd"):
            return None
        if text and self.vocab.known(tid):
            self._whole[tid] = text
        return text

    def feed(self, ids: Iterable[int]) -> list[TokenPiece]:
        if self._whole is not None:
            return self._feed_byte_level(ids)
        out: list[TokenPiece] = []
        for tid in ids:
            tid = int(tid)
            marker = self.vocab.control_ids.get(tid)
            if marker is not None:
                self._release(out)
                _append(out, TokenPiece(marker, True))
            else:
                self._ids.append(tid)
                self._step(out)
        return [p for p in out if p.text]

    def _feed_byte_level(self, ids: Iterable[int]) -> list[TokenPiece]:
        """:meth:`feed` for a byte-level vocabulary: a remembered id is its text; another ordinary id's bytes
        go through :meth:`_decode_held`; a control id first releases what is held back."""
        out: list[TokenPiece] = []
        run: list[str] = []   # text of the current stretch of ordinary ids
        whole = self._whole
        control = self.vocab.control_ids
        id_bytes = self._id_bytes
        clean = self._clean
        for tid in ids:
            tid = int(tid)
            if clean:
                text = whole.get(tid)
                if text is not None:
                    run.append(text)
                    continue
            marker = control.get(tid)
            if marker is not None:
                if not clean:
                    run.append(self._release_held())
                    clean = True
                if run:
                    _add_text(out, run)
                    run = []
                if marker:
                    out.append(TokenPiece(marker, True))
                continue
            data = id_bytes(tid)
            text = self._whole_text(tid, data) if clean else None
            if text is None:
                text, clean = self._decode_held(data)
            run.append(text)
        self._clean = clean
        if run:
            _add_text(out, run)
        return out

    def _decode_held(self, data: bytes) -> tuple[str, bool]:
        """An ordinary id's bytes after what is held back: the text they complete, and whether nothing is held
        back now. With :attr:`Vocabulary.token_bytes` an incremental UTF-8 decoder (invalid bytes replaced);
        with :attr:`Vocabulary.plain_bytes` the held bytes and these decoded together, held back while the text
        ends with U+FFFD (an incomplete character), as decoding the ids together would."""
        if self._utf8 is not None:
            text = self._utf8.decode(data)
            return text, not self._utf8.getstate()[0]
        pending = self._pending
        pending.append(data)
        text = (pending[0] if len(pending) == 1 else b"".join(pending)).decode("utf-8", "replace")
        if text.endswith("\ufffd"):
            return "", False  # wait for the character's next byte
        pending.clear()
        return text, True

    def _release_held(self) -> str:
        """The text of the bytes held back (an incomplete character, replaced), which are then dropped."""
        if self._utf8 is not None:
            text = self._utf8.decode(b"", final=True)
            self._utf8.reset()
            return text
        text = b"".join(self._pending).decode("utf-8", "replace")
        self._pending.clear()
        return text

    def flush(self) -> list[TokenPiece]:
        if self._whole is not None:
            text = "" if self._clean else self._release_held()
            self._clean = True
            return [TokenPiece(text, False)] if text else []
        out: list[TokenPiece] = []
        self._release(out)
        return [p for p in out if p.text]

    def _step(self, out: list[TokenPiece]) -> None:
        # decode the new ids together with the previously emitted chunk as left context (tokenizers that
        # decode text, like SentencePiece, need it for spaces); only the context and new ids are decoded
        decode = self.vocab.decode_plain
        before = decode(self._ids[:self._read]) if self._read else ""
        after = decode(self._ids)
        if after.endswith("\ufffd"):
            return  # an incomplete character: wait for its next byte
        _append(out, TokenPiece(after[len(before):] if after.startswith(before) else after, False))
        del self._ids[:self._read]
        self._read = len(self._ids)

    def _release(self, out: list[TokenPiece]) -> None:
        if self._read < len(self._ids):
            decode = self.vocab.decode_plain
            before = decode(self._ids[:self._read]) if self._read else ""
            _append(out, TokenPiece(decode(self._ids)[len(before):], False))
        self._ids.clear()
        self._read = 0


def _add_text(out: list[TokenPiece], run: list[str]) -> None:
    """The run's text as one ordinary piece, unless it is empty."""
    text = run[0] if len(run) == 1 else "".join(run)
    if text:
        out.append(TokenPiece(text, False))


def _append(out: list[TokenPiece], piece: TokenPiece) -> None:
    if out and out[-1].special is False and piece.special is False:
        out[-1] = TokenPiece(out[-1].text + piece.text, False)
    else:
        out.append(piece)


def token_pieces(ids: Iterable[int], tokenizer: Any) -> list[TokenPiece]:
    """All of ``ids`` as pieces (one-shot :class:`TokenDecoder`)."""
    decoder = TokenDecoder(tokenizer)
    pieces = decoder.feed(ids)
    for piece in decoder.flush():
        _append(pieces, piece)
    return pieces
