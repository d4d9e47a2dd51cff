"""Canonical arguments and fingerprints: one value, one text, one hash, whatever way the model spelled it.

Rules (the canonical form of a JSON value):

* **Objects**: keys NFC-normalized and sorted by Unicode code point. Two keys that become equal under NFC
  are an error (the object would say the same field twice).
* **Strings**: NFC-normalized (``"e\\u0301"`` and ``"\\u00e9"`` are one value). Nothing else changes: no
  strip, no case folding.
* **Numbers** are kept exact, by value:

  - ``bool`` stays a boolean (``true`` is never ``1``).
  - ``int`` stays the exact Python int, at any size.
  - A ``float`` stands for the shortest decimal that round-trips to it (Python's ``repr``: what the model
    most likely wrote). If that decimal is integral it becomes an ``int`` (``1.0``, ``1e3`` and ``-0.0``
    are ``1``, ``1000`` and ``0``); otherwise it stays the float and is written with ``repr`` (``0.1``).
  - A ``decimal.Decimal`` (for callers that decode with ``parse_float=Decimal``) is compared by value:
    integral becomes ``int``; otherwise it becomes the float that writes back as the same decimal when one
    exists (``Decimal("0.10")`` and ``0.1`` are one value), and else stays a Decimal written exactly
    (``Decimal("0.1000000000000000000001")`` keeps every digit).
  - NaN and infinities are not JSON and are refused.
* Arrays keep their order; ``None`` is ``null``.

:func:`canonical_json` writes the canonical value compactly (``,`` and ``:`` separators, non-ASCII kept);
:func:`fingerprint` is the SHA-256 of the canonical JSON of ``{tool, version, arguments, scope}``.
"""

from __future__ import annotations

import decimal
import hashlib
import json
import math
import unicodedata
from typing import Any

from toolwire.errors import ToolwireError

MAX_CANONICAL_DEPTH = 256
"""Values nested deeper than this are refused (validation applies the tighter ``Limits.max_depth`` first)."""
_MAX_INT_DIGITS = 4300  # Python refuses to write longer ints as text (sys.int_info.default_max_str_digits)
_INT_LIMIT = 10 ** _MAX_INT_DIGITS


class NotCanonicalizable(ToolwireError, ValueError):
    """The value is not JSON (a NaN, a set, a non-string key) or says one key twice under NFC.
    ``pointer`` (a JSON Pointer) locates it."""

    code = "invalid_json"

    def __init__(self, detail: str, pointer: str = ""):
        self.detail = detail
        self.pointer = pointer  # completed while the error unwinds (the success path builds no pointers)
        super().__init__(detail)

    def __str__(self) -> str:
        return f"{self.pointer or '/'}: {self.detail}"


def pointer_token(key: Any) -> str:
    """One JSON Pointer reference token (RFC 6901: ``~`` is ``~0``, ``/`` is ``~1``)."""
    return str(key).replace("~", "~0").replace("/", "~1")


def _nfc(text: str) -> str:
    return text if text.isascii() or unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def canonical_number(value: Any, pointer: str = "") -> Any:
    """The canonical form of one number (see the module rules)."""
    if isinstance(value, int):  # bool included: it stays itself
        if value.bit_length() > 14_000 and abs(value) >= _INT_LIMIT:
            raise NotCanonicalizable(f"an integer of more than {_MAX_INT_DIGITS} digits", pointer)
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NotCanonicalizable(f"{value!r} is not a JSON number", pointer)
        if value.is_integer():
            return int(decimal.Decimal(repr(value)))
        return value
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise NotCanonicalizable(f"{value} is not a JSON number", pointer)
        if value == value.to_integral_value():
            if value.adjusted() >= _MAX_INT_DIGITS:
                raise NotCanonicalizable(f"an integer of more than {_MAX_INT_DIGITS} digits", pointer)
            return int(value)
        as_float = float(value)
        if math.isfinite(as_float) and decimal.Decimal(repr(as_float)) == value:
            return as_float
        return _strip_zeros(value)
    raise NotCanonicalizable(f"{type(value).__name__} is not a JSON number", pointer)


def _strip_zeros(value: decimal.Decimal) -> decimal.Decimal:
    """``value`` without trailing zeros, every digit kept (``Decimal.normalize`` would round to 28 digits)."""
    sign, digits, exponent = value.as_tuple()
    end = len(digits)
    while end > 1 and digits[end - 1] == 0:
        end -= 1
    return decimal.Decimal((sign, digits[:end], exponent + len(digits) - end))


def canonical_value(value: Any, pointer: str = "") -> Any:
    """The canonical form of a JSON value (module rules). Raises :class:`NotCanonicalizable` with a pointer
    (prefixed by ``pointer``)."""
    try:
        return _canonical(value, 0)
    except NotCanonicalizable as exc:
        exc.pointer = pointer + exc.pointer
        raise


def _canonical(value: Any, depth: int) -> Any:
    kind = type(value)
    if kind is str:
        return value if value.isascii() else _nfc(value)
    if kind is int and value.bit_length() <= 14_000:
        return value
    if value is None or kind is bool:
        return value
    if isinstance(value, (int, float, decimal.Decimal)) and not isinstance(value, bool):
        return canonical_number(value)
    if isinstance(value, str):  # a str subclass
        return _nfc(str(value))
    if depth >= MAX_CANONICAL_DEPTH:
        raise NotCanonicalizable(f"nested deeper than {MAX_CANONICAL_DEPTH} levels")
    if isinstance(value, dict):
        items: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise NotCanonicalizable(f"object key {key!r} is not a string")
            nkey = key if key.isascii() else _nfc(key)
            if nkey in items:
                raise NotCanonicalizable(f"two keys are {nkey!r} once Unicode-normalized (NFC); send the field once",
                                         "/" + pointer_token(nkey))
            try:
                items[nkey] = _canonical(item, depth + 1)
            except NotCanonicalizable as exc:
                exc.pointer = "/" + pointer_token(nkey) + exc.pointer
                raise
        return {key: items[key] for key in sorted(items)}
    if isinstance(value, (list, tuple)):
        out = []
        for i, item in enumerate(value):
            try:
                out.append(_canonical(item, depth + 1))
            except NotCanonicalizable as exc:
                exc.pointer = f"/{i}{exc.pointer}"
                raise
        return out
    raise NotCanonicalizable(f"{type(value).__name__} is not a JSON value")


def canonical_json(value: Any, *, canonicalize: bool = True) -> str:
    """The canonical JSON text of ``value`` (canonicalized first unless ``canonicalize=False`` says it
    already is)."""
    if canonicalize:
        value = canonical_value(value)
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except TypeError:  # an exact Decimal somewhere: write it by hand
        return "".join(_write(value))


def _write(value: Any):
    if isinstance(value, decimal.Decimal):
        yield str(value).replace("E", "e")
    elif isinstance(value, dict):
        yield "{"
        for i, (key, item) in enumerate(value.items()):
            yield ("," if i else "") + json.dumps(key, ensure_ascii=False) + ":"
            yield from _write(item)
        yield "}"
    elif isinstance(value, list):
        yield "["
        for i, item in enumerate(value):
            if i:
                yield ","
            yield from _write(item)
        yield "]"
    else:
        yield json.dumps(value, ensure_ascii=False, allow_nan=False)


def fingerprint(tool: str, arguments: Any, *, version: str | None = None, scope: Any = None) -> str:
    """A stable SHA-256 (64 hex digits) over (tool name, tool version, canonical arguments, scope).

    ``scope`` is any JSON value the caller keys idempotency by (actor, tenant, conversation ...); it is
    canonicalized like the arguments. Equal canonical arguments give equal fingerprints; a change to the
    tool, version, arguments or scope changes it."""
    payload = canonical_json({"arguments": arguments, "scope": scope, "tool": tool, "version": version})
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


__all__ = ["NotCanonicalizable", "canonical_value", "canonical_number", "canonical_json", "fingerprint",
           "pointer_token"]
