"""Drift recovery in the JSON-bodied families, second round (issue 33): a damaged name (the name as the object's only
key, the arguments beside the name, the name glued to the first argument key), a value quoted with the wrong quote,
and calls whose special tokens a server stripped (Kimi, Mistral). Each recovery fires only when the declared tools
make the call unambiguous, and gives the same result one-shot, at every split point, 1 character at a time, in
random chunks and (Qwen families with the real Qwen3 tokenizer, Llama 3.1 with the real Llama 3 tokenizer) as token
ids.

The cases are written in our own words and values from the shapes public reports show: a tool's name used as the
key of its arguments object (ollama #12738, models trained on that simpler shape), the special tokens stripped by
``skip_special_tokens`` so that only ``NAME{json}`` / ``functions.NAME:IDX{json}`` reaches the parser
(mistral-inference #162, ai-dynamo/dynamo #9227 for Kimi). The flattened arguments, the glued name and the wrong
quote are the JSON neighbours of shapes the issue names (GLM's name glued to its first key; a dangling delimiter);
docs/variants.md says which readings come from which report. Every class has negative cases (an undeclared name,
arguments off-schema, two readings, text not at a line start, no tools declared).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
# a key that splits two ways: get_weather + _city and get_weather_c + ity
TWO_GLUES = TOOLS + [{"type": "function", "function": {"name": "get_weather_c", "parameters": {
    "type": "object", "properties": {"ity": {"type": "string"}}}}}]

HERMES = ("qwen25", "qwen3", "qwen3_instruct_2507", "qwen3_thinking_2507", "hermes3", "granite4")
KIMI = ("kimi_k2", "kimi_k2_thinking")
MISTRAL = ("mistral_small32", "ministral3")
LLAMA = ("llama31",)
QWEN_TOKENIZER = ("qwen25", "qwen3", "qwen3_instruct_2507", "qwen3_thinking_2507")

S, B, A, E, SE = ("<|tool_calls_section_begin|>", "<|tool_call_begin|>", "<|tool_call_argument_begin|>",
                  "<|tool_call_end|>", "<|tool_calls_section_end|>")
PARIS = {"city": "Paris"}
KIMI_CALL = S + B + "functions.get_weather:0" + A


def call(name, arguments, code):
    return (name, arguments, "repaired", code)


def tc(body):
    return "<tool_call>\n" + body + "\n</tool_call>"


# (case id, output, tools, expected calls [(name, arguments, status, drift code)], expected content,
#  the drift code an info diagnostic refuses with (or None))
HERMES_CASES = [
    # damaged_name: the name as the only key (ollama #12738's shape)
    ("name_as_key", tc('{"get_weather": {"city": "Paris"}}'), TOOLS,
     [call("get_weather", PARIS, "drift_name_as_key")], "", None),
    ("name_as_key_undeclared", tc('{"search": {"q": "x"}}'), TOOLS, [], "", "drift_name_as_key"),
    ("name_as_key_off_schema", tc('{"get_weather": {"town": "Paris"}}'), TOOLS, [], "", "drift_name_as_key"),
    ("arguments_field_alone_is_not_a_name", tc('{"arguments": {"city": "Paris"}}'), TOOLS, [], "", None),
    # damaged_name: the arguments beside the name
    ("flat_arguments", tc('{"name": "get_weather", "city": "Paris", "days": 3}'), TOOLS,
     [call("get_weather", {"city": "Paris", "days": 3}, "drift_flat_arguments")], "", None),
    ("flat_arguments_off_schema", tc('{"name": "get_weather", "town": "Paris"}'), TOOLS,
     [("get_weather", {}, "rejected", None)], "", "drift_flat_arguments"),
    # damaged_name: the name glued to the first argument key
    ("glued_key", tc('{"get_weather_city": "Paris", "days": 2}'), TOOLS,
     [call("get_weather", {"city": "Paris", "days": 2}, "drift_glued_name")], "", None),
    ("glued_in_name_value", tc('{"name": "get_weathercity": "Paris", "days": 2}'), TOOLS,
     [call("get_weather", {"city": "Paris", "days": 2}, "drift_glued_name")], "", None),
    ("glued_in_name_value_two_braces", tc('{"name": "execcommand": "ls -la"}}'), TOOLS,
     [call("exec", {"command": "ls -la"}, "drift_glued_name")], "", None),
    ("glued_two_readings", tc('{"get_weather_city": "Paris"}'), TWO_GLUES, [], "", "drift_glued_name"),
    ("glued_undeclared_key", tc('{"name": "get_weathertown": "Paris"}'), TOOLS, [], "", "drift_glued_name"),
    # damaged_delimiters: a string quoted with the wrong quote
    ("wrong_opening_quote", tc('{"name": "get_weather", "arguments": {"city": \'Paris"}}'), TOOLS,
     [call("get_weather", PARIS, "drift_wrong_quote")], "", None),
    ("wrong_closing_quote_not_streamed", tc('{"arguments": {"city": "Paris\', "days": 2}, "name": "get_weather"}'),
     TOOLS, [call("get_weather", {"city": "Paris", "days": 2}, "drift_wrong_quote")], "", None),
    # streamed: ', " followed by key text is held back, so the string's text sent stops before the '
    ("wrong_closing_quote_streamed", tc('{"name": "get_weather", "arguments": {"city": "Paris\', "days": 2}}'),
     TOOLS, [call("get_weather", {"city": "Paris", "days": 2}, "drift_wrong_quote")], "", None),
    ("wrong_closing_quote_off_schema", tc('{"name": "get_weather", "arguments": {"city": "Paris\', "days": "2"}}'),
     TOOLS, [("get_weather", {"city": "Paris', "}, "rejected", None)], "", "drift_wrong_quote"),
    ("quote_comma_quote_in_a_string_is_text", tc('{"name": "exec", "arguments": {"command": "it\', ", "x": 1}}'),
     TOOLS, [("exec", {"command": "it', ", "x": 1}, "proposed", None)], "", None),
    ("wrong_quote_off_schema", tc('{"name": "get_weather", "arguments": {"city": \'Paris", "days": "2"}}'), TOOLS,
     [("get_weather", {}, "rejected", None)], "", "drift_wrong_quote"),
    ("apostrophes_in_a_string_are_text", tc('{"name": "exec", "arguments": {"command": "echo \'hi\'"}}'), TOOLS,
     [("exec", {"command": "echo 'hi'"}, "proposed", None)], "", None),
]

KIMI_CASES = [
    # damaged_delimiters inside the streamed arguments
    ("wrong_opening_quote", KIMI_CALL + '{"city": \'Paris"}' + E + SE, TOOLS,
     [call("get_weather", PARIS, "drift_wrong_quote")], "", None),
    ("wrong_closing_quote_after_streamed_text", KIMI_CALL + '{"city": "Paris\', "days": 2}' + E + SE, TOOLS,
     [("get_weather", {"city": "Paris', "}, "rejected", None)], "", "drift_wrong_quote"),
    ("wrong_quote_off_schema", KIMI_CALL + '{"city": \'Paris", "days": "2"}' + E + SE, TOOLS,
     [("get_weather", {}, "rejected", None)], "", "drift_wrong_quote"),
    # missing_markers: every special token stripped
    ("stripped_at_start", 'functions.get_weather:0{"city": "Paris"}', TOOLS,
     [call("get_weather", PARIS, "drift_stripped_markers")], "", None),
    ("stripped_two_after_a_line", 'Let me check.\nfunctions.get_weather:0{"city": "Paris"}functions.exec:1'
     '{"command": "ls"}', TOOLS, [call("get_weather", PARIS, "drift_stripped_markers"),
                                  call("exec", {"command": "ls"}, "drift_stripped_markers")], "Let me check.\n", None),
    ("stripped_then_text", 'Text\nfunctions.exec:0{"command": "pwd"}\nDone.', TOOLS,
     [call("exec", {"command": "pwd"}, "drift_stripped_markers")], "Text\n\nDone.", None),
    ("stripped_off_schema", 'Checking.\nfunctions.get_weather:0{"city": "Paris", "days": "2"}', TOOLS, [],
     'Checking.\nfunctions.get_weather:0{"city": "Paris", "days": "2"}', "drift_stripped_markers"),
    ("stripped_undeclared", 'Checking.\nfunctions.search:0{"q": "x"}', TOOLS, [],
     'Checking.\nfunctions.search:0{"q": "x"}', None),
    ("stripped_inline_is_text", 'The id functions.get_weather:0{"city": "Paris"} is inline.', TOOLS, [],
     'The id functions.get_weather:0{"city": "Paris"} is inline.', None),
    ("functions_word_is_text", 'functions are listed below.\nfunctions.get_weather:0 {"city": "Paris"}', TOOLS, [],
     'functions are listed below.\nfunctions.get_weather:0 {"city": "Paris"}', None),
    ("stripped_no_tools", 'functions.get_weather:0{"city": "Paris"}', None, [],
     'functions.get_weather:0{"city": "Paris"}', None),
]

MISTRAL_CASES = [
    ("name_as_key", '[TOOL_CALLS]{"get_weather": {"city": "Paris"}}', TOOLS,
     [call("get_weather", PARIS, "drift_name_as_key")], "", None),
    ("name_as_key_undeclared", '[TOOL_CALLS]{"search": {"q": "x"}}', TOOLS, [], "", "drift_name_as_key"),
    ("flat_arguments", '[TOOL_CALLS]{"name": "exec", "command": "ls"}', TOOLS,
     [call("exec", {"command": "ls"}, "drift_flat_arguments")], "", None),
    ("flat_arguments_off_schema", '[TOOL_CALLS]{"name": "get_weather", "town": "Paris"}', TOOLS, [], "",
     "drift_flat_arguments"),
    ("wrong_closing_quote", '[TOOL_CALLS]get_weather{"city": "Paris\', "days": 2}', TOOLS,
     [call("get_weather", {"city": "Paris", "days": 2}, "drift_wrong_quote")], "", None),
    ("wrong_opening_quote_then_call", '[TOOL_CALLS]get_weather{"city": \'Paris"}[TOOL_CALLS]exec{"command": "ls"}',
     TOOLS, [call("get_weather", PARIS, "drift_wrong_quote"),
             call("exec", {"command": "ls"}, "drift_missing_args_marker")], "", None),
    ("wrong_quote_in_call_object", '[TOOL_CALLS]{"name": "get_weather", "arguments": {"city": "Paris\', "days": 2}}',
     TOOLS, [call("get_weather", {"city": "Paris", "days": 2}, "drift_wrong_quote")], "", None),
    ("wrong_quote_off_schema", '[TOOL_CALLS]get_weather{"city": "Paris\', "days": "2"}', TOOLS, [], "",
     "drift_wrong_quote"),
    ("stripped_at_start", 'get_weather{"city": "Paris"}', TOOLS,
     [call("get_weather", PARIS, "drift_stripped_markers")], "", None),
    ("stripped_two_after_a_line", 'Sure.\nget_weather{"city": "Paris"}exec{"command": "ls"}', TOOLS,
     [call("get_weather", PARIS, "drift_stripped_markers"), call("exec", {"command": "ls"}, "drift_stripped_markers")],
     "Sure.\n", None),
    ("stripped_off_schema", 'get_weather{"town": "Paris"}', TOOLS, [], 'get_weather{"town": "Paris"}',
     "drift_stripped_markers"),
    ("stripped_undeclared", 'search{"q": "x"}', TOOLS, [], 'search{"q": "x"}', None),
    ("stripped_inline_is_text", 'Call get_weather{"city": "Paris"} later.', TOOLS, [],
     'Call get_weather{"city": "Paris"} later.', None),
    ("name_in_prose_is_text", 'get_weather is a tool.', TOOLS, [], 'get_weather is a tool.', None),
    ("stripped_no_tools", 'get_weather{"city": "Paris"}', None, [], 'get_weather{"city": "Paris"}', None),
]

LLAMA_CASES = [
    ("name_as_key", '{"get_weather": {"city": "Paris"}}', TOOLS, [call("get_weather", PARIS, "drift_name_as_key")],
     "", None),
    ("name_as_key_off_schema", '{"get_weather": {"town": "Paris"}}', TOOLS, [], '{"get_weather": {"town": "Paris"}}',
     "drift_name_as_key"),
    ("flat_arguments", '{"name": "get_weather", "city": "Paris", "days": 2}', TOOLS,
     [call("get_weather", {"city": "Paris", "days": 2}, "drift_flat_arguments")], "", None),
    ("flat_arguments_off_schema", '{"name": "get_weather", "town": "Paris"}', TOOLS, [],
     '{"name": "get_weather", "town": "Paris"}', "drift_flat_arguments"),
    ("glued_key", '{"get_weather_city": "Paris"}', TOOLS, [call("get_weather", PARIS, "drift_glued_name")], "", None),
    ("glued_two_readings", '{"get_weather_city": "Paris"}', TWO_GLUES, [], '{"get_weather_city": "Paris"}',
     "drift_glued_name"),
    # a JSON answer naming no declared tool is ordinary JSON: no call, nothing said
    ("json_answer_one_key", '{"result": {"a": 1}}', TOOLS, [], '{"result": {"a": 1}}', None),
    ("json_answer_with_a_name", '{"name": "Ada", "age": 36}', TOOLS, [], '{"name": "Ada", "age": 36}', None),
]

PARAMS = ([pytest.param(f, *case, id=f"{f}-{case[0]}") for f in HERMES for case in HERMES_CASES]
          + [pytest.param(f, *case, id=f"{f}-{case[0]}") for f in KIMI for case in KIMI_CASES]
          + [pytest.param(f, *case, id=f"{f}-{case[0]}") for f in MISTRAL for case in MISTRAL_CASES]
          + [pytest.param(f, *case, id=f"{f}-{case[0]}") for f in LLAMA for case in LLAMA_CASES])
ALL_CASES = HERMES_CASES + KIMI_CASES + MISTRAL_CASES + LLAMA_CASES


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
    diagnostic with the recovery's code. Without tools, no drift diagnostic at all."""
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
    bare = fmt.parse(output, None)
    assert not [d for d in bare.diagnostics if drift_class(d)]
    assert not [d for c in bare.tool_calls for d in c.diagnostics if drift_class(d)]


@pytest.mark.parametrize("family, case, output, tools, calls, content, refused", PARAMS)
def test_drift_case_streams_to_the_one_shot_result(family, case, output, tools, calls, content, refused):
    """Every split point, 1 character at a time and random chunks give the one-shot result, with events consistent
    with it (content deltas join to the content, a call's fragments to its arguments): nothing sent is taken
    back."""
    fmt = toolwire.get_format(family)
    want = full_state(fmt.parse(output, tools))
    for chunks in chunkings(output, seed=hash(case) & 0xFFFF):
        result, events = stream_parse(fmt, output, chunks, tools)
        assert full_state(result) == want, chunks
        assert_events_consistent(result, events)


def _tokenizer(name):
    require_shared()
    pytest.importorskip("tokenizers")
    from toolwire.tokenize import load_tokenizer
    return load_tokenizer(str(REAL / "tokenizers" / name))


@pytest.fixture(scope="module")
def qwen_tokenizer():
    return _tokenizer("Qwen3")


@pytest.fixture(scope="module")
def llama_tokenizer():
    return _tokenizer("Llama-3")


def _id_runs(ids, seed):
    rng = random.Random(seed)
    runs = [[ids], [[i] for i in ids], []]
    pos = 0
    while pos < len(ids):
        n = rng.randint(1, 5)
        runs[2].append(ids[pos:pos + n])
        pos += n
    return runs


def _check_ids(fmt, tokenizer, output, tools):
    from toolwire.tokenize import vocabulary
    ids = vocabulary(tokenizer).encode(output)
    want = full_state(fmt.parse(output, tools))
    for split in _id_runs(ids, len(output)):
        parser = fmt.stream(tools, tokenizer=tokenizer)
        events = []
        for run in split:
            events += parser.feed(ids=run)
        events += parser.flush()
        result = parser.finish()
        assert full_state(result) == want
        assert_events_consistent(result, events)


@pytest.mark.parametrize("family, case, output, tools, calls, content, refused",
                         [p for p in PARAMS if p.values[0] in QWEN_TOKENIZER])
def test_drift_case_as_qwen_token_ids(qwen_tokenizer, family, case, output, tools, calls, content, refused):
    """The real Qwen3 tokenizer (``<tool_call>`` / ``</tool_call>`` its control tokens): the output's ids, fed all
    at once, one at a time and in random runs, give the text result."""
    _check_ids(toolwire.get_format(family), qwen_tokenizer, output, tools)


@pytest.mark.parametrize("family, case, output, tools, calls, content, refused",
                         [p for p in PARAMS if p.values[0] in LLAMA])
def test_drift_case_as_llama_token_ids(llama_tokenizer, family, case, output, tools, calls, content, refused):
    """The real Llama 3 tokenizer: a bare JSON answer's ids give the text result."""
    _check_ids(toolwire.get_format(family), llama_tokenizer, output, tools)


def test_every_class_has_new_recoveries_here():
    """The codes of this round: each names one class; together they cover damaged_name, damaged_delimiters and
    missing_markers (borrowed_shape had its round before)."""
    codes = {c[3] for case in ALL_CASES for c in case[3] if c[3]} | {case[5] for case in ALL_CASES if case[5]}
    assert {DRIFT_CODES[code] for code in codes} == {Drift.DAMAGED_NAME, Drift.DAMAGED_DELIMITERS,
                                                     Drift.MISSING_MARKERS}
    assert {"drift_name_as_key", "drift_flat_arguments", "drift_glued_name", "drift_wrong_quote",
            "drift_stripped_markers"} <= codes


@pytest.mark.parametrize("family, output, held", [
    ("kimi_k2", 'Let me check.\nfunctions.get_weather:0{"city": "Paris"}', "Let me check.\n"),
    ("mistral_small32", 'Sure.\nget_weather{"city": "Paris"}', "Sure.\n"),
])
def test_a_stripped_call_is_held_until_its_object_ends(family, output, held):
    """Streamed a character at a time: nothing of a stripped call is sent as content while it may be one; the call
    comes whole when its object ends."""
    parser = toolwire.get_format(family).stream(TOOLS)
    sent = []
    for i, ch in enumerate(output):
        events = parser.feed(ch)
        sent += [e.text for e in events if e.type == "content"]
        if i < len(output) - 1:
            assert not [e for e in events if e.type == "tool_call_started"]
    assert "".join(sent) == held
    assert [c.name for c in parser.finish().tool_calls] == ["get_weather"]


@pytest.mark.parametrize("family, line, released_at", [
    ("kimi_k2", "functional programming", "functiona"),  # "functiona" is no prefix of "functions."
    ("kimi_k2", "functions.search:0{", "functions.s"),     # no declared name starts with "s"
    ("mistral_small32", "get_went", "get_wen"),           # no declared name starts with "get_wen"
    ("mistral_small32", "exec is a tool", "exec "),       # a declared name, then no "{"
])
def test_held_text_is_released_the_moment_it_cannot_be_a_call(family, line, released_at):
    """A line start is held only while it can still be a stripped call: the character that makes it impossible
    releases the held text as content (and that character with it)."""
    parser = toolwire.get_format(family).stream(TOOLS)
    sent = "".join(e.text for e in parser.feed("Hi\n") if e.type == "content")
    assert sent == "Hi\n"
    for i, ch in enumerate(line):
        sent += "".join(e.text for e in parser.feed(ch) if e.type == "content")
        if len(line[:i + 1]) < len(released_at):
            assert sent == "Hi\n", line[:i + 1]
        else:
            assert sent == "Hi\n" + line[:i + 1], line[:i + 1]
            break


def test_a_closing_quote_written_wrong_is_held_until_the_next_character():
    """Streamed a character at a time (Qwen3): ``', "`` inside a string is not sent as string text while the next
    character may show the ``'`` closed the string; the fragments are the re-quoted arguments, nothing taken back.
    Followed by a character JSON allows after a string, the run is sent as string text at once."""
    fmt = toolwire.get_format("qwen3")
    text = tc('{"name": "get_weather", "arguments": {"city": "Paris\', "days": 2}}')
    parser = fmt.stream(TOOLS)
    fragments = [e.fragment for ch in text for e in parser.feed(ch) if e.type == "arguments"]
    fragments += [e.fragment for e in parser.flush() if e.type == "arguments"]
    assert "".join(fragments) == '{"city": "Paris", "days": 2}' and not any("'" in f for f in fragments)
    kept = tc('{"name": "exec", "arguments": {"command": "it\', ", "x": 1}}')
    out, events = stream_parse(fmt, kept, list(kept), TOOLS)
    assert "".join(e.fragment for e in events if e.type == "arguments") == '{"command": "it\', ", "x": 1}'


def test_stripped_calls_need_text_input(qwen_tokenizer):
    """Fed token ids, a stripped Kimi call is never read: with ids a call needs its control tokens (here the Qwen3
    vocabulary spells the text in ordinary tokens), so the line stays content and no drift diagnostic is said."""
    from toolwire.tokenize import vocabulary
    output = 'Checking.\nfunctions.get_weather:0{"city": "Paris"}'
    fmt = toolwire.get_format("kimi_k2")
    assert [c.name for c in fmt.parse(output, TOOLS).tool_calls] == ["get_weather"]  # text input: a call
    parser = fmt.stream(TOOLS, tokenizer=qwen_tokenizer)
    parser.feed(ids=vocabulary(qwen_tokenizer).encode(output))
    result = parser.finish()
    assert not result.tool_calls and result.content == output
    assert not [d for d in result.diagnostics if drift_class(d)]


def test_a_stripped_call_after_the_reasoning_is_at_the_answers_start():
    """Kimi-K2-Thinking with thinking on: the answer starts after ``</think>``, so a stripped call there is at the
    answer's start; the same text inside the reasoning stays reasoning."""
    fmt = toolwire.get_format("kimi_k2_thinking")
    out = fmt.parse('Weather first.</think>functions.get_weather:0{"city": "Paris"}', TOOLS, thinking=True)
    assert [(c.name, c.arguments, c.status) for c in out.tool_calls] == [("get_weather", PARIS, "repaired")]
    assert out.reasoning == "Weather first." and out.content == ""
    inside = fmt.parse('Plan:\nfunctions.get_weather:0{"city": "Paris"}</think>Ok.', TOOLS, thinking=True)
    assert not inside.tool_calls and inside.reasoning == 'Plan:\nfunctions.get_weather:0{"city": "Paris"}'


PLAIN_VALUE = st.text(alphabet="abcdefgh XYZ-,.:;!?0123456789éü", min_size=1, max_size=24)


@settings(max_examples=60, derandomize=True, database=None, deadline=None)
@given(value=PLAIN_VALUE, family=st.sampled_from(("qwen3", "kimi_k2")))
def test_property_an_opening_quote_written_wrong_is_read_back(value, family):
    """Any plain string whose opening ``"`` was written ``'`` comes back as that string, whole, in the family's
    streamed arguments (the stream stopped at the value, so nothing sent is taken back)."""
    args = "{\"city\": '" + value + '", "days": 2}'
    output = (tc('{"name": "get_weather", "arguments": ' + args + "}") if family == "qwen3"
              else KIMI_CALL + args + E + SE)
    out = toolwire.get_format(family).parse(output, TOOLS)
    assert summary(out)[0] == [call("get_weather", {"city": value, "days": 2}, "drift_wrong_quote")]


@settings(max_examples=80, derandomize=True, database=None, deadline=None)
@given(lines=st.lists(st.text(alphabet="abcdefgituwhnsxc._:0123 \"'", max_size=30), min_size=1, max_size=4),
       family=st.sampled_from(("kimi_k2", "mistral_small32")))
def test_property_lines_without_an_object_stay_content(lines, family):
    """Lines that hold no JSON object (prefixes of ``functions.`` and of the declared names included) are content,
    exactly as written, and draw no call and no drift diagnostic, at every chunking."""
    text = "\n".join(lines)
    fmt = toolwire.get_format(family)
    out = fmt.parse(text, TOOLS)
    assert out.content == text and not out.tool_calls
    assert not [d for d in out.diagnostics if drift_class(d)]
    for chunks in chunkings(text, every_split_upto=40, random_splits=2):
        result, events = stream_parse(fmt, text, chunks, TOOLS)
        assert full_state(result) == full_state(out)
