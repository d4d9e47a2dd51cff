"""DeepSeek DSML renderers (V3.2, V4, V4.1): byte-exact against the golden vectors, plus the rules the
vectors do not reach (quick instructions, option checks, escaping, provenance segments, request errors).

Hand-written expectations below follow the reference encoders' rules (see ``templates/dsml.py``), not
toolwire's own output."""

from __future__ import annotations

import json

import pytest

import toolwire
from support import check_golden_render, golden, golden_params, render_kwargs
from toolwire.errors import InvalidOption, InvalidRequest, UnrepresentableValue, UnsupportedByFormat

FAMILIES = ("deepseek_v32", "deepseek_v4", "deepseek_v41")
BOS, EOS = "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"
U, A = "<｜User｜>", "<｜Assistant｜>"


def _golden_rows():
    for fam in FAMILIES:
        yield from golden_params("render", fam)


def _render(row):
    fmt = toolwire.get_format(row["family"])
    return fmt.render(row["request"]["messages"], row["request"].get("tools"), **render_kwargs(row["options"]))


@pytest.mark.parametrize("row", list(_golden_rows()))
def test_golden_render_is_byte_exact(row):
    prompt = check_golden_render(row, special_markers=False)  # DSML's special segments include attribute tails
    if "expected_error" in row:
        return
    assert prompt.opens_reasoning == prompt.text.endswith("<think>")
    assert prompt.format == row["family"]


@pytest.mark.parametrize("row", list(_golden_rows()))
def test_golden_request_text_is_content(row):
    """Every user/tool/assistant text of the request lies inside one content segment (never special)."""
    if "expected_error" in row:
        pytest.skip("refused request")
    prompt = _render(row)
    content = [s.text for s in prompt.segments if s.kind == "content"]
    for msg in row["request"]["messages"]:
        text = msg.get("content")
        if isinstance(text, list):
            text = "\n\n".join(p["text"] for p in text)
        if text and text in prompt.text:
            assert any(text in c for c in content), text


def test_special_segments_are_markers_only():
    row = next(r for r in golden("render", "deepseek_v4") if r["case"] == "user_with_special_text")
    prompt = _render(row)
    specials = [s.text for s in prompt.segments if s.kind == "special"]
    assert specials == [BOS, U, A, "</think>"]
    # the user's literal <｜DSML｜tool_calls> stays content
    assert any("<｜DSML｜tool_calls>" in s.text for s in prompt.segments if s.kind == "content")


def test_call_tags_are_special_and_names_values_content():
    fmt = toolwire.get_format("deepseek_v4")
    msgs = [{"role": "user", "content": "q"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"k": "v", "n": 1}'}}]}]
    segs = [(s.kind, s.text) for s in fmt.render(msgs).segments]
    start = segs.index(("special", "<｜DSML｜tool_calls>"))
    assert segs[start:start + 16] == [
        ("special", "<｜DSML｜tool_calls>"), ("template", "\n"),
        ("special", '<｜DSML｜invoke name="'), ("content", "f"), ("special", '">'), ("template", "\n"),
        ("special", '<｜DSML｜parameter name="'), ("content", "k"), ("special", '" string="true">'),
        ("content", "v"), ("special", "</｜DSML｜parameter>"), ("template", "\n"),
        ("special", '<｜DSML｜parameter name="'), ("content", "n"), ("special", '" string="false">'),
        ("content", "1"),
    ]


def test_tool_preamble_markers_are_special_and_schemas_content():
    row = next(r for r in golden("render", "deepseek_v41") if r["id"].endswith("tools_no_system/thinking=False"))
    prompt = _render(row)
    kinds = {s.text: s.kind for s in prompt.segments}
    assert kinds["<｜DSML｜ calls>"] == "special"
    assert kinds["<think>"] == "special"
    schema = json.dumps(row["request"]["tools"][0]["function"])
    assert any(schema in s.text for s in prompt.segments if s.kind == "content")
    assert not any("｜DSML｜" in s.text for s in prompt.segments if s.kind == "template")


# ---- reasoning effort

@pytest.mark.parametrize("family", ["deepseek_v4", "deepseek_v41"])
def test_effort_defaults_to_high_when_thinking(family):
    row = next(r for r in golden("render", family) if r["id"].endswith("system_user/reasoning_effort=high,thinking=True"))
    fmt = toolwire.get_format(family)
    assert fmt.render(row["request"]["messages"], thinking=True).text == row["expected"]


def test_v41_named_efforts_are_numbers():
    fmt = toolwire.get_format("deepseek_v41")
    msgs = [{"role": "user", "content": "hi"}]
    for named, number in (("low", 50), ("high", 75), ("max", 100)):
        assert fmt.render(msgs, thinking=True, reasoning_effort=named).text == fmt.render(
            msgs, thinking=True, reasoning_effort=number).text
    assert fmt.render(msgs, thinking=True, reasoning_effort=1).text == (
        f"{BOS}<｜System｜>Reasoning Effort: 1 (range 1-100, the higher the value, the more thorough the reasoning)"
        f"\n\n{U}hi{A}<think>")


@pytest.mark.parametrize("family,effort", [
    ("deepseek_v41", 0), ("deepseek_v41", 101), ("deepseek_v41", True), ("deepseek_v41", "medium"),
    ("deepseek_v41", 7.5), ("deepseek_v4", 30), ("deepseek_v4", "medium"), ("deepseek_v32", "high"),
    ("deepseek_v4", ["high"]), ("deepseek_v41", {"high": 1}), ("deepseek_v41", ["high"]),
])
def test_bad_effort_is_an_invalid_option(family, effort):
    with pytest.raises(InvalidOption) as err:
        toolwire.get_format(family).render([{"role": "user", "content": "hi"}], thinking=True,
                                           reasoning_effort=effort)
    assert err.value.field == "reasoning_effort"


def test_effort_is_not_written_without_thinking():
    fmt = toolwire.get_format("deepseek_v4")
    assert fmt.render([{"role": "user", "content": "hi"}], reasoning_effort="max").text == f"{BOS}{U}hi{A}</think>"


# ---- quick instructions (V4 family)

@pytest.mark.parametrize("family", ["deepseek_v4", "deepseek_v41"])
def test_task_token_follows_the_user_turn(family):
    fmt = toolwire.get_format(family)
    msgs = [{"role": "user", "content": "find it", "task": "query"}]
    assert fmt.render(msgs).text == f"{BOS}{U}find it<｜query｜>"
    msgs.append({"role": "assistant", "content": "weather paris", "reasoning_content": "r"})
    # the turn after a task token carries no reasoning, even in thinking mode
    assert fmt.render(msgs, thinking=True, reasoning_effort="low").text.endswith(
        f"{U}find it<｜query｜>weather paris{EOS}")


def test_action_task_opens_the_assistant_turn():
    fmt = toolwire.get_format("deepseek_v4")
    msgs = [{"role": "user", "content": "go", "task": "action"}]
    assert fmt.render(msgs).text == f"{BOS}{U}go{A}</think><｜action｜>"
    assert fmt.render(msgs, thinking=True, reasoning_effort="low").text == f"{BOS}{U}go{A}<think><｜action｜>"


def test_latest_reminder_turn():
    fmt = toolwire.get_format("deepseek_v4")
    msgs = [{"role": "user", "content": "u"}, {"role": "latest_reminder", "content": "today is Monday"}]
    assert fmt.render(msgs).text == f"{BOS}{U}u{A}</think><｜latest_reminder｜>today is Monday"


def test_wo_eos_leaves_the_assistant_turn_open():
    fmt = toolwire.get_format("deepseek_v4")
    msgs = [{"role": "user", "content": "u"}, {"role": "assistant", "content": "partial", "wo_eos": True}]
    assert fmt.render(msgs).text == f"{BOS}{U}u{A}</think>partial"


def test_v32_has_no_quick_instructions():
    fmt = toolwire.get_format("deepseek_v32")
    with pytest.raises(UnsupportedByFormat) as err:
        fmt.render([{"role": "user", "content": "u"}, {"role": "latest_reminder", "content": "r"}])
    assert (err.value.message_index, err.value.field) == (1, "role")
    with pytest.raises(UnsupportedByFormat) as err:
        fmt.render([{"role": "user", "content": "u", "task": "query"}])
    assert (err.value.message_index, err.value.field) == (0, "task")


def test_v32_developer_turn():
    fmt = toolwire.get_format("deepseek_v32")
    msgs = [{"role": "developer", "content": "Answer in French."}]
    assert fmt.render(msgs).text == f"{BOS}{U}\n\n# The user's message is: Answer in French.{A}</think>"


# ---- history and generation prompt

def test_add_generation_prompt_false_omits_the_assistant_prefix():
    for family in FAMILIES:
        fmt = toolwire.get_format(family)
        prompt = fmt.render([{"role": "user", "content": "hi"}], add_generation_prompt=False)
        assert prompt.text == f"{BOS}{U}hi"
        assert not prompt.opens_reasoning


def test_v4_tool_results_merge_with_following_user_text():
    fmt = toolwire.get_format("deepseek_v4")
    msgs = [{"role": "user", "content": "q"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "a", "content": [{"type": "text", "text": "r1"}, {"type": "text", "text": "r2"}]},
            {"role": "user", "content": "and now?"}]
    assert fmt.render(msgs).text.endswith(
        f"{EOS}{U}<tool_result>r1\n\nr2</tool_result>\n\nand now?{A}</think>")



def _call(cid, name="f", arguments="{}"):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}


@pytest.mark.parametrize("family", ["deepseek_v4", "deepseek_v41"])
def test_v4_parallel_results_follow_the_call_order_in_one_user_turn(family):
    fmt = toolwire.get_format(family)
    msgs = [{"role": "user", "content": "q"},
            {"role": "assistant", "content": "", "tool_calls": [_call("a"), _call("b"), _call("c")]},
            {"role": "tool", "tool_call_id": "c", "content": "rc"},
            {"role": "tool", "tool_call_id": "a", "content": "ra"},
            {"role": "user", "content": "then?"},
            {"role": "tool", "tool_call_id": "b", "content": "rb"}]
    # results move into the call order; the user text between them keeps its place
    assert fmt.render(msgs).text.endswith(
        f"{EOS}{U}<tool_result>ra</tool_result>\n\n<tool_result>rb</tool_result>\n\nthen?\n\n"
        f"<tool_result>rc</tool_result>{A}</think>")


def test_v4_user_text_does_not_join_a_task_turn_but_a_result_does():
    fmt = toolwire.get_format("deepseek_v4")
    msgs = [{"role": "user", "content": "look", "task": "query"}, {"role": "user", "content": "more"}]
    # (the task token is written only where an assistant turn follows, as the encoder does)
    assert fmt.render(msgs).text == f"{BOS}{U}look{U}more{A}</think>"
    msgs = [{"role": "user", "content": "q"},
            {"role": "assistant", "content": "", "tool_calls": [_call("a")]},
            {"role": "user", "content": "look", "task": "query"},
            {"role": "tool", "tool_call_id": "a", "content": "r"}]
    assert fmt.render(msgs).text.endswith(f"{EOS}{U}look\n\n<tool_result>r</tool_result><｜query｜>")


@pytest.mark.parametrize("family", FAMILIES)
def test_a_request_error_in_a_later_message_wins_over_an_earlier_writing_error(family):
    """Every message is validated before any is written, so the error named is the request's first invalid
    message, not a tag-breaking name or an unordered result found while writing an earlier one."""
    broken_name = [{"role": "user", "content": "q"},
                   {"role": "assistant", "content": "", "tool_calls": [_call("a", name='say"hi')]},
                   {"role": "tool", "tool_call_id": "a", "content": "r"},
                   {"role": "user", "content": "q", "tool_calls": [_call("b")]}]
    with pytest.raises(InvalidRequest) as err:
        toolwire.get_format(family).render(broken_name)
    assert (err.value.message_index, err.value.field) == (3, "tool_calls")
    with pytest.raises(UnrepresentableValue) as err:
        toolwire.get_format(family).render(broken_name[:3])
    assert (err.value.message_index, err.value.field) == (1, "tool_calls[0].function.name")


def test_v4_unordered_results_are_refused_only_after_the_request_validates():
    unordered = [{"role": "user", "content": "q"},
                 {"role": "assistant", "content": "", "tool_calls": [_call("a"), _call("b")]},
                 {"role": "tool", "tool_call_id": "a", "content": "1"},
                 {"role": "tool", "tool_call_id": "zzz", "content": "2"},
                 {"role": "wizard", "content": "q"}]
    with pytest.raises(UnsupportedByFormat) as err:
        toolwire.get_format("deepseek_v4").render(unordered)
    assert (err.value.message_index, err.value.field) == (4, "role")
    with pytest.raises(InvalidRequest) as err:
        toolwire.get_format("deepseek_v4").render(unordered[:4])
    assert (err.value.message_index, err.value.field) == (3, "tool_call_id")


@pytest.mark.parametrize("family", FAMILIES)
def test_empty_names_keys_and_values_leave_no_empty_segment(family):
    fmt = toolwire.get_format(family)
    msgs = [{"role": "user", "content": "q"},
            {"role": "assistant", "content": "", "tool_calls": [_call("a", name="", arguments='{"": "", "k": 1}')]}]
    prompt = fmt.render(msgs)
    m = fmt.markers
    assert (f'{m["invoke_open"]}">\n{m["parameter_open"]}" string="true">{m["parameter_close"]}\n'
            f'{m["parameter_open"]}k" string="false">1{m["parameter_close"]}') in prompt.text
    assert all(seg.text for seg in prompt.segments)

# ---- round-trip escaping

@pytest.mark.parametrize("family", FAMILIES)
def test_string_holding_the_closing_tag_is_written_as_escaped_json(family):
    fmt = toolwire.get_format(family)
    close = fmt.markers["parameter_close"]
    value = f"a {close} b"
    msgs = [{"role": "user", "content": "q"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": json.dumps({"s": value, "l": [value]})}}]}]
    text = fmt.render(msgs).text
    escaped = json.dumps(value, ensure_ascii=False).replace("<", "\\u003c")
    assert f'name="s" string="false">{escaped}{close}' in text
    assert f'name="l" string="false">[{escaped}]{close}' in text
    assert text.count(close) == 2


# ---- request errors name the message and the field

@pytest.mark.parametrize("family,messages,index,field,error", [
    ("deepseek_v4", [{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{nope"}}]}],
     1, "tool_calls[0].function.arguments", InvalidRequest),
    ("deepseek_v4", [{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": "[1]"}}]}],
     1, "tool_calls[0].function.arguments", InvalidRequest),
    ("deepseek_v4", [{"role": "wizard", "content": "q"}], 0, "role", UnsupportedByFormat),
    ("deepseek_v4", [{"role": "user", "content": "q", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}], 0, "tool_calls", InvalidRequest),
    ("deepseek_v4", [{"role": "developer", "content": ""}, {"role": "user", "content": "q"}], 0, "content",
     UnsupportedByFormat),
    ("deepseek_v4", [{"role": "user", "content": "q", "task": "dance"}], 0, "task", InvalidRequest),
    ("deepseek_v4", [{"role": "user", "content": "q", "wo_eos": "yes"}], 0, "wo_eos", InvalidRequest),
    ("deepseek_v4", [{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        {"id": "b", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "1"}, {"role": "tool", "tool_call_id": "zzz", "content": "2"}],
     3, "tool_call_id", InvalidRequest),
    ("deepseek_v32", [{"role": "user", "content": "q"}, {"role": "tool", "tool_call_id": "a", "content": "1"}],
     1, "tool_call_id", UnsupportedByFormat),
    ("deepseek_v32", [{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "1"}, {"role": "tool", "tool_call_id": "a", "content": "2"}],
     3, "tool_call_id", UnsupportedByFormat),
    ("deepseek_v41", [{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": 'say"hi', "arguments": "{}"}}]}],
     1, "tool_calls[0].function.name", UnrepresentableValue),
    ("deepseek_v41", [{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"a\\"b": 1}'}}]}],
     1, 'tool_calls[0].function.arguments.a"b', UnrepresentableValue),
    ("deepseek_v41", [{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x": NaN}'}}]}],
     1, "tool_calls[0].function.arguments.x", UnrepresentableValue),
])
def test_bad_requests_name_message_and_field(family, messages, index, field, error):
    with pytest.raises(error) as err:
        toolwire.get_format(family).render(messages)
    assert (err.value.message_index, err.value.field) == (index, field)


def test_v32_refuses_a_thinking_answer_without_reasoning_or_calls():
    fmt = toolwire.get_format("deepseek_v32")
    msgs = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    assert fmt.render(msgs).text == f"{BOS}{U}q{A}</think>a{EOS}"
    with pytest.raises(UnsupportedByFormat) as err:
        fmt.render(msgs, thinking=True)
    assert (err.value.message_index, err.value.field) == (1, "reasoning_content")


def test_unknown_option_is_refused():
    with pytest.raises(InvalidOption):
        toolwire.get_format("deepseek_v4").render([{"role": "user", "content": "q"}], preserve_thinking=True)


def _outcome(encode, value):
    try:
        return "ok", encode(value)
    except (TypeError, ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


def test_the_json_writers_write_and_refuse_as_json_does():
    """The DSML JSON writers (json's C encoder without the cycle check) give json.JSONEncoder's text, and its
    error (type and words) for what it refuses: a cycle is still 'Circular reference detected', not a
    RecursionError."""
    from toolwire.templates import dsml

    assert dsml.tojson.__qualname__.startswith("json_writer")  # the fast writer is in use on CPython
    cyclic_dict, cyclic_list = {}, []
    cyclic_dict["self"] = cyclic_dict
    cyclic_list.append({"in": cyclic_list})
    deep = []
    inner = deep
    for _ in range(5000):
        inner.append([])
        inner = inner[0]
    values = ["é\n\"", "\ud800", 1, -0.0, 1.5e300, float("nan"), float("inf"), None, True, [1, {"a": None}],
              {"type": "object", "properties": {"q": {"type": "string"}}, "x": [1.5, "é", {"y": ()}]},
              {1: 2, 2.5: 3, None: 4, False: 5}, {"a": {1, 2}}, {(1,): 2}, 10 ** 5000, b"x", cyclic_dict,
              cyclic_list, deep]
    for writer, reference in ((dsml.tojson, json.JSONEncoder(ensure_ascii=False).encode),
                              (dsml._to_strict_json, json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode)):
        for value in values:
            assert _outcome(writer, value) == _outcome(reference, value)
    assert _outcome(dsml.tojson, cyclic_dict) == ("ValueError", "Circular reference detected")
