"""Certification: the grammar and the parser agree (docs/grammar.md, "Certification").

1. :func:`check_outputs` - parser-accepted => grammar-accepted: every output whose calls all parse as
   ``proposed`` with arguments valid for their schema is accepted by the grammar.
2. :func:`check_walks` - grammar-generated => parser-proposed: random walks over what the matcher allows
   parse back as ``proposed`` calls of declared tools, arguments valid for the schema, no diagnostic
   (nothing lost).

Both return a :class:`Report` with counts and failure examples (the tests assert on them, the benchmark
prints them).
"""

from __future__ import annotations

import json
import math
import random
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from .matchers import Matcher, Vocabulary


@dataclass
class Report:
    """Counts of one certification run; ``failures`` holds ``(reason, text)`` examples."""

    checked: int = 0
    passed: int = 0
    excluded: dict = field(default_factory=dict)  # reason -> count (outputs outside the claim, not failures)
    failures: list = field(default_factory=list)
    unfinished: int = 0  # walks that hit the step limit
    walked: list = field(default_factory=list)  # the texts of the walks that passed (what the walks reached)

    def fail(self, reason: str, text: str) -> None:
        self.failures.append((reason, text))

    def exclude(self, reason: str) -> None:
        self.excluded[reason] = self.excluded.get(reason, 0) + 1


def _validator(schema: dict):
    import jsonschema

    return jsonschema.Draft202012Validator(schema)


def calls_valid(parsed, tools: list[dict]) -> str | None:
    """None when every call of ``parsed`` is ``proposed``, names a tool and has schema-valid arguments; else
    the reason."""
    schemas = {t["function"]["name"]: t["function"].get("parameters") or {"type": "object"} for t in tools}
    for call in parsed.tool_calls:
        if call.status != "proposed":
            return f"call status {call.status}"
        if call.name not in schemas:
            return f"unknown tool {call.name}"
        errors = list(_validator(schemas[call.name]).iter_errors(call.arguments))
        if errors:
            return f"arguments invalid: {errors[0].message}"
    return None


def keys_in_schema_order(parsed, tools: list[dict], key_order: str = "schema") -> bool:
    """Whether every call's top-level argument keys follow the order the grammar writes them in: its schema's
    ``properties`` order, or (``key_order="sorted"``) sorted case-insensitively."""
    for call in parsed.tool_calls:
        fn = next(t["function"] for t in tools if t["function"]["name"] == call.name)
        order = list((fn.get("parameters") or {}).get("properties", {}))
        if key_order == "sorted":
            order.sort(key=str.lower)
        keys = [k for k in call.arguments if k in order]
        if keys != sorted(keys, key=order.index):
            return False
    return True


def check_outputs(fmt, rows: Iterable[dict], target: str, *, tokenizer: Any = None, eos: int | None = None,
                  encode=None, thinking_of=None, vocabulary: Vocabulary | None = None) -> Report:
    """Claim 1 over golden rows (``model_output``, ``tools``); ``encode(text) -> ids`` with ``tokenizer``
    feeds real token ids instead of bytes (or a llguidance :class:`Vocabulary`, whose special tokens the grammar
    then references). ``thinking_of(row)`` says where the output starts."""
    special = None
    if vocabulary is not None:
        tokenizer, eos, encode, special = (vocabulary.tokenizer, vocabulary.eos, vocabulary.encode,
                                           vocabulary.special_tokens)
    report = Report()
    for row in rows:
        thinking = bool(thinking_of(row)) if thinking_of else False
        parsed = fmt.parse(row["model_output"], row["tools"], thinking=thinking)
        if not parsed.tool_calls:
            report.exclude("no call")
            continue
        reason = calls_valid(parsed, row["tools"])
        if reason is not None:
            report.exclude(reason.split(":")[0])
            continue
        from . import describe

        if not keys_in_schema_order(parsed, row["tools"], describe(fmt, row["tools"]).key_order):
            report.exclude("properties out of schema order")  # the grammar writes declared order only
            continue
        grammar = fmt.grammar(row["tools"], target=target, thinking=thinking, special_tokens=special)
        matcher = Matcher(grammar, tokenizer, eos)
        report.checked += 1
        if encode is not None:
            from .matchers import lazy_span

            span = lazy_span(grammar, row["model_output"])
            ok = (grammar.lazy and not span) or matcher.accepts_ids(encode(span))
        else:
            ok = matcher.accepts(row["model_output"])
        if ok:
            report.passed += 1
        elif special and _special_inside_arguments(parsed, special):
            report.checked -= 1  # llguidance's %json and free values take bytes only (docs/grammar.md)
            report.exclude("special token inside an argument value")
        else:
            report.fail("grammar rejected a parser-proposed output", row["model_output"])
    return report


def _special_inside_arguments(parsed, special) -> bool:
    """Whether an argument value spells a special token (its ids then hold the token, which llguidance cannot
    admit inside ``%json`` nor inside a lexeme of free text)."""
    text = json.dumps([c.arguments for c in parsed.tool_calls], ensure_ascii=False)
    return any(marker in text for marker in special)


def fmt_reasoning(fmt):
    from .families import reasoning_markers

    return reasoning_markers(fmt)


def wire_markers(fmt, tools, thinking: bool) -> list[str]:
    """Every literal of the format's call wire (the walks try them whole, so they reach the markers)."""
    from . import describe
    from .ir import Lit, Tag

    wire = describe(fmt, tools, tool_choice="auto", thinking=thinking)
    found = set(wire.reasoning or ())
    stack = list(wire.call_nodes())
    while stack:
        node = stack.pop()
        if isinstance(node, Lit):
            found.add(node.text)
        elif isinstance(node, Tag):
            found.update((node.begin, node.end))
            stack.append(node.content)
        elif hasattr(node, "items"):
            stack.extend(node.items)
        elif hasattr(node, "item"):
            stack.append(node.item)
    return sorted(t for t in found if t)


BYTE_WALKS_INEXACT = frozenset({"gpt_oss"})
"""Formats whose byte-level walks on llguidance / GBNF are not certifiable: harmony's markers are special tokens
the text parser reads wherever they are spelled, and these targets cannot keep them out of JSON strings (xgrammar
can). On real o200k token ids llguidance is certified (tests/grammar/test_token_ids_llguidance.py)."""

JSON_CUT_BY_MARKER = frozenset({"implicit_parameter_close", "invalid_json_value", "marker_in_value"})
"""Diagnostics of a JSON-typed value a marker spelled inside one of its strings ended early (the grammar writes
valid JSON, so only that makes it invalid): targets without string excludes in JSON cannot prevent it
(``marker_in_value``: LFM2.5's block end inside a string of a ``tojson`` dict)."""


def check_walks(fmt, tools: list[dict], target: str, *, samples: int, seed: int = 0, tool_choice: Any = "required",
                thinking: bool = False, max_steps: int = 3000, vocabulary: Vocabulary | None = None) -> Report:
    """Claim 2: ``samples`` random walks of the grammar, each parsed back; over bytes, or over the tokens of a
    real llguidance :class:`Vocabulary` (the grammar then references its special tokens)."""
    special = vocabulary.special_tokens if vocabulary is not None else None
    grammar = fmt.grammar(tools, target=target, tool_choice=tool_choice, thinking=thinking, special_tokens=special)
    matcher = Matcher(grammar) if vocabulary is None else Matcher(grammar, vocabulary.tokenizer, vocabulary.eos)
    rng = random.Random(seed)
    prefer = "".join(sorted(set("".join(grammar.triggers) + '{}[]",:0123456789 \n' + "".join(
        fmt.markers.values()))))
    markers = sorted(set(grammar.triggers) | set(fmt.markers.values()) | set(wire_markers(fmt, tools, thinking)))
    report = Report()
    for _ in range(samples):
        if vocabulary is None:
            text = matcher.walk(rng, max_steps=max_steps, prefer=prefer, markers=markers)
        else:
            text = matcher.walk_ids(rng, vocabulary, max_steps=max_steps, prefer=prefer, markers=markers)
        if text is None:
            report.unfinished += 1
            continue
        report.checked += 1
        if grammar.lazy and thinking and fmt_reasoning(fmt):  # a lazy grammar starts at the trigger, after reasoning
            text = "r" + fmt_reasoning(fmt)[1] + text
        parsed = fmt.parse(text, tools, thinking=thinking)
        reason = calls_valid(parsed, tools)
        if reason is None and tool_choice != "none" and tool_choice != "auto" and not parsed.tool_calls:
            reason = "no call parsed back"
        if reason is None and tool_choice == "none" and parsed.tool_calls:
            reason = "a call under tool_choice='none'"
        if reason is None and parsed.diagnostics:
            reason = f"diagnostic {parsed.diagnostics[0].code}"
        codes = {d.code for call in parsed.tool_calls for d in call.diagnostics}
        if reason is not None and target != "xgrammar" and (codes & JSON_CUT_BY_MARKER or _json_value_cut(parsed, tools)):
            # a JSON string inside an XML value spelled the next parameter's opener (or a DSML value's closer, which
            # cuts the JSON short): only xgrammar's json_schema can exclude strings there (docs/grammar.md,
            # "Approximations")
            report.exclude("JSON string spells a parameter opener")
            continue
        if reason is not None and _overflowing_number(text):
            report.exclude("number outside the double range")  # JSON grammars do not bound exponents
            continue
        if reason is None:
            report.passed += 1
            report.walked.append(text)
        else:
            report.fail(reason, text)
    return report


def _json_value_cut(parsed, tools: list[dict]) -> bool:
    """Whether a JSON-typed (object or array) argument came back as the raw text of a JSON value cut short: a
    marker spelled inside one of its strings ended the value early. The GLM parsers report it as a
    ``value_type_mismatch`` (the raw string kept) rather than as one of :data:`JSON_CUT_BY_MARKER`."""
    for call in parsed.tool_calls:
        if not any(d.code == "value_type_mismatch" for d in call.diagnostics):
            continue
        fn = next((t["function"] for t in tools if t["function"]["name"] == call.name), {})
        properties = (fn.get("parameters") or {}).get("properties", {})
        for key, value in call.arguments.items():
            if properties.get(key, {}).get("type") in ("object", "array") and isinstance(value, str) \
                    and value.lstrip()[:1] in ("{", "["):
                try:
                    json.loads(value)
                except ValueError:
                    return True
    return False


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?[eE][+-]?\d+")


def _overflowing_number(text: str) -> bool:
    """Whether ``text`` holds a JSON number outside the double range (the parser refuses it; the JSON grammars
    of every target allow any exponent)."""
    return any(math.isinf(float(m.group())) for m in _NUMBER.finditer(text))
