"""Every Python example in the README runs as written: each ``python`` / ``py`` block on its own, in a fresh
interpreter started in the repository root (as a reader would paste it), one test per block.

A block that needs an optional extra says so in the line before its fence, ``<!-- requires: hf, shared -->``
(``shared``: the reference data at ``../shared``). The test is marked with those extras and skipped, naming them,
when they are not installed; and the block runs with every *other* extra's packages made unimportable, so a
block that needs an extra it does not declare fails here, with the extra to declare. New README sections are
picked up by the pattern alone."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
BLOCK = re.compile(r"(?:<!--\s*requires:\s*(?P<requires>[^>]*?)\s*-->[ \t]*\n)?"
                   r"```(?:python|py)[ \t]*\n(?P<code>.*?)```", re.S)
CORE = {"pydantic", "regex", "jinja2"}


def extra_modules() -> dict[str, set[str]]:
    """Each feature extra of pyproject.toml -> the import names of its packages (``dev`` is not a feature)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["optional-dependencies"]
    out = {}
    for name, requirements in extras.items():
        if name == "dev":
            continue
        out[name] = {re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower().replace("-", "_") for r in requirements}
    return out


def blocks() -> list[tuple[str, int, list[str], str]]:
    """``(heading, line, requirements, code)`` of every Python block of the README."""
    text = README.read_text("utf-8")
    out = []
    for m in BLOCK.finditer(text):
        headings = re.findall(r"^#+ +(.*)$", text[:m.start()], re.M)
        requires = [r.strip() for r in (m.group("requires") or "").split(",") if r.strip()]
        out.append((headings[-1] if headings else "top", text.count("\n", 0, m.start("code")) + 1, requires,
                    m.group("code")))
    return out


def _id(heading: str, line: int) -> str:
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")[:40] + f"-line{line}"


def _params():
    return [pytest.param(line, requires, code, id=_id(heading, line),
                         marks=[pytest.mark.extras(*requires)] if requires else [])
            for heading, line, requires, code in blocks()]


HARNESS = """
import sys
BLOCKED = {blocked!r}
for name in BLOCKED:  # as if not installed: import fails, importlib.util.find_spec says None
    sys.modules[name] = None
code = {code!r}
try:
    exec(compile(code, "README.md, block at line {line}", "exec"), {{"__name__": "__main__"}})
except ImportError as exc:
    top = (getattr(exc, "name", None) or "").split(".")[0]
    if top in BLOCKED:
        sys.exit(f"{{exc}}: toolwire[{{BLOCKED[top]}}] is not declared by this README block; "
                 f"put '<!-- requires: {{BLOCKED[top]}} -->' on the line before its fence")
    raise
"""


def _with_dependencies(modules: set[str]) -> set[str]:
    """``modules`` and the import names of everything their distributions require, transitively (installed
    ones): an extra's package may import another extra's (transformers imports tqdm, ray imports jsonschema)."""
    from importlib import metadata

    owners = metadata.packages_distributions()
    seen: set[str] = set()
    todo = [d for m in modules for d in owners.get(m, [m])]
    while todo:
        name = todo.pop().lower().replace("-", "_")
        if name in seen:
            continue
        seen.add(name)
        try:
            requirements = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        todo += [re.split(r"[\[<>=!~; (]", r, maxsplit=1)[0] for r in requirements if "extra ==" not in r]
    return set(modules) | {m for m, dists in owners.items() if any(d.lower().replace("-", "_") in seen for d in dists)}


def run_block(code: str, line: int, requires: list[str]) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter in the repository root, the packages of undeclared extras blocked."""
    modules = extra_modules()
    allowed = _with_dependencies(set().union(*(modules.get(r, set()) for r in requires)) | CORE)
    blocked = {}
    for extra, names in sorted(modules.items()):
        for name in names - allowed:
            blocked.setdefault(name, extra)
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-c", HARNESS.format(blocked=blocked, code=code, line=line)],
                              cwd=ROOT, capture_output=True, text=True, timeout=1800)
        if RAY_STARTUP_TIMEOUT not in proc.stderr:  # Ray's fixed 30 s raylet wait (tests/conftest.py): retried
            break
    return proc


RAY_STARTUP_TIMEOUT = "The current node timed out during startup"


def _installed(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


@pytest.mark.parametrize("line, requires, code", _params())
def test_readme_block_runs_as_written(line, requires, code):
    modules = extra_modules()
    for requirement in requires:
        if requirement == "shared":
            if not (ROOT.parent / "shared" / "real").is_dir():
                pytest.skip("the block reads ../shared, which is absent")
            continue
        assert requirement in modules, f"README line {line}: unknown extra {requirement!r} (known: {sorted(modules)})"
        missing = sorted(m for m in modules[requirement] if not _installed(m))
        if missing:
            pytest.skip(f"needs toolwire[{requirement}] ({', '.join(missing)} not installed)")
    proc = run_block(code, line, requires)
    assert proc.returncode == 0, f"README block at line {line} failed:\n{proc.stderr[-3000:]}"


def test_the_readme_has_its_examples():
    found = blocks()
    assert len(found) >= 11, "README lost its examples (or the block pattern no longer finds them)"
    assert {r for _, _, requires, _ in found for r in requires} >= {"hf", "schema", "ray", "shared"}


def test_a_block_needing_an_undeclared_extra_fails_naming_it():
    """The harness itself: a block importing an extra's package it did not declare fails, saying what to add."""
    proc = run_block("import tokenizers\n", 1, [])
    assert proc.returncode != 0 and "<!-- requires: hf -->" in proc.stderr
    if _installed("tokenizers"):
        assert run_block("import tokenizers\n", 1, ["hf"]).returncode == 0
