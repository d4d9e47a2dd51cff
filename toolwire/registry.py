"""Format registry: the declared families (:mod:`toolwire.families`) and their formats, imported lazily so
``import toolwire`` stays light.

A family's declaration names its implementation module (``Family.module``); ``toolwire.templates.<module>`` holds
its :class:`Format` in ``FORMATS``. No other table maps names to modules.
"""

from __future__ import annotations

import importlib

from .errors import UnknownFormat
from .family import Family
from .format import Format

IMPORT_ERRORS: dict[str, str] = {}
"""Family modules that exist but failed to import, with the error (a test asserts this stays empty)."""


def families() -> dict[str, Family]:
    """Every declared family, by name (the declarations are read once)."""
    from .families import declared

    return declared()


def family(name: str) -> Family:
    """The declaration of family ``name``; raises :class:`UnknownFormat` naming close matches."""
    found = families().get(name)
    if found is None:
        raise UnknownFormat(name, formats())
    return found


def _module_formats(module: str) -> dict[str, Format]:
    """The ``FORMATS`` of ``toolwire.templates.<module>`` ({} when it fails to import, recorded in IMPORT_ERRORS)."""
    path = f"toolwire.templates.{module}"
    try:
        return importlib.import_module(path).FORMATS
    except ImportError as exc:
        IMPORT_ERRORS[path] = f"{type(exc).__name__}: {exc}"
        return {}


def formats() -> list[str]:
    """The names of every available format, sorted."""
    return sorted(name for name, fam in families().items() if name in _module_formats(fam.module))


def get_format(name: str) -> Format:
    """The :class:`Format` of family ``name``; raises :class:`UnknownFormat` naming close matches."""
    fam = families().get(name)
    found = _module_formats(fam.module).get(name) if fam is not None else None
    if found is None:
        raise UnknownFormat(name, formats())
    return found
