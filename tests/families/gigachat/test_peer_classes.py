"""GigaChat 3.5: classes of failure that peers' tests and reported outputs showed, in our own words and values. Each
is checked one-shot and streamed in every split."""

from __future__ import annotations

import pytest

import toolwire
from toolwire.families.gigachat import GCML, MARKERS
from support.family_checks import check_chunking

FMT = toolwire.get_format("gigachat35")
TOOLS = [{"type": "function", "function": {"name": "find_flights", "parameters": {
    "type": "object", "properties": {"origin": {"type": "string"}, "seats": {"type": "integer"}}}}}]
TAGS = [MARKERS[k] for k in ("tool_calls_open", "tool_calls_close", "invoke_open", "invoke_close",
                             "parameter_open", "parameter_close")]


def bare(marker: str) -> str:
    """A GCML marker with its namespace token left out, as a detokenizer that drops special tokens writes it."""
    return marker.replace(GCML, "")


def block(m, name="find_flights", layout=" "):
    bo, bc, io, ic, po, pc = [m(t) for t in TAGS]
    return (f'{bo}{layout}{io}{name}">{layout}{po}origin" string="true">Riga, LV{pc}{layout}'
            f'{po}seats" string="false">2{pc}{layout}{ic}{layout}{bc}')


@pytest.mark.parametrize("layout", ["", " ", "\n"])
@pytest.mark.parametrize("before", ["", "Searching.\n\n"])
def test_the_namespace_token_left_out(layout, before):
    out = check_chunking(FMT, before + block(bare, layout=layout), TOOLS)
    assert [(c.name, c.arguments, c.status) for c in out.tool_calls] == [
        ("find_flights", {"origin": "Riga, LV", "seats": 2}, "repaired")]
    assert "missing_call_wrapper" in [d.code for d in out.tool_calls[0].diagnostics]
    assert out.content == before.strip()
    assert "invoke" not in out.content and "parameter" not in out.content


def test_the_canonical_markup_is_unchanged():
    out = check_chunking(FMT, block(lambda t: t), TOOLS)
    assert [(c.name, c.arguments, c.status) for c in out.tool_calls] == [
        ("find_flights", {"origin": "Riga, LV", "seats": 2}, "proposed")]
    assert out.codes() == []


@pytest.mark.parametrize("tools", [None, TOOLS])
def test_an_undeclared_or_untooled_namespaceless_block_stays_content(tools):
    text = block(bare, name="book_hotel")
    out = check_chunking(FMT, text, tools)
    assert out.tool_calls == [] and out.content == text


def test_prose_that_mentions_a_tag_stays_content():
    text = 'In the markup, <parameter name="seats"> holds a number.'
    out = check_chunking(FMT, text, TOOLS)
    assert (out.content, out.tool_calls, out.codes()) == (text, [], [])


@pytest.mark.parametrize("blockless", [False, True])
def test_a_canonical_value_may_spell_the_bare_tags(blockless):
    value = "<invoke name=\"x\"><parameter name=\"y\">z</parameter></invoke></tool_calls>"
    bo, bc, io, ic, po, pc = TAGS
    call = f'{io}find_flights">{po}origin" string="true">{value}{pc}{ic}'
    out = check_chunking(FMT, call if blockless else bo + call + bc, TOOLS)
    assert [(c.name, c.arguments) for c in out.tool_calls] == [("find_flights", {"origin": value})]
    assert "missing_call_wrapper" not in out.codes()
