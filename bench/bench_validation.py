"""Validation cost per call for a 10-field schema, with the cached validator, against jsonschema itself.

Run: ``.venv/bin/python -m bench validation``. Prints one table: CPU µs per call (:func:`bench.harness.per_call_us`)
and the ratio to a bare, precompiled ``jsonschema`` validator in the same process.
"""

from __future__ import annotations

from bench import harness
from toolwire.dispatch.canonical import canonical_value, fingerprint
from toolwire.output import ParsedOutput, ToolCallCandidate
from toolwire.dispatch.validation import ToolSet, compiled_validator

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


def main() -> None:
    """Print the table (µs per call, ratio to bare jsonschema) and record toolwire's valid-call ratio."""
    jsonschema = harness.optional_import("jsonschema")
    if jsonschema is None:
        print("jsonschema is not importable in this interpreter (toolwire's `schema` extra): nothing to measure")
        return
    tools = ToolSet(TOOLS)
    validator = compiled_validator(tools.specs["search_papers"])
    bare = jsonschema.Draft202012Validator(SCHEMA)
    good = ToolCallCandidate(index=0, id="c", name="search_papers", arguments=GOOD)
    bad = good.model_copy(update={"arguments": BAD})
    output = ParsedOutput(tool_calls=[good])
    canonical = canonical_value(GOOD)
    assert good.validate(tools).status == "validated" and len(bad.validate(tools).errors) == 3
    assert validator is compiled_validator(tools.specs["search_papers"])
    cases = [
        ("jsonschema, precompiled: list(iter_errors) (peer)", lambda: list(bare.iter_errors(GOOD))),
        ("jsonschema.validate(), schema checked each call (peer)", lambda: jsonschema.validate(GOOD, SCHEMA)),
        ("toolwire candidate.validate(ToolSet), valid call", lambda: good.validate(tools)),
        ("toolwire ParsedOutput.validate(tool dicts), valid call", lambda: output.validate(TOOLS)),
        ("toolwire candidate.validate(ToolSet), 3 errors", lambda: bad.validate(tools)),
        ("toolwire canonical_value (10 fields)", lambda: canonical_value(GOOD)),
        ("toolwire fingerprint (canonical args + scope)",
         lambda: fingerprint("search_papers", canonical, version="1", scope={"tenant": "t"})),
    ]
    costs = {label: harness.per_call_us(fn) for label, fn in cases}
    print("\none call validated against a 10-field schema (CPU µs per call; ratio to the bare validator)\n")
    base = costs[cases[0][0]]
    harness.print_table(["validation of one call, 10-field schema", "µs/call", "ratio"],
                        [[label, f"{cost:.1f}", f"{cost / base:.2f}"] for label, cost in costs.items()], align="lrr")
    ours = costs["toolwire candidate.validate(ToolSet), valid call"]
    harness.record("validation", "one valid call, 10-field schema, µs", f"{ours:.1f}",
                   "jsonschema precompiled iter_errors", f"{base:.1f}", f"{base / ours:.2f}x")


if __name__ == "__main__":
    print(harness.environment())
    main()
