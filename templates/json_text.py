"""JSON text as the chat templates write it (transformers' ``tojson``), with the encoders built once.

``json.dumps(value, ensure_ascii=False)`` builds a new encoder on every call, and with ``indent`` it runs
CPython's pure-Python encoder (about 5x slower than the C one); renderers write tool definitions on every render,
so both are worth avoiding. The texts are identical to ``json.dumps``'s.
"""

from __future__ import annotations

import json
from json.encoder import c_make_encoder, encode_basestring
from typing import Any, Callable

def json_writer(allow_nan: bool = True) -> Callable[[Any], str]:
    """``json.JSONEncoder(ensure_ascii=False, allow_nan=allow_nan).encode``, faster for the values a render writes
    (tool definitions, call arguments): json's C encoder made once, run without the cycle check (which costs a
    Python call chain and a dict entry per container, and whose bookkeeping a failed call would leave behind in a
    shared encoder). Request values were found acyclic when the request was validated; should one hold a cycle
    after all (a dict changed since), the C encoder ends in a RecursionError and the value goes to the checking
    encoder, which raises exactly what ``json.dumps`` does. Where json has no C encoder (or a different one), the
    checking encoder is used."""
    checking = json.JSONEncoder(ensure_ascii=False, allow_nan=allow_nan)
    try:
        encoder = c_make_encoder(None, checking.default, encode_basestring, None, checking.key_separator,
                                 checking.item_separator, False, False, allow_nan)
        probe = {"a": [1, 2.5, None, True, "é\n"], "b": {}}
        if "".join(encoder(probe, 0)) != checking.encode(probe):
            return checking.encode
    except TypeError:  # no C encoder (c_make_encoder None), or one made with other arguments
        return checking.encode

    def encode(value: Any) -> str:
        try:
            return "".join(encoder(value, 0))
        except RecursionError:  # a cycle, or nesting too deep for either encoder: the checking one decides
            return checking.encode(value)

    return encode


tojson = json_writer()
"""``json.dumps(value, ensure_ascii=False)``: non-ASCII kept, ``", "`` and ``": "`` separators."""

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
