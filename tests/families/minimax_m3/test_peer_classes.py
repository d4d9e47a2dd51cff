"""MiniMax-M3 output shapes that peers' test suites (vLLM, SGLang) exercise and toolwire got wrong, in this
project's own words and values. One-shot and streamed results agree (``support.check_chunking``)."""

from __future__ import annotations

import json

import support
import toolwire
from toolwire.parsers.minimax_m3 import NS

FMT = toolwire.get_format("minimax_m3")
TOOLS = [{"type": "function", "function": {"name": "file_ticket", "parameters": {"type": "object", "properties": {
    "title": {"type": "string"}, "labels": {"type": "object"},
    "owner": {"type": "object", "properties": {"team": {"type": "string"}}}}}}}]


def block(*elements: str) -> str:
    return (f"{NS}<tool_call>\n{NS}<invoke name=\"file_ticket\">" + "".join(elements) + f"{NS}</invoke>\n"
            f"{NS}</tool_call>")


def el(key: str, inner: str) -> str:
    return f"{NS}<{key}>{inner}{NS}</{key}>"


def test_a_child_element_repeated_inside_an_object_keeps_the_last_value_and_says_so():
    """``<labels><kind>bug</kind><kind>ui</kind></labels>``: a repeated child is not the template's list
    spelling (``<item>``), so the last value is kept, as a repeated argument is; the value it replaced is named
    by a ``duplicate_argument`` diagnostic instead of vanishing silently."""
    output = "Filing it.\n" + block(el("title", "Crash on save"), el("labels", el("kind", "bug") + el("kind", "ui")))
    out = support.check_chunking(FMT, output, TOOLS)
    (call,) = out.tool_calls
    assert call.arguments == {"title": "Crash on save", "labels": {"kind": "ui"}}
    (dup,) = [d for d in call.diagnostics if d.code == "duplicate_argument"]
    assert json.loads(dup.raw) == "bug" and "'kind'" in dup.message and "'labels'" in dup.message
    support.assert_nothing_lost(output, out, [NS, "<tool_call>", "</tool_call>", "invoke", "name", "file_ticket",
                                              "title", "labels", "kind", "<", ">", "/"])


def test_a_repeated_nested_object_child_keeps_the_dropped_object_in_the_diagnostic():
    output = block(el("owner", el("team", "core") + el("team", "infra")),
                   el("labels", el("area", el("x", "1")) + el("area", el("y", "2"))))
    out = support.check_chunking(FMT, output, TOOLS)
    (call,) = out.tool_calls
    assert call.arguments == {"owner": {"team": "infra"}, "labels": {"area": {"y": "2"}}}
    dropped = [json.loads(d.raw) for d in call.diagnostics if d.code == "duplicate_argument"]
    assert dropped == ["core", {"x": "1"}]


def test_distinct_children_and_item_lists_carry_no_duplicate_diagnostic():
    output = block(el("labels", el("kind", "bug") + el("area", "ui")),
                   el("title", "t"), el("owner", el("team", "core")))
    out = support.check_chunking(FMT, output, TOOLS)
    (call,) = out.tool_calls
    assert call.arguments == {"labels": {"kind": "bug", "area": "ui"}, "title": "t", "owner": {"team": "core"}}
    assert not call.diagnostics and call.status == "proposed"


def test_a_value_kept_as_its_raw_string_against_its_type_marks_the_call_repaired():
    """``value_type_mismatch`` (an integer-typed leaf written ``0047``, JSON's leading zero, or ``12b``) keeps the
    raw string and, as in every other family (docs/variants.md, ``schema_coerce.coerce_argument``), the call is
    ``repaired``, not ``proposed``: at the top level and inside a nested object."""
    tools = [{"type": "function", "function": {"name": "file_ticket", "parameters": {"type": "object", "properties": {
        "priority": {"type": "integer"}, "site": {"type": "object", "properties": {"floor": {"type": "integer"}}}}}}}]
    for elements, arguments in (((el("priority", "0047"),), {"priority": "0047"}),
                                ((el("site", el("floor", "12b")),), {"site": {"floor": "12b"}})):
        out = support.check_chunking(FMT, block(*elements), tools)
        (call,) = out.tool_calls
        assert call.arguments == arguments and call.status == "repaired"
        assert [d.code for d in call.diagnostics] == ["value_type_mismatch"]
    fine = support.check_chunking(FMT, block(el("priority", "47"), el("site", el("floor", "3"))), tools)
    assert fine.tool_calls[0].arguments == {"priority": 47, "site": {"floor": 3}}
    assert fine.tool_calls[0].status == "proposed"
