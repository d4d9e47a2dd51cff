"""Token spans of multi-id feeds (issue 32, item 4; the cost of spans, branch h/S): a feed of several ids is read a
run at a time (decoded and parsed at once, a run ending after a control id that may end a marker), and its events
are given the ids by where each id's text ends. These pin what that reading does that one-id feeds never show:
one event for a run of plain ids, two calls closed and opened in one feed, an id outside the vocabulary inside a
feed, and which control ids end a run.
"""

from __future__ import annotations

import toolwire
from toolwire.output import ContentDelta, ToolCallFinished, ToolCallStarted
from toolwire.parsers.engine.token_spans import SpanTracker
from toolwire.tokenize import token_pieces, vocabulary


def _tokens():
    from tokens import test_token_input

    return test_token_input


def decode(tok, ids) -> str:
    return "".join(piece.text for piece in token_pieces(list(ids), tok))


def stream(family, tok, chunks, tools=None, **options):
    parser = toolwire.get_format(family).stream(tools, tokenizer=tok, **options)
    events = []
    for chunk in chunks:
        events += parser.feed(ids=chunk)
    events += parser.flush()
    return events, parser.finish()


def test_a_feed_of_plain_ids_is_one_event_spanning_them():
    """Eight ids of plain content in one feed: read at once, one content event whose span is the eight ids and
    whose text is exactly their decode (one id at a time would give eight events)."""
    tok = _tokens().tokenizer("qwen3")
    ids = vocabulary(tok).encode("The weather in Paris is mild and dry today, with light wind.")
    assert len(ids) >= 10
    events, out = stream("qwen3", tok, [ids[:8], ids[8:]], thinking=False)
    first = events[0]
    assert isinstance(first, ContentDelta) and first.span == (0, 8)
    assert first.text == decode(tok, ids[:8])
    assert [e.span for e in events] == [(0, 8), (8, len(ids))]
    assert out.content == decode(tok, ids)


def _two_calls(family: str, text: str, names=("get_weather", "get_time")):
    tok = _tokens().tokenizer(family)
    ids = vocabulary(tok).encode(text)
    events, out = stream(family, tok, [ids], thinking=False)
    return tok, ids, events, out


def test_two_calls_in_one_feed_each_span_their_own_text_qwen3():
    """Qwen3: both calls, markers and all, fed in one piece. The second call's ``ToolCallStarted`` begins at its
    opening marker (a control id ends a run), so each call's span decodes to its own call and no more."""
    text = ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>\n'
            '<tool_call>\n{"name": "get_time", "arguments": {"zone": "CET"}}\n</tool_call>')
    tok, ids, events, out = _two_calls("qwen3", text)
    first, second = out.tool_calls
    assert (first.name, second.name) == ("get_weather", "get_time")
    assert first.span[1] <= second.span[0]
    assert '"Oslo"' in decode(tok, ids[slice(*first.span)]) and "get_time" not in decode(tok, ids[slice(*first.span)])
    assert decode(tok, ids[slice(*second.span)]).lstrip().startswith("<tool_call>")
    assert '"CET"' in decode(tok, ids[slice(*second.span)])
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [e.span[0] for e in started] == [first.span[0], second.span[0]]
    assert [e.span[1] for e in finished] == [first.span[1], second.span[1]]


def test_two_calls_in_one_feed_each_span_their_own_text_pythonic():
    """Llama 4 pythonic: ``[a(...), b(...)]`` in one feed, no control id at all: the second call's name places
    the boundary, so the first call's span holds ``Oslo`` and not the second call's name."""
    tok, ids, events, out = _two_calls("llama4_pythonic", '[get_weather(city="Oslo"), get_time(zone="CET")]')
    first, second = out.tool_calls
    one, two = decode(tok, ids[slice(*first.span)]), decode(tok, ids[slice(*second.span)])
    assert "Oslo" in one and "get_time" not in one
    assert two.lstrip(", ").startswith("get_time") and "CET" in two
    assert first.span[1] == second.span[0]


def test_an_id_outside_the_vocabulary_inside_a_feed():
    """A multi-id feed holding an unknown id is read one id at a time: the id is named by its diagnostic's span
    and lies in the span of the event after it; the spans still tile the ids."""
    tok = _tokens().tokenizer("qwen3")
    vocab = vocabulary(tok)
    ids = vocab.encode("Hello") + [10 ** 9] + vocab.encode(" world, again")
    bad = ids.index(10 ** 9)
    events, out = stream("qwen3", tok, [ids[:bad + 2], ids[bad + 2:]], thinking=False)
    (diag,) = [d for d in out.diagnostics if d.code == "invalid_token_id"]
    assert diag.span == (bad, bad + 1)
    holder = [e for e in events if e.span[0] <= bad < e.span[1]]
    assert len(holder) == 1 and holder[0].span[0] <= bad
    pos = 0
    for e in events:
        assert e.span[0] == pos
        pos = e.span[1]
    assert pos == len(ids) and out.content == "Hello world, again"


def test_which_control_ids_end_a_run():
    """A control id ends a run when its text ends one of the family's markers (or is in none of them); DeepSeek
    V4's ``｜DSML｜``, always inside a marker, does not."""
    tracker = SpanTracker()
    deepseek = toolwire.get_format("deepseek_v4")
    qwen = toolwire.get_format("qwen3")
    dsml = next(s for s in deepseek.markers.values() if "｜DSML｜" in s)
    assert not dsml.endswith("｜DSML｜")
    assert tracker.ends_run("｜DSML｜", type(deepseek.stream(None)).family) is False
    family = type(qwen.stream(None)).family
    assert "</tool_call>" in family.markers.values()
    assert tracker.ends_run("</tool_call>", family) is True
    assert tracker.ends_run("<|not a marker of qwen3|>", family) is True
