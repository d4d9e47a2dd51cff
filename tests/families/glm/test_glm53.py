"""GLM-5.3 (glm53): golden vectors (render byte-exact, parse one-shot and streamed), and beyond them the model's own
template (extra/GLM-5.3) on random conversations and on what the vectors do not cover: the reasoning-effort head
line, ``clear_thinking``, deferred tools, results ordered by call id, ``output`` lists, ``tool_reference`` parts and
media parts; the declaration's options and policy; the parser on GLM-4.7's grammar."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import toolwire
from toolwire.context_policy import plan
from toolwire.errors import InvalidOption, UnrepresentableValue
from support.xml_calls import RT_TOOLS, conversations
from support import golden_tests, reference_renderer

test_golden_render, test_golden_parse_oneshot, test_golden_parse_streamed = golden_tests(["glm53"])

GLM53 = toolwire.get_format("glm53")
reference = reference_renderer("extra/GLM-5.3")
HEAD = "[gMASK]<sop><|system|>Reasoning Effort: "
HELLO = [{"role": "user", "content": "hi"}]
WEATHER = [{"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
HISTORY = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "reasoning_content": " r1\n"},
           {"role": "user", "content": "c"}, {"role": "assistant", "content": "d"}, {"role": "user", "content": "e"}]


def call(cid, city):
    return {"id": cid, "type": "function", "function": {"name": "get_weather", "arguments": json.dumps({"city": city})}}


def same_as_reference(messages, tools=None, template_kwargs=None, **options):
    """toolwire's render equals the template's (with the template keywords the options mirror)."""
    kw = dict(template_kwargs if template_kwargs is not None else GLM53.template_variables(**options))
    prompt = GLM53.render(messages, tools, **options)
    assert prompt.text == reference(messages, tools, **kw)
    assert "".join(s.text for s in prompt.segments) == prompt.text
    return prompt.text


# ---- the head line and the always-open <think>

@pytest.mark.parametrize("options, line", [({}, "Max"), ({"reasoning_effort": "max"}, "Max"),
                                           ({"reasoning_effort": "high"}, "High"), ({"reasoning_effort": "low"}, "Low"),
                                           ({"chat_template_kwargs": {"reasoning_effort": "low"}}, "Low")])
def test_the_effort_line_heads_every_prompt(options, line):
    text = same_as_reference(HELLO, **options)
    assert text == f"{HEAD}{line}<|user|>hi<|assistant|><think>"
    assert GLM53.render(HELLO, **options).opens_reasoning


def test_an_effort_the_template_does_not_name_is_refused():
    """The template reads anything but low / high as Max; toolwire refuses it, naming the field."""
    with pytest.raises(InvalidOption) as err:
        GLM53.render(HELLO, reasoning_effort="medium")
    assert err.value.field == "reasoning_effort" and "'max', 'high', 'low'" in str(err.value)


def test_toggling_the_effort_changes_the_prompt_from_its_head():
    """What the issue warns about: the effort line comes before everything, so no prefix survives a toggle."""
    high, low = (GLM53.render(HELLO, reasoning_effort=e).text for e in ("high", "low"))
    common = next(i for i, (a, b) in enumerate(zip(high, low)) if a != b)
    assert common == len(HEAD)


def test_thinking_is_always_on_and_parsing_starts_in_the_reasoning():
    assert GLM53.family.options.fields["thinking"].default is True
    assert GLM53.default_opens_reasoning
    prompt = GLM53.render(HELLO, thinking=False)
    assert prompt.text.endswith("<|assistant|><think>")  # no switch in the template
    out = GLM53.parse("Thought.</think>Answer.", prompt=prompt)
    assert (out.reasoning, out.content, out.diagnostics) == ("Thought.", "Answer.", [])


# ---- reasoning in history

def test_every_earlier_reasoning_is_kept_as_written_and_a_turn_without_one_gets_an_empty_block():
    text = same_as_reference(HISTORY)
    assert "<|assistant|><think> r1\n</think>b<|user|>c<|assistant|><think></think>d<|user|>e" in text
    decisions = plan(HISTORY, "glm53").decisions
    assert [d.action for d in decisions] == ["keep", "keep"]


def test_clear_thinking_drops_reasoning_before_the_last_user_message():
    text = same_as_reference(HISTORY, clear_thinking=True)
    assert "r1" not in text and "<|assistant|><think></think>b" in text
    tail = HISTORY[:-1]  # now the last assistant turn follows the last user message
    tail = tail[:3] + [{"role": "assistant", "content": "d", "reasoning_content": "r2"}]
    text = same_as_reference(tail, clear_thinking=True, add_generation_prompt=False)
    assert text.endswith("<|assistant|><think>r2</think>d") and "r1" not in text


def test_reasoning_written_inside_the_content_is_split_off():
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "x<think>\nwhy\n</think>\nanswer "}]
    text = same_as_reference(messages, add_generation_prompt=False)
    assert text.endswith("<|assistant|><think>\nwhy\n</think>answer")


# ---- tools and tool results

def test_tools_are_listed_as_their_function_without_deferred_ones_or_strict():
    tools = [{"type": "function", "function": {"name": "a", "description": "A.", "strict": True,
                                               "parameters": {"type": "object", "properties": {}}}},
             {"type": "function", "function": {"name": "b", "defer_loading": True, "parameters": {"type": "object"}}},
             {"type": "function", "function": {"name": "c", "defer_loading": False}}]
    text = same_as_reference(HELLO, tools)
    assert '<tools>\n{"name": "a", "description": "A.", "parameters": {"type": "object", "properties": {}}}\n' \
           '{"name": "c"}\n</tools>' in text


def _results(*results, first=None):
    calls = first or [call("call_a", "Oslo"), call("call_b", "Lima")]
    return [{"role": "user", "content": "Oslo and Lima?"}, {"role": "assistant", "content": "", "tool_calls": calls},
            *results]


@pytest.mark.parametrize("messages, order", [
    (_results({"role": "tool", "tool_call_id": "call_b", "content": "B"},
              {"role": "tool", "tool_call_id": "call_a", "content": "A"}), "AB"),
    # an id that names no call, a missing id, a repeated id: the results stay in the order sent
    (_results({"role": "tool", "tool_call_id": "call_b", "content": "B"},
              {"role": "tool", "tool_call_id": "other", "content": "A"}), "BA"),
    (_results({"role": "tool", "tool_call_id": "call_b", "content": "B"}, {"role": "tool", "content": "A"}), "BA"),
    (_results({"role": "tool", "tool_call_id": "call_b", "content": "B"},
              {"role": "tool", "tool_call_id": "call_b", "content": "A"}), "BA"),
    # one message with a list of outputs, each with its own id
    (_results({"role": "tool", "content": [{"tool_call_id": "call_b", "output": "B"},
                                           {"tool_call_id": "call_a", "output": [{"type": "text", "text": "A"}]}]}),
     "AB"),
])
def test_results_are_written_in_the_order_of_the_calls_when_every_id_pairs_up(messages, order):
    text = same_as_reference(messages, WEATHER)
    assert text.endswith("<|observation|>" + "".join(f"<tool_response>{r}</tool_response>" for r in order)
                         + "<|assistant|><think>")


def test_a_tool_reference_lists_the_referenced_tool_even_when_deferred():
    tools = WEATHER + [{"type": "function", "function": {"name": "find", "defer_loading": True,
                                                        "parameters": {"type": "object", "properties": {}}}}]
    messages = _results({"role": "tool", "tool_call_id": "call_a", "content": [{"type": "tool_reference",
                                                                               "name": "find"}]},
                        first=[call("call_a", "Oslo")])
    text = same_as_reference(messages, tools)
    assert '<tool_response><tools>\n{"name": "find", "parameters": {"type": "object", "properties": {}}}\n' \
           '</tools></tool_response>' in text
    assert text.count('{"name": "find"') == 1  # not in the tool list: it is deferred


def test_media_parts_read_as_a_reminder():
    messages = [{"role": "user", "content": [{"type": "text", "text": "What is this? "},
                                             {"type": "image_url", "image_url": {"url": "data:,"}},
                                             {"type": "input_audio", "input_audio": {"data": ""}}]}]
    text = same_as_reference(messages)
    assert "<|user|>What is this? <reminder>You are unable to process this image because" in text
    assert "process this audio because" in text


# ---- the template on random conversations

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(messages=conversations(), with_tools=st.booleans(), agp=st.booleans(),
       effort=st.none() | st.sampled_from(["max", "high", "low"]), clear=st.none() | st.booleans())
def test_native_render_equals_the_reference_template(messages, with_tools, agp, effort, clear):
    options = {"add_generation_prompt": agp, "reasoning_effort": effort, "clear_thinking": clear}
    try:
        prompt = GLM53.render(messages, RT_TOOLS if with_tools else None, **options)
    except UnrepresentableValue:
        assume(False)  # a value holding </arg_value><arg_key>: GLM has no escape, toolwire refuses it by design
    kw = {k: v for k, v in options.items() if v is not None and k != "add_generation_prompt"}
    assert prompt.text == reference(messages, RT_TOOLS if with_tools else None, add_generation_prompt=agp, **kw)


# ---- the parser: GLM-4.7's grammar, its own declaration

def test_the_parser_reads_glm47_output_under_its_own_declaration():
    from toolwire.parsers.glm import Glm47Parser, Glm53Parser

    assert issubclass(Glm53Parser, Glm47Parser) and GLM53.parser_class is Glm53Parser
    assert Glm53Parser.family.name == "glm53" and GLM53.stop_tokens == ("<|endoftext|>", "<|user|>", "<|observation|>")
    out = GLM53.parse("Plan.</think>On it.<tool_call>get_weather<arg_key>city</arg_key><arg_value>Oslo</arg_value>"
                      "</tool_call><|observation|>", WEATHER, thinking=True)
    assert (out.reasoning, out.content) == ("Plan.", "On it.")
    assert [(c.name, c.arguments, c.status) for c in out.tool_calls] == [("get_weather", {"city": "Oslo"}, "proposed")]
    assert out.codes() == ["stop_token_in_output"]


@pytest.mark.parametrize("target", ["llguidance", "gbnf"])
def test_the_glm_grammar_description_serves_glm53(target):
    """GLM-4.7's description, read from glm53's declaration: the output starts in the reasoning the prompt opened,
    and a call is spelled without framing (tests/grammar/test_certify.py runs the golden outputs and walks)."""
    pytest.importorskip("llguidance")
    from toolwire.grammar.matchers import Matcher

    matcher = Matcher(GLM53.grammar(WEATHER, target=target, tool_choice="required", thinking=True))
    call_text = "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Oslo</arg_value></tool_call>"
    assert matcher.accepts("Plan.</think>" + call_text)
    assert not matcher.accepts("Plan.</think>" + call_text.replace("get_weather", "get_weather\n"))
    assert not matcher.accepts(call_text)  # the reasoning block comes first: the prompt opened it
