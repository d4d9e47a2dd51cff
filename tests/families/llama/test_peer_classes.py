"""Classes of Llama 3.x output that peers' parser tests pin and toolwire missed: ``<|python_tag|>``, the
vocabulary's call opener, written after content or between calls. It opens calls there as at the start (framing,
never content), one-shot, at every chunking and from the real tokenizer's ids; spelled by ordinary tokens it is
text."""

from __future__ import annotations

import pytest

import toolwire
from support import REAL, check_chunking, require_shared
from toolwire.families.llama import MARKERS

TAG = MARKERS["python_tag"]
TOOLS = [{"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {
    "town": {"type": "string"}}}}} for name in ("find_bakery", "open_hours")]


def calls(out):
    return [(c.name, c.arguments, c.status) for c in out.tool_calls]


@pytest.mark.parametrize("family", ["llama31", "llama32"])
@pytest.mark.parametrize("tools", [TOOLS, None])
def test_the_tag_after_content_opens_the_calls(family, tools):
    text = f'I will look that up. {TAG}{{"name": "find_bakery", "parameters": {{"town": "Ghent"}}}}'
    out = check_chunking(toolwire.get_format(family), text, tools)
    assert out.content == "I will look that up. "
    assert calls(out) == [("find_bakery", {"town": "Ghent"}, "proposed")]


@pytest.mark.parametrize("gap", ["", " ", "\n"])
def test_the_tag_between_calls_separates_them(gap):
    text = (f'{TAG}{{"name": "find_bakery", "parameters": {{"town": "Ghent"}}}}{gap}{TAG}'
            f'{{"name": "open_hours", "parameters": {{}}}}')
    out = check_chunking(toolwire.get_format("llama31"), text, TOOLS)
    assert out.content == ""
    assert calls(out) == [("find_bakery", {"town": "Ghent"}, "proposed"), ("open_hours", {}, "proposed")]


def test_a_built_in_call_after_a_json_call():
    text = f'{{"name": "open_hours", "parameters": {{}}}}{TAG}brave_search.call(query="bakeries in Ghent")'
    out = check_chunking(toolwire.get_format("llama31"), text, TOOLS, builtin_tools=["brave_search"])
    assert calls(out) == [("open_hours", {}, "proposed"),
                          ("brave_search", {"query": "bakeries in Ghent"}, "proposed")]


@pytest.mark.parametrize("text", ["A <|python is not the tag.", "Ends with <|python_ta", "<| and |> alone"])
def test_text_that_only_looks_like_the_tag_stays_content(text):
    out = check_chunking(toolwire.get_format("llama31"), text, TOOLS)
    assert (out.content, out.tool_calls) == (text, [])


def test_from_the_real_tokenizers_ids_only_the_control_token_opens_calls():
    require_shared()
    pytest.importorskip("tokenizers")
    from toolwire.tokenize import load_tokenizer, vocabulary
    tok = load_tokenizer(str(REAL / "tokenizers" / "Llama-3"))
    vocab = vocabulary(tok)
    fmt = toolwire.get_format("llama31")
    body = '{"name": "find_bakery", "parameters": {"town": "Ghent"}}'
    text = f"Looking. {TAG}{body}"
    ids = vocab.encode(text)
    assert sum(i in vocab.control.values() for i in ids) == 1
    parser = fmt.stream(TOOLS, tokenizer=tok)
    for i in ids:
        parser.feed(ids=[i])
    out = parser.finish()
    assert (out.content, calls(out)) == ("Looking. ", [("find_bakery", {"town": "Ghent"}, "proposed")])
    # the tag's spelling in ordinary tokens is text
    plain = vocab.encode("Looking. ") + [t for piece in ("<|", "python", "_tag", "|>") for t in vocab.encode(piece)]
    parser = fmt.stream(TOOLS, tokenizer=tok)
    parser.feed(ids=plain + vocab.encode(body))
    out = parser.finish()
    assert out.tool_calls == [] and out.content == text
