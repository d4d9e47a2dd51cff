"""Validation cost per call for a 10-field schema, with the cached validator, against jsonschema itself.

Run: ``.venv/bin/python -m bench validation`` (or ``python bench/bench_validation.py``). Prints one table:
microseconds per call and the ratio to a bare, precompiled ``jsonschema`` validator in the same process.
"""

from __future__ import annotations

import sys
import timeit
from pathlib import Path

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jsonschema

from toolwire.canonical import canonical_value, fingerprint
from toolwire.output import ParsedOutput, ToolCallCandidate
from toolwire.validation import ToolSet, compiled_validator

SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
        "offset": {"type": "integer", "minimum": 0},
        "sort": {"type": "string", "enum": ["relevance", "date", "citations"]},
        "year_from": {"type": "integer"},
        "year_to": {"type": "integer"},
        "authors": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
        "venue": {"type": ["string", "null"]},
        "open_access": {"type": "boolean"},
        "fields": {"type": "object", "properties": {"title": {"type": "boolean"}, "abstract": {"type": "boolean"}},
                   "additionalProperties": False},
    },
    "required": ["query", "limit"],
    "additionalProperties": False,
}
TOOLS = [{"type": "function", "function": {"name": "search_papers", "parameters": SCHEMA}}]
GOOD = {"query": "tool calling", "limit": 20, "offset": 0, "sort": "date", "year_from": 2020, "year_to": 2025,
        "authors": ["A. Author", "B. Author"], "venue": None, "open_access": True,
        "fields": {"title": True, "abstract": False}}
BAD = {**GOOD, "limit": 0, "sort": "newest", "extra": 1}


def _per_call(fn, number: int) -> float:
    """Best of 5 runs, in microseconds per call."""
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def main() -> None:
    """Print the table (microseconds per call, ratio to bare jsonschema)."""
    tools = ToolSet(TOOLS)
    validator = compiled_validator(tools.specs["search_papers"])
    bare = jsonschema.Draft202012Validator(SCHEMA)
    good = ToolCallCandidate(index=0, id="c", name="search_papers", arguments=GOOD)
    bad = good.model_copy(update={"arguments": BAD})
    output = ParsedOutput(tool_calls=[good])
    canonical = canonical_value(GOOD)
    assert good.validate(tools).status == "validated" and len(bad.validate(tools).errors) == 3
    assert validator is compiled_validator(tools.specs["search_papers"])
    n = 2000
    rows = [
        ("jsonschema, precompiled: list(iter_errors) (peer)", lambda: list(bare.iter_errors(GOOD)), n),
        ("jsonschema.validate(), schema checked each call (peer)", lambda: jsonschema.validate(GOOD, SCHEMA), n // 10),
        ("toolwire candidate.validate(ToolSet), valid call", lambda: good.validate(tools), n),
        ("toolwire ParsedOutput.validate(tool dicts), valid call", lambda: output.validate(TOOLS), n),
        ("toolwire candidate.validate(ToolSet), 3 errors", lambda: bad.validate(tools), n),
        ("toolwire canonical_value (10 fields)", lambda: canonical_value(GOOD), n),
        ("toolwire fingerprint (canonical args + scope)",
         lambda: fingerprint("search_papers", canonical, version="1", scope={"tenant": "t"}), n),
    ]
    base = None
    print(f"| {'validation of one call, 10-field schema':<58} | {'us/call':>8} | {'ratio':>6} |")
    print(f"|{'-' * 60}|{'-' * 10}|{'-' * 8}|")
    for label, fn, number in rows:
        cost = _per_call(fn, number)
        base = base or cost
        print(f"| {label:<58} | {cost:>8.1f} | {cost / base:>6.2f} |")


if __name__ == "__main__":
    main()
