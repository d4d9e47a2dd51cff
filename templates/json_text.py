"""JSON text as the chat templates write it (transformers' ``tojson``), with the encoders built once.

``json.dumps(value, ensure_ascii=False)`` builds a new encoder on every call, and with ``indent`` it runs
CPython's pure-Python encoder (about 5x slower than the C one); renderers write tool definitions on every render,
so both are worth avoiding. The texts are identical to ``json.dumps``'s.
"""

from __future__ import annotations

import json
from json.encoder import c_make_encoder, encode_basestring
from typing import Any

_ENCODER = json.JSONEncoder(ensure_ascii=False)
_ONE_LINE = None if c_make_encoder is None else c_make_encoder(
    None, _ENCODER.default, encode_basestring, None, ": ", ", ", False, False, True)
"""The C encoder ``_ENCODER.encode`` builds on every call, built once, without the circular-reference check
(whose bookkeeping a failed call would leave behind in a shared encoder): a value that contains itself recurses
until RecursionError, and is then handed to ``_ENCODER.encode``, which raises exactly what ``json.dumps`` does."""


def tojson(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)``: non-ASCII kept, ``", "`` and ``": "`` separators."""
    if _ONE_LINE is None:
        return _ENCODER.encode(value)
    try:
        return "".join(_ONE_LINE(value, 0))
    except RecursionError:  # a value that contains itself, or nests too deeply: json.dumps's own error
        return _ENCODER.encode(value)

_INDENTED: dict[str, str] = {}
_INDENTED_MAX = 1024


def tojson_indented(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=4)`` (Jinja ``tojson(indent=4)``).

    Both encoders write the same tokens and differ only in the whitespace between them, so the indented text is a
    function of the one-line text: it is written once per distinct one-line text (which the C encoder writes fast)
    and looked up after that."""
    try:
        key = tojson(value)
    except (TypeError, ValueError):  # not JSON: json.dumps raises as it would have
        return json.dumps(value, ensure_ascii=False, indent=4)
    text = _INDENTED.get(key)
    if text is None:
        if len(_INDENTED) >= _INDENTED_MAX:
            _INDENTED.clear()
        text = _INDENTED[key] = json.dumps(value, ensure_ascii=False, indent=4)
    return text
