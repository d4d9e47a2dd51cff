"""The package layout (docs/design-notes.md, "Layout"): no import cycles, and core never imports a tool or
an integration.

The import graph is built from the source (AST) of every module of the installed ``toolwire`` package, found
with ``pkgutil.walk_packages`` (the mapped subpackages ``toolwire.templates``, ``toolwire.parsers`` and
``toolwire.context_policy`` are walked from their own ``__path__``, which is the same tree in an editable
install). Edges:

- module-level AND function-level imports both count (an import inside a function runs too, and a cycle
  through one is still a cycle); so do relative imports, resolved against the importing module;
- ``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``;
- imports inside ``if TYPE_CHECKING:`` do not count (they never run);
- importing ``a.b.c`` is an edge to ``a.b.c`` only, not to its parent packages' ``__init__`` (Python runs
  those first, but every module would then "import" the ``toolwire`` facade, which re-exports everything).

One exception, named in :data:`DELEGATIONS`: the convenience methods of the public data types in
``toolwire.output`` (``ToolCallCandidate.validate`` ...) import their implementation inside the method; those
function-level imports are left out of the graph (they run only once both modules are loaded).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
import re
from pathlib import Path

import pytest

import toolwire

ROOTS = ("toolwire", "toolwire.templates", "toolwire.parsers", "toolwire.context_policy")
CORE = {f"toolwire.{m}" for m in ("models", "output", "errors", "prompt", "format", "registry", "limits", "tokenize",
                                   "results", "result_facts", "result_render", "markers", "family", "families")}
UPPER = ("toolwire.dispatch", "toolwire.batch", "toolwire.eval", "toolwire.history", "toolwire.integrations",
         "toolwire.workbench")
DELEGATIONS = {
    "toolwire.output": {"toolwire.dispatch.validation", "toolwire.dispatch.canonical", "toolwire.integrations.openai"},
    "toolwire.results": {"toolwire.dispatch.validation", "toolwire.dispatch.result_schema"},
    "toolwire.context_policy.result_warnings": {"toolwire.dispatch.canonical"},
}
"""Function-level imports a lower module may make of an upper one: the implementations of the convenience methods
of the public data types (``ToolCallCandidate.validate`` ...), a result's schema check, and the call fingerprint a
retry warning compares."""


def all_modules() -> dict[str, Path]:
    """Every module of the installed package: name -> source file."""
    found: dict[str, Path] = {}
    for root in ROOTS:
        pkg = importlib.import_module(root)
        found[root] = Path(pkg.__file__)
        for info in pkgutil.walk_packages(pkg.__path__, prefix=root + "."):
            spec = importlib.util.find_spec(info.name)
            if spec is None or not spec.origin:
                continue
            source = Path(spec.origin)
            if source.is_file():
                found[info.name] = source
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """(import node, inside a function) anywhere in the tree (functions and classes included), except under
    TYPE_CHECKING."""
    stack = [(tree, False)]
    while stack:
        node, in_function = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend((child, in_function) for child in node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, in_function
        inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))


def import_edges(name: str, path: Path, modules: set[str]) -> set[str]:
    """The toolwire modules that module ``name`` (source at ``path``) imports."""
    is_pkg = path.name == "__init__.py"
    out: set[str] = set()
    allowed = DELEGATIONS.get(name, ())
    for node, in_function in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                pkg = ".".join(base + ([node.module] if node.module else []))
            else:
                pkg = node.module or ""
            targets = [f"{pkg}.{a.name}" if f"{pkg}.{a.name}" in modules else pkg for a in node.names]
        for target in targets:
            while target and target not in modules:  # `import toolwire.x.y` where y is a name: nearest module
                target = target.rpartition(".")[0]
            if target and target != name and not (in_function and target in allowed):
                out.add(target)
    return out


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle in a directed graph as a node list ``[a, b, ..., a]``, or None when it has none."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = dict.fromkeys(graph, WHITE)
    for start in sorted(graph):
        if colour[start] != WHITE:
            continue
        path, iters = [start], [iter(sorted(graph[start]))]
        colour[start] = GREY
        while path:
            nxt = next(iters[-1], None)
            if nxt is None:
                colour[path.pop()] = BLACK
                iters.pop()
            elif colour.get(nxt, BLACK) == GREY:
                return path[path.index(nxt):] + [nxt]
            elif colour.get(nxt) == WHITE:
                colour[nxt] = GREY
                path.append(nxt)
                iters.append(iter(sorted(graph[nxt])))
    return None


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = all_modules()
    names = set(modules)
    return {name: import_edges(name, path, names) for name, path in modules.items()}


def test_cycle_finder_finds_a_synthetic_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"a"}}) == ["a", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None  # a diamond is not a cycle


def test_edge_builder_counts_function_level_and_relative_imports(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("from . import sib\nfrom ..core import thing\ndef f():\n    import pkg.other\n"
                   "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import hidden\n")
    mods = {"pkg", "pkg.sub", "pkg.sub.m", "pkg.sub.sib", "pkg.core", "pkg.other", "pkg.hidden"}
    assert import_edges("pkg.sub.m", src, mods) == {"pkg.sub.sib", "pkg.core", "pkg.other"}


def test_walk_sees_every_package(graph):
    for name in ("toolwire.output", "toolwire.dispatch.validation", "toolwire.integrations.openai",
                 "toolwire.workbench.fidelity", "toolwire.workbench.cli", "toolwire.templates.jinja",
                 "toolwire.parsers.engine.safe_json", "toolwire.context_policy.plan", "toolwire.batch.mappers",
                 "toolwire.integrations.ray", "toolwire.history.keeper", "toolwire.history.stores"):
        assert name in graph
    assert "toolwire.dispatch.canonical" in graph["toolwire.dispatch.validation"]
    assert "toolwire.workbench.fidelity_report" in graph["toolwire.workbench.fidelity"]  # a function-level import


def test_import_graph_has_no_cycle(graph):
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_core_imports_no_tool_or_integration(graph):
    assert CORE <= set(graph)
    core = [m for m in graph if m in CORE or any(m.startswith(c + ".") for c in CORE)]  # packages' modules too
    assert "toolwire.tokenize.decode" in core and "toolwire.families.qwen_xml" in core
    bad = sorted((m, t) for m in core for t in graph[m] if t.startswith(UPPER))
    assert bad == []


# package -> the upper packages it may not import (docs/design-notes.md, "Layout")
FORBIDDEN = {
    "toolwire.templates": UPPER, "toolwire.parsers": UPPER, "toolwire.context_policy": UPPER,
    "toolwire.training": UPPER,  # beside core: the history keeper builds on it, never the reverse
    "toolwire.dispatch": ("toolwire.batch", "toolwire.eval", "toolwire.history", "toolwire.integrations",
                          "toolwire.workbench"),
    "toolwire.batch": ("toolwire.eval", "toolwire.history", "toolwire.integrations", "toolwire.workbench"),
    "toolwire.eval": ("toolwire.history", "toolwire.integrations", "toolwire.workbench"),
    # the history keeper: core, context_policy, training and dispatch below it; integrations may use it
    "toolwire.history": ("toolwire.batch", "toolwire.eval", "toolwire.integrations", "toolwire.workbench"),
    "toolwire.integrations": ("toolwire.workbench",),
}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_lower_packages_import_no_upper_package(graph, package):
    members = [m for m in graph if m == package or m.startswith(package + ".")]
    assert members
    bad = sorted((m, t) for m in members for t in graph[m] if t.startswith(FORBIDDEN[package]))
    assert bad == []


def test_parsed_output_methods_delegate_to_dispatch_and_integrations():
    out = toolwire.get_format("qwen25").parse('<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>')
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    checked = out.validate(tools)
    assert checked.tool_calls[0].status == "validated"
    assert checked.to_openai_message()["tool_calls"][0]["function"] == {"name": "f", "arguments": '{"x": 1}'}
    assert checked.finish_reason() == "tool_calls"
    assert checked.tool_calls[0].fingerprint() == toolwire.fingerprint("f", {"x": 1})


# ---------------------------------------------------------------- the tests' own layout (tests/README.md)

TESTS = Path(__file__).resolve().parents[1]


def _folders(path: Path) -> set[str]:
    return {p.name for p in path.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))}


def test_every_file_under_tests_families_is_in_the_folder_of_a_declared_family():
    from toolwire.families import declared

    modules = {family.module for family in declared().values()}
    files = [p.relative_to(TESTS / "families") for p in (TESTS / "families").rglob("*")
             if p.is_file() and "__pycache__" not in p.parts]
    assert files
    assert sorted(str(f) for f in files if len(f.parts) != 2 or f.parts[0] not in modules) == []
    assert sorted(modules - _folders(TESTS / "families")) == []  # and every family has its folder


def test_no_test_module_sits_at_the_top_of_tests():
    assert sorted(p.name for p in TESTS.iterdir() if p.is_file()) == ["README.md", "conftest.py"]


def test_the_tests_map_names_every_folder_and_every_family():
    text = (TESTS / "README.md").read_text("utf-8")
    unnamed = sorted(f for f in _folders(TESTS) if f"{f}/" not in text)
    unnamed += sorted(f for f in _folders(TESTS / "families") if f"| `{f}` |" not in text)
    assert unnamed == []
