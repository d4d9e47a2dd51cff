"""Token-aligned stream events (issue 32, item 4): a stream fed token ids gives every event the span of ids it came
from, each call its whole span, and the spans tile the fed ids.

Every golden model output of every format, encoded by the family's tokenizer (real ones from
../shared/real/tokenizers, or the byte-level tokenizer with the family's control tokens that
``test_token_input`` uses for families with none there), fed one id at a time and in random chunks:

* the events' spans tile the ids in order (each starts where the one before ended; the ids after the last event
  are the output's ``trailing_span``), whatever the chunking (the spans are the same at every chunking);
* the text of each content and reasoning event is the decode of its span: the span's decode ends with the text,
  except that the text's last characters may come from the next id (an id whose text two events share is in
  the later one's span, see docs/design-notes.md "Token spans");
* each call's span runs from its ``ToolCallStarted`` span to its ``ToolCallFinished`` span, holds its argument
  events' spans and its raw argument text, and calls do not overlap.
"""

from __future__ import annotations

import pickle

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolwire
from support import full_state, require_shared
from toolwire.output import (ArgumentsDelta, ContentDelta, ReasoningDelta, ToolCallFinished, ToolCallStarted)
from toolwire.tokenize import token_pieces, vocabulary


def _cases():
    """``test_token_input``: its per-family tokenizers (real, or byte-level with the family's control tokens),
    golden outputs as ids and parse options."""
    from tokens import test_token_input

    return test_token_input


FAMILIES = _cases().FAMILIES


def decode(tok, ids) -> str:
    return "".join(piece.text for piece in token_pieces(list(ids), tok))


def stream(fmt, row, tok, chunks, **options):
    parser = fmt.stream(row["tools"], tokenizer=tok, **_cases().kwargs(row), **options)
    events = []
    for chunk in chunks:
        events += parser.feed(ids=chunk)
    events += parser.flush()
    return events, parser.finish()


def one_by_one(ids):
    return [[i] for i in ids]


def plain(events):
    """The events without their spans (a finished event's candidate as its dump): what text input gives."""
    return [(e.index, e.candidate.model_dump()) if isinstance(e, ToolCallFinished) else e for e in events]


def spans(events):
    return [(type(e).__name__, e.span) for e in events]


def check_tiling(events, out, n: int) -> None:
    """The events' spans tile ``range(n)`` in order; the ids after the last event are ``trailing_span``."""
    pos = 0
    for event in events:
        assert event.span is not None, event
        start, end = event.span
        assert start == pos and end >= start, (event, pos)
        pos = end
    assert out.trailing_span == (None if pos == n else (pos, n))
    for diag in out.diagnostics:  # a diagnostic names only ids no event carries
        if diag.span is not None:
            assert out.trailing_span is not None and out.trailing_span[0] <= diag.span[0] <= diag.span[1] <= n


def check_calls(events, out, tok, ids) -> None:
    """Each call's span: from its started event's span to its finished event's, holding its argument events and
    its raw argument text (less, at most, an id whose text it shares with what follows); calls do not overlap."""
    started = {e.index: e.span for e in events if isinstance(e, ToolCallStarted)}
    finished = {e.index: e for e in events if isinstance(e, ToolCallFinished)}
    for call in out.tool_calls:
        event = finished[call.index]
        assert event.candidate.span == call.span
        assert call.span == (started[call.index][0], event.span[1])
        for e in events:
            if isinstance(e, ArgumentsDelta) and e.index == call.index:
                assert call.span[0] <= e.span[0] <= e.span[1] <= call.span[1]
        a, b = call.span
        assert call.raw_arguments.strip() in decode(tok, ids[a:b + 1]), call.index
    ordered = sorted(c.span for c in out.tool_calls)
    assert all(end <= start for (_, end), (start, _) in zip(ordered, ordered[1:]))


def check_text(events, tok, ids) -> None:
    """Each content and reasoning event's text is the decode of its span (which may begin with framing no
    event carries, a marker read before it), less, at its end, at most part of the next id. (How many are
    exactly their span's decode: bench/bench_spans.py.)"""
    for e in events:
        if isinstance(e, (ContentDelta, ReasoningDelta)):
            a, b = e.span
            own, following = decode(tok, ids[a:b]), decode(tok, ids[b:b + 1])
            assert any((own + following[:k]).endswith(e.text) for k in range(max(1, len(following)))), \
                (e, own, following)


def golden_ids(family):
    return list(_cases().golden_as_ids(family))


@pytest.mark.parametrize("family", FAMILIES)
def test_event_spans_tile_the_ids_and_decode_to_the_event_text(family):
    """Golden outputs fed one id at a time: spans tile the ids, content/reasoning text is its span's decode,
    calls span their events. The result is the text parse's (the spans are not in ``model_dump``)."""
    for fmt, tok, row, expected, ids in golden_ids(family):
        events, out = stream(fmt, row, tok, one_by_one(ids))
        assert full_state(out) == expected, row["id"]
        check_tiling(events, out, len(ids))
        check_calls(events, out, tok, ids)
        check_text(events, tok, ids)


def _chunked(ids, sizes):
    chunks, i = [], 0
    for size in sizes:
        if i >= len(ids):
            break
        chunks.append(ids[i:i + size])
        i += size
    if i < len(ids):
        chunks.append(ids[i:])
    return chunks


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_spans_tile_the_ids_at_every_chunking(family, data):
    """Golden outputs fed in random chunks (hypothesis): the events (read a chunk at a time) still tile the ids,
    content/reasoning text is its span's decode, calls span their events, and the result is the text parse's."""
    cases = golden_ids(family)
    fmt, tok, row, expected, ids = data.draw(st.sampled_from(cases), label="row")
    sizes = data.draw(st.lists(st.integers(1, 40), min_size=1, max_size=40), label="chunk sizes")
    events, out = stream(fmt, row, tok, _chunked(ids, sizes))
    assert full_state(out) == expected
    check_tiling(events, out, len(ids))
    check_calls(events, out, tok, ids)
    check_text(events, tok, ids)


@pytest.mark.parametrize("family", sorted(_cases().SYNTHETIC_SPECIALS))
def test_an_id_stream_pickled_mid_output_resumes_with_the_same_spans(family):
    """A stream fed ids, pickled half-way and resumed, gives the same events, spans and call spans. (The
    families with a byte-level tokenizer: a stream holding a real ``tokenizers`` tokenizer does not pickle,
    spans or not, because the tokenizer's pre-tokenizer pipeline does not.)"""
    for fmt, tok, row, expected, ids in golden_ids(family):
        if not row["expected"]["tool_calls"]:
            continue
        half = len(ids) // 2
        whole_events, whole = stream(fmt, row, tok, [ids[:half], ids[half:]])
        parser = fmt.stream(row["tools"], tokenizer=tok, **_cases().kwargs(row))
        events = parser.feed(ids=ids[:half])
        parser = pickle.loads(pickle.dumps(parser))
        events += parser.feed(ids=ids[half:]) + parser.flush()
        out = parser.finish()
        assert spans(events) == spans(whole_events)
        assert [c.span for c in out.tool_calls] == [c.span for c in whole.tool_calls]
        return
    pytest.skip(f"no golden output with a call for {family}")


def test_events_pickle_with_their_span():
    tok = _cases().tokenizer("qwen3")
    fmt = toolwire.get_format("qwen3")
    ids = vocabulary(tok).encode('<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>')
    events, out = stream(fmt, {"tools": None, "options": {}}, tok, [ids])
    again = pickle.loads(pickle.dumps(events))
    assert spans(again) == spans(events) and again == events
    assert pickle.loads(pickle.dumps(out)).tool_calls[0].span == out.tool_calls[0].span == (0, len(ids))


def test_text_input_has_no_spans():
    """Fed text, nothing carries a span (and nothing is tracked)."""
    require_shared()
    fmt = toolwire.get_format("qwen3")
    text = 'Hi<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'
    parser = fmt.stream(None)
    events = parser.feed(text) + parser.flush()
    out = parser.finish()
    assert len(events) > 3 and all(e.span is None for e in events)
    assert out.tool_calls[0].span is None and out.trailing_span is None
    assert "span" not in out.tool_calls[0].model_dump() and "trailing_span" not in out.model_dump()


@pytest.mark.parametrize("family", ["qwen3", "deepseek_v4", "gpt_oss", "glm45", "llama4_pythonic"])
def test_spans_off_gives_the_same_events_without_spans(family):
    """``spans=False``: no span anywhere; the result is the same."""
    for fmt, tok, row, expected, ids in golden_ids(family)[:6]:
        events, out = stream(fmt, row, tok, one_by_one(ids), spans=False)
        with_spans, _ = stream(fmt, row, tok, one_by_one(ids))
        assert plain(events) == plain(with_spans) and all(e.span is None for e in events)
        assert all(c.span is None for c in out.tool_calls) and out.trailing_span is None
        assert full_state(out) == expected


def test_an_id_outside_the_vocabulary_is_named_by_its_diagnostic_and_in_the_next_span():
    tok = _cases().tokenizer("qwen3")
    fmt = toolwire.get_format("qwen3")
    vocab = vocabulary(tok)
    ids = vocab.encode("Hello") + [10 ** 9] + vocab.encode(" world")
    bad = ids.index(10 ** 9)
    parser = fmt.stream(None, tokenizer=tok)
    events = []
    for tid in ids:
        events += parser.feed(ids=[tid])
    events += parser.flush()
    out = parser.finish()
    (diag,) = [d for d in out.diagnostics if d.code == "invalid_token_id"]
    assert diag.span == (bad, bad + 1)
    holder = [e for e in events if e.span[0] <= bad < e.span[1]]
    assert len(holder) == 1 and holder[0].text == decode(tok, ids[bad + 1:holder[0].span[1]])
    assert out.content == "Hello world"


PLAIN = st.text(st.sampled_from("abcdefghij klmnopqrstuvwxyz.,!?'0123456789éü中文"), min_size=1, max_size=80)


@settings(max_examples=60, deadline=None)
@given(text=PLAIN, sizes=st.lists(st.integers(1, 6), min_size=1, max_size=30))
def test_plain_content_events_are_exactly_the_decode_of_their_span(text, sizes):
    """Content with no marker and nothing held back: each event's text is exactly its span's decode (the
    Qwen3 tokenizer; multi-byte characters split across ids go out with the id that completes them)."""
    require_shared()
    tok = _cases().tokenizer("qwen3")
    ids = vocabulary(tok).encode(text)
    events, out = stream(toolwire.get_format("qwen3"), {"tools": None, "options": {}}, tok, _chunked(ids, sizes))
    check_tiling(events, out, len(ids))
    assert out.content == text
    assert [decode(tok, ids[slice(*e.span)]) for e in events] == [e.text for e in events]


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=15, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_marker_soup_fed_as_ids_tiles_its_ids(family, data):
    """Bad output (the fuzz suite's marker soup: markers, other families' markers, stop tokens, JSON/XML
    punctuation, text), encoded and fed in random chunks: the spans still tile the ids, the calls' spans
    still follow their events, and the result is the one-id-at-a-time result."""
    from fuzz import strategies

    text = data.draw(strategies.soup(family), label="soup")
    thinking = data.draw(st.booleans(), label="thinking")
    sizes = data.draw(st.lists(st.integers(1, 12), min_size=1, max_size=30), label="chunk sizes")
    tok = _cases().tokenizer(family)
    ids = vocabulary(tok).encode(text)
    fmt = toolwire.get_format(family)
    row = {"tools": None, "options": {"thinking": thinking}}
    events, out = stream(fmt, row, tok, _chunked(ids, sizes))
    check_tiling(events, out, len(ids))
    started = {e.index: e.span for e in events if isinstance(e, ToolCallStarted)}
    finished = {e.index: e.span for e in events if isinstance(e, ToolCallFinished)}
    for call in out.tool_calls:
        assert call.span == (started[call.index][0], finished[call.index][1])
    base_events, base_out = stream(fmt, row, tok, one_by_one(ids))
    assert full_state(out) == full_state(base_out)
