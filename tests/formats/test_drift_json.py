"""Drift recovery in the JSON-bodied families (issue 33): each recovery, per family, fires only when the declared
tools make the call unambiguous, and gives the same result one-shot, at every split point, 1 character at a time,
in random chunks and (Qwen families, with the real Qwen3 tokenizer) as token ids.

The cases are written from the formats' documentation and from public reports, in our own words and values:
a Qwen3-Coder-style ``<function=NAME>`` written inside a Hermes ``<tool_call>`` and the opener left out before an
orphan ``</tool_call>`` (ollama #16686, vLLM Qwen3 reports), a Python call inside the wrapper (the Python-call
habit vLLM #43104 reports for Granite), ``parameters`` / ``args`` keys (localharness #104), Kimi ids that lost their
separators (``functionsexec5``: SGLang #21377; ``functions_NAME_1``: exo #2281), Mistral calls without ``[ARGS]`` or with one
call object after ``[TOOL_CALLS]``. Every class has negative cases (an undeclared name, arguments off-schema, two
readings, no tools declared), where the text stays where it was and an ``info`` diagnostic with the recovery's code
says why.

How each recovery streams (docs/variants.md, "Drift recovery"): text that may be a call without its opener is held
back until its closer decides; closing braces inside a string are held until the next character; calls whose
body is read when it ends are emitted whole. The chunking tests below check "same result for every chunking" and,
through the events (content deltas join to the final content, a call's fragments to JSON of its final arguments),
"never take back"; two tests watch the held text directly.
"""

from __future__ import annotations

import random

import pytest

import toolwire
from support import REAL, assert_events_consistent, chunkings, full_state, require_shared, stream_parse
from toolwire.parsers.engine.drift import DRIFT_CODES, Drift, drift_class

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"]}}},
    {"type": "function", "function": {"name": "exec", "parameters": {
        "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}},
]
# two declared tools an id without separators reads as both: functions_exec1 is "_exec" + 1 or "exec" + 1
TWO_READINGS = TOOLS + [{"type": "function", "function": {"name": "_exec", "parameters": {
    "type": "object", "properties": {"command": {"type": "string"}}}}}]

HERMES = ("qwen25", "qwen3", "qwen3_instruct_2507", "qwen3_thinking_2507", "hermes3", "granite4")
KIMI = ("kimi_k2", "kimi_k2_thinking")
MISTRAL = ("mistral_small32", "ministral3")
QWEN_TOKENIZER = ("qwen25", "qwen3", "qwen3_instruct_2507", "qwen3_thinking_2507")

S, B, A, E, SE = ("<|tool_calls_section_begin|>", "<|tool_call_begin|>", "<|tool_call_argument_begin|>",
                  "<|tool_call_end|>", "<|tool_calls_section_end|>")
PARIS = {"city": "Paris"}


def call(name, arguments, code):
    return (name, arguments, "repaired", code)


# (case id, output, tools, expected calls [(name, arguments, status, drift code)], expected content,
#  the drift code an info diagnostic refuses with (or None))
HERMES_CASES = [
    # missing_markers: the opener left out, the closer written
    ("missing_opener", 'Let me check.\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
     TOOLS, [call("get_weather", PARIS, "missing_call_wrapper")], "Let me check.", None),
    ("missing_opener_at_start", '{"name": "exec", "arguments": {"command": "ls -la"}}\n</tool_call>\nDone.',
     TOOLS, [call("exec", {"command": "ls -la"}, "missing_call_wrapper")], "\nDone.", None),
    ("missing_opener_undeclared", 'Text\n{"name": "get_wether", "arguments": {"city": "Paris"}}\n</tool_call>',
     TOOLS, [], 'Text\n{"name": "get_wether", "arguments": {"city": "Paris"}}\n</tool_call>',
     "missing_call_wrapper"),
    ("missing_opener_off_schema", 'Text\n{"name": "get_weather", "arguments": {"town": "Paris"}}\n</tool_call>',
     TOOLS, [], 'Text\n{"name": "get_weather", "arguments": {"town": "Paris"}}\n</tool_call>',
     "missing_call_wrapper"),
    ("missing_opener_no_tools", 'Text\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
     None, [], 'Text\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>', None),
    ("json_in_content_is_content", 'Example:\n{"name": "get_weather", "arguments": {"city": "Paris"}}\nthat is all',
     TOOLS, [], 'Example:\n{"name": "get_weather", "arguments": {"city": "Paris"}}\nthat is all', None),
    # borrowed_shape
    ("function_tag_json", '<tool_call>\n<function=get_weather>\n{"city": "Paris"}\n</function>\n</tool_call>',
     TOOLS, [call("get_weather", PARIS, "drift_function_tag")], "", None),
    ("function_space_json", '<tool_call>\n<function get_weather>{"city": "Paris", "days": 2}</function>\n</tool_call>',
     TOOLS, [call("get_weather", {"city": "Paris", "days": 2}, "drift_function_tag")], "", None),
    ("function_tag_parameters", '<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n'
     '<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>',
     TOOLS, [call("get_weather", {"city": "Paris", "days": 3}, "drift_function_tag")], "", None),
    ("function_tag_undeclared", '<tool_call>\n<function=search>{"q": "x"}</function>\n</tool_call>',
     TOOLS, [], "", "drift_function_tag"),
    ("function_tag_off_schema", '<tool_call>\n<function=get_weather>{"days": 2}</function>\n</tool_call>',
     TOOLS, [], "", "drift_function_tag"),
    ("python_call", '<tool_call>\nget_weather(city="Paris", days=3)\n</tool_call>',
     TOOLS, [call("get_weather", {"city": "Paris", "days": 3}, "drift_python_call")], "", None),
    ("python_call_single_quotes", "<tool_call>\nexec(command='echo hi')\n</tool_call>",
     TOOLS, [call("exec", {"command": "echo hi"}, "drift_python_call")], "", None),
    ("python_call_off_schema", '<tool_call>\nget_weather(town="Paris")\n</tool_call>', TOOLS, [], "",
     "drift_python_call"),
    ("function_key", '<tool_call>\n{"function=get_weather": {"city": "Paris"}}\n</tool_call>',
     TOOLS, [call("get_weather", PARIS, "drift_function_key")], "", None),
    ("function_name_value", '<tool_call>\n{"name": "function=exec", "arguments": {"command": "pwd"}}\n</tool_call>',
     TOOLS, [call("exec", {"command": "pwd"}, "drift_function_key")], "", None),
    ("function_key_undeclared", '<tool_call>\n{"function=search": {"q": "x"}}\n</tool_call>', TOOLS, [], "",
     "drift_function_key"),
    ("args_key", '<tool_call>\n{"name": "get_weather", "args": {"city": "Paris"}}\n</tool_call>',
     TOOLS, [call("get_weather", PARIS, "drift_arguments_key")], "", None),
    ("input_key", '<tool_call>\n{"name": "exec", "input": {"command": "ls"}}\n</tool_call>',
     TOOLS, [call("exec", {"command": "ls"}, "drift_arguments_key")], "", None),
    ("args_key_off_schema", '<tool_call>\n{"name": "get_weather", "args": {"city": 7}}\n</tool_call>',
     TOOLS, [("get_weather", {}, "rejected", None)], "", "drift_arguments_key"),
    ("args_and_input_two_readings", '<tool_call>\n{"name": "exec", "args": {"command": "a"}, "input": '
     '{"command": "b"}}\n</tool_call>', TOOLS, [("exec", {}, "rejected", None)], "", "drift_arguments_key"),
    # damaged_name
    ("name_trailing_blank", '<tool_call>\n{"name": "get_weather ", "arguments": {"city": "Paris"}}\n</tool_call>',
     TOOLS, [call("get_weather", PARIS, "drift_name_whitespace")], "", None),
    ("name_blank_off_schema", '<tool_call>\n{"name": " exec", "arguments": {"cmd": "ls"}}\n</tool_call>',
     TOOLS, [(" exec", {"cmd": "ls"}, "rejected", None)], "", "drift_name_whitespace"),
    # damaged_delimiters: the closing braces of a string value are held back until the character after them
    ("unclosed_string", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris}}\n</tool_call>',
     TOOLS, [call("get_weather", PARIS, "drift_unclosed_string")], "", None),
    ("unclosed_string_second_key", '<tool_call>\n{"name": "get_weather", "arguments": {"days": 2, "city": "Oslo}}'
     '\n</tool_call>', TOOLS, [call("get_weather", {"days": 2, "city": "Oslo"}, "drift_unclosed_string")], "", None),
    ("unclosed_string_not_streamed", '<tool_call>\n{"name": "get_weather ", "arguments": {"city": "Paris}}\n'
     '</tool_call>', TOOLS, [call("get_weather", PARIS, "drift_unclosed_string")], "", None),
    ("unclosed_string_off_schema", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": '
     '"3}}\n</tool_call>', TOOLS, [("get_weather", {"city": "Paris", "days": "3}}"}, "rejected", None)], "",
     "drift_unclosed_string"),
    ("braces_inside_a_string_stay_text", '<tool_call>\n{"name": "exec", "arguments": {"command": "echo }}"}}\n'
     '</tool_call>', TOOLS, [("exec", {"command": "echo }}"}, "proposed", None)], "", None),
    ("braces_then_newline_inside_a_string", '<tool_call>\n{"name": "exec", "arguments": {"command": "a}}\nb"}}\n'
     '</tool_call>', TOOLS, [("exec", {"command": "a}}\nb"}, "repaired", None)], "", None),
]

KIMI_CASES = [
    ("id_without_separators", S + B + "functionsexec5" + A + '{"command": "ls"}' + E + SE,
     TOOLS, [call("exec", {"command": "ls"}, "drift_call_id_separators")], "", None),
    ("id_with_underscores", S + B + "functions_get_weather_1" + A + '{"city": "Paris"}' + E + B
     + "functionsget_weather:2" + A + '{"city": "Oslo"}' + E + SE,
     TOOLS, [call("get_weather", PARIS, "drift_call_id_separators"),
             call("get_weather", {"city": "Oslo"}, "drift_call_id_separators")], "", None),
    ("id_undeclared", S + B + "functionssearch3" + A + '{"q": "x"}' + E + SE,
     TOOLS, [("functionssearch3", {"q": "x"}, "rejected", None)], "", "drift_call_id_separators"),
    ("id_off_schema", S + B + "functionsexec5" + A + '{"city": "Paris"}' + E + SE,
     TOOLS, [("exec", {"city": "Paris"}, "rejected", None)], "", "drift_call_id_separators"),
    ("id_two_readings", S + B + "functions_exec1" + A + '{"command": "ls"}' + E + SE,
     TWO_READINGS, [("functions_exec1", {"command": "ls"}, "rejected", None)], "", "drift_call_id_separators"),
]

MISTRAL_CASES = [
    ("args_marker_missing", 'Sure.[TOOL_CALLS]get_weather{"city": "Paris"}',
     TOOLS, [call("get_weather", PARIS, "drift_missing_args_marker")], "Sure.", None),
    ("args_marker_missing_twice", '[TOOL_CALLS]get_weather{"city": "Paris"}[TOOL_CALLS]exec{"command": "ls"}',
     TOOLS, [call("get_weather", PARIS, "drift_missing_args_marker"),
             call("exec", {"command": "ls"}, "drift_missing_args_marker")], "", None),
    ("args_marker_missing_undeclared", '[TOOL_CALLS]search{"q": "x"}', TOOLS, [], "", "drift_missing_args_marker"),
    ("args_marker_missing_off_schema", '[TOOL_CALLS]get_weather{"town": "Paris"}', TOOLS, [], "",
     "drift_missing_args_marker"),
    ("call_object_after_marker", '[TOOL_CALLS]{"name": "get_weather", "arguments": {"city": "Paris"}}',
     TOOLS, [call("get_weather", PARIS, "drift_call_object_after_marker")], "", None),
    ("call_object_undeclared", '[TOOL_CALLS]{"name": "search", "arguments": {"q": "x"}}', TOOLS, [], "",
     "drift_call_object_after_marker"),
    ("unclosed_string", '[TOOL_CALLS]get_weather{"city": "Paris}[TOOL_CALLS]exec{"command": "ls"}',
     TOOLS, [call("get_weather", PARIS, "drift_unclosed_string"),
             call("exec", {"command": "ls"}, "drift_missing_args_marker")], "", None),
    ("unclosed_string_at_end_may_be_cut_off", '[TOOL_CALLS]get_weather{"city": "Paris}', TOOLS, [], "",
     "drift_unclosed_string"),
]

PARAMS = ([pytest.param(f, *case, id=f"{f}-{case[0]}") for f in HERMES for case in HERMES_CASES]
          + [pytest.param(f, *case, id=f"{f}-{case[0]}") for f in KIMI for case in KIMI_CASES]
          + [pytest.param(f, *case, id=f"{f}-{case[0]}") for f in MISTRAL for case in MISTRAL_CASES])


def summary(out):
    calls = [(c.name, c.arguments, c.status, next((d.code for d in c.diagnostics if drift_class(d) and
                                                     d.severity != "info"), None)) for c in out.tool_calls]
    refused = [d.code for d in out.diagnostics if drift_class(d)] + [
        d.code for c in out.tool_calls for d in c.diagnostics if drift_class(d) and d.severity == "info"]
    return calls, refused


@pytest.mark.parametrize("family, case, output, tools, calls, content, refused", PARAMS)
def test_drift_case(family, case, output, tools, calls, content, refused):
    """One-shot: the expected calls (each recovered one ``repaired`` with its drift diagnostic, whose message names
    the class and whose raw keeps the model's text), the expected content, and on a refusal an ``info``
    diagnostic with the recovery's code."""
    fmt = toolwire.get_format(family)
    out = fmt.parse(output, tools)
    got_calls, got_refused = summary(out)
    assert got_calls == calls
    assert out.content == content
    assert got_refused == ([refused] if refused else [])
    for c in out.tool_calls:
        for d in c.diagnostics:
            if drift_class(d) is not None:
                assert d.message.startswith(DRIFT_CODES[d.code].value + ":")
                assert d.raw and d.raw in output  # the model's own text, as written
    if tools is not None:  # no tools declared: no recovery that needs them fires
        bare = fmt.parse(output, None)
        assert not [d for d in bare.diagnostics if drift_class(d)]
        assert not [d for c in bare.tool_calls for d in c.diagnostics if drift_class(d)]


@pytest.mark.parametrize("family, case, output, tools, calls, content, refused", PARAMS)
def test_drift_case_streams_to_the_one_shot_result(family, case, output, tools, calls, content, refused):
    """Every split point, 1 character at a time and random chunks give the one-shot result, with events consistent
    with it (content deltas join to the content, a call's fragments to its arguments): a recovery decided only at
    the end never takes back what was sent."""
    fmt = toolwire.get_format(family)
    want = full_state(fmt.parse(output, tools))
    for chunks in chunkings(output, seed=hash(case) & 0xFFFF):
        result, events = stream_parse(fmt, output, chunks, tools)
        assert full_state(result) == want, chunks
        assert_events_consistent(result, events)


@pytest.fixture(scope="module")
def qwen_tokenizer():
    require_shared()
    pytest.importorskip("tokenizers")
    from toolwire.tokenize import load_tokenizer
    return load_tokenizer(str(REAL / "tokenizers" / "Qwen3"))


@pytest.mark.parametrize("family, case, output, tools, calls, content, refused",
                         [p for p in PARAMS if p.values[0] in QWEN_TOKENIZER])
def test_drift_case_as_token_ids(qwen_tokenizer, family, case, output, tools, calls, content, refused):
    """The real Qwen3 tokenizer (``<tool_call>`` / ``</tool_call>`` are its control tokens): the output's ids,
    fed all at once, one at a time and in random runs, give the text result."""
    from toolwire.tokenize import vocabulary
    fmt = toolwire.get_format(family)
    ids = vocabulary(qwen_tokenizer).encode(output)
    want = full_state(fmt.parse(output, tools))
    if case.startswith("missing_opener") and case != "missing_opener_at_start":  # at the start: the bare answer
        # text input only: fed ids, a call needs its control-token <tool_call> (docs/variants.md), so the object
        # stays content, whole, and no drift diagnostic is written
        parser = fmt.stream(tools, tokenizer=qwen_tokenizer)
        parser.feed(ids=ids)
        result = parser.finish()
        assert not result.tool_calls and output.strip() in result.content
        assert not any(d.code == "missing_call_wrapper" for d in result.diagnostics)
        return
    rng = random.Random(len(output))
    runs = [[ids], [[i] for i in ids], []]
    pos = 0
    while pos < len(ids):
        n = rng.randint(1, 5)
        runs[2].append(ids[pos:pos + n])
        pos += n
    for split in runs:
        parser = fmt.stream(tools, tokenizer=qwen_tokenizer)
        events = []
        for run in split:
            events += parser.feed(ids=run)
        events += parser.flush()
        result = parser.finish()
        assert full_state(result) == want
        assert_events_consistent(result, events)


def test_every_code_used_here_is_registered_in_its_class():
    """Each recovery code names one class; the cases above cover all four classes."""
    codes = {c[3] for case in HERMES_CASES + KIMI_CASES + MISTRAL_CASES for c in case[3] if c[3]}
    codes |= {case[5] for case in HERMES_CASES + KIMI_CASES + MISTRAL_CASES if case[5]}
    assert {DRIFT_CODES[code] for code in codes} == set(Drift)


def test_a_refused_recovery_keeps_the_model_text():
    """Refused: the text stays in the content exactly as written, and the diagnostic keeps it too."""
    output = 'Text\n{"name": "get_wether", "arguments": {"city": "Paris"}}\n</tool_call>'
    out = toolwire.get_format("qwen3").parse(output, TOOLS)
    (d,) = out.diagnostics
    assert d.severity == "info" and "not recovered" in d.message and d.raw in output
    assert out.content == output


def test_a_call_object_without_its_opener_is_held_until_the_closer_decides():
    """Streamed a character at a time: nothing of the object is sent as content while it may be a call; when the
    orphan closer makes it one, the content events never held it (nothing is taken back)."""
    fmt = toolwire.get_format("qwen3")
    head = 'Let me check.\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
    parser = fmt.stream(TOOLS)
    sent = "".join(e.text for ch in head for e in parser.feed(ch) if e.type == "content")
    assert sent == "Let me check."
    events = parser.feed("</tool_call>") + parser.flush()
    assert [e.type for e in events if e.type != "arguments"] == ["tool_call_started", "tool_call_finished"]
    assert parser.finish().content == "Let me check."


def test_braces_in_a_string_are_held_until_the_next_character():
    """Streamed a character at a time: the ``}}`` that end a string left open are not sent as string text; the
    fragments end with the quote the recovery adds. Braces followed by more string text are sent as text."""
    fmt = toolwire.get_format("qwen3")
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris}}\n</tool_call>'
    parser = fmt.stream(TOOLS)
    fragments = [e.fragment for ch in text for e in parser.feed(ch) if e.type == "arguments"]
    fragments += [e.fragment for e in parser.flush() if e.type == "arguments"]
    assert "".join(fragments) == '{"city": "Paris"}' and not any("}}" in f for f in fragments)
    kept = '<tool_call>\n{"name": "exec", "arguments": {"command": "a}}b"}}\n</tool_call>'
    out, _ = stream_parse(fmt, kept, None, TOOLS)
    assert out.tool_calls[0].arguments == {"command": "a}}b"} and out.tool_calls[0].status == "proposed"
