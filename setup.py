"""Builds the compiled hot paths of toolwire/_compiled.py (``COMPILED``) with Cython, from their Python source.

Everything else is in pyproject.toml. The build is optional: without Cython or a C compiler, or with
``TOOLWIRE_PURE_PYTHON=1``, the package installs as pure Python, which gives the same outputs.
"""

import ast
import os
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


def compiled_modules() -> dict:
    """``COMPILED`` from toolwire/_compiled.py, read from its text (importing it would install its finder)."""
    tree = ast.parse(Path(__file__).with_name("toolwire").joinpath("_compiled.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "COMPILED":
            return ast.literal_eval(node.value)
    raise RuntimeError("toolwire/_compiled.py defines no COMPILED")


def extensions() -> list:
    if os.environ.get("TOOLWIRE_PURE_PYTHON", "") not in ("", "0"):
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("toolwire: Cython is not installed; installing pure Python")
        return []
    modules = [Extension(name, [source]) for name, source in compiled_modules().items()]
    # annotation_typing off: annotations stay hints, as in Python (Cython would otherwise enforce them as C types)
    return cythonize(modules, language_level=3, quiet=True, force=True,
                     compiler_directives={"annotation_typing": False})


class OptionalBuildExt(build_ext):
    """A module that fails to compile (no C compiler, say) stays pure Python instead of failing the install."""

    def run(self):
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - any build failure leaves the pure-Python modules
            print(f"toolwire: compiling the hot paths failed ({exc}); installing pure Python")

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001 - as in run()
            print(f"toolwire: compiling {ext.name} failed ({exc}); it stays pure Python")


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
