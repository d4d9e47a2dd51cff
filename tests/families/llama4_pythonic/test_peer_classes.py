"""Classes of real Llama 4 output that peers' parser tests pin and toolwire missed: pythonic calls written inside
Llama 4's code block, ``<|python_start|>[…]<|python_end|>``. The markers are framing around the calls, never
content (one-shot, at every chunking, and from the real tokenizer's ids)."""

from __future__ import annotations

import pytest

import toolwire
from support import REAL, check_chunking, require_shared
from toolwire.tokenize import load_tokenizer, vocabulary
from toolwire.families.llama4 import MARKERS as LLAMA4_MARKERS

FMT = toolwire.get_format("llama4_pythonic")
START, END = LLAMA4_MARKERS["python_start"], LLAMA4_MARKERS["python_end"]
TOOLS = [{"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {
    "town": {"type": "string"}, "nights": {"type": "integer"}}}}} for name in ("book_room", "list_rooms")]


def calls(out):
    return [(c.name, c.arguments, c.status) for c in out.tool_calls]


@pytest.mark.parametrize("tools", [None, TOOLS])
@pytest.mark.parametrize("inner, gap", [("", ""), ("\n", " "), (" ", "\n")])
def test_calls_inside_the_code_block_leave_no_marker_in_content(tools, inner, gap):
    text = f'{START}{inner}[book_room(town="Oslo", nights=2), list_rooms()]{gap}{END}'
    out = check_chunking(FMT, text, tools)
    assert out.content == ""
    assert calls(out) == [("book_room", {"town": "Oslo", "nights": 2}, "repaired"), ("list_rooms", {}, "repaired")]
    assert all([d.code for d in c.diagnostics] == ["calls_in_python_block"] for c in out.tool_calls)
    assert out.diagnostics == []


def test_content_around_the_block_is_kept_as_written():
    text = f'Let me look.\n{START}[list_rooms(town="Bergen")]{END}\nDone.'
    out = check_chunking(FMT, text, TOOLS)
    assert out.content == "Let me look.\n\nDone."
    assert calls(out) == [("list_rooms", {"town": "Bergen"}, "repaired")]


def test_a_block_the_output_never_closes_keeps_its_calls_with_a_note():
    text = f'{START}[book_room(town="Oslo"), list_rooms(nights=1)]'
    out = check_chunking(FMT, text, TOOLS)
    assert out.content == ""
    assert [c.name for c in out.tool_calls] == ["book_room", "list_rooms"]
    assert [(d.code, d.severity) for d in out.diagnostics] == [("python_block_not_closed", "info")]


@pytest.mark.parametrize("text", [
    f"{START}print(1 + 1){END}",              # code, not a call list
    f"{START}  [1, 2, 3]{END} is a list",      # a list that is no call list
    f"{START}",                               # the marker alone
    f"a closer alone {END}",
])
def test_a_block_holding_no_call_list_stays_content(text):
    out = check_chunking(FMT, text, TOOLS)
    assert out.content == text
    assert out.tool_calls == []


def test_text_after_the_list_inside_the_block_is_content_and_the_block_is_noted():
    text = f'{START}[list_rooms()] and more{END}'
    out = check_chunking(FMT, text, TOOLS)
    assert calls(out) == [("list_rooms", {}, "repaired")]
    assert out.content == f" and more{END}"
    assert [d.code for d in out.diagnostics] == ["python_block_not_closed"]


def test_from_the_real_tokenizers_ids_the_block_markers_are_framing():
    require_shared()
    pytest.importorskip("tiktoken")
    tok = load_tokenizer(str(REAL / "tokenizers" / "Llama-4"))
    vocab = vocabulary(tok)
    text = f'{START}[book_room(town="Oslo", nights=2)]{END}'
    ids = vocab.encode(text)
    assert ids[0] in vocab.control.values() and ids[-1] in vocab.control.values()
    for step in (1, 3, len(ids)):
        stream = FMT.stream(TOOLS, tokenizer=tok)
        for k in range(0, len(ids), step):
            stream.feed(ids=ids[k:k + step])
        out = stream.finish()
        assert out.model_dump() == FMT.parse(text, TOOLS).model_dump()  # spans aside
        assert out.content == ""
        assert calls(out) == [("book_room", {"town": "Oslo", "nights": 2}, "repaired")]
