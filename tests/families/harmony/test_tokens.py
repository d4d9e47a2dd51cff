"""gpt_oss token ids: the offline o200k_harmony encoding, and the stream parser fed ids (markers by id only)."""

from __future__ import annotations

import json
import socket

import pytest
from hypothesis import given, settings, strategies as st

import toolwire
from toolwire.templates import harmony as harmony_module
from toolwire.templates.harmony import load_o200k_harmony
from toolwire.tokenize import TokenDecoder
from support import assert_events_consistent, full_state
from support.harmony_oracles import harmony_encoding, o200k_dir, tiktoken_encoding

FMT = toolwire.get_format("gpt_oss")
TOOLS = [{"type": "function", "function": {"name": "f", "description": "d"}}]
HEADER = " to=functions.f<|channel|>commentary json<|message|>"


def test_offline_encoding_equals_openai_harmony(monkeypatch):
    def no_network(*_args, **_kwargs):
        raise AssertionError("the encoding must load without the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setenv("TIKTOKEN_ENCODINGS_BASE", o200k_dir())
    harmony_module._build_encoding.cache_clear()
    enc = load_o200k_harmony()
    reference = harmony_encoding()
    assert enc.name == "o200k_harmony"
    for marker in FMT.markers.values():
        assert [enc.encode_single_token(marker)] == reference.encode(marker, allowed_special="all")
    sample = "<|start|>user<|message|>Grüße, 世界 🌦️ — tabs\tand  spaces<|end|><|start|>assistant"
    assert enc.encode(sample, allowed_special="all") == reference.encode(sample, allowed_special="all")


def test_encoding_needs_a_directory(monkeypatch, tmp_path):
    monkeypatch.delenv("TIKTOKEN_ENCODINGS_BASE", raising=False)
    with pytest.raises(FileNotFoundError):
        load_o200k_harmony()
    with pytest.raises(FileNotFoundError):
        load_o200k_harmony(tmp_path)
    (tmp_path / "o200k_base.tiktoken").write_text("aGVsbG8= 0\n")
    with pytest.raises(ValueError):  # sha256 mismatch
        load_o200k_harmony(tmp_path)


def _feed_ids(ids, tools=TOOLS, one_by_one=False, **kw):
    parser = FMT.stream(tools, encoding=tiktoken_encoding(), **kw)
    events = []
    for piece in ([[t] for t in ids] if one_by_one else [ids]):
        events += parser.feed(ids=piece)
    events += parser.flush()
    result = parser.finish()
    assert_events_consistent(result, events)
    return result


def test_marker_text_in_ordinary_tokens_does_not_end_a_call():
    enc = tiktoken_encoding()
    body = json.dumps({"s": "a<|call|>b<|end|><|start|>assistant"})
    ids = enc.encode(HEADER, allowed_special="all") + enc.encode_ordinary(body)
    for one_by_one in (False, True):
        call = _feed_ids(ids, one_by_one=one_by_one).tool_calls[0]
        assert (call.status, call.arguments, call.raw_arguments) == (
            "proposed", {"s": "a<|call|>b<|end|><|start|>assistant"}, body)
    # the same bytes read as text end the call at "<|call|>": that is why the renderer escapes them
    assert FMT.parse(HEADER + body, TOOLS).tool_calls[0].status == "rejected"


def test_marker_text_in_ordinary_tokens_stays_content():
    enc = tiktoken_encoding()
    text = "Write <|end|> and <|start|>assistant<|channel|>final<|message|> literally."
    ids = enc.encode("<|channel|>final<|message|>", allowed_special="all") + enc.encode_ordinary(text)
    out = _feed_ids(ids)
    assert (out.content, out.diagnostics) == (text, [])


def test_utf8_split_across_ids():
    enc = tiktoken_encoding()
    text = "🌦️ 杭州 naïve " * 3
    ids = enc.encode("<|channel|>final<|message|>", allowed_special="all") + enc.encode_ordinary(text)
    assert _feed_ids(ids, one_by_one=True).content == text


def test_other_control_tokens_read_as_their_text_and_unknown_ids_are_diagnosed():
    """A control token that is no harmony marker is its text, as the same spelling in text input is."""
    enc = tiktoken_encoding()
    ids = (enc.encode("<|channel|>final<|message|>", allowed_special="all") + enc.encode_ordinary("a")
           + [enc.encode_single_token("<|endoftext|>")] + enc.encode_ordinary("b") + [10 ** 9])
    out = _feed_ids(ids)
    assert out.content == "a<|endoftext|>b"
    assert [(d.code, d.raw) for d in out.diagnostics] == [("invalid_token_id", str(10 ** 9))]
    assert full_state(FMT.parse("<|channel|>final<|message|>a<|endoftext|>b")) == full_state(_feed_ids(ids[:-1]))


def test_ids_and_text_give_the_same_result_for_rendered_turns():
    enc = tiktoken_encoding()
    turn = {"role": "assistant", "content": "Done: 18 °C.", "reasoning_content": "Use the result."}
    history = [{"role": "user", "content": "Weather?"}]
    full = FMT.render(history + [turn], add_generation_prompt=False, current_date="2026-11-29")
    prompt = FMT.render(history, current_date="2026-11-29")
    ids = full.token_ids(enc)
    head = prompt.token_ids(enc)
    assert ids[:len(head)] == head
    by_ids = _feed_ids(ids[len(head):], tools=None)
    by_text = FMT.parse(full.text[len(prompt.text):])
    assert full_state(by_ids) == full_state(by_text)
    assert (by_ids.content, by_ids.reasoning) == ("Done: 18 °C.", "Use the result.")


def test_mixing_text_and_ids_is_refused():
    enc = tiktoken_encoding()
    parser = FMT.stream(encoding=enc)
    parser.feed(ids=enc.encode_ordinary("x"))
    with pytest.raises(ValueError):
        parser.feed("y")
    parser = FMT.stream(encoding=enc)
    parser.feed("<|chan")  # held back: a possible marker prefix
    with pytest.raises(ValueError):
        parser.feed(ids=[1])
    with pytest.raises(ValueError):
        FMT.stream(encoding=enc).feed("x", ids=[1])


_ID_TEXTS = st.sampled_from([
    "<|channel|>", "<|message|>", "<|end|>", "<|call|>", "<|start|>", "<|constrain|>", "<|return|>", "analysis",
    "final", "commentary", " to=functions.f", " json", "assistant", '{"a": "', 'x"}', "\\", '\\"', "\\n", "Grüße",
    "🫠", "東京", "\n", " ", "<|endoftext|>", "<|end", "|>",
])


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(st.tuples(_ID_TEXTS, st.sampled_from(["text", "marker", "first id"])), max_size=30),
       extra=st.lists(st.sampled_from([10 ** 9, -1, 1.5, "x"]), max_size=2))
def test_plain_text_ids_go_the_general_way_too(texts, extra):
    """The shortcut for ids that are plain text gives, feed by feed, the events and result of the general id
    path: markers (by id or spelled in text), split and cut characters, bad ids, one id or three ids a step."""
    enc = tiktoken_encoding()
    ids = []
    for text, how in texts:  # "first id": a character's first bytes alone (held back until more arrive)
        ids += (enc.encode(text, allowed_special="all") if how == "marker" else enc.encode_ordinary(text)
                if how == "text" else enc.encode_ordinary(text)[:1])
    ids += extra

    def run(step):
        parser = FMT.stream(TOOLS, encoding=enc)
        batches = [parser.feed(ids=ids[i:i + step]) for i in range(0, len(ids), step)] + [parser.flush()]
        return batches, full_state(parser.finish())

    for step in (1, 3):
        run(step)
        warm = run(step)  # every ordinary id's text is remembered now
        real = TokenDecoder.plain_text
        TokenDecoder.plain_text = lambda self, ids: None
        try:
            general = run(step)
        finally:
            TokenDecoder.plain_text = real
        assert warm == general
