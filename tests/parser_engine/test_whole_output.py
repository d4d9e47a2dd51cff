"""Whole-output parsing of JSON-argument families (issue 18): the size bound counted lazily, a long strict value
kept once, and peak memory bounded on a long one-shot output."""

from __future__ import annotations

import dataclasses
import json

from hypothesis import given, settings
from hypothesis import strategies as st

import toolwire
from toolwire.limits import Limits
from toolwire.output import ArgumentsDelta
from toolwire.parsers.engine.stream import StreamParser
from toolwire.parsers.engine.call_builder import _arguments_delta
from toolwire.parsers.engine.json_arguments import ArgumentsStream

from support import traced_parse

SEARCH = [{"type": "function", "function": {"name": "search", "parameters": {
    "type": "object", "properties": {"q": {"type": "string"}}}}}]


class _NoText(StreamParser):
    def _advance(self, final: bool) -> None:
        self._buf = ""


@settings(max_examples=200, deadline=None)
@given(fragments=st.lists(st.text(st.sampled_from("a\u00e9\u20ac\U0001f600\ud800"), max_size=12), max_size=20),
       limit=st.integers(1, 120))
def test_the_size_bound_rejects_at_the_fragment_where_the_bytes_pass_it(fragments, limit):
    """Counting characters while 4 bytes each stay within the limit rejects the call at the very fragment whose
    UTF-8 bytes (lone surrogates as 3) first pass it, as measuring every fragment does."""
    call = _NoText(limits=Limits(max_argument_bytes=limit))._begin_call("search")
    size, expected_at, rejected_at = 0, None, None
    for k, fragment in enumerate(fragments):
        size += len(fragment.encode("utf-8", "surrogatepass"))
        if expected_at is None and size > limit:
            expected_at = k
        call._fragment(fragment)
        if rejected_at is None and call.status == "rejected":
            rejected_at = k
    assert rejected_at == expected_at
    assert [d.code for d in call.diagnostics] == (["too_large"] if expected_at is not None else [])


@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(st.text(st.sampled_from('a"\\\n\u00e9\u20ac\U0001f600\ud800'), max_size=12), max_size=20),
       limit=st.integers(1, 120))
def test_the_builders_own_fragments_are_rejected_where_their_bytes_pass_the_limit(pieces, limit):
    """A string value streamed through ``string_piece`` (its pieces escaped, sent and counted inline) and the
    key and quotes around it (``_emit``): the call is rejected at the very fragment whose UTF-8 bytes (lone
    surrogates as 3) first pass the limit, with one ``too_large`` diagnostic."""
    stream = _NoText(limits=Limits(max_argument_bytes=limit))
    call = stream._begin_call("search")
    stream._events = []
    size, expected_at, rejected_at = 0, None, None
    steps = [lambda: call.begin_string("q")] + [lambda p=p: call.string_piece(p) for p in pieces] + [call.end_string]
    for k, step in enumerate(steps):
        sent = len(stream._events)
        step()
        for event in stream._events[sent:]:
            size += len(event.fragment.encode("utf-8", "surrogatepass"))
            if expected_at is None and size > limit:
                expected_at = k
        if rejected_at is None and call.status == "rejected":
            rejected_at = k
    assert "".join(e.fragment for e in stream._events) == json.dumps({"q": "".join(pieces)}, ensure_ascii=False)[:-1]
    assert rejected_at == expected_at
    assert [d.code for d in call.diagnostics] == (["too_large"] if expected_at is not None else [])


def test_a_strict_value_after_blanks_is_kept_once():
    """The blanks before a value stay raw text, but the value's text is joined once: the fragments and the raw
    text reported are that one string."""
    value = '{"q": "' + 'a \\"b\\" \\\\ \u00e9 ' * 5000 + '"}'
    sent: list[str] = []
    stream = ArgumentsStream(sent.append, mirror=sent)
    for i in range(0, len(value) + 3, 4096):
        stream.feed(("\n  " + value)[i:i + 4096])
    closed = stream.close()
    assert closed.status == "proposed" and closed.arguments == json.loads(value)
    assert closed.raw == value and sent == [value] and sent[0] is closed.raw
    assert stream.raw == "\n  " + value


def _peak_ratio(family: str, output: str) -> float:
    fmt = toolwire.get_format(family)
    limits = Limits(max_argument_bytes=1 << 30)
    out, peak = traced_parse(fmt, output, SEARCH, limits=limits, thinking=False)
    assert out.tool_calls[0].status == "proposed"
    return peak / len(output.encode("utf-8"))


def test_a_long_fenced_deepseek_r1_call_peaks_below_two_and_a_half_times_its_size():
    """R1 writes a blank before the fenced JSON: the raw text is not copied to cut it off (was 3.9x)."""
    args = json.dumps({"q": 'lorem \u00e9t "quoted" \\ {braces} [x]\n' * 100_000}, ensure_ascii=False)
    output = ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n```json\n" + args
              + "\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>")
    assert _peak_ratio("deepseek_r1", output) <= 2.5


def test_a_long_llama_call_peaks_below_two_and_a_half_times_its_size():
    args = json.dumps({"q": 'lorem \u00e9t "quoted" \\ {braces} [x]\n' * 100_000}, ensure_ascii=False)
    assert _peak_ratio("llama31", '{"name": "search", "parameters": ' + args + "}") <= 2.5


def test_the_compacted_value_is_checked_against_the_raw_pieces():
    """The raw pieces after the blanks must spell the value joined from the fragments; a piece that is a fragment
    at its own position needs no comparing, any other piece is compared."""
    from toolwire.parsers.engine.json_arguments import _spelled_after

    a, b = "ab", "c}"
    value = "{" + a + b
    assert _spelled_after(["  {", a, b], value, 2, ["{", a, b]) == "  "
    assert _spelled_after(["  {a", "bc}"], value, 2, ["{", a, b]) == "  "
    assert _spelled_after(["  {", a, "c]"], value, 2, ["{", a, b]) is None
    assert _spelled_after(["  {", a], value, 2, ["{", a, b]) is None  # the raw text is shorter
    assert _spelled_after(["{", a, b, "x"], value, 0, ["{", a, b]) is None  # ...or longer
    xy = "xy"
    assert _spelled_after([xy, "yx"], "xyxy", 0, [xy, xy]) is None
    assert _spelled_after(["x", xy, "y"], "xyxy", 0, [xy, xy]) is None  # a fragment out of its place is compared
    assert _spelled_after(["x", xy, "y"], "xxyy", 0, ["xx", "yy"]) == ""


def test_the_builders_arguments_delta_is_the_frozen_event():
    """The events the builder makes without the dataclass ``__init__`` are ``ArgumentsDelta`` instances equal to
    the constructor's, with the same repr and hash, and frozen."""
    made, expected = _arguments_delta(3, '"x\u00e9'), ArgumentsDelta(3, '"x\u00e9')
    assert type(made) is ArgumentsDelta
    assert (made, repr(made), hash(made)) == (expected, repr(expected), hash(expected))
    try:
        made.fragment = "y"
    except dataclasses.FrozenInstanceError:
        pass
    else:
        raise AssertionError("the event is not frozen")
