"""Size limits on model output: calls per output, argument bytes, JSON nesting depth.

Exceeding a limit never raises, hangs or recurses: the parser and the validation step turn the call into a
``rejected`` candidate whose error code is ``too_large``. Defaults (``DEFAULT_LIMITS``):

=====================  ===========  ==========================================================
limit                  default      what it bounds
=====================  ===========  ==========================================================
``max_calls``          128          tool calls accepted from one output; later calls are rejected
``max_argument_bytes`` 1 MiB        UTF-8 size of one call's arguments (as JSON, or as raw text)
``max_depth``          64           nesting of objects and arrays inside one call's arguments
``max_result_chars``   None (off)   characters of one tool result's text in a prompt (``render``,
                                    ``ToolResult.to_tool_message``): past it the head and the tail are
                                    kept around a ``[truncated: N characters omitted ...]`` line
``large_result_chars`` 100,000      past this, with no ``max_result_chars``, ``plan()`` and ``render``
                                    warn ``tool_result_large``
=====================  ===========  ==========================================================

The checks here are linear and iterative, so a 50 MB output or a value nested 100k deep costs one pass.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from toolwire.parsers.engine.safe_json import MAX_DEPTH


@dataclass(frozen=True)
class Limits:
    """Bounds applied to each model output and each call in it (see the module table for defaults)."""

    max_calls: int = 128
    max_argument_bytes: int = 1 << 20
    max_depth: int = MAX_DEPTH
    max_result_chars: int | None = None
    large_result_chars: int = 100_000

    def __post_init__(self) -> None:
        for name in ("max_calls", "max_argument_bytes", "max_depth", "max_result_chars", "large_result_chars"):
            value = getattr(self, name)
            if value is None and name == "max_result_chars":
                continue
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"Limits.{name} must be a positive int, got {value!r}")


DEFAULT_LIMITS = Limits()


def utf8_size(text: str, limit: int | None = None) -> int:
    """UTF-8 byte size of ``text``. Past ``limit`` it may return any number above it, without encoding
    (a string of n characters takes between n and 4n bytes)."""
    if limit is not None:
        if len(text) > limit:
            return len(text)
        if 4 * len(text) <= limit:
            return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-8", "surrogatepass"))


def value_depth(value: Any, limit: int | None = None) -> int:
    """Nesting of dicts and lists/tuples in ``value`` (a scalar is 0, ``{}`` is 1), computed iteratively;
    stops as soon as the depth exceeds ``limit`` and returns ``limit + 1`` then."""
    best = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        depth += 1
        if depth > best:
            best = depth
            if limit is not None and best > limit:
                return limit + 1
        stack.extend((child, depth) for child in children if isinstance(child, (dict, list, tuple)))
    return best


def size_problem(arguments: Any, raw_arguments: str, limits: Limits) -> str | None:
    """Why one call's arguments exceed ``limits`` (a sentence for the model), or None when they fit.
    Depth is checked first, so the size check can serialize safely."""
    if value_depth(arguments, limits.max_depth) > limits.max_depth:
        return (f"the arguments nest deeper than {limits.max_depth} levels of objects and arrays; "
                "send a flatter value")
    raw_size = utf8_size(raw_arguments, limits.max_argument_bytes)
    if raw_size <= limits.max_argument_bytes:
        try:
            text = json.dumps(arguments, ensure_ascii=False)
        except (TypeError, ValueError):
            return None  # not JSON: the validation step reports it as invalid_json
        size = utf8_size(text, limits.max_argument_bytes)
    else:
        size = raw_size
    if size > limits.max_argument_bytes:
        return (f"the arguments take {size:,} bytes, more than the limit of {limits.max_argument_bytes:,}; "
                "send a smaller value")
    return None


__all__ = ["Limits", "DEFAULT_LIMITS", "utf8_size", "value_depth", "size_problem"]
