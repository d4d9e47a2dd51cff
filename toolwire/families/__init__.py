"""The family declarations: one :class:`~toolwire.family.Family` per model family, in one module per family group.

A group module names its families in ``FAMILIES``; :func:`declared` finds every module of this package (no list
to keep) and returns the declarations by name, checking that no name is declared twice. One name per family group
everywhere: its declarations in ``toolwire.families.<module>``, its renderer in ``toolwire.templates.<module>`` and
its parser in ``toolwire.parsers.<module>``.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from toolwire.family import Family


@lru_cache(maxsize=None)
def declared() -> dict[str, Family]:
    """Every declared family, by name (read once; do not change the returned dict)."""
    out: dict[str, Family] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for family in getattr(module, "FAMILIES", ()):
            if not isinstance(family, Family):
                raise TypeError(f"{module.__name__}.FAMILIES holds {family!r}, not a Family")
            if family.name in out:
                raise ValueError(f"family {family.name!r} is declared twice")
            if family.module != info.name:
                raise ValueError(f"family {family.name!r} (module {family.module!r}) is declared in "
                                 f"{module.__name__}: declare it in toolwire.families.{family.module}")
            out[family.name] = family
    return out


__all__ = ["declared"]
