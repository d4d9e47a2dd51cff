"""Kimi K3 and MiniMax-M3 grammars (toolwire/grammar/families/kimi_k3.py, minimax_m3.py). Wire strings written by
hand from the formats (the golden outputs are certified in tests/grammar/test_certify.py and
tests_engines/test_grammar_xgrammar.py)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import toolwire
from toolwire.errors import InvalidToolDefinition
from toolwire.grammar.certify import check_walks
from toolwire.grammar.matchers import Matcher

TARGETS = ("llguidance", "gbnf")
SCHEMA = {"type": "object", "properties": {
    "city": {"type": "string"}, "unit": {"enum": ["c", "f"]}, "days": {"type": "integer", "minimum": 1, "maximum": 9},
    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
    "opts": {"type": "object", "properties": {"fast": {"type": "boolean"}, "note": {"type": ["string", "null"]}}}},
    "required": ["city"]}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}},
         {"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}}]

# ---- Kimi K3
O, C, S = "<|open|>", "<|close|>", "<|sep|>"


def k_arg(key: str, kind: str, value: str) -> str:
    return f'{O}argument key="{key}" type="{kind}"{S}{value}{C}argument{S}'


def k_call(name: str, *args: str, index: int = 1) -> str:
    return f'{O}call tool="{name}" index="{index}"{S}' + "".join(args) + f"{C}call{S}"


def k_out(content: str = "", *calls: str, reasoning: str | None = None) -> str:
    head = "" if reasoning is None else f"{reasoning}{C}think{S}{O}response{S}"
    tools = f"{O}tools{S}" + "".join(calls) + f"{C}tools{S}" if calls else ""
    return f"{head}{content}{C}response{S}{tools}{C}message{S}"


FULL = k_call("get_weather", k_arg("city", "string", "Oslo <b> & \"x\"\n"), k_arg("unit", "string", "c"),
              k_arg("days", "number", "3"), k_arg("tags", "array", '["a", "b"]'),
              k_arg("opts", "object", '{"fast": true, "note": null}'))


@pytest.mark.parametrize("target", TARGETS)
def test_kimi_k3_typed_arguments(target):
    fmt = toolwire.get_format("kimi_k3")
    m = Matcher(fmt.grammar(TOOLS, target=target, tool_choice="required", thinking=False))
    assert m.accepts(k_out("Checking.", FULL)) and m.accepts(k_out("", k_call("get_weather", k_arg("city", "string", ""))))
    parsed = fmt.parse(k_out("Checking.", FULL), TOOLS, thinking=False)
    assert [c.status for c in parsed.tool_calls] == ["proposed"] and not parsed.diagnostics
    assert parsed.tool_calls[0].arguments == {"city": 'Oslo <b> & "x"\n', "unit": "c", "days": 3, "tags": ["a", "b"],
                                              "opts": {"fast": True, "note": None}}
    assert m.accepts(k_out("", k_call("get_weather", k_arg("city", "string", "x")), k_call("now", index=2)))
    assert not m.accepts(k_out("", k_call("get_weather", k_arg("days", "number", "3"))))  # city is required
    assert not m.accepts(k_out("", k_call("get_weather", k_arg("days", "number", "3"), k_arg("city", "string", "x"))))
    assert not m.accepts(k_out("", k_call("get_weather", k_arg("city", "string", "x"), k_arg("days", "number", "0"))))
    assert not m.accepts(k_out("", k_call("get_weather", k_arg("city", "string", f"a{O}b"))))  # no marker in text
    assert not m.accepts(k_out("", k_call("get_weather", k_arg("city", "string", "x"),
                                          k_arg("tags", "array", f'["a{C}"]'))))  # nor inside a JSON string
    assert not m.accepts(k_out("", k_call("get_weather", k_arg("city", "number", "3"))))  # the template's type


@pytest.mark.parametrize("target", TARGETS)
def test_kimi_k3_tool_choice_and_reasoning(target):
    fmt = toolwire.get_format("kimi_k3")
    call = k_call("get_weather", k_arg("city", "string", "Oslo"))
    auto, required, none, named = (Matcher(fmt.grammar(TOOLS, target=target, tool_choice=c, thinking=False))
                                   for c in ("auto", "required", "none", {"name": "now"}))
    assert auto.accepts(k_out("Hi.")) and auto.accepts(k_out("Sure.", call))
    assert required.accepts(k_out("Sure.", call)) and not required.accepts(k_out("Hi."))
    assert none.accepts(k_out("Hi.")) and not none.accepts(k_out("", call))
    assert named.accepts(k_out("", k_call("now"))) and not named.accepts(k_out("", call))
    thinking = Matcher(fmt.grammar(TOOLS, target=target, thinking=True))
    assert thinking.accepts(k_out("", call, reasoning="Check the weather.")) and not thinking.accepts(k_out("", call))
    assert not auto.accepts(k_out("Hi.") + "more")  # the message ends the output


def test_kimi_k3_refuses_names_the_wire_cannot_carry():
    bad = [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"a<|sep|>": {"type": "string"}}}}}]
    with pytest.raises(InvalidToolDefinition) as exc:
        toolwire.get_format("kimi_k3").grammar(bad, target="llguidance", thinking=False)
    assert exc.value.field == "tools[0].function.parameters.properties.a<|sep|>"
    quoted = [{"type": "function", "function": {"name": 'say "hi" & go', "parameters": {"type": "object"}}}]
    fmt = toolwire.get_format("kimi_k3")
    text = k_out("", f'{O}call tool="say &quot;hi&quot; &amp; go" index="1"{S}{C}call{S}')
    assert Matcher(fmt.grammar(quoted, target="llguidance", tool_choice="required", thinking=False)).accepts(text)
    assert fmt.parse(text, quoted, thinking=False).tool_calls[0].name == 'say "hi" & go'


# ---- MiniMax-M3
NS = "]<]minimax[>["


def mm_el(key: str, inner: str) -> str:
    return f"{NS}<{key}>{inner}{NS}</{key}>"


def mm_call(name: str, *elements: str) -> str:
    return f'{NS}<invoke name="{name}">' + "".join(elements) + f"{NS}</invoke>\n"


def mm_block(*calls: str) -> str:
    return f"{NS}<tool_call>\n" + "".join(calls) + f"{NS}</tool_call>"


MM_FULL = mm_call("get_weather", mm_el("city", "Oslo <b> & \"x\"\n"), mm_el("unit", "c"), mm_el("days", "3"),
                  mm_el("tags", mm_el("item", "a") + mm_el("item", "")),
                  mm_el("opts", mm_el("fast", "true") + mm_el("note", "n")))


@pytest.mark.parametrize("target", TARGETS)
def test_minimax_m3_recursive_elements(target):
    fmt = toolwire.get_format("minimax_m3")
    m = Matcher(fmt.grammar(TOOLS, target=target, tool_choice="required"))
    assert m.accepts(mm_block(MM_FULL)) and m.accepts(mm_block(mm_call("now"), mm_call("get_weather", mm_el("city", ""))))
    parsed = fmt.parse(mm_block(MM_FULL), TOOLS)
    assert [c.status for c in parsed.tool_calls] == ["proposed"] and not parsed.diagnostics
    assert parsed.tool_calls[0].arguments == {"city": 'Oslo <b> & "x"\n', "unit": "c", "days": 3, "tags": ["a", ""],
                                              "opts": {"fast": True, "note": "n"}}
    assert m.accepts(mm_block(mm_call("get_weather", mm_el("city", "x"), mm_el("tags", ""))))  # an empty list
    assert not m.accepts(mm_block(mm_call("get_weather", mm_el("days", "3"))))  # city is required
    assert not m.accepts(mm_block(mm_call("get_weather", mm_el("city", "x"), mm_el("days", "10"))))  # maximum
    assert not m.accepts(mm_block(mm_call("get_weather", mm_el("city", "x"),
                                          mm_el("tags", mm_el("item", "a") * 3))))  # maxItems
    assert not m.accepts(mm_block(mm_call("get_weather", mm_el("city", f"a{NS}b"))))  # the prefix starts a tag
    assert not m.accepts(mm_block(mm_call("get_weather", mm_el("city", "x"), mm_el("unit", "k"))))  # enum


@pytest.mark.parametrize("target", TARGETS)
def test_minimax_m3_tool_choice_and_reasoning(target):
    fmt = toolwire.get_format("minimax_m3")
    block = mm_block(mm_call("get_weather", mm_el("city", "Oslo")))
    auto, required, none, named = (Matcher(fmt.grammar(TOOLS, target=target, tool_choice=c))
                                   for c in ("auto", "required", "none", {"name": "now"}))
    assert auto.accepts("Hi.") and auto.accepts("Sure." + block) and auto.accepts("<mm:think>Hm.</mm:think>" + block)
    assert required.accepts(block + "Done.") and not required.accepts("Hi.")
    assert none.accepts("Hi.") and not none.accepts(block)
    assert named.accepts(mm_block(mm_call("now"))) and not named.accepts(block)
    thinking = Matcher(fmt.grammar(TOOLS, target=target, thinking=True, tool_choice="required"))
    assert thinking.accepts("Check it.</mm:think>" + block) and not thinking.accepts("Check it.</mm:think>Hi.")


def test_minimax_m3_refuses_keys_the_wire_cannot_carry():
    for key in ("a>b", "invoke", f"x{NS}"):
        bad = [{"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {"o": {"type": "object", "properties": {key: {"type": "string"}}}}}}}]
        with pytest.raises(InvalidToolDefinition) as exc:
            toolwire.get_format("minimax_m3").grammar(bad, target="llguidance")
        assert exc.value.field == f"tools[0].function.parameters.properties.o.properties.{key}"


# ---- claim 2 on both formats, with and without reasoning, every tool_choice mode (small tools: short walks)

@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", ["kimi_k3", "minimax_m3"])
@pytest.mark.parametrize("thinking", [False, True])
@pytest.mark.parametrize("choice", ["required", "auto", "none", {"name": "get_weather"}])
def test_walks_parse_back_as_proposed(name, target, thinking, choice):
    report = check_walks(toolwire.get_format(name), TOOLS, target, samples=6, tool_choice=choice, thinking=thinking,
                         seed=11)
    print(f"\n{name} {target} thinking={thinking} {choice}: {report.passed}/{report.checked} parsed back; "
          f"outside the claim {report.excluded}; unfinished {report.unfinished}")
    assert report.failures == [] and report.checked >= 3


_names = st.from_regex(r"[a-z][a-z_]{0,7}", fullmatch=True).filter(lambda n: n not in ("invoke", "tool_call"))
_leaf = st.one_of(
    st.just({"type": "string"}), st.just({"type": "boolean"}), st.just({"type": "number"}),
    st.builds(lambda lo, n: {"type": "integer", "minimum": lo, "maximum": lo + n}, st.integers(-50, 50),
              st.integers(0, 40)),
    st.lists(st.from_regex(r"[a-z<>/& \"]{1,6}", fullmatch=True), min_size=1, max_size=3, unique=True).map(
        lambda vs: {"enum": vs}),
    st.just({"type": "array", "items": {"type": "string"}, "maxItems": 3}),
    st.just({"type": "array", "items": {"type": "integer"}, "minItems": 1}),
    st.just({"type": ["string", "null"]}), st.just({"type": ["integer", "null"]}))
_schema = st.dictionaries(_names, st.one_of(_leaf, st.dictionaries(_names, _leaf, min_size=1, max_size=2).map(
    lambda p: {"type": "object", "properties": p, "required": sorted(p)[:1]})), max_size=4).flatmap(
    lambda props: st.lists(st.sampled_from(sorted(props)) if props else st.nothing(), unique=True).map(
        lambda req: {"type": "object", "properties": props, "required": req}))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=_schema, target=st.sampled_from(TARGETS), name=st.sampled_from(["kimi_k3", "minimax_m3"]),
       choice=st.sampled_from(["required", "auto"]))
def test_random_schemas_round_trip(schema, target, name, choice):
    tools = [{"type": "function", "function": {"name": "tool_a", "parameters": schema}}]
    report = check_walks(toolwire.get_format(name), tools, target, samples=3, seed=1, tool_choice=choice)
    assert report.failures == []
    assert report.checked + report.unfinished == 3
