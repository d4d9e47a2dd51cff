"""Format registry: the declared families (:mod:`toolwire.families`) and their formats, imported lazily so
``import toolwire`` stays light.

A family's declaration names its implementation module (``Family.module``); ``toolwire.templates.<module>`` holds
its :class:`Format` in ``FORMATS``. No other table maps names to modules.
"""

from __future__ import annotations

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


def _format(family: Family) -> Format | None:
    """The family's Format, or None when its renderer module fails to import (recorded in IMPORT_ERRORS)."""
    try:
        return family.format()
    except ImportError as exc:
        IMPORT_ERRORS[f"toolwire.templates.{family.module}"] = f"{type(exc).__name__}: {exc}"
        return None


def formats() -> list[str]:
    """The names of every available format, sorted."""
    return sorted(name for name, fam in families().items() if _format(fam) is not None)


def get_format(name: str) -> Format:
    """The :class:`Format` of family ``name``; raises :class:`UnknownFormat` naming close matches."""
    fam = families().get(name)
    found = _format(fam) if fam is not None else None
    if found is None:
        raise UnknownFormat(name, formats())
    return found
