"""Scoring raw model outputs through the family's own parser, with every miss attributed.

An item is **correct** when the calls the parser found match the expected calls one to one (any order;
:func:`value_matches` for the arguments), when a ``no_call`` item got no call, and when an ``any_call``
item got at least one. Matching rules (BFCL's acceptable-value lists): an argument matches when its value
matches one acceptable value; an expected argument whose list holds ``""`` may be left out; an argument
the answer does not name is wrong. Strings compare case-insensitively, ignoring whitespace and the
punctuation ``,./-_*^'"``; numbers compare by value (an integer matches ``5.0``, ``true`` never matches 1);
lists element by element; objects key by key.

Every miss gets one **attribution**:

* ``output_malformed``: the output was cut off, or a candidate came out ``repaired``, ``truncated`` or
  ``rejected`` by the parser for a reason other than an unknown tool name (its diagnostic codes are kept):
  the model wrote the call, badly;
* ``parser``: the item expected calls, none were recovered, and the parser's diagnostics hold unplaced call
  text (a diagnostic with a ``raw`` span): the text holds a call the parser could not read;
* ``model``: the output is well formed and simply wrong (``wrong_tool``, ``wrong_arguments``,
  ``missing_call``, ``extra_call``, ``called_when_no_tool_fits``, ``no_call``, ``called_forbidden``).

A negative expectation (``Item.must_not_call``) makes an item wrong whenever the model makes a forbidden call
(the miss is ``called_forbidden``, whatever else the output got right); an item expecting ``"any"`` is right
unless it does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from toolwire.output import ParsedOutput

from .suites import Item

_PUNCT = re.compile(r"[\s,./\-_*^'\"]")


def _norm(text: str) -> str:
    return _PUNCT.sub("", text).lower()


def value_matches(value: Any, acceptable: Any) -> bool:
    """Whether a model's argument value matches one acceptable value (see the module doc)."""
    if isinstance(acceptable, bool) or isinstance(value, bool):
        return isinstance(acceptable, bool) and isinstance(value, bool) and value == acceptable
    if isinstance(acceptable, (int, float)):
        return isinstance(value, (int, float)) and float(value) == float(acceptable)
    if isinstance(acceptable, str):
        return isinstance(value, str) and _norm(value) == _norm(acceptable)
    if isinstance(acceptable, list):
        return isinstance(value, list) and len(value) == len(acceptable) and all(
            value_matches(v, a) for v, a in zip(value, acceptable))
    if isinstance(acceptable, dict):
        if not isinstance(value, dict) or set(value) - set(acceptable):
            return False
        for key, options in acceptable.items():
            options = options if isinstance(options, list) else [options]
            if key not in value:
                if "" not in options:
                    return False
            elif not any(value_matches(value[key], o) for o in options if o != ""):
                return False
        return True
    return value == acceptable


def argument_results(arguments: dict, expected: dict) -> tuple[int, int, bool]:
    """(expected arguments matched, expected arguments, no argument the answer does not name)."""
    matched = 0
    for key, options in expected.items():
        if key not in arguments:
            matched += "" in options
        elif any(value_matches(arguments[key], o) for o in options if o != ""):
            matched += 1
    return matched, len(expected), not (set(arguments) - set(expected))


def call_matches(call: tuple[str, dict], expected: dict) -> bool:
    name, arguments = call
    if name != expected["name"]:
        return False
    matched, total, no_extra = argument_results(arguments, expected["arguments"])
    return matched == total and no_extra


def _max_matching(calls: list, expected: list) -> int:
    """The most model calls that match distinct expected calls (augmenting paths; items are small)."""
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j, exp in enumerate(expected):
            if j not in seen and call_matches(calls[i], exp):
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return sum(augment(i, set()) for i in range(len(calls)))


@dataclass
class ItemScore:
    """The score of one item. Counts are over calls; ``args_*`` over expected arguments of name-matched calls."""

    id: str
    category: str
    correct: bool
    predicted: int = 0
    expected: int = 0
    matched: int = 0
    names_ok: bool = False
    args_matched: int = 0
    args_total: int = 0
    calls_name_matched: int = 0
    calls_args_ok: int = 0
    called: bool = False
    forbidden: int = 0
    negative: bool = False
    expects_call: bool | None = None
    attribution: str | None = None
    miss: str | None = None
    codes: list[str] = field(default_factory=list)


def score_output(item: Item, output: ParsedOutput) -> ItemScore:
    """Score one parsed output against its item (see the module doc)."""
    names = item.names
    calls = [(names.get(c.name, c.name), c.arguments) for c in output.tool_calls if _made(c)]
    score = ItemScore(item.id, item.category, False, predicted=len(calls), called=bool(calls))
    malformed = [c for c in output.tool_calls if c.status in ("repaired", "truncated") or (
        c.status == "rejected" and any(d.code != "unknown_tool" for d in c.diagnostics))]
    score.codes = sorted({d.code for c in malformed for d in c.diagnostics} | (
        {"truncated"} if output.truncated and not malformed else set()))

    if item.expected == "any":
        score.correct = True
    elif item.expected == "no_call":
        score.expects_call = False
        score.correct = not calls
        if not score.correct:
            score.miss = "called_when_no_tool_fits"
    elif item.expected == "any_call":
        score.expects_call = True
        score.correct = bool(calls)
        if not score.correct:
            score.miss = "no_call"
    else:
        expected = item.expected
        score.expects_call = True
        score.expected = len(expected)
        score.matched = _max_matching(calls, expected)
        score.correct = score.matched == len(expected) == len(calls)
        score.names_ok = sorted(n for n, _ in calls) == sorted(e["name"] for e in expected)
        used: set[int] = set()
        for exp in expected:  # per-argument accuracy over calls paired by name (the best pairing for each)
            best = None
            for k, (name, arguments) in enumerate(calls):
                if k in used or name != exp["name"]:
                    continue
                result = argument_results(arguments, exp["arguments"])
                if best is None or result[0] > best[1][0]:
                    best = (k, result)
            if best is not None:
                used.add(best[0])
                matched, total, no_extra = best[1]
                score.calls_name_matched += 1
                score.args_matched += matched
                score.args_total += total
                score.calls_args_ok += matched == total and no_extra
        if not score.correct:
            if not calls:
                score.miss = "no_call"
            elif not score.names_ok:
                score.miss = ("missing_call" if len(calls) < len(expected) else "extra_call"
                              if len(calls) > len(expected) else "wrong_tool")
            else:
                score.miss = "wrong_arguments"
    score.negative = bool(item.must_not_call)
    score.forbidden = sum(1 for call in calls if any(_forbids(rule, call) for rule in item.must_not_call))
    if score.forbidden:
        score.correct, score.miss = False, "called_forbidden"
    if not score.correct:
        score.attribution = _attribution(item, output, calls, malformed)
    return score


def _forbids(rule: dict, call: tuple[str, dict]) -> bool:
    """Whether a ``must_not_call`` rule covers a call: the same tool and, for each argument the rule lists, a
    matching value (arguments the rule does not list are free)."""
    name, arguments = call
    if name != rule["name"]:
        return False
    for key, options in (rule.get("arguments") or {}).items():
        options = options if isinstance(options, list) else [options]
        if key not in arguments or not any(value_matches(arguments[key], o) for o in options if o != ""):
            return False
    return True


def _made(call: Any) -> bool:
    """Whether a candidate is a call the model made: written in the content, and not rejected, except for
    naming a tool that does not exist (a call all the same, to the wrong tool)."""
    if call.source != "content":
        return False
    return call.status != "rejected" or {d.code for d in call.diagnostics} <= {"unknown_tool"}


def _attribution(item: Item, output: ParsedOutput, calls: list, malformed: list) -> str:
    if malformed or output.truncated:  # the output ended early: its own fault, whatever else is wrong
        return "output_malformed"
    if item.expected != "no_call" and not calls and any(d.raw for d in output.diagnostics):
        return "parser"
    return "model"


@dataclass
class Metrics:
    """Aggregate metrics of a set of item scores (one category, or all)."""

    items: int
    accuracy: float
    call_precision: float | None
    call_recall: float | None
    name_accuracy: float | None
    argument_accuracy: float | None
    call_argument_accuracy: float | None
    false_call_rate: float | None
    miss_rate: float | None
    forbidden_call_rate: float | None
    attributions: dict[str, int]
    misses: dict[str, int]
    codes: dict[str, int]


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def aggregate(scores: list[ItemScore]) -> Metrics:
    """Metrics over ``scores``: accuracy; call precision/recall and name/argument accuracy over the items
    with expected call lists; the false-call rate over ``no_call`` items and the miss rate (no call at all)
    over items that expect one; the forbidden-call rate over items with a negative expectation
    (``must_not_call``); counts of attributions, miss kinds and malformed-output codes."""
    listed = [s for s in scores if s.expected]
    no_call = [s for s in scores if s.expects_call is False]
    want = [s for s in scores if s.expects_call]
    attributions: dict[str, int] = {}
    misses: dict[str, int] = {}
    codes: dict[str, int] = {}
    for s in scores:
        if s.attribution:
            attributions[s.attribution] = attributions.get(s.attribution, 0) + 1
        if s.miss:
            misses[s.miss] = misses.get(s.miss, 0) + 1
        for c in s.codes:
            codes[c] = codes.get(c, 0) + 1
    return Metrics(
        items=len(scores), accuracy=_ratio(sum(s.correct for s in scores), len(scores)) or 0.0,
        call_precision=_ratio(sum(s.matched for s in listed), sum(s.predicted for s in listed)),
        call_recall=_ratio(sum(s.matched for s in listed), sum(s.expected for s in listed)),
        name_accuracy=_ratio(sum(s.names_ok for s in listed), len(listed)),
        argument_accuracy=_ratio(sum(s.args_matched for s in listed), sum(s.args_total for s in listed)),
        call_argument_accuracy=_ratio(sum(s.calls_args_ok for s in listed), sum(s.calls_name_matched for s in listed)),
        false_call_rate=_ratio(sum(s.called for s in no_call), len(no_call)),
        miss_rate=_ratio(sum(not s.called for s in want), len(want)),
        forbidden_call_rate=_ratio(sum(bool(s.forbidden) for s in scores if s.negative),
                                   sum(1 for s in scores if s.negative)),
        attributions=attributions, misses=misses, codes=codes)
