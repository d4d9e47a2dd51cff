"""Bounded JSON decoding for model output: never a RecursionError, never an unbounded allocation.

Every parser decodes model-written JSON through :func:`loads`. It checks nesting depth with one linear,
string-aware pass before calling ``json.loads``, keeps integers exact (Python ints, so values beyond
2**63 survive) and rejects ``NaN``/``Infinity``, which are not JSON.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64
"""Default maximum nesting depth of a decoded value (objects and arrays)."""


class JsonTooDeep(ValueError):
    """The text nests deeper than the allowed depth."""

    def __init__(self, depth: int, limit: int):
        super().__init__(f"JSON nests deeper than {limit} levels (at least {depth})")
        self.depth = depth
        self.limit = limit


def nesting_depth(text: str, limit: int | None = None) -> int:
    """Maximum ``[``/``{`` nesting of ``text`` outside strings; stops early once past ``limit``."""
    depth = best = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > best:
                best = depth
                if limit is not None and best > limit:
                    return best
        elif ch in "]}":
            depth -= 1
    return best


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def loads(text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` with a depth bound; raises ``ValueError`` (``JsonTooDeep`` for depth) on bad input."""
    if max_depth is not None and text.count("[") + text.count("{") > max_depth:
        depth = nesting_depth(text, max_depth)
        if depth > max_depth:
            raise JsonTooDeep(depth, max_depth)
    return json.loads(text, parse_constant=_no_constants)
