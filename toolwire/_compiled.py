"""The compiled hot paths: modules that an install also builds with Cython, from their unchanged Python source.

``pip install`` (and ``make demo`` / ``make test``) compiles the modules of :data:`COMPILED` when Cython and a C
compiler are at hand (``setup.py``); where they are not, or with ``TOOLWIRE_PURE_PYTHON=1`` at build time, the
install is pure Python. Both run the same source, so every output is the same either way
(``tests/test_compiled.py`` compares them).

At run time a compiled module is used only while it is newer than its source: one built from an older source
(an edit since the last install) is passed over for the source, so an edit always takes effect. Setting
``TOOLWIRE_PURE_PYTHON=1`` in the environment before ``import toolwire`` runs the source of every module (to debug
or compare). :func:`status` says which is in use.

Importing this module puts its finder first on ``sys.meta_path``; ``toolwire/__init__.py`` imports it before
anything else. ``setup.py`` reads :data:`COMPILED` from this file's text (it does not import it).
"""

from __future__ import annotations

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
        source = os.path.join(os.path.dirname(spec.origin), name.rsplit(".", 1)[-1] + ".py")  # (no pathlib: import time)
        if not os.path.isfile(source):  # an installed wheel without sources: the build is all there is
            self.chosen[name] = "compiled"
            return spec
        stale = os.path.getmtime(spec.origin) < os.path.getmtime(source)
        if self.pure or stale:
            self.chosen[name] = "source (stale build)" if stale and not self.pure else "source"
            return importlib.util.spec_from_file_location(name, source)
        self.chosen[name] = "compiled"
        return spec


_FINDER = _SourceFirst(pure=os.environ.get(PURE_PYTHON, "") not in ("", "0"))


def status() -> dict[str, str]:
    """Each module of :data:`COMPILED` and what runs it: ``compiled``, ``source``, ``source (stale build)`` (a
    build older than its source, passed over) or ``not imported`` (yet)."""
    return {name: _FINDER.chosen.get(name, "not imported") for name in COMPILED}


if _FINDER not in sys.meta_path:
    sys.meta_path.insert(0, _FINDER)
