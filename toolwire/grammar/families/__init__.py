"""Family descriptions: each module turns its family's marker table into a :class:`~toolwire.grammar.ir.CallWire`.

A module registers its describer for parser classes with :func:`describes`; :func:`describe` finds the one
for a format by walking its parser class's MRO (so a family's variants inherit the description). Add a
family group as a new module here and list it in :data:`MODULES`; the core and the emitters do not change.
"""

from __future__ import annotations

import importlib
from typing import Callable

from toolwire.errors import UnsupportedByFormat

from ..ir import CallWire
from ..request import GrammarRequest

MODULES = ("json_calls", "xml_params", "marker_json", "arg_pairs", "invoke_blocks", "gemma", "llama", "harmony",
           "kimi_k3", "minimax_m3", "pythonic")
"""The family-group modules of this package (imported on first use)."""

Describer = Callable[..., CallWire]
_BY_PARSER: dict[type, Describer] = {}
_loaded = False


def describes(*parser_classes: type) -> Callable[[Describer], Describer]:
    """Register ``fn(fmt, request, thinking) -> CallWire`` for formats whose parser is (a subclass of) one of
    ``parser_classes``."""
    def register(fn: Describer) -> Describer:
        for klass in parser_classes:
            _BY_PARSER[klass] = fn
        return fn
    return register


def reasoning_markers(fmt) -> tuple[str, str] | None:
    """The format's reasoning (opener, closer): ``reasoning_markers`` or the marker table's think markers."""
    if fmt.reasoning_markers:
        return tuple(fmt.reasoning_markers)
    markers = fmt.markers
    if "think_open" in markers and "think_close" in markers:
        return markers["think_open"], markers["think_close"]
    return None


def _load() -> None:
    global _loaded
    if not _loaded:
        for name in MODULES:
            importlib.import_module(f"{__name__}.{name}")
        _loaded = True


def describer(fmt) -> Describer | None:
    """The describer for ``fmt`` (a :class:`toolwire.Format`), or None when no family group covers it."""
    _load()
    for klass in fmt.parser_class.__mro__:
        if klass in _BY_PARSER:
            return _BY_PARSER[klass]
    return None


def describe(fmt, request: GrammarRequest, *, thinking: bool) -> CallWire:
    """The :class:`CallWire` of ``fmt`` for ``request``; :class:`UnsupportedByFormat` (field ``format``) when
    no family group describes this format yet."""
    fn = describer(fmt)
    if fn is None:
        raise UnsupportedByFormat(f"no grammar description for format {fmt.name!r} yet (the formats that have one: "
                                  "toolwire.grammar.coverage.supported_formats())", field="format")
    return fn(fmt, request, thinking=thinking)
