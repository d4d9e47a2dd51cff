"""Certification in the main venv (llguidance, and GBNF through llguidance's own GBNF reader), per format:

1. parser-accepted => grammar-accepted: every golden output whose calls all parse as ``proposed`` with
   schema-valid arguments is accepted (fed as UTF-8 bytes; real token ids: tests_engines, xgrammar);
2. grammar-generated => parser-proposed: random walks over the matcher's allowed bytes parse back as proposed,
   schema-valid calls with no diagnostic, for the golden tools and for hypothesis-random schemas;
3. every tool_choice mode (tests/grammar/test_grammar.py has the shape tests).

The numbers are printed (``pytest -s``); xgrammar is certified in tests_engines/test_grammar_xgrammar.py.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

import toolwire
from toolwire.grammar.certify import BYTE_WALKS_INEXACT, check_outputs, check_walks
from toolwire.grammar.coverage import supported_formats

from support import golden, golden_parse_kwargs, require_shared

TARGETS = ("llguidance", "gbnf")
PYTHON_LITERAL_VALUE = re.compile(r">[\[{]'")


def _thinking(row):
    return golden_parse_kwargs(row).get("thinking", False)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", supported_formats())
def test_parser_accepted_outputs_are_grammar_accepted(name, target):
    require_shared()
    rows = golden("parse", name)
    report = check_outputs(toolwire.get_format(name), rows, target, thinking_of=_thinking)
    if report.checked == 0 and report.excluded == {"no call": len(rows)}:
        pytest.skip(f"no golden {name} output holds a call; certified on hand-written outputs in its family test")
    print(f"\n{name} {target}: {report.passed}/{report.checked} accepted; outside the claim: {report.excluded}; "
          f"rejected: {len(report.failures)}")
    with_calls = sum(1 for row in rows if row["expected"].get("tool_calls"))
    # deepseek_r1's golden outputs hold no call: tests/grammar/test_grammar.py
    assert report.checked >= min(3, with_calls)
    assert report.failures == []


def test_out_of_order_properties_are_the_documented_narrowing():
    """The only golden outputs outside claim 1: arguments not in the schema's property order, which every
    target's JSON Schema support fixes (docs/grammar.md). Reordered, the same call is accepted."""
    fmt = toolwire.get_format("qwen25")
    row = next(r for r in golden("parse", "qwen25") if '"urgent": false, "policy_ref": null' in r["model_output"])
    from toolwire.grammar.matchers import Matcher

    m = Matcher(fmt.grammar(row["tools"], target="llguidance"))
    assert not m.accepts(row["model_output"])
    assert m.accepts(row["model_output"].replace('"urgent": false, "policy_ref": null',
                                                 '"policy_ref": null, "urgent": false'))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", supported_formats())
@pytest.mark.parametrize("choice", ["required", "auto", "none", {"name": "get_weather"}])
def test_grammar_generated_outputs_parse_back_as_proposed(name, target, choice):
    require_shared()
    if name in BYTE_WALKS_INEXACT:
        pytest.skip(f"{name}: byte-level walks cannot keep markers out of JSON strings on {target}")
    tools = golden("parse", name)[0]["tools"]
    fmt = toolwire.get_format(name)
    thinking = fmt.markers.get("think_close") is not None and name != "qwen25"
    report = check_walks(fmt, tools, target, samples=8, tool_choice=choice, thinking=thinking, seed=7)
    print(f"\n{name} {target} {choice}: {report.passed}/{report.checked} parsed back; unfinished {report.unfinished}")
    assert report.checked >= 6 and report.failures == []


_names = st.from_regex(r"[a-z][a-z_]{0,7}", fullmatch=True)
_leaf = st.one_of(
    st.just({"type": "string"}), st.just({"type": "boolean"}), st.just({"type": "number"}),
    st.builds(lambda lo, n: {"type": "integer", "minimum": lo, "maximum": lo + n},
              st.integers(-50, 50), st.integers(0, 40)),
    st.lists(st.from_regex(r"[a-z<>/ ]{1,6}", fullmatch=True), min_size=1, max_size=3, unique=True).map(
        lambda vs: {"enum": vs}),
    st.just({"type": "array", "items": {"type": "string"}, "maxItems": 3}),
    st.just({"type": ["string", "null"]}),
)
_schema = st.dictionaries(_names, st.one_of(_leaf, st.dictionaries(_names, _leaf, min_size=1, max_size=2).map(
    lambda p: {"type": "object", "properties": p, "required": sorted(p)[:1]})), min_size=0, max_size=4).flatmap(
    lambda props: st.lists(st.sampled_from(sorted(props)) if props else st.nothing(), unique=True).map(
        lambda req: {"type": "object", "properties": props, "required": req}))


_GLM_OBJECT = {"type": "object", "properties": {
    "a": {"type": "string"}, "b": {"type": "string"},
    "c": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}, "d": {"type": "string"}},
    "required": []}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=_schema, target=st.sampled_from(TARGETS),
       name=st.sampled_from([f for f in supported_formats() if f not in BYTE_WALKS_INEXACT]))
@example(schema=_GLM_OBJECT, target="llguidance", name="glm47")  # a walk's JSON string spells </arg_value>
def test_random_schemas_round_trip(schema, target, name):
    tools = [{"type": "function", "function": {"name": "tool_a", "parameters": schema}}]
    report = check_walks(toolwire.get_format(name), tools, target, samples=3, seed=1)
    assert report.failures == []
    assert report.checked + report.unfinished == 3


def test_a_json_value_cut_by_a_marker_is_excused_and_a_wrong_type_is_not():
    """GLM keeps a JSON-typed value that a marker inside one of its strings cut short as its raw string
    (``value_type_mismatch``): outside the byte targets' claim, as the other parsers' codes for it are. A
    value of the wrong type that is no cut JSON stays a failure."""
    from toolwire.grammar.certify import _json_value_cut

    fmt = toolwire.get_format("glm47")
    tools = [{"type": "function", "function": {"name": "tool_a", "parameters": _GLM_OBJECT}}]
    call = "<tool_call>tool_a<arg_key>c</arg_key><arg_value>{}</arg_value></tool_call>"
    cut = fmt.parse(call.format('{"a": "x</arg_value><arg_key>d</arg_key><arg_value>y"}'), tools)
    assert cut.tool_calls[0].arguments == {"c": '{"a": "x', "d": 'y"}'} and _json_value_cut(cut, tools)
    wrong = fmt.parse(call.format("plain words"), tools)
    assert wrong.tool_calls[0].arguments["c"] == "plain words"
    assert [d.code for d in wrong.tool_calls[0].diagnostics] == ["value_type_mismatch"]
    assert not _json_value_cut(wrong, tools)
    whole = fmt.parse(call.format('{"a": "x"}'), tools)
    assert whole.tool_calls[0].arguments["c"] == {"a": "x"} and not _json_value_cut(whole, tools)


@pytest.mark.parametrize("target", TARGETS)
def test_seed_oss_python_literal_values(target):
    """Seed-OSS's template writes list and dict values as Python literals (``['a', 'b']``), which its parser reads:
    the grammar accepts them (claim 1 above: 25/25) and walks that write them parse back as proposed,
    schema-valid calls."""
    require_shared()
    fmt = toolwire.get_format("seed_oss")
    tools = golden("parse", "seed_oss")[0]["tools"]
    literal_walks = 0
    for tool in ("create_reimbursement_ticket", "search_papers"):
        report = check_walks(fmt, tools, target, samples=16, tool_choice={"name": tool}, thinking=True, seed=3)
        assert report.failures == [] and report.checked >= 12
        literal_walks += sum(1 for text in report.walked if PYTHON_LITERAL_VALUE.search(text))
    print(f"\nseed_oss {target}: {literal_walks} walks wrote a Python-literal value")
    assert literal_walks >= 1


JSON_CUT_BY = {**dict.fromkeys(["glm45", "glm46", "glm47", "laguna", "hy3", "minimax_m2"], ()),
               **dict.fromkeys(["deepseek_v32", "deepseek_v4", "deepseek_v41"],
                               ("parameter>", "parameter name=", "invoke>")),
               "qwen3_coder": ("<parameter=",)}
"""Format -> what every marker that cuts the parser's reading of a JSON-typed value (spelled inside one of its
strings) contains: what the describer's ``json_excludes`` holds (empty: nothing cuts it, xml_params.NO_JSON_CUT)."""


@pytest.mark.parametrize("name", sorted(JSON_CUT_BY))
def test_markers_inside_a_json_value_string(name):
    """Why a JSON value's excludes hold only JSON_CUT_BY[name] (xgrammar compiles each exclude at a cost): every
    marker of the call wire and of free text, and the value closer followed by each, spelled inside a JSON string
    of an array value (in a golden output), parses back as the same proposed call, with no
    implicit close, unless it spells that marker."""
    require_shared()
    from toolwire.grammar.certify import wire_markers

    fmt = toolwire.get_format(name)
    tool = next(t for t in golden("parse", name)[0]["tools"] if t["function"]["name"] == "create_reimbursement_ticket")
    from toolwire.grammar import describe

    wire = describe(fmt, [tool])
    section = (wire.section.begin, wire.section.end) if wire.section else ()
    markers = sorted({m.strip() or m for m in (*wire_markers(fmt, [tool], False), *wire.banned(), *section)
                      if "create_reimbursement_ticket" not in m})
    closers = [m for m in markers if m.startswith("</") and ("param" in m or "arg_value" in m)]
    spelled = [*markers, *(c + "\n" + m for c in closers for m in markers)]
    row = next(r for r in golden("parse", name) if '["INV-102"]' in r["model_output"]
               and [c.status for c in fmt.parse(r["model_output"], r["tools"]).tool_calls] == ["proposed"])
    expected = fmt.parse(row["model_output"], row["tools"]).tool_calls[0].arguments
    cut = []
    for marker in spelled:
        output = row["model_output"].replace('["INV-102"]', json.dumps(["A" + marker + "B"], ensure_ascii=False))
        calls = fmt.parse(output, row["tools"]).tool_calls
        if [(c.status, c.arguments) for c in calls] != [("proposed", dict(expected, invoice_ids=["A" + marker + "B"]))]:
            cut.append(marker)
    print(f"\n{name}: {len(spelled)} markers spelled inside a JSON string, cut by {cut}")
    assert all(any(word.replace(" ", "") in m.replace(" ", "") for word in JSON_CUT_BY[name]) for m in cut)
    assert bool(cut) == bool(JSON_CUT_BY[name])  # and where the describer excludes something, it does cut
