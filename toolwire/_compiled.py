"""The compiled hot paths: modules that an install also builds with Cython, from their unchanged Python source.

``pip install`` (and ``make demo`` / ``make test``) compiles the modules of :data:`COMPILED` when Cython and a C
compiler are at hand (``setup.py``); where they are not, or with ``TOOLWIRE_PURE_PYTHON=1`` at build time, the
install is pure Python. Both run the same source, so every output is the same either way
(``tests/test_compiled.py`` compares them).

At run time a compiled module is used only while its source is the one it was built from (the digest the build
wrote beside it, ``<module>.sha256``): a build of an older source (an edit since the last install) is passed over
for the source, so an edit always takes effect. Setting
``TOOLWIRE_PURE_PYTHON=1`` in the environment before ``import toolwire`` runs the source of every module (to debug
or compare). :func:`status` says which is in use.

Importing this module puts its finder first on ``sys.meta_path``; ``toolwire/__init__.py`` imports it before
anything else. ``setup.py`` reads :data:`COMPILED` from this file's text (it does not import it).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import sys

COMPILED: dict[str, str] = {  # module -> its source, relative to the project root
    "toolwire.templates.dsml": "templates/dsml.py",
    "toolwire.prompt": "toolwire/prompt.py",
    "toolwire.request_values": "toolwire/request_values.py",
}
"""The modules on the render path of long conversations (bench/README.md, "compiled hot paths"): pure functions
and plain classes only (pydantic models are not compiled)."""

PURE_PYTHON = "TOOLWIRE_PURE_PYTHON"
"""The environment variable that keeps the compiled modules out (at build time and at import time)."""


class _SourceFirst:
    """A ``sys.meta_path`` finder for the modules of :data:`COMPILED`: the compiled module when it may be used,
    else the ``.py`` source beside it. Any other import is left to the next finders."""

    def __init__(self, pure: bool):
        self.pure = pure
        self.chosen: dict[str, str] = {}  # module -> "compiled" | "source" | "source (stale build)"

    def find_spec(self, name: str, path, target=None):
        if name not in COMPILED:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            self.chosen[name] = "source"
            return spec
        folder, stem = os.path.dirname(spec.origin), name.rsplit(".", 1)[-1]  # (no pathlib: import time)
        source = os.path.join(folder, stem + ".py")
        if not os.path.isfile(source):  # an install without sources: the build is all there is
            self.chosen[name] = "compiled"
            return spec
        stale = not self.pure and _digest_of(source) != _read(os.path.join(folder, stem + ".sha256"))
        if self.pure or stale:
            self.chosen[name] = "source (stale build)" if stale and not self.pure else "source"
            return importlib.util.spec_from_file_location(name, source)
        self.chosen[name] = "compiled"
        return spec


def _digest_of(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def _read(path: str) -> str | None:
    """The text of ``path``, or None when it cannot be read (a build without its digest counts as stale)."""
    try:
        with open(path, encoding="ascii") as fh:
            return fh.read().strip()
    except OSError:
        return None


_FINDER = _SourceFirst(pure=os.environ.get(PURE_PYTHON, "") not in ("", "0"))


def status() -> dict[str, str]:
    """Each module of :data:`COMPILED` and what runs it: ``compiled``, ``source``, ``source (stale build)`` (a
    build of another version of its source, passed over) or ``not imported`` (yet)."""
    return {name: _FINDER.chosen.get(name, "not imported") for name in COMPILED}


if _FINDER not in sys.meta_path:
    sys.meta_path.insert(0, _FINDER)
