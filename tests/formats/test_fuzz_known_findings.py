"""Regression tests for every finding of issue 11 section 3 (P1-P5 and the rest) and the issue 21 bug, each
an explicit input through the fuzz suite's invariant checker (tests/fuzz/invariants.py), which must pass.

Each case failed on the code before the fixes (checked when the case was written) and must pass now."""

from __future__ import annotations

import json

import pytest

import toolwire
from fuzz import families, invariants
from toolwire import Limits


def case(name: str, text: str, thinking: bool = False, answer: str | None = None, *, label: str):
    return pytest.param(name, text, thinking, answer, id=f"{label}-{name}")


def invoke_open(name: str) -> str:
    m = toolwire.get_format(name).markers
    return f'{m["tool_calls_open"]}\n{m["invoke_open"]}'


M2_EMPTY_INVOKE = ('<minimax:tool_call>\n<invoke name="">\n<parameter name="city">Oslo</parameter>\n</invoke>\n'
                   '</minimax:tool_call>')
M3 = "]<]minimax[>["
M3_EMPTY_INVOKE = (f'{M3}<tool_call>\n{M3}<invoke name="">\n{M3}<city>Oslo{M3}</city>\n{M3}</invoke>\n'
                   f'{M3}</tool_call>')
HY3_EMPTY_NAME = ("<tool_calls:opensource>\n<tool_call:opensource><tool_sep:opensource>\n<arg_key:opensource>city"
                  "</arg_key:opensource>\n<arg_value:opensource>Oslo</arg_value:opensource>\n</tool_call:opensource>\n"
                  "</tool_calls:opensource>")
HY3_NO_SEP = ("<tool_calls:opensource>\n<tool_call:opensource><arg_key:opensource>city</arg_key:opensource>\n"
              "<arg_value:opensource>Oslo</arg_value:opensource>\n</tool_call:opensource>\n</tool_calls:opensource>")

KNOWN = [
    # P1: llama31 raises on a raw control character or a bad escape inside "name"
    case("llama31", '{"name": "get_weather\n", "parameters": {}}', label="P1-raw-newline-in-name"),
    case("llama31", '{"name": "get_\\x", "parameters": {}}', label="P1-bad-escape-in-name"),
    # P2: the output ends inside a string holding a raw control character: streamed != parse()
    case("mistral_small32", '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris\n', label="P2"),
    case("kimi_k2", '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0'
                    '<|tool_call_argument_begin|>{"city": "Paris\n', label="P2"),
    case("kimi_k2_thinking", '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0'
                             '<|tool_call_argument_begin|>{"city": "Paris\n', label="P2"),
    case("deepseek_v31", '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris\n',
         label="P2"),
    case("deepseek_r1", '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n'
                        '{"city": "Paris\n', label="P2"),
    case("llama31", '{"name": "get_weather", "parameters": {"city": "Paris\n', label="P2"),
    case("gpt_oss", '<|channel|>commentary to=functions.get_weather<|constrain|>json<|message|>{"city": "Paris\n',
         label="P2"),
    # P3: DSML loses the text after the name when the output ends inside an invoke tag
    *[case(n, invoke_open(n) + 'get_weather" 𝔘 junk', label="P3") for n in ("deepseek_v32", "deepseek_v4",
                                                                              "deepseek_v41")],
    # P4: non-ASCII whitespace between DSML tags and in the mistral, kimi and V3.1 headers is dropped
    case("mistral_small32", '[TOOL_CALLS]get_weather\u3000[ARGS]{"city": "P"}', label="P4"),
    case("kimi_k2", '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0\u3000'
                    '<|tool_call_argument_begin|>{"city": "P"}<|tool_call_end|><|tool_calls_section_end|>', label="P4"),
    case("deepseek_v31", '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather\u00a0<｜tool▁sep｜>{"city": "P"}'
                         '<｜tool▁call▁end｜><｜tool▁calls▁end｜>', label="P4"),
    case("deepseek_v4", '\n\n<｜DSML｜tool_calls>\n\u3000<｜DSML｜invoke name="get_weather">\n</｜DSML｜invoke>\n'
                        '</｜DSML｜tool_calls>', label="P4"),
    # P5: gpt_oss drops header text, makes a call named "0", keeps unknown channels only in a message
    case("gpt_oss", '<|channel|>commentary to=functions.get_weather 中<|message|>{"city": "P"}<|call|>', label="P5"),
    case("gpt_oss", '0 中<|message|>{"city": "P"}', label="P5-call-named-0"),
    case("gpt_oss", '<|channel|>bogus中<|message|>hi', label="P5-unknown-channel"),
    # a call header cut short: no ToolCallStarted with an empty name
    *[case(n, t, label="truncated-header") for n, t in [
        ("qwen3", '<tool_call>\n{"name": "g'), ("mistral_small32", "[TOOL_CALLS]"), ("glm45", "<tool_call>"),
        ("deepseek_v32", 'Call.</think>\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name="')]],
    # the streamed argument text is the string to_openai_message() returns (1.50 and caf\u00e9 kept)
    *[case(n, t, label="arguments-bytes") for n, t in [
        ("qwen3", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "caf\\u00e9", "days": 1.50}}\n</tool_call>'),
        ("mistral_small32", '[TOOL_CALLS]get_weather[ARGS]{"city": "caf\\u00e9", "days": 1.50}'),
        ("llama31", '{"name": "get_weather", "parameters": {"city": "caf\\u00e9", "days": 1.50}}'),
        ("gpt_oss", '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>'
                    '{"city": "caf\\u00e9", "days": 1.50}<|call|>')]],
    # issue 21: a call marker inside reasoning swallows the reasoning close and the answer
    *[case(n, f"I might call {toolwire.get_format(n).markers[k]} later.\n</think>\n\nFinal answer.", True,
           "Final answer.", label="issue21")
      for n, k in [("qwen35", "call_open"), ("qwen36", "call_open"), ("glm45", "call_open"), ("glm47", "call_open"),
                   ("minimax_m2", "block_open")]],
    # found by CI's atheris run after the merges: a GLM-style <tool_call> with no name before <arg_key>
    case("laguna", "<assistant></assistant><assistant></assistant>>>><｜end▁of▁sentence｜>><assistant><arg_key>"
                   "<tool_call><arg_key><tool_call>", True, label="empty-name"),
    case("glm47", "<tool_call><arg_key>city</arg_key><arg_value>Oslo</arg_value></tool_call>", label="empty-name"),
    # found in review: a MiniMax-M3 <invoke name=""> and a Hy3 call with no name started a (then rejected) call
    *[case(n, t, thinking, label="empty-name") for n, t in [
        ("minimax_m2", M2_EMPTY_INVOKE), ("minimax_m3", M3_EMPTY_INVOKE), ("hy3", HY3_EMPTY_NAME), ("hy3", HY3_NO_SEP)]
      for thinking in (False, True)],
    # found by the marker-soup suite after the stop-23 merges: a Hermes-JSON <tool_call> whose "name" is empty
    *[case(n, t, label="empty-name") for n in ("qwen25", "qwen3_instruct_2507", "hermes3") for t in (
        'ure.\n<tool_call>\n{"name": ""', '<tool_call>\n{"name": "", "arguments": {}}\n</tool_call>',
        '<tool_call>\n{"name": " ", "arguments": {"a"')],
    # found by CI's atheris run (seed 2357): GigaChat's markup without its ｜GCML｜ token, read from text, built a
    # call from ordinary tokens when fed as ids; from ids it is text now (missing_call_wrapper: a text-only reading)
    *[case("gigachat35", t, label="gcml-less-markup") for t in (
        '</think>\n\n/tool_call><|role_sep|><invoke name="get_weather">',
        '<tool_calls>\n<invoke name="get_weather">\n<parameter name="city" string="true">Oslo</parameter>\n'
        '</invoke>\n</tool_calls>')],
]


@pytest.mark.parametrize("name, text, thinking, answer", KNOWN)
def test_known_finding_holds_every_invariant(name, text, thinking, answer):
    invariants.check(name, text, thinking=thinking, answer=answer)


TRUNCATED_OVER_LIMIT = {
    "mistral_small32": '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris' + "x" * 40,
    "qwen3": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris' + "x" * 40,
}


@pytest.mark.parametrize("name", sorted(TRUNCATED_OVER_LIMIT))
def test_a_truncated_over_limit_call_is_truncated_in_the_json_families_too(name):
    """One status for one situation: DSML and XML already say ``truncated`` here."""
    out = toolwire.get_format(name).parse(TRUNCATED_OVER_LIMIT[name], families.TOOLS,
                                          limits=Limits(max_argument_bytes=10))
    assert [c.status for c in out.tool_calls] == ["truncated"]
    assert "too_large" in out.codes() and out.truncated


def test_calls_past_max_calls_keep_their_text_not_candidates():
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "P"}}\n</tool_call>\n'
    text = call * 6
    out = toolwire.get_format("qwen3").parse(text, families.TOOLS, limits=Limits(max_calls=2))
    assert [c.status for c in out.tool_calls] == ["proposed", "proposed"]
    assert out.codes().count("too_large") == 1
    invariants.check_nothing_lost("qwen3", text, out)


EMPTY_NAMES = [
    # (format, output, the text the not_a_tool_call diagnostic keeps, the stray text kept after it)
    ("minimax_m2", M2_EMPTY_INVOKE, '<invoke name="">', ['\n<parameter name="city">Oslo</parameter>\n</invoke>\n']),
    ("minimax_m2", M2_EMPTY_INVOKE.replace('name=""', 'name=" "'), '<invoke name=" ">',
     ['\n<parameter name="city">Oslo</parameter>\n</invoke>\n']),
    ("minimax_m3", M3_EMPTY_INVOKE, f'{M3}<invoke name="">', [f"{M3}<city>", "Oslo", f"{M3}</city>", f"{M3}</invoke>"]),
    ("minimax_m3", M3_EMPTY_INVOKE.replace('name=""', 'name="  "'), f'{M3}<invoke name="  ">',
     [f"{M3}<city>", "Oslo", f"{M3}</city>", f"{M3}</invoke>"]),
    ("hy3", HY3_EMPTY_NAME, "<tool_call:opensource>",
     ["<tool_sep:opensource>\n<arg_key:opensource>city</arg_key:opensource>\n<arg_value:opensource>Oslo"
      "</arg_value:opensource>\n</tool_call:opensource>\n"]),
    ("hy3", HY3_EMPTY_NAME.replace("opensource><tool_sep", "opensource> \t<tool_sep"), "<tool_call:opensource> \t",
     ["<tool_sep:opensource>\n<arg_key:opensource>city</arg_key:opensource>\n<arg_value:opensource>Oslo"
      "</arg_value:opensource>\n</tool_call:opensource>\n"]),
    ("hy3", HY3_NO_SEP, "<tool_call:opensource>",
     ["<arg_key:opensource>city</arg_key:opensource>\n<arg_value:opensource>Oslo</arg_value:opensource>\n"
      "</tool_call:opensource>\n"]),
]


@pytest.mark.parametrize("name, text, head, stray", EMPTY_NAMES, ids=[f"{n}-{k}" for k, (n, *_r) in
                                                                     enumerate(EMPTY_NAMES)])
def test_a_call_that_names_no_tool_is_not_started(name, text, head, stray):
    """Like GLM's ``<tool_call>`` with no name: no call starts (a call starts only once its name is complete, and
    a blank name is none), the text stays in a ``not_a_tool_call`` diagnostic and what followed it in the
    block's stray text; a call after it is read as usual."""
    fmt = toolwire.get_format(name)
    stream = fmt.stream(families.TOOLS, thinking=False)
    events = stream.feed(text) + stream.flush()
    out = stream.finish()
    assert not [e for e in events if isinstance(e, toolwire.ToolCallStarted)]
    assert out.tool_calls == [] and out.content == ""
    assert [(d.code, d.raw) for d in out.diagnostics] == [("not_a_tool_call", head)] + [("stray_text", t)
                                                                                       for t in stray]


# ---------------------------------------------------------------- issue 33: the shared harness over all formats
# The N findings of ../shared/fuzz/repro_findings.py, each fixed at its cause; every case below failed before.

# A call to get_weather in each JSON-bodied format, around its arguments object.
JSON_CALLS = {
    **dict.fromkeys(["qwen25", "qwen3", "qwen3_instruct_2507", "qwen3_thinking_2507", "hermes3", "granite4"],
                    ('<tool_call>\n{"name": "get_weather", "arguments": ', "}\n</tool_call>")),
    "gpt_oss": ("<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>", "<|call|>"),
    **dict.fromkeys(["llama31", "llama32", "llama4"], ('{"name": "get_weather", "parameters": ', "}")),
    **dict.fromkeys(["mistral_small32", "ministral3"], ("[TOOL_CALLS]get_weather[ARGS]", "")),
    **dict.fromkeys(["kimi_k2", "kimi_k2_thinking"], (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>",
        "<|tool_call_end|><|tool_calls_section_end|>")),
    "deepseek_v31": ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>",
                     "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
    "deepseek_r1": ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n",
                    "\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
}
# Spellings outside the JSON number grammar: a leading zero (N1, N2), and the rest of the grammar's edges.
NOT_JSON_NUMBERS = ["-01", "01", "00", "-00.5", "007", "+1", ".5", "1.", "1e", "1e+", "-", "0x1F", "12px", "1.5.2",
                    "NaN", "-Infinity", "\uff11"]
JSON_NUMBERS = ["0", "-0", "-0.0E-0", "1e5", "12.50", "123456789012345678901234", "-7"]


@pytest.mark.parametrize("number", NOT_JSON_NUMBERS)
@pytest.mark.parametrize("name", sorted(JSON_CALLS))
def test_a_number_outside_the_json_grammar_rejects_the_call_in_every_json_family(name, number):
    """N1 / N2: one number grammar for every JSON-bodied family. ``-01`` raised in the Hermes family and was
    streamed as a non-JSON fragment elsewhere; now a leading zero, like every spelling outside the grammar,
    rejects the call with ``invalid_json`` (never a guessed value), one-shot and at every chunking, with the
    raw text kept and the fragments JSON equal to the (partial) arguments, which hold none of the number."""
    head, tail = JSON_CALLS[name]
    text = head + '{"city": "Paris", "days": ' + number + "}" + tail
    out = invariants.check(name, text)  # no exception, every chunking, fragments == arguments, nothing lost
    [call] = out.tool_calls
    assert call.status == "rejected" and "invalid_json" in [d.code for d in call.diagnostics]
    assert call.arguments == {"city": "Paris"} and number in call.raw_arguments


@pytest.mark.parametrize("number", JSON_NUMBERS)
@pytest.mark.parametrize("name", sorted(JSON_CALLS))
def test_a_json_number_is_read_exactly_in_every_json_family(name, number):
    head, tail = JSON_CALLS[name]
    out = invariants.check(name, head + '{"days": ' + number + "}" + tail)
    assert [(c.status, c.arguments) for c in out.tool_calls] == [("proposed", {"days": json.loads(number)})]


# (format, text before the filler, filler length that crosses the limit, text that would close it, thinking)
NS = "]<]minimax[>["
LIMITS = [
    # N3: a call header past 1024 characters (the Kimi, Mistral and DeepSeek V3.1 / R1 grammars)
    *[(n, "<|tool_calls_section_begin|><|tool_call_begin|>", 1025, "<|tool_call_argument_begin|>{}<|tool_call_end|>")
      for n in ("kimi_k2", "kimi_k2_thinking")],
    *[(n, "[TOOL_CALLS]", 1025, '[ARGS]{"city": "P"}') for n in ("mistral_small32", "ministral3")],
    ("deepseek_v31", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>", 1025, "<｜tool▁sep｜>{}<｜tool▁call▁end｜>"),
    ("deepseek_r1", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>", 1006,
     "\n```json\n{}\n```<｜tool▁call▁end｜>"),
    # N4: the XTML tag (1024) and MiniMax-M3 tag (512) limits
    ("kimi_k3", "<|open|>", 1025, "<|sep|>"),
    ("minimax_m3", NS + "<tool_call>" + NS, 513, ">"),
    # found while fixing N3: a Llama call prefix that ends past its 512-character bound
    ("llama31", '{"name": "', 503, '", "parameters": {}}'),
]


@pytest.mark.parametrize("name, head, crossing, closer", LIMITS, ids=[c[0] for c in LIMITS])
def test_the_character_that_crosses_a_limit_lands_in_the_same_place_at_every_chunking(name, head, crossing, closer):
    """N3 / N4: fed a character at a time, the character that crossed a header or tag limit went to the
    content where one feed put it in the diagnostic (or the other way round). Around the limit, with and
    without the marker that would have closed it, every chunking gives the one-shot result."""
    for n in (crossing - 1, crossing, crossing + 1):
        for tail in ("", closer, "b" + closer):
            invariants.check(name, head + "a" * n + tail, split_limit=0, random_splits=1)


REASONING_HEADS = [("glm45", "<tool_call>", "</think>"), ("glm46", "<tool_call>", "</think>"),
                   ("glm47", "<tool_call>", "</think>"), ("laguna", "<tool_call>", "</think>"),
                   ("minimax_m2", '<minimax:tool_call><invoke name="', "</think>"),
                   ("hy3", "<tool_calls:opensource><tool_call:opensource>", "</think:opensource>")]


@pytest.mark.parametrize("name, head, close", REASONING_HEADS, ids=[c[0] for c in REASONING_HEADS])
def test_a_call_head_in_reasoning_past_its_bound_ends_at_the_bound_at_every_chunking(name, head, close):
    """N5: a call opener in the reasoning, more than 512 characters, then the reasoning close: one feed read
    the close first, one character at a time the head's bound came first. The bound (a position) now decides."""
    for n in (511, 512, 513, 514):
        invariants.check(name, head + "a" * n + close + "\n\nDone.", thinking=True, split_limit=0, random_splits=1)


OVERLAPPING_CONTROL_TOKENS = [  # (the last character of one control token is the first of the next)
    ("minimax_m3", NS + "e~["), ("minimax_m3", "x]~!b[e~["), ("minimax_m3", "]~b" + NS + "<tool_call>" + NS
                                                               + '<invoke name="get_weather">' + NS + "</invoke>"),
    ("minimax_m3", "]<]image[>[e~["), ("minimax_m2", "x]~!b[e~["), ("minimax_m2", "]~b]~!b[e~["),
    # inside a tool block too (the shared fuzz_ids run, 2026-12-06): "]~b]" then "<]minimax[>[" for the tokenizer
    ("minimax_m3", NS + "<tool_call>]~b" + NS), ("minimax_m3", NS + "<tool_call>]~b" + NS + "</tool_call>"),
]


@pytest.mark.parametrize("thinking", [False, True])
@pytest.mark.parametrize("name, text", OVERLAPPING_CONTROL_TOKENS)
def test_control_tokens_that_overlap_a_marker_read_as_the_tokenizer_reads_them(name, text, thinking):
    """N7: ``]<]minimax[>[e~[`` is the namespace token then ``e~[`` for the tokenizer, so the text parse must
    not strip a ``[e~[`` that overlaps it: fed as ids (``ids_equal_text``) and as text, one result."""
    invariants.check(name, text, thinking=thinking)


@pytest.mark.parametrize("name", ["llama31", "llama32", "llama4"])
def test_non_ascii_whitespace_before_the_call_objects_closing_brace_is_kept(name):
    """N11: ``strip()`` took U+3000 for framing; only JSON blanks are, the rest stays in the diagnostic."""
    text = '{"name":"get_weather","parameters":{}\u3000}'
    out = invariants.check(name, text)
    assert [(d.code, d.raw) for d in out.diagnostics] == [("unexpected_text", "\u3000}")]
    assert [c.status for c in out.tool_calls] == ["proposed"]


# Request fields a user, a tool or a schema author writes (the shared harness's render_injection slots).
REQUEST_SLOTS = ["system", "user", "assistant_content", "reasoning", "arg_value", "arg_key", "tool_result",
                 "tool_description", "param_name", "param_description", "enum_value", "tool_name", "call_name"]


def _request(name: str, slot: str, text: str) -> tuple[list, list]:
    value = lambda field: text if slot == field else "x"  # noqa: E731
    prop = text if slot == "param_name" else "city"
    tools = [{"type": "function", "function": {
        "name": text if slot == "tool_name" else "get_weather", "description": value("tool_description"),
        "parameters": {"type": "object", "required": [prop], "properties": {
            prop: {"type": "string", "description": value("param_description")},
            "unit": {"type": "string", "enum": ["c", value("enum_value")]}}}}}]
    call_id = "abcdefgh1" if name in ("mistral_small32", "ministral3") else "call_1"
    args = {(text if slot == "arg_key" else "k"): value("arg_value"), "city": "Paris"}
    messages = [{"role": "system", "content": value("system")}, {"role": "user", "content": "first"},
                {"role": "assistant", "content": value("assistant_content")},
                {"role": "user", "content": value("user")},
                {"role": "assistant", "content": "", "reasoning_content": value("reasoning"), "tool_calls": [
                    {"id": call_id, "type": "function", "function": {
                        "name": text if slot == "call_name" else "get_weather",
                        "arguments": json.dumps(args, ensure_ascii=False)}}]},
                {"role": "tool", "tool_call_id": call_id, "content": value("tool_result")}]
    return messages, tools


@pytest.mark.parametrize("name", families.format_names())
def test_request_text_is_content_in_every_field(name):
    """N6's class in every family: text a request supplies (names, keys, descriptions, values, results) is
    written as ``content`` segments, never as template text or a control token (gemma4 wrote its notation's
    names and keys as template text, MiniMax-M3 its argument keys)."""
    fmt = toolwire.get_format(name)
    word = "Жfield9Ж"
    checked = 0
    for slot in REQUEST_SLOTS:
        messages, tools = _request(name, slot, word)
        try:
            prompt = fmt.render(messages, tools, thinking=True)
        except toolwire.ToolwireError:
            continue
        kinds, pos = [], 0
        for seg in prompt.segments:
            start = seg.text.find(word[1:-1]) if word[1:-1] in seg.text else -1
            while start >= 0:
                kinds.append(seg.kind)
                start = seg.text.find(word[1:-1], start + 1)
            pos += len(seg.text)
        found = prompt.text.count(word[1:-1])
        assert len(kinds) == found, f"{slot}: the word is cut across segments"
        assert set(kinds) <= {"content"}, f"{slot}: request text written as {sorted(set(kinds))}"
        checked += found > 0
    assert checked >= 5


@pytest.mark.parametrize("thinking", [False, True])
@pytest.mark.parametrize("name", families.format_names())
def test_a_long_run_of_blanks_streams_on_in_every_format(name, thinking):
    """N8's class: llama4 held the blanks after ``<|python_start|>`` in its buffer and scanned them again at
    every delta (quadratic); the Hermes, marker-JSON, Gemma 4 and MiniMax-M3 parsers did the same with blanks
    at the start of the output. After any marker too, 5,000 blanks (then text) fed in 64-character deltas never
    wait in the buffer (``held_back``), and give the one-shot result."""
    fmt = toolwire.get_format(name)
    for head in ("",) + families.markers(name):
        for blank in (" ", "\n"):
            text = head + blank * 5000 + "Done."
            invariants.check_held_back(fmt, text, families.TOOLS, thinking)
            parser = fmt.stream(families.TOOLS, thinking=thinking)
            for at in range(0, len(text), 64):
                parser.feed(text[at:at + 64])
            parser.flush()
            assert parser.finish() == fmt.parse(text, families.TOOLS, thinking=thinking), (head, blank)


@pytest.mark.parametrize("name, text", [
    ("llama4_pythonic", "[g("), ("llama4_pythonic", "[get_weather(city='Paris')"),
    ("llama4_pythonic", "[get_weather(city='Paris') and then"),
    ("lfm25", "<|tool_call_start|>["), ("lfm25", "<|tool_call_start|>[get_weather(city='Paris')"),
])
def test_a_call_lists_opener_is_kept_when_the_list_never_closes(name, text):
    """The shared harness (../shared/fuzz, prefixes of the golden outputs) found the ``[`` of a pythonic call list
    lost when the output ended (or the list stopped) before its ``]``: it is framing only of a list that closes.
    Now the ``unclosed_call_list`` diagnostic keeps it as its raw text, one-shot and at every chunking."""
    fmt = toolwire.get_format(name)
    stream = fmt.stream()
    for ch in text:
        stream.feed(ch)
    for out in (fmt.parse(text), stream.finish()):
        kept = "".join([out.content, out.reasoning] + [c.raw_arguments or "" for c in out.tool_calls]
                       + [d.raw or "" for d in out.diagnostics])
        assert kept.count("[") == text.count("["), (kept, out.codes())
        assert [d.raw for d in out.diagnostics if d.code == "unclosed_call_list"] == ["["]
    invariants.check(name, text)


@pytest.mark.parametrize("text", ["<|tool_call_start|>g]", "<|tool_call_start|>g]<|tool_call_end|>",
                                  "<|tool_call_start|>x y]get_weather(city='Paris')<|tool_call_end|>"])
def test_a_closing_bracket_that_closes_no_list_is_kept(text):
    """LFM2.5 writes its calls with or without the list's brackets; a ``]`` after text that is no call, in a list
    that has no ``[``, closes nothing: it stays in the ``malformed_call_list`` diagnostic's raw with that text
    (the shared harness found it dropped)."""
    out = toolwire.get_format("lfm25").parse(text)
    raws = [d.raw for d in out.diagnostics if d.code == "malformed_call_list"]
    assert raws and raws[0].endswith("]") and "".join(raws).count("]") == text.count("]")
    invariants.check("lfm25", text)
