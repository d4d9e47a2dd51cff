"""Limits: calls per output, argument bytes and nesting depth give rejected ``too_large`` candidates, never
an exception, a hang or a RecursionError, even for a 50 MB output or a value nested 100k deep."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolwire
from support import assert_events_consistent, random_chunks
from toolwire.limits import DEFAULT_LIMITS, Limits, size_problem, utf8_size, value_depth
from toolwire.output import ParsedOutput, ToolCallCandidate
from toolwire.parsers.engine.stream import StreamParser
from toolwire.parsers.engine.lexer import MarkerScanner
from toolwire.parsers.engine.safe_json import JsonTooDeep, JsonTooLarge, error_code, loads, nesting_depth

MB50 = 50 * 1024 * 1024
TOOLS = [{"type": "function", "function": {"name": "echo", "parameters": {
    "type": "object", "properties": {"text": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "store", "parameters": {"type": "object"}}}]


def test_documented_defaults():
    assert DEFAULT_LIMITS == Limits(max_calls=128, max_argument_bytes=1_048_576, max_depth=64)


@pytest.mark.parametrize("field", ["max_calls", "max_argument_bytes", "max_depth"])
@pytest.mark.parametrize("value", [0, -1, 1.5, True, "3"])
def test_limits_must_be_positive_ints(field, value):
    with pytest.raises(ValueError, match=f"Limits.{field} must be a positive int"):
        Limits(**{field: value})


def _deep(depth: int, leaf=None):
    value = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


def test_value_depth_is_iterative_and_stops_early():
    assert [value_depth(v) for v in (1, "s", [], {}, [[]], {"a": [1, {"b": None}]}, ([], [[[]]]))] == \
        [0, 0, 1, 1, 2, 3, 4]
    deep = _deep(100_000)
    assert value_depth(deep) == 100_000
    assert value_depth(deep, limit=64) == 65


def test_utf8_size():
    assert utf8_size("abc") == 3 and utf8_size("\u00e9\u20ac\U0001F600") == 9 and utf8_size("\ud800") == 3
    assert utf8_size("x" * 100, limit=10) > 10 and utf8_size("\u20ac" * 4, limit=10) == 12


def test_size_problem():
    assert size_problem({"a": "x"}, '{"a": "x"}', DEFAULT_LIMITS) is None
    assert size_problem({"a": "x" * 20}, "", Limits(max_argument_bytes=16)) == (
        "the arguments take 29 bytes, more than the limit of 16; send a smaller value")
    assert size_problem({}, "y" * 100, Limits(max_argument_bytes=16)).startswith("the arguments take 100 bytes")
    assert size_problem({"a": _deep(65)}, "", DEFAULT_LIMITS) == (
        "the arguments nest deeper than 64 levels of objects and arrays; send a flatter value")


# ---- safe_json: the depth check is exact, linear and fast

def reference_depth(text: str) -> int:
    """The specification: brackets outside JSON strings, one character at a time."""
    depth = best = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            best = max(best, depth)
        elif ch in "]}":
            depth -= 1
    return best


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet='[]{}"\\ax\u00e9\n', max_size=60), st.integers(0, 6))
def test_nesting_depth_matches_the_specification(text, limit):
    expected = reference_depth(text)
    assert nesting_depth(text) == expected
    bounded = nesting_depth(text, limit)
    assert bounded == expected if expected <= limit else bounded > limit


@pytest.mark.parametrize("name, text, depth", [
    ("one huge string", '{"a": "' + 'x\\"[{' * (MB50 // 5) + '"}', 1),
    ("many flat arrays", "[]" * (MB50 // 2), 1),
    ("many small nests", "[[1],{\"a\":[2]}]," * (MB50 // 16), 3),
    ("unterminated string of escapes", '"' + '\\"[' * (MB50 // 3), 0),
    ("closers then openers", "]" * (MB50 // 2) + "[" * (MB50 // 2), 0),
])
def test_nesting_depth_of_50_mb(name, text, depth):
    assert nesting_depth(text, 64) == depth, name  # its CPU time: bench/bench_bounds.py


def test_loads_refuses_100k_deep_nesting_quickly():
    text = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(JsonTooDeep) as info:  # how quickly: bench/bench_bounds.py
        loads(text)
    assert info.value.limit == 64 and info.value.depth > 64 and error_code(info.value) == "too_large"
    assert loads("[" * 64 + "]" * 64) == _nested_lists(64)


def _nested_lists(depth):
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_loads_byte_limit():
    assert loads('{"a": "\u00e9"}', max_bytes=11) == {"a": "\u00e9"}  # 10 characters, 11 bytes
    with pytest.raises(JsonTooLarge) as info:
        loads('{"a": "\u00e9"}', max_bytes=10)
    assert (info.value.size, info.value.limit, error_code(info.value)) == (11, 10, "too_large")
    assert error_code(ValueError("x")) == "invalid_json"
    assert loads("12345678901234567890123") == 12345678901234567890123  # ints stay exact


# ---- the stream-parser base applies the limits (a tiny test grammar, not a real family)

class TagParser(StreamParser):
    """``<call name="N">text</call>`` streams ``text`` as the string argument ``text``;
    ``<json name="N">{...}</json>`` decodes its object through safe_json."""

    _open = MarkerScanner(['<call name="', '<json name="'])

    def __init__(self, tools=None, **options):
        super().__init__(tools, **options)
        self._mode = None
        self._call = None
        self._name_buf = ""
        self._json: list[str] = []
        self._close = None

    def _advance(self, final: bool) -> None:
        while self._buf:
            if self._mode is None:
                hit = self._open.scan(self._buf, final=final)
                self._emit_content(self._buf[:hit.start])
                if hit.marker is None:
                    self._buf = self._buf[hit.start:]
                    return
                self._mode = "name:" + ("call" if hit.marker.startswith("<call") else "json")
                self._buf = self._buf[hit.end:]
            elif self._mode.startswith("name:"):
                end = self._buf.find('">')
                if end < 0:
                    return
                kind = self._mode[5:]
                self._call = self._begin_call(self._buf[:end])
                self._close = MarkerScanner([f"</{kind}>"])
                self._buf = self._buf[end + 2:]
                self._mode = kind
                if kind == "call":
                    self._call.begin_string("text")
            else:
                hit = self._close.scan(self._buf, final=final)
                piece = self._buf[:hit.start]
                self._call.raw(piece)
                if self._mode == "call":
                    self._call.string_piece(piece)
                else:
                    self._json.append(piece)
                self._buf = self._buf[hit.end if hit.marker else hit.start:]
                if hit.marker is None:
                    return
                self._end_call()
        if final and self._mode is not None:
            self._truncated = True
            self._end_call("truncated")

    def _end_call(self, status=None) -> None:
        call = self._call
        if self._mode == "json" and status is None:
            text, self._json = "".join(self._json), []
            try:
                for key, value in loads(text, max_depth=self.limits.max_depth,
                                        max_bytes=self.limits.max_argument_bytes).items():
                    call.value(key, value)
            except ValueError as exc:
                call.diag(error_code(exc), str(exc), severity="error", raw=text if len(text) < 10_000 else None)
                call.status = "rejected"
        call.finish(status)
        self._mode = self._call = None


def _feed(text, chunks=None, tools=TOOLS, **options):
    parser = TagParser(tools, **options)
    events = []
    for piece in chunks if chunks is not None else [text]:
        events.extend(parser.feed(piece))
    events.extend(parser.flush())
    return parser.finish(), events


def test_calls_past_max_calls_are_kept_as_text_not_candidates():
    text = "".join(f'<call name="echo">{i}</call>' for i in range(5))
    out, events = _feed(text, limits=Limits(max_calls=3))
    assert_events_consistent(out, events)
    assert [c.status for c in out.tool_calls] == ["proposed"] * 3
    assert [c.arguments["text"] for c in out.tool_calls] == ["0", "1", "2"]
    assert [(d.code, d.raw) for d in out.diagnostics] == [("too_large", "echo\n3echo\n4")]  # nothing lost
    assert not any(e.type == "tool_call_started" and e.index >= 3 for e in events)
    # a candidate list from elsewhere that is too long is still rejected by validation
    full, _ = _feed(text)
    checked = full.validate(TOOLS, limits=Limits(max_calls=3))
    assert [c.status for c in checked.tool_calls] == ["validated"] * 3 + ["rejected"] * 2
    assert [e.got for c in checked.tool_calls for e in c.errors] == [4, 5]


def test_streamed_arguments_past_the_byte_limit_are_rejected_and_kept():
    text = '<call name="echo">' + "\u00e9" * 600 + "</call>after"
    for chunks in (None, list(text), random_chunks(text, random.Random(1))):
        out, events = _feed(text, chunks, limits=Limits(max_argument_bytes=1000))
        assert_events_consistent(out, events)
        [call] = out.tool_calls
        assert call.status == "rejected" and call.arguments == {"text": "\u00e9" * 600}
        assert [(d.code, d.severity) for d in call.diagnostics] == [("too_large", "error")]
        assert out.content == "after"


def test_a_50_mb_output_is_a_rejected_call_in_bounded_time():
    text = 'Sure.<call name="echo">' + "x" * MB50 + "</call>"
    parser = TagParser(TOOLS)  # the time it takes: bench/bench_bounds.py
    for i in range(0, len(text), 1 << 20):
        parser.feed(text[i:i + (1 << 20)])
    out = parser.finish()
    checked = out.validate(TOOLS)
    [call] = checked.tool_calls
    envelope = call.to_error_result()
    message = checked.to_openai_message()
    assert call.status == "rejected" and [e.code for e in call.errors] == ["too_large"]
    assert call.errors[0].message == "The call is too large: the arguments exceed 1048576 bytes " \
                                     "(Limits.max_argument_bytes). Send smaller arguments."
    assert len(json.dumps(envelope)) < 1000 and envelope["error"]["type"] == "too_large"
    assert len(call.arguments["text"]) == MB50  # kept, not dropped
    assert checked.finish_reason() == "tool_calls" and len(message["tool_calls"]) == 1


def test_50_mb_of_json_is_refused_before_decoding():
    text = '<json name="store">{"blob": "' + "y" * MB50 + '"}</json>'
    out, _ = _feed(text)
    checked = out.validate(TOOLS)
    [call] = checked.tool_calls
    assert [d.code for d in call.diagnostics] == ["too_large"] and [e.code for e in call.errors] == ["too_large"]
    assert call.arguments == {} and len(call.raw_arguments) == MB50 + 12  # the text stays in raw_arguments


def test_json_nested_100k_deep_is_a_rejected_call():
    text = '<json name="store">{"a": ' + "[" * 100_000 + "]" * 100_000 + "}</json>"
    out, events = _feed(text)
    checked = out.validate(TOOLS)
    assert_events_consistent(out, events)
    [call] = checked.tool_calls
    assert [e.code for e in call.errors] == ["too_large"]
    assert call.to_error_result()["error"]["details"][0]["message"].startswith(
        "The call is too large: JSON nests deeper than 64 levels")


def test_hand_made_arguments_nested_100k_deep_are_rejected_not_recursed():
    deep = _deep(100_000, leaf="x")
    candidate = ToolCallCandidate(index=0, id="c", name="store", arguments={"a": deep})
    out = ParsedOutput(tool_calls=[candidate]).validate(TOOLS)
    [call] = out.tool_calls
    assert [e.code for e in call.errors] == ["too_large"]
    assert call.errors[0].message == ("The arguments nest deeper than 64 levels of objects and arrays; send a "
                                      "flatter value.")
    assert call.to_error_result()["error"]["type"] == "too_large"
    assert out.finish_reason() == "tool_calls"
    assert out.to_openai_message()["tool_calls"][0]["function"]["arguments"] == ""  # not writable as JSON
    with pytest.raises(toolwire.ToolwireError):
        call.fingerprint()


def test_depth_limit_is_configurable():
    candidate = ToolCallCandidate(index=0, id="c", name="store", arguments={"a": [[["x"]]]})
    assert candidate.validate(TOOLS, limits=Limits(max_depth=3)).errors[0].code == "too_large"
    assert candidate.validate(TOOLS, limits=Limits(max_depth=4)).status == "validated"


def test_a_50_mb_dsml_output_when_the_family_is_built():
    try:
        fmt = toolwire.get_format("deepseek_v4")
    except toolwire.UnknownFormat:
        pytest.skip("deepseek_v4 is not available in this build")
    dsml = "\uff5cDSML\uff5c"
    text = (f'\n\n<{dsml}tool_calls>\n<{dsml}invoke name="echo">\n<{dsml}parameter name="text" string="true">'
            + "z" * MB50 + f"</{dsml}parameter>\n</{dsml}invoke>\n</{dsml}tool_calls>")
    out = fmt.parse(text, TOOLS).validate(TOOLS)
    [call] = out.tool_calls
    assert call.status == "rejected" and call.errors[0].code == "too_large"
    assert len(call.arguments["text"]) == MB50
