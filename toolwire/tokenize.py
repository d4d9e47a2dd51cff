"""Injection-safe token ids for rendered prompts, and token ids back to (text, is_special) pieces.

:func:`encode_segments` turns a :class:`~toolwire.prompt.RenderedPrompt`'s segments into token ids in
which only the control tokens the format itself wrote can appear as control ids:

* in a ``special`` segment every control token of the tokenizer (``<|im_start|>``, DeepSeek V4's
  ``｜DSML｜`` inside ``<｜DSML｜tool_calls>``) becomes its single id; a special segment that holds no control
  token of this tokenizer is an error (:class:`MarkerNotInVocabulary`: wrong tokenizer for the format) when
  it is shaped like one control token (``<|name|>``, ``<｜name｜>``, ``[NAME]``, ``<name>``); other marker
  fragments (DSML's ``" string="true">`` closing a parameter tag) are plain text to every tokenizer;
* all other text (``template`` and ``content`` segments, and the plain text around control tokens inside a
  special segment) is joined into runs and encoded as plain text: the tokenizer's model and pre-tokenizer
  only, never its added-token matcher, so user text that spells ``<|im_end|>`` stays ordinary tokens.

Because a tokenizer also splits its input at control tokens before encoding the text between them, the ids
equal ``tokenizer(prompt.text, add_special_tokens=False)`` whenever no content spells a control token
(no BOS is ever added: a format that wants BOS writes it as a special segment).

:class:`TokenDecoder` is the inverse, for stream parsers fed token ids: ``feed(ids)`` returns
:class:`TokenPiece` items whose ``special`` flag says whether the text came from a control-token id (a real
marker) or from ordinary tokens (text, even when it spells a marker). UTF-8 sequences split across tokens
are held back until complete; the work per id is bounded (linear in the output).

Accepted tokenizers: a ``transformers`` tokenizer, a ``tokenizers.Tokenizer``, any object with
``encode_ordinary(text)`` and ``encode_single_token(text)`` (``tiktoken.Encoding``), and mistral-common
tokenizers (``MistralTokenizer``, an instruct tokenizer, ``Tekkenizer`` or ``SentencePieceTokenizer``).
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from collections import OrderedDict
from functools import lru_cache
from itertools import chain
from typing import Any, Callable, Iterable, NamedTuple, Sequence

from .errors import ToolwireError


class MarkerNotInVocabulary(ToolwireError, ValueError):
    """A ``special`` segment holds no control token of this tokenizer (the tokenizer does not match the format)."""

    code = "marker_not_in_vocabulary"

    def __init__(self, marker: str, tokenizer: str):
        self.marker = marker
        super().__init__(f"special segment {marker!r} is not a control token of {tokenizer}")


class UnsupportedTokenizer(ToolwireError, TypeError):
    """The object is none of the accepted tokenizer kinds."""

    code = "unsupported_tokenizer"


class TokenPiece(NamedTuple):
    """Decoded text and whether it came from a control-token id (``special``) or from ordinary tokens."""

    text: str
    special: bool


# ---------------------------------------------------------------- vocabularies (one adapter per tokenizer kind)

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
        """:meth:`encode_plain` of ``text``, remembered per text. :func:`encode_segments` encodes a prompt as
        runs of plain text between control tokens, and runs repeat: the role line after each
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
    replaced) of its ids' bytes joined (a ``ByteLevel`` decoder): :class:`TokenDecoder` then decodes each id
    once, in Python, with the same result as decoding the ids through the tokenizer."""

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
        self._python = _PythonPipeline.build(tok, self._plain)
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
                    known = bytes(_BYTE_OF_CHAR[c] for c in token)
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


def _byte_level_chars() -> dict[int, str]:
    """GPT-2's byte -> character table (what a ``ByteLevel`` pre-tokenizer writes for each byte)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("\xa1"), ord("\xac") + 1),
                 *range(ord("\xae"), ord("\xff") + 1)]
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


_BYTE_LEVEL = _byte_level_chars()
_BYTE_OF_CHAR = {c: b for b, c in _BYTE_LEVEL.items()}
_ASCII_TRANSLATE = {b: c for b, c in _BYTE_LEVEL.items() if b < 128 and chr(b) != c}
_ASCII = [chr(i) for i in range(128)]
_ASCII_CHARS = frozenset(_ASCII)
_ASCII_CLASSES = {  # a Unicode property (or \s) restricted to ASCII, as the members of a character class
    name: "".join(re.escape(c) for c in _ASCII if test(c)) for name, test in {
        "L": lambda c: unicodedata.category(c).startswith("L"),
        "N": lambda c: unicodedata.category(c).startswith("N"),
        "P": lambda c: unicodedata.category(c).startswith("P"),
        "S": lambda c: unicodedata.category(c).startswith("S"),
        "M": lambda c: unicodedata.category(c).startswith("M"),
        "s": lambda c: c in "\t\n\x0b\x0c\r ",  # the White_Space property, which \s means in the tokenizer's regex
    }.items()}
_UNICODE_SELF_CHECK = (
    "It is 12 °C and clear in Zürich — naïve café, “quoted” ‘text’… ½ × 3² ≠ ∞", "Grüe aus 東京, the city of light — Strasse\u0301",
    "日本語のテキスト、句読点。中文：你好！한국어 문장입니다", "Ελληνικά και русский текст, עברית ועربي",
    "e\u0301 combining marks: a\u0308o\u0323 ligature Å Ω ™ ①②", "tabs\t\u00a0nbsp\u3000ideographic\u2003em space\n\n",
    "1,234.56 € £ ¥ ₹ 12:30 — x² + y³ = z⁴", "  leading\u00a0 and\u2028separators\u2029 ",
    "'S 'T 'RE 'VE 'M 'LL 'D d'été l'ÉTÉ",
)
_PATTERN_PART = re.compile(r"\\p\{(\w+)\}|\\([sS])|\\.|\[\^?|\]|[^\\\[\]]+", re.S)
_SELF_CHECK = (
    "".join(_ASCII), "".join(reversed(_ASCII)), "Hello, world! It's 2025-03-14; x=1.5e3 {\"a\": [1, 22, 333, 4444]}",
    "  leading and trailing  \n\n\t  ", "I'M HERE, WE'LL SEE, they'd've 'S 'T", "a\r\n\r\nb\n \n c   \x0b\x0cd",
    "<|im_start|>user\n<tool_call>\n{\"name\": \"f\"}\n</tool_call><|im_end|>", "```py\ndef f(x):\n    return x**2\n```",
)


def _ascii_regex(pattern: str) -> "re.Pattern[str] | None":
    """``pattern`` (a tokenizer's Oniguruma split regex) as a Python regex that matches the same on ASCII text:
    ``\\p{L}``, ``\\p{N}``, ``\\p{P}``, ``\\p{S}``, ``\\p{M}`` and ``\\s`` become their ASCII members; None
    for anything this translation does not cover (``\\S`` inside a class, other properties, bad syntax)."""
    parts = _translated_parts(pattern, lambda prop: _ASCII_CLASSES.get(prop), _ASCII_CLASSES["s"])
    if parts is None:
        return None
    try:
        return re.compile("".join(parts), re.ASCII)
    except re.error:
        return None


_WHITE_SPACE = "\\t\\n\\x0b\\x0c\\r\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
"""The White_Space property (what ``\\s`` means in the tokenizer's regex) as character-class members."""


def _unicode_regex(pattern: str) -> "re.Pattern[str] | None":
    """``pattern`` as a Python regex for text of the Basic Multilingual Plane: ``\\p{L}`` ... become their
    members there (:func:`_bmp_classes`), ``\\s`` the White_Space property; None where :func:`_ascii_regex`
    would give None."""
    classes = _bmp_classes()
    parts = _translated_parts(pattern, classes.get, _WHITE_SPACE)
    if parts is None:
        return None
    try:
        return re.compile("".join(parts))
    except re.error:
        return None


@lru_cache(maxsize=None)
def _bmp_classes() -> dict[str, str]:
    """``\\p{L}``, ``\\p{N}``, ``\\p{P}``, ``\\p{S}`` and ``\\p{M}`` as character-class members (``\\uXXXX``
    ranges) over the Basic Multilingual Plane, from Python's Unicode data: for the characters :func:`_settled`
    lets through, the categories every engine's Unicode data gives. Built once (~10 ms), on first use."""
    category = [unicodedata.category(chr(cp))[0] for cp in range(0x10000)]
    members: dict[str, list[str]] = {prop: [] for prop in "LNPSM"}
    start = 0
    for cp in range(1, 0x10001):
        if cp == 0x10000 or category[cp] != category[start]:
            found = members.get(category[start])
            if found is not None:
                found.append(f"\\u{start:04x}" if cp - 1 == start else f"\\u{start:04x}-\\u{cp - 1:04x}")
            start = cp
    return {prop: "".join(ranges) for prop, ranges in members.items()}


def _translated_parts(pattern: str, property_members: Callable[[str], str | None], space: str) -> list[str] | None:
    """The pieces of ``pattern`` with each ``\\p{X}`` replaced by ``property_members(X)`` and ``\\s`` / ``\\S`` by
    ``space`` (character-class members), or None where the translation does not apply."""
    out: list[str] = []
    in_class = False
    pos = 0
    for m in _PATTERN_PART.finditer(pattern):
        if m.start() != pos:
            return None
        pos = m.end()
        prop, space_escape, part = m.group(1), m.group(2), m.group()
        if prop is not None or space_escape == "s":
            members = space if prop is None else property_members(prop)
            if members is None:
                return None
            out.append(members if in_class else f"[{members}]")
        elif space_escape == "S":
            if in_class:
                return None
            out.append(f"[^{space}]")
        elif part.startswith("\\") and part[1:2].isalnum() and part[1] not in "rnt":
            return None  # \d, \w, \b ...: not translated
        else:
            if part.startswith("["):
                if in_class:
                    return None  # nested classes (Oniguruma set syntax)
                in_class = True
            elif part == "]" and in_class:
                in_class = False
            out.append(part)
    if pos != len(pattern) or in_class:
        return None
    return out


class _PythonPipeline:
    """The tokenizer's pipeline in Python, where it is one of the common shapes (Unicode normalizers; ``Split``
    regexes with ``Isolated`` behaviour; then ``ByteLevel`` without prefix space or regex; a BPE model).
    Pre-tokenizing with the translated regexes costs a fraction of the native regex engine's time on short
    texts (the native call costs ~15 µs even for a short line), and each pre-token's ids are remembered
    (prompts repeat the same words). ASCII text goes through ``re`` patterns restricted to ASCII; other text,
    after the normalizers, through ``re`` patterns whose Unicode properties are spelled out over the Basic
    Multilingual Plane, when all its characters are ones every engine is sure to classify alike
    (:func:`_settled`). Built only after its ids equal the native pipeline's on a set of probe texts; the
    Unicode half is compiled and probed on the first non-ASCII text, and dropped alone if only its probes
    differ. :meth:`encode` returns None where it cannot follow the native pipeline exactly (then the caller
    uses that)."""

    __slots__ = ("_splits", "_unicode_splits", "_sources", "_forms", "_model", "_native", "_cache")

    CACHE_SIZE = 1 << 16

    def __init__(self, splits: "list[re.Pattern[str]]", sources: list[str], forms: list[str], model: Any,
                 native: Callable[[str], list[int]]):
        self._splits = splits
        self._sources = sources  # the split regexes as the tokenizer writes them
        self._unicode_splits: "list[re.Pattern[str]] | None | bool" = False  # False: not compiled yet
        self._forms = forms
        self._model = model
        self._native = native
        self._cache: dict[str, list[int]] = {}

    @classmethod
    def build(cls, tok: Any, plain: Any) -> "_PythonPipeline | None":
        import json

        try:  # each part's own description (the whole tokenizer's JSON would take ~0.5 s to write and read)
            normalizer, pre = (None if part is None else json.loads(part.__getstate__())
                               for part in (tok.normalizer, tok.pre_tokenizer))
        except Exception:  # noqa: BLE001 - a part that cannot describe itself: the native pipeline only
            return None
        unicode_forms = {"NFC", "NFD", "NFKC", "NFKD"}
        normalizers = [] if normalizer is None else (
            normalizer.get("normalizers", ()) if normalizer.get("type") == "Sequence" else [normalizer])
        forms = [n.get("type") for n in normalizers]
        if not all(form in unicode_forms for form in forms):
            return None
        pre = pre or {}
        steps = pre.get("pretokenizers", ()) if pre.get("type") == "Sequence" else [pre]
        if not steps or type(tok.model).__name__ != "BPE":
            return None
        *splits, last = steps
        if last.get("type") != "ByteLevel" or last.get("add_prefix_space") or last.get("use_regex"):
            return None
        patterns, sources = [], []
        for step in splits:
            source = step.get("pattern", {}).get("Regex") if step.get("type") == "Split" else None
            if source is None or step.get("behavior") != "Isolated" or step.get("invert"):
                return None
            compiled = _ascii_regex(source)
            if compiled is None:
                return None
            patterns.append(compiled)
            sources.append(source)
        native = lambda probe: plain.encode(probe, add_special_tokens=False).ids  # noqa: E731
        pipeline = cls(patterns, sources, forms, tok.model, native)
        if any(pipeline.encode(probe) != native(probe) for probe in _SELF_CHECK):
            return None
        return pipeline

    def _probed_unicode_splits(self) -> "list[re.Pattern[str]] | None":
        """The split regexes for non-ASCII text, when their ids equal the native pipeline's on the Unicode
        probes (None when a regex does not translate or a probe differs)."""
        compiled = [_unicode_regex(source) for source in self._sources]
        if None in compiled:
            return None
        for probe in _UNICODE_SELF_CHECK:
            if _settled(probe):
                normalized = probe
                for form in self._forms:
                    normalized = unicodedata.normalize(form, normalized)
                ids = self._words_ids(normalized, compiled)
                if ids is not None and ids != self._native(probe):
                    return None
        return compiled

    def encode(self, text: str) -> list[int] | None:
        """Ids of ``text`` (no added tokens), or None where this pipeline does not follow the native one: a
        split regex that matches empty text, or non-ASCII text outside :func:`_settled`."""
        if text.isascii():
            return self._words_ids(text, self._splits)
        splits = self._unicode_splits
        if splits is False:
            splits = self._unicode_splits = self._probed_unicode_splits()
        if splits is None or not _settled(text):
            return None
        for form in self._forms:
            text = unicodedata.normalize(form, text)
        return self._words_ids(text, splits)

    def _words_ids(self, text: str, splits: "list[re.Pattern[str]]") -> list[int] | None:
        """The ids of ``text`` pre-tokenized by ``splits`` (None: a split matched empty text)."""
        words = [text]
        for split in splits:
            pieces: list[str] = []
            for word in words:
                found = split.findall(word)
                if sum(map(len, found)) == len(word):  # the matches cover the word: no text between them
                    pieces += found
                elif not _isolated(split, word, pieces):
                    return None
            words = pieces
        cache = self._cache
        try:
            return list(chain.from_iterable(map(cache.__getitem__, words)))
        except KeyError:  # a pre-token not seen yet: the model tokenizes the new ones
            pass
        if len(cache) >= self.CACHE_SIZE:
            cache.clear()
        tokenize = self._model.tokenize
        for word in words:
            if word not in cache:
                chars = word.translate(_ASCII_TRANSLATE) if word.isascii() else "".join(
                    [_BYTE_LEVEL[b] for b in word.encode("utf-8")])
                cache[word] = [t.id for t in tokenize(chars)]
        return list(chain.from_iterable(map(cache.__getitem__, words)))


_SETTLED: dict[str, bool] = {}


def _settled(text: str) -> bool:
    """Whether every non-ASCII character of ``text`` is one the ``regex`` module, Python's normalizers and the
    tokenizer's engine are sure to treat alike: in the Basic Multilingual Plane, assigned already in Unicode
    3.2 with the category it has now (so every engine's Unicode data knows it the same way), not a combining
    mark or a conjoining Hangul jamo (nothing a normalizer reorders or composes: engines were seen to order
    marks of newer characters differently), not private-use, and with no case mapping onto an ASCII letter
    (``ſ``, the Kelvin sign, ``ß``: case-insensitive parts of the split regexes could read them as ASCII)."""
    known = _SETTLED
    for char in set(text) - _ASCII_CHARS:
        ok = known.get(char)
        if ok is None:
            ok = known[char] = _settled_char(char)
        if not ok:
            return False
    return True


def _settled_char(char: str) -> bool:
    category = unicodedata.category(char)
    return (char <= "\uffff" and category[0] not in "CM" and unicodedata.ucd_3_2_0.category(char) == category
            and not ("\u1100" <= char <= "\u11ff" or "\u3130" <= char <= "\u318f" or "\uffa0" <= char <= "\uffdc")
            and not any(c.isascii() for c in char.lower() + char.upper() + char.casefold()))


def _isolated(split: "re.Pattern[str]", word: str, out: list[str]) -> bool:
    """``Split(behavior="Isolated")``: each match and each stretch of text between matches is a piece (added
    to ``out``). False for an empty match (not followed here)."""
    pos = 0
    for m in split.finditer(word):
        start, end = m.span()
        if start == end:
            return False
        if start > pos:
            out.append(word[pos:start])
        out.append(m.group())
        pos = end
    if pos < len(word):
        out.append(word[pos:])
    return True


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


# ---------------------------------------------------------------- prompt segments -> ids

_TOKEN_SHAPED = re.compile(r"\s*(<[|｜][^<>\s]*[|｜]>|\[/?[A-Za-z_]+\]|</?[A-Za-z_][\w.-]*>)\s*\Z")

def encode_segments(segments: Iterable[Any], tokenizer: Any, *, strict: bool = True) -> list[int]:
    """Token ids of a rendered prompt's segments in which only ``special`` segments yield control ids.

    ``segments`` are ``(kind, text, message_index)`` items (:class:`toolwire.prompt.Segment`). Raises
    :class:`MarkerNotInVocabulary` when a special segment shaped like one control token is not a control
    token of ``tokenizer``; ``strict=False`` encodes such a segment as plain text instead. Each run's ids are
    remembered on the tokenizer's vocabulary (:meth:`Vocabulary.encode_run`).
    """
    vocab = vocabulary(tokenizer)
    control = vocab.control
    encode_run = vocab.encode_run
    ids: list[int] = []
    run: list[str] = []  # the texts of the current run of plain text (between control tokens)
    for kind, text, _index in segments:
        if kind != "special":
            run.append(text)
            continue
        exact = control.get(text)
        if exact is None:  # a marker holding control tokens among plain text, or none
            pos = 0
            for m in vocab.find_controls(text):
                run.append(text[pos:m.start()])
                ids += encode_run(_joined(run))
                run = []
                ids.append(control[m.group()])
                pos = m.end()
            if pos == 0 and strict and _TOKEN_SHAPED.match(text):
                raise MarkerNotInVocabulary(text, vocab.kind)
            run.append(text[pos:])
            continue
        if run:
            ids += encode_run(_joined(run))
            run = []
        ids.append(exact)
    if run:
        ids += encode_run(_joined(run))
    return ids


def _joined(run: list[str]) -> str:
    """The run's texts as one text."""
    return run[0] if len(run) == 1 else "".join(run)


def control_token_count(segments: Iterable[Any], tokenizer: Any) -> int:
    """How many control ids :func:`encode_segments` emits for these segments (all from special segments)."""
    vocab = vocabulary(tokenizer)
    return sum(1 if seg[1] in vocab.control else sum(1 for _ in vocab.find_controls(seg[1]))
               for seg in segments if seg[0] == "special")


# ---------------------------------------------------------------- ids -> (text, is_special) pieces

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
        """The text of ``ids`` (a list or tuple of ``int``) when nothing is held back and each id is an
        ordinary one already seen to decode to whole characters by itself: what :meth:`feed` would return as
        one text piece, without changing the decoder. None otherwise (empty ``ids`` too): feed them."""
        whole = self._whole
        if whole is None or not self._clean:
            return None
        if type(ids) is tuple or type(ids) is list:
            if len(ids) == 1:
                tid = ids[0]
                return whole.get(tid) if type(tid) is int else None
            parts = []
            for tid in ids:
                text = whole.get(tid) if type(tid) is int else None
                if text is None:
                    return None
                parts.append(text)
            return "".join(parts) if parts else None
        return None

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




# ---------------------------------------------------------------- loading a tokenizer from a folder, offline

def load_tokenizer(path: str) -> Any:
    """Load a tokenizer from local files, without network access.

    * a folder with ``tokenizer.json`` (or ``tokenizer.json.gz``), or ``vocab.json`` + ``merges.txt``: a
      ``transformers`` tokenizer when transformers is installed, else a ``tokenizers.Tokenizer``;
    * a folder with a tiktoken ``tokenizer.model`` and ``special_tokens.json`` (``pattern`` and
      ``special_tokens``, as Meta's llama-models ship them): a ``tiktoken.Encoding``;
    * a folder with ``o200k_base.tiktoken``: o200k with gpt-oss's harmony control tokens (``toolwire[harmony]``:
      tiktoken, and ``openai-harmony`` for their ids);
    * ``mistral:v1`` ... ``mistral:v7``, ``mistral:v3-tekken``, or a mistral-common tokenizer file (``tekken*.json``,
      ``*.model.v*``): a mistral-common ``MistralTokenizer``.

    A package the kind of tokenizer needs that is not installed is a :class:`~toolwire.errors.MissingExtra` naming
    the extra (``toolwire[hf]``, ``[harmony]``, ``[mistral]``), raised before anything is loaded.
    """
    try:
        return _load_tokenizer(path)
    except ModuleNotFoundError as exc:
        extra = _TOKENIZER_EXTRAS.get((exc.name or "").split(".")[0])
        if extra is None:
            raise
        from toolwire.errors import MissingExtra

        err = MissingExtra(f"the tokenizer {path} needs the {exc.name.split('.')[0]} package: "
                           f"pip install 'toolwire[{extra}]'")
        err.name = exc.name.split(".")[0]
        raise err from None


_TOKENIZER_EXTRAS = {"tokenizers": "hf", "transformers": "hf", "tiktoken": "harmony", "tiktoken_ext": "harmony",
                     "openai_harmony": "harmony", "mistral_common": "mistral", "sentencepiece": "mistral"}
"""Module -> the toolwire extra that installs it, for the tokenizers :func:`load_tokenizer` reads."""


def _load_tokenizer(path: str) -> Any:
    from pathlib import Path

    if path.startswith("mistral:"):
        return _load_mistral(path.split(":", 1)[1])
    folder = Path(path)
    if folder.is_file():
        if folder.name.startswith("tekken") or ".model.v" in folder.name:
            from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

            return MistralTokenizer.from_file(str(folder))
        raise UnsupportedTokenizer(f"{path}: give a tokenizer folder, or a mistral-common tokenizer file")
    if (folder / "o200k_base.tiktoken").exists():
        return _load_o200k(folder)
    if (folder / "tokenizer.model").exists() and (folder / "special_tokens.json").exists():
        return _load_tiktoken_model(folder)
    gz = folder / "tokenizer.json.gz"
    if (folder / "tokenizer.json").exists() or (folder / "vocab.json").exists() or gz.exists():
        try:
            import transformers
        except ImportError:
            transformers = None
        if transformers is not None and not gz.exists():
            return transformers.AutoTokenizer.from_pretrained(str(folder))
        if not gz.exists() and not (folder / "tokenizer.json").exists():  # vocab.json + merges.txt: transformers
            raise ModuleNotFoundError("No module named 'transformers'", name="transformers")
        import tokenizers

        if gz.exists():
            import gzip

            return tokenizers.Tokenizer.from_str(gzip.decompress(gz.read_bytes()).decode("utf-8"))
        return tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    raise UnsupportedTokenizer(f"{path}: no tokenizer.json, vocab.json/merges.txt, tiktoken model or mistral file")


def _load_mistral(version: str) -> Any:
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    if version == "v3-tekken":
        return MistralTokenizer.v3(is_tekken=True)
    factory = getattr(MistralTokenizer, version, None)
    if factory is None or not version.startswith("v"):
        raise UnsupportedTokenizer(f"unknown mistral-common tokenizer {version!r}")
    return factory()


def _load_tiktoken_model(folder: Any) -> Any:
    import json

    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    meta = json.loads((folder / "special_tokens.json").read_text(encoding="utf-8"))
    return tiktoken.Encoding(folder.name, pat_str=meta["pattern"], special_tokens=meta["special_tokens"],
                             mergeable_ranks=load_tiktoken_bpe(str(folder / "tokenizer.model")))


def _load_o200k(folder: Any) -> Any:
    import os

    import tiktoken
    import tiktoken_ext.openai_public as public
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(folder / "o200k_base.tiktoken"))
    real_loader = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = lambda *a, **k: ranks  # o200k_base() names its URL; use the local file
    try:
        spec = public.o200k_base()
    finally:
        public.load_tiktoken_bpe = real_loader
    specials = dict(spec["special_tokens"])
    os.environ.setdefault("TIKTOKEN_ENCODINGS_BASE", str(folder))
    from openai_harmony import HarmonyEncodingName, load_harmony_encoding  # the harmony ids: not optional

    harmony = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
    specials.update({t: harmony.encode(t, allowed_special="all")[0] for t in harmony.special_tokens_set})
    return tiktoken.Encoding("o200k_harmony", pat_str=spec["pat_str"], mergeable_ranks=ranks, special_tokens=specials)


__all__ = [
    "encode_segments", "control_token_count", "vocabulary", "Vocabulary", "TokenDecoder", "TokenPiece",
    "token_pieces", "load_tokenizer", "MarkerNotInVocabulary", "UnsupportedTokenizer",
]
