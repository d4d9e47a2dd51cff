"""Canonical arguments and fingerprints: the same value whatever the key order, Unicode normalization
form or number spelling; any change to the arguments or the scope changes the fingerprint."""

from __future__ import annotations

import json
import random
import unicodedata
from decimal import Decimal

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import toolwire
from toolwire.dispatch.canonical import NotCanonicalizable, canonical_json, canonical_value, fingerprint
from toolwire.output import ToolCallCandidate
from support import json_values

# text rich in characters whose NFC and NFD forms differ
ACCENTED = st.text(alphabet=st.sampled_from(list("aeoc AEC\u00e9\u00e8\u00f1\u00c5\u1e9b\u0301\u0323\u0307"
                                                  "\uac00\u212b\u00fc\n\t\"\\/~<>{}")), max_size=8)
SCALARS = (st.none() | st.booleans() | st.integers(min_value=-(10 ** 30), max_value=10 ** 30)
           | st.floats(allow_nan=False, allow_infinity=False) | ACCENTED | st.text(max_size=8))
JSON = json_values(SCALARS, ACCENTED, max_leaves=16)
ARGS = st.dictionaries(ACCENTED, JSON, max_size=5)


def respell(value, form: str, rng: random.Random):
    """The same value spelled differently: keys shuffled, strings in ``form``, integral numbers as floats."""
    if isinstance(value, str):
        return unicodedata.normalize(form, value)
    if isinstance(value, (bool, Decimal)) or value is None:
        return value
    if isinstance(value, int):
        return float(value) if abs(value) < 2 ** 53 and rng.random() < 0.5 else value
    if isinstance(value, float):
        return Decimal(repr(value)) if rng.random() < 0.5 else value
    if isinstance(value, list):
        return [respell(v, form, rng) for v in value]
    items = [(unicodedata.normalize(form, k), respell(v, form, rng)) for k, v in value.items()]
    rng.shuffle(items)
    return dict(items)


def nfc_unique(value) -> bool:
    """No object in ``value`` has two keys that are equal under NFC (that would be a real collision)."""
    if isinstance(value, dict):
        keys = [unicodedata.normalize("NFC", k) for k in value]
        return len(keys) == len(set(keys)) and all(nfc_unique(v) for v in value.values())
    if isinstance(value, list):
        return all(nfc_unique(v) for v in value)
    return True


@settings(max_examples=300, deadline=None)
@given(ARGS, st.sampled_from(["NFC", "NFD", "NFKC", "NFKD"]), st.randoms(use_true_random=False))
def test_the_same_value_whatever_the_spelling(args, form, rng):
    assume(nfc_unique(args))
    if form in ("NFKC", "NFKD"):  # compatibility forms change meaning; only check they are stable
        respelled = respell(args, form, rng)
        assume(nfc_unique(respelled))
        assert canonical_json(respelled) == canonical_json(respell(respelled, "NFC", rng))
        return
    respelled = respell(args, form, rng)
    assert canonical_value(respelled) == canonical_value(args)
    assert canonical_json(respelled) == canonical_json(args)
    assert fingerprint("t", canonical_value(respelled)) == fingerprint("t", canonical_value(args))


@settings(max_examples=200, deadline=None)
@given(ARGS)
def test_canonical_form_is_a_fixed_point_and_json(args):
    assume(nfc_unique(args))
    once = canonical_value(args)
    assert canonical_value(once) == once
    text = canonical_json(once, canonicalize=False)
    assert text == canonical_json(args)
    decoded = json.loads(text)
    assert canonical_json(decoded) == text  # the text reads back to the same canonical value
    assert list(once) == sorted(once)


def _mutations(value):
    """Values that differ from ``value`` in one place."""
    if isinstance(value, dict):
        yield {**value, "\u2603new": 1}
        for key in value:
            for changed in _mutations(value[key]):
                yield {**value, key: changed}
            yield {k: v for k, v in value.items() if k != key}
    elif isinstance(value, list):
        yield value + [None]
        for i, item in enumerate(value):
            for changed in _mutations(item):
                yield value[:i] + [changed] + value[i + 1:]
    elif isinstance(value, str):
        yield value + " "
    elif isinstance(value, bool):
        yield not value
    elif isinstance(value, (int, float)):
        yield value + 1 if abs(value) < 2 ** 52 else value / 2
        yield str(value)
    elif value is None:
        yield False


@settings(max_examples=150, deadline=None)
@given(ARGS, st.dictionaries(st.sampled_from(["actor", "tenant"]), st.text(max_size=5)))
def test_any_change_to_arguments_or_scope_changes_the_fingerprint(args, scope):
    assume(nfc_unique(args))
    base = canonical_value(args)
    print_ = fingerprint("get_weather", base, version="1", scope=scope)
    assert fingerprint("get_weather", canonical_value(dict(args)), version="1", scope=dict(scope)) == print_
    for changed in list(_mutations(args))[:30]:
        if nfc_unique(changed) and canonical_value(changed) != base:
            assert fingerprint("get_weather", canonical_value(changed), version="1", scope=scope) != print_
    assert fingerprint("get_weather", base, version="1", scope={**scope, "x": "y"}) != print_
    assert fingerprint("get_weather", base, version="1", scope=None) != print_
    assert fingerprint("get_weather", base, version="2", scope=scope) != print_
    assert fingerprint("get_weather2", base, version="1", scope=scope) != print_


@pytest.mark.parametrize("spellings", [
    [1, 1.0, 1e0, Decimal("1"), Decimal("1.000"), Decimal("0.1E1")],
    [0, -0.0, 0.0, Decimal("-0"), Decimal("0E-10")],
    [0.1, Decimal("0.1"), Decimal("0.10")],
    [1000, 1e3, Decimal("1E+3")],
    [10 ** 300, 1e300, Decimal("1E+300")],
    [-2.5, Decimal("-2.50")],
])
def test_number_spellings_that_are_one_value(spellings):
    texts = {canonical_json({"n": n}) for n in spellings}
    assert len(texts) == 1, texts


def test_numbers_that_are_different_values_stay_different():
    values = [True, 1, 1.5, "1", 2 ** 64, 2 ** 64 + 1, 0.1, Decimal("0.1000000000000000000001"),
              Decimal("0.1000000000000000055511151231257827"), None, False, 0]
    texts = [canonical_json(v) for v in values]
    assert len(set(texts)) == len(texts)
    assert canonical_json(2 ** 64 + 1) == "18446744073709551617"  # exact
    assert canonical_json(Decimal("0.1000000000000000000001")) == "0.1000000000000000000001"  # every digit kept
    assert canonical_json(1.5e-07) == "1.5e-07" and canonical_json(0.1) == "0.1"


def test_canonical_json_text():
    assert canonical_json({"b": [1.0, "e\u0301"], "a": {"z": None, "y": True}}) == \
        '{"a":{"y":true,"z":null},"b":[1,"\u00e9"]}'
    assert canonical_json({"k": Decimal("1.25"), "x": [Decimal("1e-30")]}) == '{"k":1.25,"x":[1e-30]}'
    exact = canonical_json({"k": [Decimal("3.14159265358979323846264338327950288")]})
    assert exact == '{"k":[3.14159265358979323846264338327950288]}'


@pytest.mark.parametrize("value, pointer, words", [
    ({"a": float("nan")}, "/a", "nan is not a JSON number"),
    ({"a": [1, float("inf")]}, "/a/1", "inf is not a JSON number"),
    ({"a": Decimal("NaN")}, "/a", "is not a JSON number"),
    ({"a": {1: 2}}, "/a", "object key 1 is not a string"),
    ({"a": {1, 2}}, "/a", "set is not a JSON value"),
    ({"a/b": {"x~": b"bytes"}}, "/a~1b/x~0", "bytes is not a JSON value"),
    ({"caf\u00e9": 1, "cafe\u0301": 2}, "/caf\u00e9", "once Unicode-normalized"),
    ({"a": 10 ** 5000}, "/a", "more than 4300 digits"),
])
def test_values_that_are_not_json_are_refused_with_a_pointer(value, pointer, words):
    with pytest.raises(NotCanonicalizable) as info:
        canonical_value(value)
    assert info.value.pointer == pointer and words in info.value.detail and info.value.code == "invalid_json"


def test_deep_values_are_refused_not_recursed():
    deep: list = []
    for _ in range(10_000):
        deep = [deep]
    with pytest.raises(NotCanonicalizable, match="nested deeper than 256"):
        canonical_value({"a": deep})


TOOL = {"type": "function", "function": {"name": "book", "parameters": {
    "type": "object", "properties": {"guest": {"type": "string"}, "nights": {"type": "integer"},
                                     "prefs": {"type": "object"}}}}}


def _validated(args, version=None):
    spec = toolwire.ToolSpec.from_openai(TOOL, version=version)
    return ToolCallCandidate(index=0, id="c", name="book", arguments=args).validate([spec])


def test_candidate_fingerprint_over_tool_version_arguments_and_scope():
    a = _validated({"guest": "Ren\u00e9e", "nights": 2, "prefs": {"view": "sea", "floor": 3}}, version="1")
    b = _validated({"prefs": {"floor": 3.0, "view": "sea"}, "nights": 2.0, "guest": "Rene\u0301e"}, version="1")
    assert a.canonical_arguments == b.canonical_arguments == {
        "guest": "Ren\u00e9e", "nights": 2, "prefs": {"floor": 3, "view": "sea"}}
    assert a.tool_version == "1"
    scope = {"tenant": "acme", "actor": "u1"}
    assert a.fingerprint(scope) == b.fingerprint({"actor": "u1", "tenant": "acme"})
    assert a.fingerprint(scope) == fingerprint("book", a.canonical_arguments, version="1", scope=scope)
    assert len(a.fingerprint(scope)) == 64 and int(a.fingerprint(scope), 16) >= 0
    assert a.fingerprint(scope) != a.fingerprint({"tenant": "acme", "actor": "u2"})
    assert a.fingerprint(scope) != a.fingerprint()
    assert _validated(a.arguments, version="2").fingerprint(scope) != a.fingerprint(scope)


def test_fingerprint_needs_a_validated_candidate():
    rejected = ToolCallCandidate(index=0, id="c", name="book", arguments={"nights": "2"}).validate([TOOL])
    with pytest.raises(toolwire.ToolwireError, match="is rejected, not validated"):
        rejected.fingerprint()
    with pytest.raises(toolwire.ToolwireError, match="is proposed, not validated"):
        ToolCallCandidate(index=0, id="c", name="book").fingerprint()


def test_the_fingerprint_is_the_documented_hash():
    # the documented hash input, spelled out: changing it would break every stored idempotency key
    import hashlib

    text = '{"arguments":{"city":"Paris","days":3},"scope":{"tenant":"acme"},"tool":"get_weather","version":"1"}'
    assert fingerprint("get_weather", {"days": 3.0, "city": "Paris"}, version="1", scope={"tenant": "acme"}) == \
        hashlib.sha256(text.encode()).hexdigest()
