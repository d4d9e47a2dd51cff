"""Vocabularies: one adapter per tokenizer kind, over what toolwire needs from a tokenizer.

:func:`vocabulary` gives the :class:`Vocabulary` of a tokenizer (cached per tokenizer object): its control
tokens (text -> id, and the regex that finds them in text), plain-text encoding that never yields a control
id, and the bytes or text of ordinary ids. Adapters: ``tokenizers.Tokenizer`` (and the ``transformers``
tokenizers it backs), ``transformers`` tokenizers without that backend, ``tiktoken.Encoding`` (or anything with
``encode_ordinary`` and ``encode_single_token``), and mistral-common tokenizers. The fast Python path of the
``tokenizers`` adapter is :mod:`toolwire.tokenize.pretokenize`.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any, Callable, Iterable, Sequence

from ..errors import ToolwireError
from .pretokenize import BYTE_OF_CHAR, PythonPipeline


class UnsupportedTokenizer(ToolwireError, TypeError):
    """The object is none of the accepted tokenizer kinds."""

    code = "unsupported_tokenizer"


class Vocabulary:
    """What toolwire needs from a tokenizer. Subclasses fill ``control`` (text -> id) and implement
    :meth:`encode_plain` plus one of :meth:`token_bytes` / :meth:`decode_plain`."""

    kind = "tokenizer"

    def __init__(self, control: dict[str, int]):
        self.control = control
        self.control_ids = {i: t for t, i in control.items()}
        ordered = sorted(control, key=len, reverse=True)
        self.control_pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        self._spans: dict[str, tuple[tuple[int, int], ...]] = {}
        self._runs: dict[str, tuple[int, ...]] = {}  # encode_run's: run text -> its ids
        self._run_chars = 0  # characters of the texts in _runs
        self.whole_texts: dict[int, str] = {}  # TokenDecoder's: ordinary id -> its text, when whole characters

    def encode_plain(self, text: str) -> list[int]:
        """``text`` as ordinary tokens: no control token can come out of it."""
        raise NotImplementedError

    RUN_CACHE_CHARS = 1 << 20
    """How many characters of run texts :meth:`encode_run` remembers (all are forgotten when one more would pass
    this; a longer run is not remembered)."""

    def encode_run(self, text: str) -> tuple[int, ...]:
        """:meth:`encode_plain` of ``text``, remembered per text. :func:`~toolwire.tokenize.encode_segments`
        encodes a prompt as runs of plain text between control tokens, and runs repeat: the role line after each
        ``<|im_start|>``, the newline after each end marker, and every run of the history when a
        conversation is rendered again with one more turn. The ids of a run depend on its text alone (each
        run is encoded on its own), so a remembered run has the ids encoding it again would give."""
        ids = self._runs.get(text)
        if ids is None:
            ids = tuple(self.encode_plain(text)) if text else ()
            size = len(text)
            if size <= self.RUN_CACHE_CHARS:
                if self._run_chars + size > self.RUN_CACHE_CHARS:
                    self._runs.clear()
                    self._run_chars = 0
                self._runs[text] = ids
                self._run_chars += size
        return ids

    def encode(self, text: str) -> list[int]:
        """``text`` with every control token recognised: what the tokenizer itself does with a string."""
        ids: list[int] = []
        pos = 0
        for m in self.find_controls(text):
            if m.start() > pos:
                ids.extend(self.encode_plain(text[pos:m.start()]))
            ids.append(self.control[m.group()])
            pos = m.end()
        if pos < len(text):
            ids.extend(self.encode_plain(text[pos:]))
        return ids

    def find_controls(self, text: str) -> Iterable[re.Match]:
        """Control-token occurrences in ``text``, leftmost, longest first."""
        return self.control_pattern.finditer(text) if self.control_pattern is not None else ()

    def control_spans(self, marker: str) -> tuple[tuple[int, int], ...]:
        """``(offset, length)`` of each control-token spelling inside ``marker`` (cached: parsers ask this of
        their few marker texts). Empty when the marker holds none: then ids cannot tell it from text."""
        spans = self._spans.get(marker)
        if spans is None:
            spans = self._spans[marker] = tuple((m.start(), len(m.group())) for m in self.find_controls(marker))
        return spans

    def known(self, tid: int) -> bool:
        """Whether ``tid`` is an id of this vocabulary (a control id, or an ordinary id that decodes)."""
        if tid in self.control_ids:
            return True
        if self.token_bytes is None:
            return tid >= 0
        try:
            self.token_bytes(tid)
        except (KeyError, ValueError, TypeError, OverflowError, IndexError):
            return False
        return True

    token_bytes: Callable[[int], bytes] | None = None
    """The exact bytes of an ordinary token, where the tokenizer exposes them (byte-level vocabularies)."""

    plain_bytes: Callable[[int], bytes] | None = None
    """The bytes of an ordinary token where :meth:`decode_plain` is exactly the UTF-8 decoding (invalid bytes
    replaced) of its ids' bytes joined (a ``ByteLevel`` decoder): :class:`~toolwire.tokenize.TokenDecoder` then
    decodes each id once, in Python, with the same result as decoding the ids through the tokenizer."""

    def decode_plain(self, ids: Sequence[int]) -> str:
        """Text of a run of ordinary ids (used where :attr:`token_bytes` is not available)."""
        raise NotImplementedError


def _whitespace_only(text: str) -> bool:
    return text.isspace()


class _TokenizersVocab(Vocabulary):
    """``tokenizers.Tokenizer`` (also the backend of ``transformers`` fast tokenizers)."""

    kind = "tokenizers.Tokenizer"

    def __init__(self, tok: Any, reference: Callable[[str], list[int]] | None = None):
        added = {i: a.content for i, a in tok.get_added_tokens_decoder().items()}
        # whitespace-only added tokens (Gemma's "\n\n" runs) are ordinary text the template also writes
        super().__init__({t: i for i, t in added.items() if not _whitespace_only(t)})
        self._tok = tok
        self._plain = _plain_tokenizer(tok)
        self._python = PythonPipeline.build(tok, self._plain)
        ordinary = sorted((t for t in added.values() if _whitespace_only(t)), key=len, reverse=True)
        self._ordinary_added = {t: i for i, t in added.items() if _whitespace_only(t)}
        self._ordinary_re = re.compile("|".join(map(re.escape, ordinary))) if ordinary else None
        self._reference = reference
        if type(tok.decoder).__name__ == "ByteLevel":
            self._id_bytes: dict[int, bytes] = {}
            self.plain_bytes = self._byte_level_bytes

    def _byte_level_bytes(self, tid: int) -> bytes:
        """What the ``ByteLevel`` decoder makes of one token: its characters mapped back to bytes, or (a token
        with a character outside the byte alphabet, like an added ``"\\n\\n"``) its text's own UTF-8."""
        known = self._id_bytes.get(tid)
        if known is None:
            token = self._tok.id_to_token(tid)
            if token is None:
                known = b""
            else:
                try:
                    known = bytes(BYTE_OF_CHAR[c] for c in token)
                except KeyError:
                    known = token.encode("utf-8")
            self._id_bytes[tid] = known
        return known

    def _model_encode(self, text: str) -> list[int]:
        if not text:
            return []
        if self._python is not None:
            ids = self._python.encode(text)
            if ids is not None:
                return ids
        return self._plain.encode(text, add_special_tokens=False).ids

    def encode_plain(self, text: str) -> list[int]:
        if self._ordinary_re is None:
            return self._model_encode(text)
        ids: list[int] = []
        pos = 0
        for m in self._ordinary_re.finditer(text):
            ids.extend(self._model_encode(text[pos:m.start()]))
            ids.append(self._ordinary_added[m.group()])
            pos = m.end()
        ids.extend(self._model_encode(text[pos:]))
        return ids

    def encode(self, text: str) -> list[int]:
        if self._reference is not None:
            return self._reference(text)
        return self._tok.encode(text, add_special_tokens=False).ids

    def decode_plain(self, ids: Sequence[int]) -> str:
        return self._tok.decode(list(ids), skip_special_tokens=False)

    def known(self, tid: int) -> bool:
        try:
            return tid >= 0 and self._tok.id_to_token(tid) is not None
        except (OverflowError, TypeError, ValueError):
            return False


def _plain_tokenizer(tok: Any) -> Any:
    """A ``tokenizers.Tokenizer`` sharing ``tok``'s model, normalizer and pre-tokenizer but with no added
    tokens (and no post-processor, truncation or padding): its ``encode`` is the tokenizer's own pipeline
    (normalize, pre-tokenize, model) in one native call, and no text can come out of it as a control id.
    The parts are shared, not copied, so this costs no memory per tokenizer."""
    plain = type(tok)(tok.model)
    if tok.normalizer is not None:
        plain.normalizer = tok.normalizer
    if tok.pre_tokenizer is not None:
        plain.pre_tokenizer = tok.pre_tokenizer
    return plain


class _TransformersSlowVocab(Vocabulary):
    """A ``transformers`` tokenizer without a ``tokenizers`` backend."""

    kind = "transformers tokenizer"

    def __init__(self, tok: Any):
        super().__init__({t: i for t, i in tok.added_tokens_encoder.items() if not _whitespace_only(t)})
        self._tok = tok

    def encode_plain(self, text: str) -> list[int]:
        plain = getattr(self._tok, "_encode_without_added_tokens", None)
        if plain is not None:
            return plain(text)
        return self._tok.encode(text, add_special_tokens=False, split_special_tokens=True)

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False)

    def decode_plain(self, ids: Sequence[int]) -> str:
        return self._tok.decode(list(ids), skip_special_tokens=False, clean_up_tokenization_spaces=False)

    def known(self, tid: int) -> bool:
        return 0 <= tid < len(self._tok)


class _TiktokenVocab(Vocabulary):
    """``tiktoken.Encoding`` or anything with ``encode_ordinary`` and ``encode_single_token``."""

    kind = "tiktoken encoding"

    def __init__(self, enc: Any):
        specials = getattr(enc, "_special_tokens", None)
        if not isinstance(specials, dict):
            single = getattr(enc, "encode_single_token", None) or getattr(enc, "encode_special")
            specials = {t: single(t) for t in getattr(enc, "special_tokens_set", ())}
        super().__init__(dict(specials))
        self._enc = enc
        if hasattr(enc, "decode_single_token_bytes"):
            self.token_bytes = enc.decode_single_token_bytes

    def encode_plain(self, text: str) -> list[int]:
        return list(self._enc.encode_ordinary(text)) if text else []

    def decode_plain(self, ids: Sequence[int]) -> str:
        return self._enc.decode(list(ids))


SPACE_MARK = "\u2581"
"""SentencePiece's mark for a space (U+2581), which DeepSeek's markers also spell (``<｜tool▁sep｜>``)."""


class _MistralVocab(Vocabulary):
    """mistral-common ``Tekkenizer`` / ``SentencePieceTokenizer`` (reached through ``MistralTokenizer``)."""

    kind = "mistral-common tokenizer"

    def __init__(self, raw: Any):
        super().__init__({raw.id_to_piece(i): i for i in sorted(raw.special_ids)})
        self._raw = raw
        self._pieces: dict[str, int] | None = None  # SentencePiece: piece -> id, built when first needed
        if hasattr(raw, "id_to_byte_piece"):  # Tekken: exact bytes of every ordinary token
            self.token_bytes = raw.id_to_byte_piece

    def encode_plain(self, text: str) -> list[int]:
        if not text:
            return []
        if SPACE_MARK in text and self.token_bytes is None:
            return self._encode_space_marks(text)
        return self._raw.encode(text, bos=False, eos=False)

    def _encode_space_marks(self, text: str) -> list[int]:
        """SentencePiece reads U+2581 in the input as its own mark for a space, so ``a\u2581b`` would come back
        as ``a b``. Its byte-fallback pieces (``<0xE2><0x96><0x81>``) decode to U+2581 itself: the text is
        encoded with a private-use character the vocabulary lacks in each U+2581's place (so the pieces around it
        are the ones a character there gives, and it becomes byte pieces), whose byte ids are then swapped for
        U+2581's. A vocabulary without byte pieces keeps the tokenizer's own reading."""
        if self._pieces is None:
            self._pieces = {piece: i for i, piece in enumerate(self._raw.vocab())}
        pieces = self._pieces

        def byte_ids(char: str) -> list[int] | None:
            ids = [pieces.get(f"<0x{b:02X}>") for b in char.encode("utf-8")]
            return None if None in ids else ids  # type: ignore[return-value]

        mark = byte_ids(SPACE_MARK)
        stand_in = next((chr(cp) for cp in range(0xE000, 0xF900) if chr(cp) not in text and chr(cp) not in pieces),
                        None)
        if mark is None or stand_in is None:
            return self._raw.encode(text, bos=False, eos=False)
        held = byte_ids(stand_in)
        if held is None:
            return self._raw.encode(text, bos=False, eos=False)
        ids = self._raw.encode(text.replace(SPACE_MARK, stand_in), bos=False, eos=False)
        out: list[int] = []
        i, n, k = 0, len(ids), len(held)
        while i < n:
            if ids[i:i + k] == held:  # (the stand-in's bytes: no other character of the text has them)
                out += mark
                i += k
            else:
                out.append(ids[i])
                i += 1
        return out

    def decode_plain(self, ids: Sequence[int]) -> str:
        return self._raw.decode(list(ids))

    def known(self, tid: int) -> bool:
        return 0 <= tid < self._raw.n_words


def _mistral_raw(obj: Any) -> Any | None:
    for _ in range(3):
        if hasattr(obj, "special_ids") and hasattr(obj, "id_to_piece") and hasattr(obj, "num_special_tokens"):
            return obj
        inner = getattr(obj, "instruct_tokenizer", None) or getattr(obj, "tokenizer", None)
        if inner is None or inner is obj:
            return None
        obj = inner
    return None


_CACHE: "OrderedDict[int, tuple[Any, Vocabulary]]" = OrderedDict()


def vocabulary(tokenizer: Any) -> Vocabulary:
    """The :class:`Vocabulary` adapter for ``tokenizer`` (cached per tokenizer object)."""
    if isinstance(tokenizer, Vocabulary):
        return tokenizer
    hit = _CACHE.get(id(tokenizer))
    if hit is not None and hit[0] is tokenizer:
        _CACHE.move_to_end(id(tokenizer))
        return hit[1]
    vocab = _make_vocabulary(tokenizer)
    _CACHE[id(tokenizer)] = (tokenizer, vocab)
    while len(_CACHE) > 16:
        _CACHE.popitem(last=False)
    return vocab


def _make_vocabulary(tok: Any) -> Vocabulary:
    if hasattr(tok, "get_added_tokens_decoder") and hasattr(tok, "pre_tokenizer") and hasattr(tok, "model"):
        return _TokenizersVocab(tok)
    if hasattr(tok, "encode_ordinary") and (hasattr(tok, "encode_single_token") or hasattr(tok, "encode_special")):
        return _TiktokenVocab(tok)
    if hasattr(tok, "added_tokens_encoder") and hasattr(tok, "encode"):
        backend = getattr(tok, "backend_tokenizer", None)
        if backend is not None:
            vocab = _TokenizersVocab(backend, reference=lambda text: tok.encode(text, add_special_tokens=False))
            vocab.kind = type(tok).__name__
            return vocab
        return _TransformersSlowVocab(tok)
    raw = _mistral_raw(tok)
    if raw is not None:
        return _MistralVocab(raw)
    raise UnsupportedTokenizer(
        f"{type(tok).__name__} is not a supported tokenizer (transformers, tokenizers.Tokenizer, an object with "
        "encode_ordinary/encode_single_token such as tiktoken.Encoding, or a mistral-common tokenizer)")
