"""Family descriptions: each module turns its family's marker table into a :class:`~toolwire.grammar.ir.CallWire`.

A module registers its describer under a description name with :func:`describes`; a family's declaration names
the description its grammar follows (``Family.grammar``), and :func:`describe` finds it by that name. Add a
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
_BY_NAME: dict[str, Describer] = {}
_loaded = False


def describes(name: str) -> Callable[[Describer], Describer]:
    """Register ``fn(fmt, request, thinking) -> CallWire`` as the description ``name`` (what a family's declaration
    names in ``Family.grammar``)."""
    def register(fn: Describer) -> Describer:
        if name in _BY_NAME:
            raise ValueError(f"grammar description {name!r} is registered twice")
        _BY_NAME[name] = fn
        return fn
    return register


def reasoning_markers(fmt) -> tuple[str, str] | None:
    """The format's reasoning (opener, closer), from its declaration."""
    return fmt.reasoning_markers


def _load() -> None:
    global _loaded
    if not _loaded:
        for name in MODULES:
            importlib.import_module(f"{__name__}.{name}")
        _loaded = True


def describer(fmt) -> Describer | None:
    """The describer for ``fmt`` (a :class:`toolwire.Format`), or None when no family group covers it."""
    _load()
    name = fmt.family.grammar
    return None if name is None else _BY_NAME[name]  # an unknown name is a declaration error (tested)


def describe(fmt, request: GrammarRequest, *, thinking: bool) -> CallWire:
    """The :class:`CallWire` of ``fmt`` for ``request``; :class:`UnsupportedByFormat` (field ``format``) when
    no family group describes this format yet."""
    fn = describer(fmt)
    if fn is None:
        raise UnsupportedByFormat(f"no grammar description for format {fmt.name!r} yet (the formats that have one: "
                                  "toolwire.grammar.coverage.supported_formats())", field="format")
    return fn(fmt, request, thinking=thinking)
