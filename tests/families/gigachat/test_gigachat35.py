"""GigaChat 3.5 (gigachat35): golden vectors (render byte-exact, parse one-shot and streamed), and beyond them the
model's own template (extra/GigaChat3.5) on random conversations and on what the vectors do not cover: its
switches (``use_devsystem``, ``default_devsystem``, ``use_system``, ``use_suggester``, ``drop_history_thinking``), its
own roles, results matched by position, the TypeScript tool descriptions and few-shot examples; refusals; the
parser on the DSML engine in the ``｜GCML｜`` namespace; round trips; the grammar."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import toolwire
from toolwire.context_policy import plan
from toolwire.errors import InvalidRequest, ToolwireError, UnrepresentableValue, UnsupportedByFormat
from support.xml_calls import RT_TOOLS, conversations, typed_args
from support import (assert_events_consistent, full_state, golden_tests, random_chunks, reference_renderer,
                     stream_parse, turn_output)

test_golden_render, test_golden_parse_oneshot, test_golden_parse_streamed = golden_tests(["gigachat35"])

GC = toolwire.get_format("gigachat35")
reference = reference_renderer("extra/GigaChat3.5", bos_token="<s>", eos_token="</s>")
HELLO = [{"role": "user", "content": "Hello!"}]
WEATHER = [{"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"]}}}]
DEVSYSTEM = ("<s>developer system<|role_sep|>\nВызов функций: последовательный\nБезопасность: соответствует "
             "законодательству РФ.\nТекущая дата: {}\nОграничение знаний: Декабрь, 2025.\nТы сделан на базе "
             "нейросети GigaChat.<|message_sep|>\n\n")
TURN = "{}<|role_sep|>\n{}<|message_sep|>\n\n"


def same_as_reference(messages, tools=None, **options):
    """toolwire's render equals the template's (with the template keywords the options mirror)."""
    prompt = GC.render(messages, tools, **options)
    kw = GC.template_variables(**options)
    assert prompt.text == reference(messages, tools, **kw)
    assert "".join(s.text for s in prompt.segments) == prompt.text
    return prompt.text


def both_refuse(messages, tools=None, **options):
    with pytest.raises(Exception) as template_error:
        reference(messages, tools, **GC.template_variables(**options))
    assert not isinstance(template_error.value, pytest.skip.Exception)
    with pytest.raises(ToolwireError) as err:
        GC.render(messages, tools, **options)
    return err.value


def call(cid, name, arguments):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


# ---- the turns every prompt has

@pytest.mark.parametrize("options, tail", [({}, ""), ({"thinking": True}, "<think>"), ({"reasoning": True}, "<think>"),
                                           ({"chat_template_kwargs": {"reasoning": True}}, "<think>")])
def test_the_default_prompt(options, tail):
    text = same_as_reference(HELLO, current_date="2026-01-02", **options)
    assert text == (DEVSYSTEM.format("2026-01-02") + TURN.format("system", "") + TURN.format("user", "Hello!")
                    + TURN.format("available functions", "[]") + "assistant<|role_sep|>\n" + tail)
    assert GC.render(HELLO, **options).opens_reasoning == bool(tail)


def test_without_current_date_the_date_is_printed_empty_as_the_template_does():
    assert same_as_reference(HELLO).startswith(DEVSYSTEM.format(""))
    assert GC.family.options.fields["current_date"].template == "current_date"


@pytest.mark.parametrize("options", [
    {"use_devsystem": False}, {"use_system": False}, {"use_suggester": False},
    {"default_devsystem": "Ты ассистент.<|role_sep|>x<|message_sep|>"},
    {"use_devsystem": False, "use_system": False, "use_suggester": False, "thinking": True},
])
def test_the_templates_switches(options):
    text = same_as_reference(HELLO, WEATHER, current_date="2026-01-02", **options)
    assert ("developer system" in text) == options.get("use_devsystem", True)
    assert ("system<|role_sep|>\n<|message_sep|>" in text) == options.get("use_system", True)
    assert ("available functions" in text) == options.get("use_suggester", True)


def test_the_requests_own_roles():
    messages = [{"role": "developer system", "content": "Свой текст.<|role_sep|>a"},
                {"role": "system", "content": "Be brief."},
                {"role": "function descriptions", "content": "", "function_descriptions": ["get_weather"]},
                {"role": "available functions", "content": '["get_weather"]'},
                {"role": "developer", "content": "Note."},
                {"role": "user", "content": "Hi", "functions": ["x"]}]
    text = same_as_reference(messages, WEATHER)
    assert text.startswith("<s>developer system<|role_sep|>\nСвой текст.<|role_sep|>\na<|message_sep|>\n\n"
                           + TURN.format("system", "Be brief.") + "function descriptions<|role_sep|>\nnamespace")
    assert text.count("available functions") == 1  # the request has its own: no suggester turns
    assert TURN.format("developer", "Note.") in text


def test_a_developer_system_turn_without_its_default_switch_is_left_out():
    messages = [{"role": "developer system", "content": "Own."}, {"role": "user", "content": "Hi"}]
    text = same_as_reference(messages, use_devsystem=False)
    assert text.startswith("<s>system<|role_sep|>\n<|message_sep|>") and "Own." not in text


# ---- assistant turns and results

def test_reasoning_is_dropped_before_the_last_user_message_unless_kept():
    history = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "reasoning_content": "r1"},
               {"role": "user", "content": "c"}, {"role": "assistant", "content": "d", "reasoning_content": "r2"}]
    for thinking in (False, True):
        text = same_as_reference(history, thinking=thinking)
        assert "r1" not in text and "assistant<|role_sep|>\n<think>r2</think>\n\nd<|message_sep|>" in text
    assert "<think>r1</think>\n\nb" in same_as_reference(history, drop_history_thinking=False)
    assert [d.action for d in plan(history, "gigachat35").decisions] == ["drop", "keep"]


def test_with_a_system_and_a_developer_system_message_the_turn_after_the_last_user_counts_as_before_it():
    """The template compares the last user message's index in the request with the turn's in the list left once a
    leading developer-system and system message are taken out: the turn right after the last user message loses
    its reasoning (the policy says so, as the template does)."""
    history = [{"role": "developer system", "content": "D."}, {"role": "system", "content": "S."},
               {"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "reasoning_content": "r1"},
               {"role": "user", "content": "c"}, {"role": "assistant", "content": "d", "reasoning_content": "r2"}]
    text = same_as_reference(history, add_generation_prompt=False)
    assert "r1" not in text and "r2" not in text
    assert [d.action for d in plan(history, "gigachat35", add_generation_prompt=False).decisions] == ["drop", "drop"]
    assert "<think>r2</think>" in same_as_reference(history[2:], add_generation_prompt=False)  # without them: kept


def test_a_final_turn_ends_with_eos_and_reasoning_alone_is_refused():
    messages = HELLO + [{"role": "assistant", "content": "Hi.", "reasoning_content": "Greet."}]
    assert same_as_reference(messages, add_generation_prompt=False).endswith(
        "assistant<|role_sep|>\n<think>Greet.</think>\n\nHi.</s>")
    assert same_as_reference(messages).endswith("Hi.<|message_sep|>\n\n")  # no new generation prompt either
    err = both_refuse(HELLO + [{"role": "assistant", "content": "", "reasoning_content": "Only this."}])
    assert isinstance(err, InvalidRequest) and err.message_index == 1


def test_results_are_named_by_position_after_the_last_calls():
    messages = [{"role": "user", "content": "Two."},
                {"role": "assistant", "content": "", "tool_calls": [call("a", "get_weather", {"city": "Oslo"}),
                                                                    call("b", "list_projects", {})]},
                {"role": "tool", "tool_call_id": "b", "content": "projects"},
                {"role": "tool", "tool_call_id": "a", "content": "4 C"}]
    tools = WEATHER + [{"type": "function", "function": {"name": "list_projects", "parameters": {"type": "object"}}}]
    text = same_as_reference(messages, tools)
    assert ('function result<|role_sep|>\n<function_response name="get_weather">projects</function_response>\n'
            '<function_response name="list_projects">4 C</function_response><|message_sep|>\n\n'
            'available functions<|role_sep|>\n["get_weather", "list_projects"]<|message_sep|>') in text


def test_list_content_is_refused_unless_joined():
    """The template writes list content as JSON text (a tool message's parts as one result each); toolwire refuses it
    (docs/fidelity.md, content_parts_lost), and with join_content_parts=True joins the text parts."""
    parts = [{"type": "text", "text": "4 C"}, {"type": "text", "text": "windy"}]
    messages = [{"role": "user", "content": parts},
                {"role": "assistant", "content": "", "tool_calls": [call("a", "get_weather", {"city": "Oslo"})]},
                {"role": "tool", "tool_call_id": "a", "content": parts}]
    assert 'user<|role_sep|>\n[{"type": "text", "text": "4 C"}' in reference(messages[:1])
    with pytest.raises(UnsupportedByFormat) as err:
        GC.render(messages, WEATHER)
    assert (err.value.message_index, err.value.field) == (0, "content")
    text = GC.render(messages, WEATHER, join_content_parts=True).text
    assert TURN.format("user", "4 C\n\nwindy") in text
    assert '<function_response name="get_weather">4 C\n\nwindy</function_response>' in text


@pytest.mark.parametrize("messages", [
    [{"role": "user", "content": "q"}, {"role": "tool", "content": "r"}],  # no call before it
    [{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [
        call("a", "get_weather", {"city": "x"})]}, {"role": "tool", "content": "r"}, {"role": "tool", "content": "s"}],
    [{"role": "user", "content": "q"}, {"role": "reasoning", "content": "r"}],
    [{"role": "user", "content": "q"}, {"role": "function descriptions", "content": ""}],
])
def test_requests_the_template_refuses_are_refused(messages):
    err = both_refuse(messages, WEATHER)
    assert isinstance(err, InvalidRequest) and err.message_index is not None


def test_a_missing_content_reads_as_the_templates_own_none_branches():
    """transformers drops None-valued keys, and then this template fails on an assistant message whose content is
    None (``tojson`` of an undefined); it means '' there (``if message.content is not none else ''``), which is
    what toolwire renders; a tool message's None is one result, ``null``."""
    messages = [{"role": "user", "content": "q"},
                {"role": "assistant", "content": None, "tool_calls": [call("a", "get_weather", {"city": "x"})]},
                {"role": "tool", "tool_call_id": "a", "content": None}]
    with pytest.raises(Exception, match="Undefined"):
        reference(messages, WEATHER)
    text = GC.render(messages, WEATHER).text
    with_empty = [messages[0], {**messages[1], "content": ""}]
    assert text.startswith(same_as_reference(with_empty, WEATHER, add_generation_prompt=False)[:-len("</s>")])
    assert '<function_response name="get_weather">null</function_response>' in text


@pytest.mark.parametrize("arguments, field", [
    ({"q": "a</｜GCML｜parameter>b"}, "arguments.q"), ({"q": ["a</｜GCML｜invoke>"]}, "arguments.q"),
    ({'bad"key': 1}, 'arguments.bad"key'),
])
def test_a_value_or_name_that_would_end_its_tag_is_refused(arguments, field):
    messages = HELLO + [{"role": "assistant", "content": "", "tool_calls": [call("a", "get_weather", arguments)]}]
    with pytest.raises(UnrepresentableValue) as err:
        GC.render(messages, WEATHER)
    assert err.value.field == f"tool_calls[0].function.{field}"


# ---- the TypeScript tool descriptions

SCHEMA_TOOLS = [
    {"type": "function", "function": {
        "name": "everything", "description": "Line one.\n\n  Line two.", "parameters": {
            "type": "object", "$defs": {"pt": {"type": "object", "properties": {"x": {"type": "number"}}}},
            "properties": {
                "s": {"type": "string", "description": "A string.\nTwo lines.", "minLength": 1, "pattern": "^a"},
                "d": {"type": "string", "format": "date-time"}, "c": {"const": "fixed"}, "b": {"const": True},
                "e": {"enum": ["x", 2, None]}, "se": {"type": "string", "enum": ["p", 3, "q"]},
                "n": {"type": "number", "enum": [1, 2.5]}, "i": {"type": "integer", "default": 3, "maximum": 9},
                "f": {"type": "float", "const": 0.5}, "t": {"type": "boolean", "default": False},
                "z": {"type": "null"}, "u": {"type": ["string", "null", "integer", "boolean", "object", "array"],
                                             "items": {"type": "string"}, "properties": {"k": {"type": "string"}}},
                "ue": {"type": ["string", "number"], "enum": ["a", 1]}, "any": {"anyOf": [{"type": "string"},
                                                                                          {"$ref": "#/$defs/pt"}]},
                "one": {"oneOf": [{"type": "integer"}, {"type": "array", "items": {"type": "integer"}}]},
                "all": {"allOf": [{"$ref": "#/$defs/pt"}, {"type": "object", "properties": {"y": {"type": "string"}}}]},
                "tuple": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]},
                "old_tuple": {"type": "array", "items": [{"type": "string"}]}, "arr": {"type": "array"},
                "nested": {"type": "object", "properties": {"deep": {"type": "object", "properties": {
                    "v": {"type": "string", "default": "d"}}, "required": ["v"]}}, "additionalProperties": True},
                "map": {"type": "object", "additionalProperties": {"type": "integer"}},
                "dict": {"type": "dict", "properties": {"k": {"type": "int"}}}, "not": {"not": {"type": "string"}},
                "bad_ref": {"$ref": "#/nowhere"}, "ext_ref": {"$ref": "other.json#/x"},
                "untyped": {"description": "no type"},
            }, "required": ["s", "nested"]},
        "return_parameters": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}},
    {"type": "function", "function": {"name": "no_params", "description": ""}},
    {"type": "function", "function": {
        "name": "with_examples", "parameters": {"type": "object", "properties": {
            "a": {"type": "string"}, "b": {"type": "object", "properties": {"y": {"type": "integer"},
                                                                            "x": {"type": "string"}}},
            "c": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "boolean"}}}},
            "n": {"type": "number"}, "u": {"description": "untyped"}}},
        "few_shot_examples": [{"request": "Сделай \"это\"", "params": {"c": [{"k": True}], "b": {"x": "s", "y": 1},
                                                                       "a": "t", "n": None, "u": 5, "extra": 1}},
                              {"request": "Second", "params": {}}]}},
]


def test_tool_descriptions_as_typescript_and_few_shot_examples():
    text = same_as_reference(HELLO, SCHEMA_TOOLS)
    assert "type no_params = () => any;" in text and "}) => {\n  ok?: boolean,\n};" in text
    assert "//Examples:\n//  \"Сделай \\\"это\\\"\" -> {\"name\": \"with_examples\", \"arguments\": {\"a\": \"t\"" in text


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=st.recursive(
    st.sampled_from([{"type": "string"}, {"type": "integer", "minimum": 0}, {"type": "boolean", "default": True},
                     {"type": "null"}, {"enum": ["a", "b"]}, {"const": 1.5}, {"type": ["string", "null"]},
                     {"type": "string", "format": "date"}, {"type": "array"}]),
    lambda inner: st.one_of(
        st.dictionaries(st.sampled_from(["p", "q", "r_1", "long_name"]), inner, min_size=1, max_size=3).map(
            lambda props: {"type": "object", "properties": props, "required": sorted(props)[:1],
                           "description": "Object.\nSecond line."}),
        inner.map(lambda s: {"type": "array", "items": s}),
        st.lists(inner, min_size=1, max_size=2).map(lambda branches: {"anyOf": branches})),
    max_leaves=6))
def test_random_schemas_describe_as_the_template_does(schema):
    tools = [{"type": "function", "function": {"name": "t", "description": "T.", "parameters": {
        "type": "object", "properties": {"arg": schema}}}}]
    same_as_reference(HELLO, tools)


# ---- the template on random conversations

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(messages=conversations(), with_tools=st.booleans(), agp=st.booleans(), thinking=st.booleans(),
       keep=st.none() | st.booleans())
def test_native_render_equals_the_reference_template(messages, with_tools, agp, thinking, keep):
    tools = RT_TOOLS if with_tools else None
    options = {"add_generation_prompt": agp, "thinking": thinking, "drop_history_thinking": keep,
               "current_date": "2026-11-29"}
    kw = GC.template_variables(**options)
    kw.pop("add_generation_prompt")
    try:
        expected = reference(messages, tools, add_generation_prompt=agp, **kw)
    except Exception as exc:  # the reference refuses (a reasoning-only turn): toolwire must refuse too
        if isinstance(exc, pytest.skip.Exception):
            raise
        with pytest.raises(ToolwireError):
            GC.render(messages, tools, **options)
        return
    try:
        prompt = GC.render(messages, tools, **options)
    except UnrepresentableValue:
        assume(False)  # a value spelling a GCML tag: refused by design (the template would write it raw)
    assert prompt.text == expected


# ---- the parser: DSML's engine in the GCML namespace

def test_the_separator_before_a_block_only_joins_it_to_text():
    text = '<｜GCML｜tool_calls>\n<｜GCML｜invoke name="get_weather">\n</｜GCML｜invoke>\n</｜GCML｜tool_calls>'
    out = GC.parse(text, WEATHER, thinking=False)
    assert [(c.name, c.arguments, c.status) for c in out.tool_calls] == [("get_weather", {}, "proposed")]
    assert out.diagnostics == [] and out.content == ""
    glued = GC.parse("Text." + text, WEATHER, thinking=False)  # the separator only joins: no note without it
    assert (glued.content, glued.diagnostics, len(glued.tool_calls)) == ("Text.", [], 1)
    joined = GC.parse("Text.\n\n" + text, WEATHER, thinking=False)
    assert full_state(joined) == full_state(glued)


@pytest.mark.parametrize("text, reasoning, content", [
    ("R.</think>\n\nAnswer.", "R.", "Answer."),
    ("R.</think>Answer.", "R.", "Answer."),          # no framing: nothing dropped
    ("R.</think>\nAnswer.", "R.", "\nAnswer."),       # half the framing is text
    ("R.</think>\n\n\nAnswer.", "R.", "\nAnswer."),
    ("R.</think>\n", "R.", "\n"),
])
def test_the_framing_after_the_reasoning_is_dropped_in_any_chunking(text, reasoning, content):
    out = GC.parse(text, WEATHER, thinking=True)
    assert (out.reasoning, out.content, out.diagnostics) == (reasoning, content, [])
    for n in range(1, len(text) + 1):
        result, events = stream_parse(GC, text, [text[:n], text[n:]], WEATHER, thinking=True)
        assert full_state(result) == full_state(out)
        assert_events_consistent(result, events)


def test_a_block_in_the_reasoning_is_not_promoted_and_the_framing_after_it_is_dropped():
    text = ('Plan <｜GCML｜tool_calls>\n<｜GCML｜invoke name="get_weather">\n<｜GCML｜parameter name="city" '
            'string="true">Oslo</think>\n\nAnswer.')
    out = GC.parse(text, WEATHER, thinking=True)
    assert (out.reasoning, out.content) == (text[:text.index("</think>")], "Answer.")
    assert [(c.name, c.arguments, c.status, c.source) for c in out.tool_calls] == [
        ("get_weather", {"city": "Oslo"}, "rejected", "reasoning")]
    assert set(out.codes()) == {"unclosed_block", "call_in_reasoning", "unclosed_invoke"}


def test_other_namespaces_and_unseen_spellings_are_text():
    dsml = '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_weather">\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>'
    for text in (dsml, dsml.replace("｜DSML｜", "|GCML|")):
        out = GC.parse(text, WEATHER, thinking=False)
        assert (out.content, out.tool_calls, out.diagnostics) == (text, [], [])


def test_markup_in_a_value_is_noted_in_its_namespace_and_stop_tokens_are_stripped():
    text = ('<｜GCML｜tool_calls>\n<｜GCML｜invoke name="get_weather">\n<｜GCML｜parameter name="city" string="true">'
            'a ｜GCML｜ b</｜GCML｜parameter>\n</｜GCML｜invoke>\n</｜GCML｜tool_calls><|message_sep|>')
    out = GC.parse(text, WEATHER, thinking=False)
    assert out.tool_calls[0].arguments == {"city": "a ｜GCML｜ b"}
    assert [d.message for d in out.tool_calls[0].diagnostics] == ["the value of 'city' contains GCML markup"]
    assert [(d.code, d.raw) for d in out.diagnostics] == [("stop_token_in_output", "<|message_sep|>")]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(args=typed_args, content=st.sampled_from(["", "Checking.", "  two\n\nparagraphs "]),
       reasoning=st.none() | st.sampled_from(["", "Think.", "a\n\nb"]), seed=st.integers(0, 2**16))
def test_round_trip_of_a_rendered_turn(args, content, reasoning, seed):
    """A turn the renderer writes (after the generation prompt, up to its stop token) parses back to itself, one
    shot and streamed."""
    turn = {"role": "assistant", "content": content, "tool_calls": [call("c1", "do_it", args)]}
    if reasoning is not None:
        turn["reasoning_content"] = reasoning
    try:
        text = turn_output(GC, HELLO, turn, RT_TOOLS, stop="</s>", thinking=reasoning is not None)
    except UnrepresentableValue:
        assume(False)
    out = GC.parse(text, RT_TOOLS, thinking=reasoning is not None)
    assert (out.content, out.reasoning) == (content, reasoning or "")
    assert [(c.name, c.arguments, c.status) for c in out.tool_calls] == [("do_it", json.loads(json.dumps(args)),
                                                                          "proposed")]
    assert out.diagnostics == [] and not out.tool_calls[0].diagnostics
    result, events = stream_parse(GC, text, random_chunks(text, random.Random(seed), 7), RT_TOOLS,
                                  thinking=reasoning is not None)
    assert full_state(result) == full_state(out)
    assert_events_consistent(result, events)


# ---- the grammar: DSML's description, GigaChat's layout

@pytest.mark.parametrize("target", ["llguidance", "gbnf"])
def test_the_grammar_accepts_what_the_template_writes(target):
    pytest.importorskip("llguidance")
    from toolwire.grammar.matchers import Matcher

    tools = WEATHER + [{"type": "function", "function": {"name": "list_projects", "parameters": {
        "type": "object", "properties": {}}}}]
    turn = {"role": "assistant", "content": "Let me look.", "reasoning_content": "Plan.",
            "tool_calls": [call("a", "get_weather", {"city": "Oslo", "days": 2}), call("b", "list_projects", {})]}
    text = turn_output(GC, HELLO, turn, tools, stop="</s>", thinking=True)
    assert "\n\nLet me look.\n\n<｜GCML｜tool_calls>" in text
    auto = Matcher(GC.grammar(tools, target=target, thinking=True))
    assert auto.accepts(text)
    assert not auto.accepts(text.replace('"days" string="false">2', '"days" string="true">2'))
    required = Matcher(GC.grammar(tools, target=target, thinking=True, tool_choice="required"))
    bare = text.replace("Let me look.\n\n", "")
    assert required.accepts(bare) and not required.accepts(text)
