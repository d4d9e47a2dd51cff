"""The Python pre-tokenizer's Unicode half: ``re`` patterns with ``\\p{L}`` ... spelled out over the Basic
Multilingual Plane, compiled and probed against the native pipeline on the first non-ASCII text."""

from __future__ import annotations

import re

import pytest

from tokens.test_tokenize import qwen3  # noqa: F401 - fixture
from toolwire.tokenize.pretokenize import _bmp_classes, _settled_char
from toolwire.tokenize.vocabularies import _make_vocabulary


def test_bmp_classes_are_the_unicode_properties_on_settled_characters():
    """For every character the pipeline takes (ASCII or settled), membership in each spelled-out class is
    membership in the ``regex`` module's property of the same name."""
    regex = pytest.importorskip("regex")
    classes = _bmp_classes()
    chars = "".join(chr(cp) for cp in range(0x10000) if cp < 0x80 or _settled_char(chr(cp)))
    for prop in "LNPSM":
        ours = set(re.findall(f"[{classes[prop]}]", chars))
        theirs = set(regex.findall(rf"\p{{{prop}}}", chars))
        assert ours == theirs, (prop, sorted(ours ^ theirs)[:10])


def test_unicode_half_is_compiled_and_probed_on_first_non_ascii_text(qwen3):
    """Building the vocabulary compiles no Unicode pattern; the first non-ASCII text does, after its probes
    matched the native pipeline, and its ids are the native ones."""
    vocab = _make_vocabulary(qwen3)
    pipeline = vocab._python
    assert pipeline._unicode_splits is False
    text = "Grüne Äpfel aus 東京 — 12 °C"
    assert pipeline.encode(text) == vocab._plain.encode(text, add_special_tokens=False).ids
    assert pipeline._unicode_splits and all(isinstance(p, re.Pattern) for p in pipeline._unicode_splits)


def test_unicode_half_is_dropped_alone_when_a_probe_differs(qwen3):
    """A native pipeline that disagrees on a Unicode probe: non-ASCII text goes to the native pipeline (None
    here) and ASCII text still takes the Python one."""
    vocab = _make_vocabulary(qwen3)
    pipeline = vocab._python
    native = pipeline._native
    pipeline._native = lambda text: native(text) + ([0] if not text.isascii() else [])
    assert pipeline.encode("naïve café") is None
    assert pipeline._unicode_splits is None
    assert pipeline.encode("plain ascii") == native("plain ascii")
    assert vocab.encode_plain("naïve café") == native("naïve café")
