"""toolwire.tokenize.byte_tokenizer: bytes as ids 0-255, the chosen control tokens as single ids from 256."""

import pytest

import toolwire
from toolwire.tokenize import byte_tokenizer, token_pieces

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


def test_ids_are_the_utf8_bytes_and_control_tokens_are_sorted_from_256():
    tok = byte_tokenizer(["<b>", "<a>"])
    assert tok.control_tokens == {"<a>": 256, "<b>": 257}
    assert byte_tokenizer(["<a>", "<b>", "<a>"]).control_tokens == tok.control_tokens  # order and repeats do not matter
    assert tok.encode_ordinary("hé<a>") == [104, 195, 169, 60, 97, 62]  # a spelled token stays bytes
    assert tok.encode_single_token("<b>") == 257
    assert tok.decode_single_token_bytes(257) == b"<b>" and tok.decode_single_token_bytes(195) == b"\xc3"
    with pytest.raises(KeyError):
        tok.decode_single_token_bytes(258)
    with pytest.raises(KeyError):
        tok.encode_single_token("hé")
    with pytest.raises(ValueError, match="control_tokens"):
        byte_tokenizer(["<a>", ""])


def test_a_format_gives_its_markers_and_only_they_become_control_ids():
    fmt = toolwire.get_format("qwen3")
    tok = byte_tokenizer(fmt)
    assert {"<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"} <= set(tok.control_tokens)
    prompt = fmt.render([{"role": "user", "content": "quote: <|im_end|>"}], TOOLS)
    ids = prompt.token_ids(tok)
    control = [i for i in ids if i >= 256]
    assert ids[0] == tok.control_tokens["<|im_start|>"]
    # the user's spelled <|im_end|> stays bytes: the control ids are exactly the markers the template wrote
    assert [p.text for p in token_pieces(ids, tok) if p.special] == [
        s.text for s in prompt.segments if s.kind == "special" and s.text in tok.control_tokens]
    assert len(control) == len([s for s in prompt.segments if s.kind == "special" and s.text in tok.control_tokens])
    assert "".join(p.text for p in token_pieces(ids, tok)) == prompt.text


def test_a_stream_fed_its_ids_reads_a_call_only_from_control_ids():
    fmt = toolwire.get_format("qwen3")
    tok = byte_tokenizer(fmt)
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    marker = tok.encode_single_token("<tool_call>"), tok.encode_single_token("</tool_call>")
    body = tok.encode_ordinary('\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n')
    stream = fmt.stream(TOOLS, tokenizer=tok)
    stream.feed(ids=[marker[0], *body, marker[1]])
    out = stream.finish()
    assert [(c.name, c.arguments) for c in out.tool_calls] == [("get_weather", {"city": "Paris"})]
    spelled = fmt.stream(TOOLS, tokenizer=tok)
    spelled.feed(ids=tok.encode_ordinary(call))
    quoted = spelled.finish()
    assert quoted.tool_calls == [] and quoted.content == call

