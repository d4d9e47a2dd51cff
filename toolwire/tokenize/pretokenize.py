"""The Python pre-tokenizer: a ``tokenizers`` pipeline of a common shape followed in Python.

:class:`PythonPipeline` encodes text as a ``tokenizers.Tokenizer`` of the common BPE shape would (Unicode
normalizers; ``Split`` regexes with ``Isolated`` behaviour; ``ByteLevel``; a BPE model), with the tokenizer's
split regexes translated to Python ``re`` patterns, where it is sure to give the native pipeline's ids (probed
first); elsewhere it answers None and the caller uses the native pipeline. Also GPT-2's byte <-> character
table (:data:`BYTE_OF_CHAR`), which the ``ByteLevel`` decoding of ids reads too.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from itertools import chain
from typing import Any, Callable


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
BYTE_OF_CHAR = {c: b for b, c in _BYTE_LEVEL.items()}
"""Character -> byte: what a ``ByteLevel`` decoder makes of each character of a token."""
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


class PythonPipeline:
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
    def build(cls, tok: Any, plain: Any) -> "PythonPipeline | None":
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
