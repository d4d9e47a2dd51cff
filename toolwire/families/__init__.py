"""The family declarations: one :class:`~toolwire.family.Family` per model family, in one module per family group.

A group module names its families in ``FAMILIES``; :func:`declared` finds every module of this package (no list
to keep) and returns the declarations by name, checking that no name is declared twice. Adding a family is adding
its declaration here, its renderer to ``toolwire.templates.<module>`` and its parser to
``toolwire.parsers.<module>``.
"""

from __future__ import annotations

import importlib
import pkgutil

from toolwire.family import Family


def declared() -> dict[str, Family]:
    """Every declared family, by name."""
    out: dict[str, Family] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for family in getattr(module, "FAMILIES", ()):
            if not isinstance(family, Family):
                raise TypeError(f"{module.__name__}.FAMILIES holds {family!r}, not a Family")
            if family.name in out:
                raise ValueError(f"family {family.name!r} is declared twice")
            out[family.name] = family
    return out


__all__ = ["declared"]
