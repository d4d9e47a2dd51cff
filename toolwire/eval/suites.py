"""Evaluation suites: items of (messages, tools, expected calls or "no call"), from BFCL v4 or a JSON-lines file.

**BFCL v4** is read from the ``bfcl-eval`` package's own data files (Apache-2.0), located without importing
it, so none of its model-running dependencies are needed (``pip install --no-deps bfcl-eval``). BFCL writes
parameter types the Python way; they become JSON Schema (``dict`` -> ``object``, ``float`` -> ``number``,
``tuple`` -> ``array``, ``any`` -> no type). Function names with dots (``math.factorial``) are given to the model
with ``_`` (as BFCL does for function-calling models, since several chat templates refuse dots) and mapped
back when scoring.

**Own suites**: JSON lines of ``{"id", "category", "messages", "tools", "expected"}`` where ``expected`` is a
list of ``{"name", "arguments": {param: [acceptable values]}}`` (a value list holding ``""`` means the
argument may be left out; calls match in any order), ``"no_call"`` (the model should answer without a tool)
or ``"any_call"`` (any call counts as relevant).
"""

from __future__ import annotations

import copy
import importlib.util
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Literal, Union

from toolwire.errors import InvalidOption, MissingExtra

Expected = Union[list[dict[str, Any]], Literal["no_call", "any_call"]]

BFCL_CATEGORIES = {
    "simple": "BFCL_v4_simple_python.json",
    "multiple": "BFCL_v4_multiple.json",
    "parallel": "BFCL_v4_parallel.json",
    "parallel_multiple": "BFCL_v4_parallel_multiple.json",
    "irrelevance": "BFCL_v4_irrelevance.json",
    "live_relevance": "BFCL_v4_live_relevance.json",
    "live_irrelevance": "BFCL_v4_live_irrelevance.json",
}
"""The BFCL v4 categories toolwire scores (single-turn), and their data files."""

_NO_CALL = ("irrelevance", "live_irrelevance")
_ANY_CALL = ("live_relevance",)
_TYPES = {"dict": "object", "float": "number", "tuple": "array"}


@dataclass
class Item:
    """One evaluation item. ``names`` maps the tool names the model sees to the suite's own names."""

    id: str
    category: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    expected: Expected
    names: dict[str, str] = field(default_factory=dict)


def bfcl_data_dir() -> Path:
    """Where the installed ``bfcl-eval`` keeps its data (found without importing the package)."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtra("the BFCL suite needs the bfcl-eval package's data: pip install --no-deps bfcl-eval")
    return Path(list(spec.submodule_search_locations)[0]) / "data"


def json_schema(bfcl: Any) -> Any:
    """A BFCL parameter schema as JSON Schema (a copy; the suite's file is never changed)."""
    schema = copy.deepcopy(bfcl)
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            kind = node.get("type")
            if isinstance(kind, str):
                if kind == "any":
                    del node["type"]
                else:
                    node["type"] = _TYPES.get(kind, kind)
            for key in ("properties",):
                if isinstance(node.get(key), dict):
                    stack.extend(v for v in node[key].values())
            for key in ("items", "additionalProperties"):
                if isinstance(node.get(key), (dict, list)):
                    stack.append(node[key])
        elif isinstance(node, list):
            stack.extend(node)
    return schema


def model_name(name: str) -> str:
    """The tool name the model sees (dots become underscores)."""
    return name.replace(".", "_")


def _tools(functions: list[dict]) -> tuple[list[dict], dict[str, str]]:
    tools, names = [], {}
    for fn in functions:
        shown = model_name(fn["name"])
        names[shown] = fn["name"]
        tools.append({"type": "function", "function": {"name": shown, "description": fn.get("description", ""),
                                                       "parameters": json_schema(fn.get("parameters") or {})}})
    return tools, names


def _read_jsonl(path: Path) -> Iterable[dict]:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def load_bfcl(categories: Iterable[str] | None = None, *, limit: int | None = None) -> list[Item]:
    """The BFCL v4 items of ``categories`` (default: all of :data:`BFCL_CATEGORIES`), at most ``limit`` each."""
    chosen = list(categories or BFCL_CATEGORIES)
    unknown = sorted(set(chosen) - set(BFCL_CATEGORIES))
    if unknown:
        raise InvalidOption(f"unknown BFCL categories {unknown}; known: {sorted(BFCL_CATEGORIES)}", field="categories")
    data = bfcl_data_dir()
    items: list[Item] = []
    for category in chosen:
        answers = {}
        answer_file = data / "possible_answer" / BFCL_CATEGORIES[category]
        if answer_file.exists():
            answers = {a["id"]: a["ground_truth"] for a in _read_jsonl(answer_file)}
        for n, row in enumerate(_read_jsonl(data / BFCL_CATEGORIES[category])):
            if limit is not None and n >= limit:
                break
            tools, names = _tools(row["function"])
            if category in _NO_CALL:
                expected: Expected = "no_call"
            elif category in _ANY_CALL:
                expected = "any_call"
            else:
                expected = [{"name": name, "arguments": args} for call in answers[row["id"]]
                            for name, args in call.items()]
            items.append(Item(row["id"], category, list(row["question"][0]), tools, expected, names))
    return items


def load_jsonl(path: str) -> list[Item]:
    """Items of a toolwire suite file (see the module doc)."""
    items = []
    for number, row in enumerate(_read_jsonl(Path(path)), 1):
        for key in ("messages", "expected"):
            if key not in row:
                raise InvalidOption(f"line {number} has no {key!r}", field=f"{path}:{number}.{key}")
        expected = row["expected"]
        if not (expected in ("no_call", "any_call") or isinstance(expected, list)):
            raise InvalidOption(f"line {number}: expected must be a list of calls, 'no_call' or 'any_call'",
                                field=f"{path}:{number}.expected")
        items.append(Item(str(row.get("id", number)), row.get("category", "default"), row["messages"],
                          row.get("tools") or [], expected))
    return items


def load_suite(suite: str, *, categories: Iterable[str] | None = None, limit: int | None = None) -> list[Item]:
    """``bfcl`` or a path to a JSON-lines suite."""
    if suite == "bfcl":
        return load_bfcl(categories, limit=limit)
    if not Path(suite).is_file():
        raise InvalidOption(f"no such suite file: {suite} (or use 'bfcl')", field="suite")
    items = load_jsonl(suite)
    if categories:
        items = [i for i in items if i.category in set(categories)]
    return items[:limit] if limit else items
