"""Deprecated module paths from before the package layout (issue 19), kept importable for a deprecation period.

``import toolwire.validation`` (or ``from toolwire import validation``) gives the very module object now at
``toolwire.dispatch.validation``, and so on for each entry of ``MOVED``; new code should import the new path.
The aliases are served by an import hook rather than stub files, so the old files were pure renames and
the new modules are imported only when an old path is used. This module imports nothing from toolwire.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
from types import ModuleType

MOVED = {
    "toolwire.validation": "toolwire.dispatch.validation",
    "toolwire.specs": "toolwire.dispatch.specs",
    "toolwire.canonical": "toolwire.dispatch.canonical",
    "toolwire.openai_compat": "toolwire.integrations.openai",
    "toolwire.fidelity": "toolwire.workbench.fidelity",
    "toolwire.fidelity_report": "toolwire.workbench.fidelity_report",
    "toolwire.cli": "toolwire.workbench.cli",
    "toolwire.demo": "toolwire.workbench.demo",
}


# The finder and loader follow the importlib protocols without subclassing importlib.abc (importing it costs
# ~25 ms of ``import toolwire``: it pulls in importlib.resources and tempfile).
class _AliasLoader:
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(MOVED[spec.name])
        self._real_spec = module.__spec__  # the import system sets module.__spec__ to the alias spec next
        return module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self._real_spec  # already executed; keep its own spec (name, origin) intact


class _AliasFinder:
    def find_spec(self, name: str, path: object = None, target: object = None):
        if name in MOVED:
            return importlib.machinery.ModuleSpec(name, _AliasLoader())
        return None


def install() -> None:
    """Serve the old paths (once; called by ``toolwire/__init__.py``)."""
    if not any(isinstance(finder, _AliasFinder) for finder in sys.meta_path):
        sys.meta_path.append(_AliasFinder())
