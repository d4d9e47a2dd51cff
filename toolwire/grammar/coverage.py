"""Which registered formats have a grammar description (kept apart: it reads the registry, which imports
``toolwire.format``, which delegates to this package)."""

from __future__ import annotations

from toolwire.registry import formats, get_format

from .families import describer


def supported_formats() -> list[str]:
    """The registered formats that have a grammar description, sorted."""
    return [name for name in formats() if describer(get_format(name)) is not None]


def unsupported_formats() -> list[str]:
    """The registered formats without one yet."""
    return [name for name in formats() if describer(get_format(name)) is None]
