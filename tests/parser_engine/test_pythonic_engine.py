"""The pythonic call engine (toolwire.parsers.engine.pythonic), driven through the two families that use it: literals and
how each context writes strings, keyword arguments only, several calls, streaming (every chunking gives the
one-shot result and the argument fragments join to the arguments' JSON), values that are not literals (rejected,
never evaluated), truncation, limits, adversarial inputs in linear time, and the one-shot literal reader."""

from __future__ import annotations

import ast
import builtins
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import toolwire
from support import assert_nothing_lost, check_chunking, json_scalars, json_values, stream_parse
from toolwire.parsers.engine import pythonic
from toolwire.parsers.engine.pythonic import LiteralError, raw_string_closes_early, read_literal, type_text

LFM = toolwire.get_format("lfm25")
L4P = toolwire.get_format("llama4_pythonic")
OPEN, CLOSE = "<|tool_call_start|>", "<|tool_call_end|>"
STRUCTURE = (OPEN, CLOSE, "<think>", "</think>", "[", "]", "(", ")", ",", "=")


def block(body: str, tools=None, **kw) -> toolwire.ParsedOutput:
    """An LFM2.5 call block holding ``body``, streamed every way (support.check_chunking), one-shot result."""
    return check_chunking(LFM, OPEN + body + CLOSE, tools, **kw)


def args(body: str, tools=None) -> list[dict]:
    out = block(body, tools)
    assert [(c.status, c.diagnostics) for c in out.tool_calls] == [("proposed", [])] * len(out.tool_calls)
    assert out.diagnostics == [] and out.content == ""
    return [c.arguments for c in out.tool_calls]


def codes(call) -> list[str]:
    return [d.code for d in call.diagnostics]


# ---------------------------------------------------------------- literals

@pytest.mark.parametrize("body, expected", [
    ("[f(a='x')]", {"a": "x"}),
    ("[f(a='C:\\tmp\\new')]", {"a": "C:\\tmp\\new"}),           # an argument's string is raw: no escapes
    ("[f(a='line\none')]", {"a": "line\none"}),
    ("[f(a='say \"hi\"')]", {"a": 'say "hi"'}),
    ("[f(a=\"raw 'too' \\n\")]", {"a": "raw 'too' \\n"}),        # either quote, raw
    ("[f(a='')]", {"a": ""}),
    ("[f(a='it's fine')]", {"a": "it's fine"}),                 # a quote that no value-end follows is text
    ("[f(q='x', y', z=1)]", {"q": "x', y", "z": 1}),
    ("[f(a=1, b=-0.5, c=1.5e-07, d=12345678901234567890, e=1_000, g=0x1F, h=0o17, i=0b101, j=.5, k=5., l=1E+3)]",
     {"a": 1, "b": -0.5, "c": 1.5e-07, "d": 12345678901234567890, "e": 1000, "g": 31, "h": 15, "i": 5, "j": 0.5,
      "k": 5.0, "l": 1000.0}),
    ("[f(a=True, b=False, c=None)]", {"a": True, "b": False, "c": None}),
    ("[f(a=['x', \"y\", 'it\\'s', '\\n\\t\\x41\\u00e9\\N{BULLET}\\\\', 1, None])]",
     {"a": ["x", "y", "it's", "\n\tAé\u2022\\", 1, None]}),
    ("[f(a=[[1, [2, []]], ()], b=(1,), c=(1, 'x'), d=(7), e=())]",
     {"a": [[1, [2, []]], []], "b": [1], "c": [1, "x"], "d": 7, "e": []}),
    ("[f(a={\"k\": \"v\\\"q\\u00e9\\/\", \"n\": [1, true, null], \"o\": {}})]",   # a dict is JSON (tojson)
     {"a": {"k": "v\"qé/", "n": [1, True, None], "o": {}}}),
    ("[f(a=[{'k': None, 'l': (1, [2])}])]", {"a": [{"k": None, "l": [1, [2]]}]}),  # a dict in a list is Python's
    ("[f(a=[1, 2,], b={\"x\": 1,}, c=3,)]", {"a": [1, 2], "b": {"x": 1}, "c": 3}),
    ("[ f ( a = 1 ,\n b = [ 1 , 2 ] ) ]", {"a": 1, "b": [1, 2]}),
    ("[f(a='\U0001f680 ☕ 杭州')]", {"a": "\U0001f680 ☕ 杭州"}),
    ("[f(a=['\\ud83d\\ude80'])]", {"a": ["\U0001f680"]}),      # a surrogate pair escape is one character
])
def test_literals(body, expected):
    assert args(body) == [expected]


def test_several_calls_in_one_list_and_empty_ones():
    assert args("[get_weather(city='Oslo'), get_weather(city='Lima', days=2),list_projects()]") == [
        {"city": "Oslo"}, {"city": "Lima", "days": 2}, {}]
    assert args("[]") == []


def test_names_with_dots_and_dashes():
    out = block("[functions.get-weather(max-days=2)]")
    assert [(c.name, c.arguments) for c in out.tool_calls] == [("functions.get-weather", {"max-days": 2})]


def test_foreign_literal_spellings_are_accepted_variants():
    out = block("[f(a=[true, null], b={\"x\": True})]")
    (call,) = out.tool_calls
    assert call.arguments == {"a": [True, None], "b": {"x": True}}
    assert call.status == "repaired" and codes(call) == ["json_literal", "python_literal"]


# ---------------------------------------------------------------- what is refused

@pytest.mark.parametrize("body, code, raw", [
    ("[f('Paris')]", "positional_argument", "'Paris'"),
    ("[f(city)]", "positional_argument", "city"),
    ("[f(a=1, 'x')]", "positional_argument", "a=1, 'x'"),
    ("[f(a=city)]", "not_a_literal", "a=city"),
    ("[f(a=os.system)]", "not_a_literal", "a=os.system"),
    ("[f(a=__import__('os').system('touch /tmp/toolwire-pwned'))]", "not_a_literal",
     "a=__import__('os').system('touch /tmp/toolwire-pwned')"),
    ("[f(a=1 + 2)]", "not_a_literal", "a=1 + 2"),
    ("[f(a=[1, x])]", "not_a_literal", "a=[1, x]"),
    ("[f(a=lambda: 0)]", "not_a_literal", "a=lambda: 0"),
    ("[f(a=float('inf'))]", "not_a_literal", "a=float('inf')"),
    ("[f(a=['x'.upper()])]", "not_a_literal", "a=['x'.upper()]"),
    ("[f(*args)]", "malformed_arguments", "*args"),
    ("[f(a=007)]", "malformed_arguments", "a=007"),
    ("[f(a=1e400)]", "unrepresentable_number", "a=1e400"),
    ("[f(a={1: 2})]", "malformed_arguments", "a={1: 2}"),
    ("[f(a=[1 2])]", "not_a_literal", "a=[1 2]"),
    ("[f(a=['\\x4'])]", "malformed_arguments", "a=['\\x4']"),
    ("[f(a == 1)]", "not_a_literal", "a == 1"),
])
def test_what_is_no_keyword_literal_is_rejected_with_its_text(body, code, raw):
    out = block(body)
    (call,) = out.tool_calls
    assert call.status == "rejected" and code in codes(call)
    assert call.raw_arguments == raw
    assert out.content == "" and not out.truncated


def test_nothing_is_ever_evaluated(monkeypatch, tmp_path):
    """Every way Python could evaluate text fails loudly while parsing: the engine calls none of them."""
    def forbidden(*a, **k):
        raise AssertionError("evaluated")

    typed_tools = [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"ids": {"type": "array"}}}}}]
    marker = tmp_path / "pwned"
    lfm_text = f"{OPEN}[f(a=__import__('os').system('touch {marker}'), b=[1, 'x', {{'k': True}}])]{CLOSE}"
    l4p_text = '[f(ids="[\'a\', (1, 2)]")]'
    LFM.parse(lfm_text), L4P.parse(l4p_text, typed_tools)  # warm up: first-use imports happen outside the patch
    for target, name in ((builtins, "eval"), (builtins, "exec"), (builtins, "compile"), (ast, "literal_eval"),
                         (ast, "parse"), (builtins, "__import__")):
        monkeypatch.setattr(target, name, forbidden)
    out = LFM.parse(lfm_text)
    typed = L4P.parse(l4p_text, typed_tools)
    monkeypatch.undo()
    assert not marker.exists()
    assert out.tool_calls[0].status == "rejected" and "not_a_literal" in codes(out.tool_calls[0])
    assert typed.tool_calls[0].arguments == {"ids": ["a", [1, 2]]}


def test_a_rejected_call_does_not_stop_the_next_one():
    out = block("[f(x, a='y)'), g(b=1)]")
    assert [(c.name, c.status, c.arguments) for c in out.tool_calls] == [
        ("f", "rejected", {}), ("g", "proposed", {"b": 1})]
    assert out.tool_calls[0].raw_arguments == "x, a='y)'"


def test_a_value_read_before_the_error_is_kept_and_its_json_stays_whole():
    """The fragments already sent for a value cut short by an error are closed, so they still join to the
    arguments' JSON (check_chunking checks every chunking)."""
    out = block("[f(a=[1, {'k': 'v', 'm': [2, zz]}], b=2)]")
    (call,) = out.tool_calls
    assert call.status == "rejected" and call.arguments == {"a": [1, {"k": "v", "m": [2]}]}
    assert json.loads(call.arguments_json()) == call.arguments


def test_duplicate_keys_keep_the_last_value_and_the_text_sent():
    out = block("[f(a={'k': 1, 'k': [2]}, b=1, b=2)]")
    (call,) = out.tool_calls
    assert call.arguments == {"a": {"k": [2]}, "b": 2}
    assert "duplicate_key" in codes(call) and "duplicate_argument" in codes(call)
    assert call.arguments_json() == '{"a": {"k": 1, "k": [2]}, "b": 1, "b": 2}'


# ---------------------------------------------------------------- the list, the block, the end of output

def test_truncated_output_marks_the_call():
    for cut in ("[f(a='Par", "[f(a=[1, 2", "[f(a=1", "[f(a={'k': 'v", "[f(a="):
        out = LFM.parse(OPEN + cut)
        (call,) = out.tool_calls
        assert call.status == "truncated" and "truncated" in codes(call) and out.truncated, cut
        assert call.raw_arguments == cut[3:]


def test_the_block_end_cuts_an_open_string_or_call():
    out = block("[f(a='abc)]")  # the string was never closed: the block's end ends it
    (call,) = out.tool_calls
    assert call.status == "rejected" and {"unterminated_string", "unclosed_call"} <= set(codes(call))
    assert call.arguments == {"a": "abc)]"}
    out = LFM.parse(f"{OPEN}[f(a=[1, 2{CLOSE}after")
    assert out.tool_calls[0].status == "rejected" and out.content == "after"


def test_text_in_the_list_that_is_no_call_is_kept():
    out = block("[f(a=1), 42 nonsense, g()]")
    assert [c.name for c in out.tool_calls] == ["f", "g"]
    assert [(d.code, d.raw) for d in out.diagnostics] == [("malformed_call_list", "42 nonsense")]


def test_nothing_lost_in_malformed_lists():
    for body in ("[f(a='x', 'y', b=[1, (2, 3), {4: 5}], c=zz(1))]", "[f(a=1) g(b=2)]", "[[[f(a=1)]]]",
                 "[f(a='unterminated", "[f(a=\"x\"y\", b='q')]", "[1, 2, f()]", "garbage [f(a=1)]"):
        text = OPEN + body + CLOSE + " tail"
        out = check_chunking(LFM, text)
        assert_nothing_lost(text, out, STRUCTURE)
        assert out.content.endswith("tail")


# ---------------------------------------------------------------- the raw-string closing rule

@pytest.mark.parametrize("value, after, closes_early", [
    ("it's", ", b=1)]", False),
    ("a', b=", ", c=1)]", True),      # "', b=" inside the value looks like the next argument
    ("a')]", ")]", True),
    ("a'), g(", ")]", True),
    ("a') and more", ")]", False),
    ("x'", ")]", False),              # the value's own last quote: what follows is the closing quote
    ("x' ", ")]", False),
    ("x', ", ")]", False),            # ', ' then the closing quote: no key follows
])
def test_raw_string_closing_rule(value, after, closes_early):
    assert raw_string_closes_early(value, "'", after) is closes_early
    text = f"{OPEN}[f(a='{value}'{after}{CLOSE}"
    out = LFM.parse(text)
    assert (out.tool_calls[0].arguments.get("a") != value) is closes_early


# ---------------------------------------------------------------- limits

def test_limits_bound_depth_size_and_calls():
    deep = "[f(a=" + "[" * 70 + "]" * 70 + ", b=1)]"
    (call,) = block(deep).tool_calls
    assert call.status == "rejected" and "too_large" in codes(call)
    small = toolwire.Limits(max_argument_bytes=64, max_calls=2)
    out = LFM.parse(f"{OPEN}[f(a='{'x' * 100}'), g(), h(), k()]{CLOSE}", limits=small)
    assert [(c.name, c.status) for c in out.tool_calls] == [("f", "rejected"), ("g", "proposed")]
    assert "too_large" in codes(out.tool_calls[0])
    assert [d.code for d in out.diagnostics] == ["too_large"] and "h" in out.diagnostics[0].raw


def test_huge_numbers_are_refused_not_converted():
    out = LFM.parse(f"{OPEN}[f(a={'9' * 5000}, b={'1' * 999})]{CLOSE}")
    (call,) = out.tool_calls
    assert call.status == "rejected" and "unrepresentable_number" in codes(call)
    out = LFM.parse(f"{OPEN}[f(b={'1' * 999})]{CLOSE}")
    assert out.tool_calls[0].arguments == {"b": int("1" * 999)}


# ---------------------------------------------------------------- adversarial inputs: no exception, linear

def _steps(text: str, chunk: int = 7) -> int:
    """How many engine steps (and closing-rule characters) streaming ``text`` takes."""
    counter = [0]
    real_steps, real_follow = pythonic._STEPS, pythonic._follower_step

    def counted(step):
        def run(*a):
            counter[0] += 1
            return step(*a)
        return run

    def follow(state, ch):
        counter[0] += 1
        return real_follow(state, ch)

    pythonic._STEPS = tuple(map(counted, real_steps))
    pythonic._follower_step = follow
    try:
        parser = LFM.stream()
        for i in range(0, len(text), chunk):
            parser.feed(text[i:i + chunk])
        parser.finish()
    finally:
        pythonic._STEPS, pythonic._follower_step = real_steps, real_follow
    return counter[0]


ADVERSARIAL = {
    "unterminated string": lambda n: "[f(a='" + "x" * n,
    "quotes that never close": lambda n: "[f(a='" + "', " * n,
    "closing look-alikes": lambda n: "[f(a='" + "', b" * n,
    "nested brackets": lambda n: "[f(a=" + "[" * n,
    "brackets and strings": lambda n: "[f(a=" + "['x', " * n,
    "names": lambda n: "[f(a=__import__('os')" + ".x" * n,
    "huge number": lambda n: "[f(a=" + "9" * n,
    "many calls": lambda n: "[" + "f(a=1), " * n,
    "deep tuples": lambda n: "[f(a=" + "(" * n,
    "escapes": lambda n: "[f(a=['" + "\\x41\\u00e9" * n,
}


@pytest.mark.parametrize("kind", sorted(ADVERSARIAL))
def test_adversarial_inputs_parse_in_linear_steps(kind):
    make = ADVERSARIAL[kind]
    small, large = (_steps(OPEN + make(n)) for n in (2_000, 8_000))
    assert large <= 4.4 * small  # four times the input, about four times the steps
    out = LFM.parse(OPEN + make(3_000))
    assert all(c.status in ("rejected", "truncated", "proposed") for c in out.tool_calls)


# ---------------------------------------------------------------- the one-shot literal reader

json_like = json_values(json_scalars(st.text(max_size=12), int_bound=2 ** 80), st.text(max_size=6))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=json_like)
def test_read_literal_reads_pythons_and_jsons_spelling(value):
    if isinstance(value, float) or any(isinstance(v, float) for v in _leaves(value)):
        assert all(math.isfinite(v) for v in _leaves(value) if isinstance(v, float))
    assert read_literal(repr(value)) == value
    assert json.dumps(read_literal(json.dumps(value, ensure_ascii=False), mode=pythonic.JSON)) == json.dumps(value)


def _leaves(value):
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        else:
            yield v


@pytest.mark.parametrize("text", ["", "x", "[1, 2", "{'a' 1}", "1 2", "(1, 2", "__import__('os')", "{1: 2}",
                                  "'abc", "[" * 100 + "]" * 100, "1e999", "[1,,2]"])
def test_read_literal_refuses_what_is_no_literal(text):
    with pytest.raises(LiteralError):
        read_literal(text)


def test_type_text_types_by_the_schema():
    assert type_text("['a', 'b']", {"type": "array"}) == (["a", "b"], [])
    assert type_text("{'k': None}", {"type": "object"}) == ({"k": None}, [])
    assert type_text("2", {"type": "integer"}) == (2, [])
    assert type_text("2", {"type": "string"}) == ("2", [])
    assert type_text("False", {"type": "boolean"}) == (False, [])
    value, diags = type_text("[oops", {"type": "array"})
    assert value == "[oops" and [c for c, _ in diags] == ["value_type_mismatch"]


# ---------------------------------------------------------------- streaming

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=json_like, chunk=st.integers(1, 9))
def test_a_streamed_list_value_sends_its_json_as_it_arrives(value, chunk):
    """The fragments sent before the call closes already spell a prefix of the final arguments' JSON."""
    text = f"{OPEN}[f(a={repr([value])})]{CLOSE}"
    parser = LFM.stream()
    sent = ""
    for i in range(0, len(text), chunk):
        for event in parser.feed(text[i:i + chunk]):
            if event.type == "arguments":
                sent += event.fragment
    out = parser.finish()
    assert out.tool_calls[0].arguments == {"a": [value]}
    assert sent and json.dumps({"a": [value]}, ensure_ascii=False).startswith(sent)


def test_a_long_string_streams_piece_by_piece():
    text = f"{OPEN}[f(a='" + "word " * 2000 + f"')]{CLOSE}"
    out, events = stream_parse(LFM, text, [text[i:i + 50] for i in range(0, len(text), 50)])
    fragments = [e for e in events if e.type == "arguments"]
    assert len(fragments) > 150  # one (or two) per delta, not one at the close
    assert out.tool_calls[0].arguments == {"a": "word " * 2000}


@pytest.mark.parametrize("name", ["lfm25", "llama4_pythonic"])
def test_blanks_after_a_call_name_wait_aside_not_in_the_buffer(name):
    """A name, then a long run of blanks: what follows them decides (``(`` opens the call, anything else makes the
    text no call), so they are kept aside as they arrive; the buffer never holds the run (fuzz: held_back). (Llama 4
    pythonic's own look-ahead before a list holds at most ``MAX_LOOKAHEAD`` characters, by design.)"""
    fmt = toolwire.get_format(name)
    head = "<|tool_call_start|>[" if name == "lfm25" else "["
    tail = "<|tool_call_end|>" if name == "lfm25" else ""
    bound = 64 if name == "lfm25" else pythonic.MAX_LOOKAHEAD + 64
    for rest, calls in (("(city='Paris')]", [("get_weather", {"city": "Paris"})]), ("et_weather()]", [])):
        text = f"{head}get_weather{' ' * 1400}{rest}{tail}"
        parser = fmt.stream(None)
        for at in range(0, len(text), 64):
            parser.feed(text[at:at + 64])
            assert len(parser._buf) <= bound
        out = parser.finish()
        if name == "lfm25":  # (Llama 4 pythonic: past its look-ahead the "[" is content, by design)
            assert [(c.name, c.arguments) for c in out.tool_calls] == calls
        assert out.model_dump() == fmt.parse(text, None).model_dump()
