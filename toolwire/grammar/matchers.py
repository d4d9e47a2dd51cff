"""Run a :class:`~toolwire.grammar.Grammar` in its target's own matcher (certification, benchmarks, the CLI's
``--check``): does the grammar accept a text or a token sequence, and random walks over what it allows.

* llguidance target: ``llguidance.LLMatcher`` on the Lark text;
* gbnf target: the same matcher on llguidance's own GBNF reader (``llguidance.gbnf_to_lark``, the
  converter llguidance ships for llama.cpp grammars), so the GBNF text is read by a real GBNF front end;
* xgrammar target: ``xgrammar.GrammarMatcher`` on ``Grammar.from_structural_tag`` (needs torch).

Text is fed as UTF-8 bytes through a byte-level vocabulary (256 byte tokens plus one end token), or as real
token ids with :meth:`Matcher.accepts_ids` when a tokenizer is given; :func:`llguidance_vocabulary` wraps a real
Hugging Face or tiktoken tokenizer for llguidance (and :meth:`Matcher.walk_ids` walks over its tokens).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from toolwire.errors import MissingExtra

BYTE_EOS = 256
_WIDE = ("é", "ß", "中", "文", "🚀", "—", "\u00a0", "｜")  # the non-ASCII characters walks write


def _llguidance():
    try:
        import llguidance
    except ImportError:
        raise MissingExtra("running llguidance / gbnf grammars needs llguidance: pip install 'toolwire[grammar]'") from None
    return llguidance


class _ByteTokenizer:
    """A byte-level vocabulary for llguidance: token i < 256 is byte i, 256 is the end of text."""

    eos_token_id = BYTE_EOS
    bos_token_id = None
    tokens = [bytes([i]) for i in range(256)] + [b"<|end|>"]
    special_token_ids = [BYTE_EOS]

    def __call__(self, data):
        return list(data.encode("utf-8") if isinstance(data, str) else data)


_BYTE_TOKENIZERS: dict[str, Any] = {}


def byte_tokenizer(target: str):
    """The byte-level tokenizer of ``target``'s matcher library (cached)."""
    if target not in _BYTE_TOKENIZERS:
        if target == "xgrammar":
            xgr = _xgrammar()
            vocab = [bytes([i]) for i in range(256)] + [b"<|end|>"]
            _BYTE_TOKENIZERS[target] = xgr.TokenizerInfo(vocab, vocab_type=xgr.VocabType.RAW,
                                                         stop_token_ids=[BYTE_EOS])
        else:
            llg = _llguidance()
            _BYTE_TOKENIZERS[target] = llg.LLTokenizer(llg.TokenizerWrapper(_ByteTokenizer()))
    return _BYTE_TOKENIZERS[target]


def _xgrammar():
    try:
        import xgrammar
    except ImportError:
        raise MissingExtra("running xgrammar grammars needs xgrammar (and torch): pip install 'toolwire[grammar]'"
                           ) from None
    return xgrammar


def special_tokens_of(tokenizer: Any) -> dict[str, int]:
    """``{text: id}`` of a tokenizer's special / added tokens (a Hugging Face tokenizer's added tokens, a tiktoken
    encoding's special tokens): what ``Format.grammar(..., target="llguidance", special_tokens=...)`` takes."""
    if hasattr(tokenizer, "added_tokens_decoder"):
        return {tok.content: int(i) for i, tok in tokenizer.added_tokens_decoder.items()}
    if hasattr(tokenizer, "_special_tokens"):  # tiktoken.Encoding
        return {text: int(i) for text, i in tokenizer._special_tokens.items()}
    raise TypeError(f"cannot read special tokens from a {type(tokenizer).__name__}")


@dataclass(frozen=True)
class Vocabulary:
    """A real tokenizer as llguidance's matcher sees it: ``tokenizer`` (an ``llguidance.LLTokenizer``), the end
    token ``eos``, ``encode`` (text -> ids, markers as their special tokens) and ``special_tokens``."""

    tokenizer: Any
    eos: int
    encode: Callable[[str], list]
    special_tokens: dict

    def decode(self, ids: Sequence[int]) -> str:
        """The text of ``ids`` (special tokens as their text); UnicodeDecodeError on broken UTF-8."""
        return self.tokenizer.decode_bytes(list(ids)).decode("utf-8")


def llguidance_vocabulary(tokenizer: Any, eos_token: str) -> Vocabulary:
    """A :class:`Vocabulary` for a Hugging Face fast tokenizer or a ``tiktoken.Encoding``, ``eos_token`` its end
    of turn (``<|im_end|>``). Building it takes about a second: keep it."""
    _llguidance()
    special = special_tokens_of(tokenizer)
    eos = special[eos_token]
    if hasattr(tokenizer, "added_tokens_decoder"):
        from llguidance.hf import from_tokenizer

        return Vocabulary(from_tokenizer(tokenizer, eos_token=eos), eos,
                          lambda text: tokenizer.encode(text, add_special_tokens=False), special)
    from llguidance.tiktoken import lltokenizer_from_encoding

    return Vocabulary(lltokenizer_from_encoding(tokenizer, eos_token=eos), eos,
                      lambda text: tokenizer.encode(text, allowed_special="all"), special)


def lark_of(grammar) -> str:
    """The Lark text llguidance runs for a llguidance or gbnf :class:`Grammar`."""
    if grammar.target == "gbnf":
        return _llguidance().gbnf_to_lark.gbnf_to_lark(grammar.text)
    return grammar.text


def lazy_span(grammar, text: str) -> str:
    """The part of ``text`` a grammar constrains: all of it, or for a lazy grammar the text from the first
    trigger on (empty when there is none)."""
    if not grammar.lazy:
        return text
    starts = [text.find(t) for t in grammar.triggers if t in text]
    return text[min(starts):] if starts else ""


class Matcher:
    """One grammar compiled for one vocabulary (bytes unless ``tokenizer`` is given).

    ``tokenizer`` is an ``llguidance.LLTokenizer`` (llguidance / gbnf) or an ``xgrammar.TokenizerInfo``
    (xgrammar) with ``eos`` its end token id."""

    def __init__(self, grammar, tokenizer: Any = None, eos: int | None = None):
        self.grammar = grammar
        self.target = grammar.target
        self.tokenizer = tokenizer if tokenizer is not None else byte_tokenizer(grammar.target)
        self.eos = BYTE_EOS if tokenizer is None else eos
        if self.target == "xgrammar":
            xgr = _xgrammar()
            compiler = xgr.GrammarCompiler(self.tokenizer, cache_enabled=False)
            self._compiled = compiler.compile_grammar(
                xgr.Grammar.from_structural_tag(xgr.StructuralTag.from_json(grammar.structural_tag)))
        else:
            llg = _llguidance()
            self._lark = lark_of(grammar)
            is_error, messages = llg.LLMatcher.validate_grammar_with_warnings(self._lark, self.tokenizer)
            if is_error:
                raise ValueError(f"llguidance refused the grammar: {messages[0]}")

    def _new(self):
        if self.target == "xgrammar":
            return _xgrammar().GrammarMatcher(self._compiled)
        return _llguidance().LLMatcher(self.tokenizer, self._lark, log_level=0)

    def accepts_ids(self, ids: Sequence[int], *, complete: bool = True) -> bool:
        """Whether the grammar accepts the token ids (and then the end token, when ``complete``)."""
        m = self._new()
        if self.target == "xgrammar":
            for token in ids:
                if not m.accept_token(int(token)):
                    return False
            return (not complete) or m.accept_token(self.eos)
        if not m.consume_tokens([int(t) for t in ids]) or m.is_error():
            return False
        return (not complete) or (m.consume_token(self.eos) and not m.is_error())

    def accepts(self, text: str, *, complete: bool = True) -> bool:
        """Whether the grammar accepts ``text`` as UTF-8 bytes (the byte vocabulary only). A lazy grammar
        (gbnf, ``tool_choice="auto"``) is applied as llama.cpp applies it: from the first trigger on, and
        text without a trigger is never constrained."""
        if self.grammar.lazy and not any(t in text for t in self.grammar.triggers):
            return True  # llama.cpp never applies the grammar
        return self.accepts_ids(list(lazy_span(self.grammar, text).encode("utf-8")), complete=complete)

    def walk(self, rng: random.Random, *, max_steps: int = 3000, end_bias: float = 0.5, prefer: str = "",
             markers: Sequence[str] = (), marker_bias: float = 0.1, marker_tries: int = 4) -> str | None:
        """A random string the grammar allows (byte vocabulary). At each step: with ``marker_bias`` a marker
        whole (the first of ``marker_tries`` random ``markers`` the grammar takes there), else a random allowed byte (one of ``prefer``
        half the time, printable ASCII mostly, now and then a whole non-ASCII character); the end token with ``end_bias`` when allowed. None when
        ``max_steps`` pass without an end or the bytes are not UTF-8."""
        m = self._new()
        out = bytearray()
        preferred = set(prefer.encode("utf-8"))
        encoded = [mk.encode("utf-8") for mk in markers if mk]
        for _ in range(max_steps):
            allowed = self._allowed(m)
            if self.eos in allowed and (len(allowed) == 1 or rng.random() < end_bias):
                try:
                    return bytes(out).decode("utf-8")
                except UnicodeDecodeError:
                    return None
            choices = [t for t in allowed if t != self.eos]
            if not choices:
                return None
            if encoded and len(choices) > 1 and rng.random() < marker_bias:
                fitted = self._whole_marker(m, rng.sample(encoded, min(marker_tries, len(encoded))))
                if fitted is not None:
                    m, marker = fitted
                    out += marker
                    continue
            if rng.random() < 0.03:  # a non-ASCII character, whole (bytes alone could leave broken UTF-8)
                trial = self._fork(m)
                char = rng.choice(_WIDE).encode("utf-8")
                if all(self._try(trial, b) for b in char):
                    m = trial
                    out += char
                    continue
            ascii_ = [t for t in choices if t < 0x80] or choices  # only non-ASCII allowed: a marker's bytes
            nice = [t for t in ascii_ if t in preferred]
            printable = [t for t in ascii_ if 0x20 <= t < 0x7F]
            pool = nice if nice and rng.random() < 0.5 else (printable if printable and rng.random() < 0.9 else ascii_)
            token = rng.choice(pool)
            self._consume(m, token)
            out.append(token)
        return None

    def walk_ids(self, rng: random.Random, vocabulary: Vocabulary, *, max_steps: int = 1500, end_bias: float = 0.5,
                 prefer: str = "", markers: Sequence[str] = (), marker_bias: float = 0.1) -> str | None:
        """A random token sequence the grammar allows over a real ``vocabulary`` (llguidance / gbnf targets),
        as text. At each step: with ``marker_bias`` one of ``markers`` whole, as ``vocabulary`` encodes it
        (a special token where it is one); else a random allowed token, half the time a one-character token of
        ``prefer``, mostly a short printable-ASCII token, now and then any allowed token; the end token with
        ``end_bias`` when allowed. None when ``max_steps`` pass without an end or the text is not UTF-8."""
        import numpy as np

        preferred, short = _token_pools(vocabulary, prefer)
        encoded = [ids for mk in markers if mk and self.eos not in (ids := vocabulary.encode(mk))]  # not the end
        m = self._new()
        out: list[int] = []
        for _ in range(max_steps):
            allowed = np.frombuffer(m.compute_logit_bias(), dtype=np.uint8)
            ids = np.flatnonzero(allowed)
            if allowed[self.eos] and (len(ids) == 1 or rng.random() < end_bias):
                try:
                    return vocabulary.decode(out)
                except UnicodeDecodeError:
                    return None
            ids = ids[ids != self.eos]
            if not len(ids):
                return None
            if encoded and len(ids) > 1 and rng.random() < marker_bias:
                marker = rng.choice(encoded)
                trial = m.deep_copy()
                if trial.consume_tokens(marker) and not trial.is_error():
                    m = trial
                    out += marker
                    continue
            nice = preferred[allowed[preferred] > 0]
            plain = short[allowed[short] > 0]
            pool = nice if len(nice) and rng.random() < 0.5 else (plain if len(plain) and rng.random() < 0.9 else ids)
            token = int(pool[rng.randrange(len(pool))])
            if not m.consume_token(token) or m.is_error():
                raise RuntimeError(f"the matcher refused token {token} it allowed")
            out.append(token)
        return None

    def _whole_marker(self, m, markers: Sequence[bytes]):
        """The first of ``markers`` the grammar takes whole from ``m``: (the matcher past it, the marker), or
        None."""
        for marker in markers:
            trial = self._fork(m)
            if all(self._try(trial, b) for b in marker):
                return trial, marker
        return None

    def _fork(self, m):
        return m.fork() if self.target == "xgrammar" else m.deep_copy()

    def _try(self, m, token: int) -> bool:
        """Consume ``token`` on a forked matcher when the grammar takes it (checked by consuming: no mask)."""
        if self.target == "xgrammar":
            return m.accept_token(token)
        return m.consume_token(token) and not m.is_error()

    def _allowed(self, m) -> list[int]:
        if self.target == "xgrammar":
            import torch

            xgr = _xgrammar()
            mask = xgr.allocate_token_bitmask(1, BYTE_EOS + 1)
            m.fill_next_token_bitmask(mask)
            bits = mask[0].tolist()
            return [i for i in range(BYTE_EOS + 1) if (bits[i >> 5] >> (i & 31)) & 1]
        bias = m.compute_logit_bias()
        return [i for i, b in enumerate(bias[:BYTE_EOS + 1]) if b]

    def _consume(self, m, token: int) -> None:
        ok = m.accept_token(token) if self.target == "xgrammar" else m.consume_token(token)
        if not ok:
            raise RuntimeError(f"the matcher refused token {token} it allowed")


_POOLS: dict = {}


def _token_pools(vocabulary: Vocabulary, prefer: str):
    """(ids of the one-character tokens of ``prefer``, ids of the printable-ASCII tokens of 1-4 bytes), cached."""
    import numpy as np

    key = (id(vocabulary.tokenizer), prefer)
    if key not in _POOLS:
        tok = vocabulary.tokenizer
        special = set(vocabulary.special_tokens.values())
        short = [i for i in range(tok.vocab_size) if i not in special
                 and 0 < len(b := tok.decode_bytes([i])) <= 4 and all(0x20 <= c < 0x7F or c == 0x0A for c in b)]
        preferred = {i for ch in set(prefer) if len(ids := vocabulary.encode(ch)) == 1 for i in ids}
        _POOLS[key] = (np.array(sorted(preferred), dtype=np.int64), np.array(short, dtype=np.int64))
    return _POOLS[key]
