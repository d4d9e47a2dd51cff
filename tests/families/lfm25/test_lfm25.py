"""LFM2.5: golden render and parse vectors (one-shot and streamed), the real template on random conversations and
on shapes the vectors do not cover, refusals, round trips (every refusal checked against the template's own
output), reasoning and the call block's variants, stop tokens, the context plan, and token ids with a byte-level
tokenizer whose control tokens are LFM2.5's (no LFM tokenizer is in ../shared/real/tokenizers)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import toolwire
from support.pythonic import (HISTORY, RT_TOOLS, check_against_reference, check_golden_turn_reads_back,
                              check_round_trip, conversations, golden_turns, reference, reference_turn_output)
from support.xml_calls import calls, plain_texts
from support import REAL, assert_nothing_lost, check_chunking, golden, golden_tests, require_shared
from toolwire.tokenize import byte_tokenizer
from toolwire.context_policy import plan
from toolwire.errors import InvalidOption, UnrepresentableValue
from toolwire.templates.lfm25 import MARKERS, SPECIAL_TOKENS
from toolwire.tokenize import vocabulary
from toolwire.workbench import cli
from toolwire.workbench.detect import detect_path

FMT = toolwire.get_format("lfm25")
WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}},
           {"type": "function", "function": {"name": "list_projects", "parameters": {"type": "object"}}}]
M = MARKERS
OPEN, CLOSE = M["call_open"], M["call_close"]
TEMPLATE = REAL / "templates" / "extra" / "LFM2.5-8B-A1B.jinja"

test_golden_render, test_golden_parse_oneshot, test_golden_parse_streamed = golden_tests(["lfm25"])


# ---------------------------------------------------------------- the reference template

@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(messages=conversations(), with_tools=st.booleans(), agp=st.booleans(), preserve=st.none() | st.booleans())
def test_native_render_equals_the_reference_template(messages, with_tools, agp, preserve):
    options = {"add_generation_prompt": agp}
    if preserve is not None:
        options["preserve_thinking"] = preserve
    assume(check_against_reference("lfm25", messages, RT_TOOLS if with_tools else None, **options) != "refused")


SHAPES = [
    # content parts: text, images, other parts as JSON, in the system message and elsewhere
    [{"role": "system", "content": [{"type": "text", "text": "Be "}, {"type": "image"},
                                    {"type": "text", "text": "brief"}]},
     {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "what is this?"},
                                  {"type": "input_audio", "input_audio": {"data": "AAA", "format": "wav"}}]}],
    # an empty system message with tools; a system message that is not the first; other roles
    [{"role": "system", "content": ""}, {"role": "user", "content": "hi"}, {"role": "system", "content": "late"},
     {"role": "critic", "content": "a custom role"}],
    # history content with </think> (cut when its reasoning is not kept), an empty reasoning, parts in a call turn
    [{"role": "user", "content": "a"},
     {"role": "assistant", "content": "old thoughts</think>  answer ", "reasoning_content": "r0"},
     {"role": "user", "content": "b"},
     {"role": "assistant", "content": "x</think>y", "reasoning_content": ""},
     {"role": "assistant", "content": [{"type": "text", "text": "calling"}], "tool_calls": [
         {"id": "1", "type": "function", "function": {"name": "do_it", "arguments": {"a": [1, "it's", None]}}}]}],
    # the continue-final-message tag after the calls, an empty call list, a call with no arguments
    [{"role": "user", "content": "a"},
     {"role": "assistant", "content": "go CONTINUE_FINAL_MESSAGE_TAG ", "tool_calls": [
         {"id": "1", "type": "function", "function": {"name": "other_tool", "arguments": "{}"}}]},
     {"role": "assistant", "content": "none", "tool_calls": []}],
    # no user message at all: every reasoning is after the last one
    [{"role": "assistant", "content": "hello", "reasoning_content": "think first"}],
]


@pytest.mark.parametrize("messages", SHAPES)
@pytest.mark.parametrize("preserve", [None, True])
def test_shapes_the_vectors_do_not_cover(messages, preserve):
    options = {} if preserve is None else {"preserve_thinking": preserve}
    for tools in (RT_TOOLS, None):
        for agp in (True, False):
            assert check_against_reference("lfm25", messages, tools, add_generation_prompt=agp, **options) == "match"


def test_the_template_switch_and_an_unknown_option():
    history = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "reasoning_content": "r"},
               {"role": "user", "content": "c"}]
    assert "<think>" not in FMT.render(history).text
    assert "<|im_start|>assistant\n<think>r</think>b<|im_end|>" in FMT.render(history, preserve_thinking=True).text
    with pytest.raises(InvalidOption):
        FMT.render(history, enable_reasoning=True)


def test_the_context_plan_names_what_is_kept():
    history = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "reasoning_content": "r1"},
               {"role": "user", "content": "c"}, {"role": "assistant", "content": "d", "reasoning_content": "r2"}]
    decided = plan(history, "lfm25").decisions
    assert [(d.message_index, d.action) for d in decided] == [(1, "drop"), (3, "keep")]
    assert [d.action for d in plan(history, "lfm25", preserve_thinking=True).decisions] == ["keep", "keep"]
    text = FMT.render(history, add_generation_prompt=False, policy="drop_all").text
    assert "<think>" not in text and text == reference("lfm25", history[:3] + [
        {"role": "assistant", "content": "d"}], add_generation_prompt=False)


# ---------------------------------------------------------------- refusals

def _call(arguments) -> dict:
    return {"role": "assistant", "content": "", "tool_calls": [
        {"id": "1", "type": "function", "function": {"name": "do_it", "arguments": arguments}}]}


@pytest.mark.parametrize("arguments, field", [
    ({"s": "a', b='"}, "tool_calls[0].function.arguments.s"),
    ({"s": "x')]"}, "tool_calls[0].function.arguments.s"),
    ({"a": ["<|tool_call_end|>"]}, "tool_calls[0].function.arguments.a"),
    ({"o": {"k": "x<|tool_call_end|>"}}, "tool_calls[0].function.arguments.o"),
    ({"bad key": 1}, "tool_calls[0].function.arguments.bad key"),
    ({"n": float("nan")}, "tool_calls[0].function.arguments.n"),
])
def test_a_value_that_would_not_read_back_is_refused_naming_the_field(arguments, field):
    with pytest.raises(UnrepresentableValue) as info:
        FMT.render(HISTORY + [_call(arguments)], RT_TOOLS)
    assert (info.value.message_index, info.value.field) == (1, field)


def test_a_refused_value_is_one_the_templates_own_text_misreads():
    """The reference writes ``'a', b='`` as it is; read back, the value is cut at its own quote."""
    require_shared()
    written = reference_turn_output("lfm25", _call({"s": "a', b='"}), RT_TOOLS)
    assert written == f"{OPEN}[do_it(s='a', b='')]{CLOSE}"
    back = FMT.parse(written, RT_TOOLS)
    assert back.tool_calls[0].arguments == {"s": "a", "b": ""}


def test_a_name_the_call_syntax_cannot_hold_is_refused():
    turn = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "1", "type": "function", "function": {"name": "get weather", "arguments": "{}"}}]}
    with pytest.raises(UnrepresentableValue) as info:
        FMT.render(HISTORY + [turn])
    assert info.value.field == "tool_calls[0].function.name"


# ---------------------------------------------------------------- round trips

def test_every_golden_assistant_turn_reads_back():
    """Each assistant turn of the golden requests (quotes, backslashes, newlines, numbers, nested values ...),
    rendered as the model's output, parses back to itself."""
    require_shared()
    turns = list(golden_turns("lfm25"))
    read = [check_golden_turn_reads_back("lfm25", history, turn, tools) for _, history, turn, tools in turns]
    assert len(read) >= 20 and all(read)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(content=plain_texts, reasoning=st.none() | plain_texts,
       turn_calls=calls, seed=st.integers(0, 2 ** 16))
def test_round_trip(content, reasoning, turn_calls, seed):
    check_round_trip("lfm25", content, reasoning, turn_calls, seed)


def test_round_trip_of_strings_with_quotes_the_template_writes_unescaped():
    rendered = [check_round_trip("lfm25", "", None, [("other_tool", {"path": value})], 1) for value in (
        "it's", "'quoted'", "a', 'b", "x\\' y", "ends with '", "' starts", "C:\\tmp\\new 'n'")]
    assert rendered == [True] * 7


quote_soup = st.lists(st.sampled_from(["'", '"', ", ", "path=", "body=", ")", "]", "), ", "other_tool(", "x", " ",
                                       "\\", "<|tool_call_end|>"]), max_size=8).map("".join)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=quote_soup, other=quote_soup)
def test_round_trip_of_quotes_the_template_writes_unescaped_or_a_justified_refusal(value, other):
    """Either the turn reads back, or it is refused and the template's own text of it does not read back."""
    check_round_trip("lfm25", "", None, [("other_tool", {"path": value, "body": other})], 3)


# ---------------------------------------------------------------- parsing

def test_reasoning_at_the_start_and_the_start_state():
    out = FMT.parse(f"  <think>plan</think>text{OPEN}[get_weather(city='x')]{CLOSE}more")
    assert (out.reasoning, out.content, [c.arguments for c in out.tool_calls]) == ("plan", "textmore", [{"city": "x"}])
    out = FMT.parse("still thinking</think>answer", thinking=True)
    assert (out.reasoning, out.content) == ("still thinking", "answer")
    out = FMT.parse("<think>again</think>answer", thinking=True)
    assert (out.reasoning, out.content, out.codes()) == ("again", "answer", ["duplicate_reasoning_open"])
    prompt = FMT.render(HISTORY)
    assert prompt.opens_reasoning is False
    assert FMT.parse("a</think>b", prompt=prompt).content == "ab"


def test_think_markers_elsewhere():
    out = FMT.parse("a <think> b </think> c")
    assert (out.content, out.reasoning, out.codes()) == ("a <think> b  c", "", ["reasoning_close_in_content"])


def test_a_call_block_inside_the_reasoning_is_reported_not_promoted():
    text = f"<think>maybe {OPEN}[get_weather(city='x')]{CLOSE} no</think>done"
    out = check_chunking(FMT, text, WEATHER)
    (call,) = out.tool_calls
    assert (call.source, call.status) == ("reasoning", "rejected") and "call_in_reasoning" in out.codes()
    assert (out.reasoning, out.content) == ("maybe  no", "done")
    promoted = FMT.parse(text, WEATHER, promote_reasoning_calls=True)
    assert promoted.tool_calls[0].status == "proposed"
    cut = FMT.parse(f"<think>{OPEN}[get_weather(city='x</think>answer")
    assert cut.tool_calls[0].status == "rejected" and cut.content == "answer"


@pytest.mark.parametrize("output, content, arguments, codes", [
    (f"{OPEN}get_weather(city='x'), list_projects(){CLOSE}", "", [{"city": "x"}, {}],
     ["missing_call_list_brackets"]),
    (f"{OPEN}  [get_weather(city=\"x\")]  {CLOSE}after", "after", [{"city": "x"}], []),
    (f"{OPEN}[get_weather(city='x')] oops{CLOSE}", "", [{"city": "x"}], ["text_in_tool_call_block"]),
    (f"{OPEN}{{\"name\": \"get_weather\"}}{CLOSE}", "", [], ["text_in_tool_call_block"]),
    (f"{OPEN}[get_weather(city='x')]", "", [{"city": "x"}], ["tool_call_block_not_closed"]),
    (f"{OPEN}{CLOSE}x", "x", [], []),
])
def test_call_block_variants(output, content, arguments, codes):
    out = check_chunking(FMT, output, WEATHER)
    assert out.content == content and [c.arguments for c in out.tool_calls] == arguments
    assert sorted(set(out.codes())) == sorted(codes)
    assert_nothing_lost(output, out, (OPEN, CLOSE, "[", "]", "(", ")", ","))


def test_the_stop_token_left_at_the_end_is_dropped():
    out = FMT.parse(f"{OPEN}[get_weather(city='x')]{CLOSE}<|im_end|>")
    assert out.content == "" and out.codes() == ["stop_token_in_output"]
    assert FMT.stop_tokens == ("<|im_end|>",)


def test_unknown_tools_are_rejected_with_their_arguments():
    out = FMT.parse(f"{OPEN}[launch(target='moon')]{CLOSE}", RT_TOOLS)
    (call,) = out.tool_calls
    assert (call.status, call.arguments, [d.code for d in call.diagnostics]) == (
        "rejected", {"target": "moon"}, ["unknown_tool"])


# ---------------------------------------------------------------- fidelity and detection

def test_fidelity_against_the_template_is_all_match(tmp_path, capsys):
    require_shared()
    target = tmp_path / "r.json"
    code = cli.main(["fidelity", "--date", "2025-03-14", "--format", "lfm25", "--template", str(TEMPLATE),
                     "--json", str(target)])
    out = capsys.readouterr().out
    report = json.loads(target.read_text("utf-8"))
    assert code == 0 and report["ok"] is True and report["divergences"] == {}
    assert out.rstrip().splitlines()[-1] == "result: ALL MATCH"
    assert {s["bytes"]["status"] for s in report["scenarios"]} == {"match"}


def test_detect_names_the_template_by_fingerprint():
    require_shared()
    found = detect_path(str(TEMPLATE))
    assert (found.format, found.how) == ("lfm25", "fingerprint")


# ---------------------------------------------------------------- token ids

TOKENIZER = byte_tokenizer(SPECIAL_TOKENS)


@pytest.mark.parametrize("row", [r for r in golden("render", "lfm25") if "expected" in r], ids=lambda r: r["id"])
def test_golden_render_ids_use_control_ids_only_for_the_formats_markers(row):
    """The prompt's ids decode to the golden text; control ids stand exactly where the format wrote its markers,
    and a marker spelled by the user (``<|im_start|>`` in a user message) stays ordinary bytes."""
    require_shared()
    req = row["request"]
    prompt = FMT.render(req["messages"], req.get("tools"), **row["options"])
    ids = prompt.token_ids(TOKENIZER)
    vocab = vocabulary(TOKENIZER)
    controls = {v: k for k, v in vocab.control.items()}
    text = b"".join(controls[i].encode() if i in controls else bytes([i]) for i in ids).decode()
    assert text == row["expected"]
    assert [controls[i] for i in ids if i in controls] == [s.text for s in prompt.segments if s.kind == "special"]


def test_stop_token_ids():
    assert FMT.stop_token_ids(TOKENIZER) == [TOKENIZER.encode_single_token("<|im_end|>")]
