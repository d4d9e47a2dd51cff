"""Builds the compiled hot paths of toolwire/_compiled.py (``COMPILED``) with Cython, from their Python source.

Everything else is in pyproject.toml. The build is optional: without Cython or a C compiler, or with
``TOOLWIRE_PURE_PYTHON=1``, the package installs as pure Python, which gives the same outputs.
"""

import ast
import hashlib
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
    """A module that fails to compile (no C compiler, say) stays pure Python instead of failing the install. Beside
    each built module goes ``<module>.sha256``, the digest of the source it was built from: toolwire/_compiled.py
    uses the build only while its source still has that digest."""

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
            return
        _write_digest(ext.name, self.get_ext_fullpath(ext.name))

    def copy_extensions_to_source(self):
        """An editable install (``pip install -e``) copies each built module into the source tree: its digest too."""
        super().copy_extensions_to_source()
        build_py = self.get_finalized_command("build_py")
        for ext in self.extensions:
            inplace_file, regular_file = self._get_inplace_equivalent(build_py, ext)
            if os.path.exists(regular_file):
                _write_digest(ext.name, inplace_file)


def _write_digest(name: str, built: str) -> None:
    """``<module>.sha256`` beside the module ``name`` built at ``built``: the digest of its source."""
    source = Path(__file__).resolve().parent / compiled_modules()[name]
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    Path(built).with_name(name.rpartition(".")[2] + ".sha256").write_text(digest)

setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
