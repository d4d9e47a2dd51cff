"""A reasoning opener the model writes itself, as the very first thing, opens reasoning when the output is read as
content (``thinking=False``): :meth:`toolwire.Format.stream` promises it for every family. The DeepSeek families
(R1, V3.1, the DSML versions) and GigaChat 3.5 kept ``<think>`` in the content and dropped the ``</think>`` after it
(``reasoning_close_in_content``), mixing the reasoning into the answer. R1's early template left the opener to the
model, so its real outputs start that way.

Expected values are written by hand; each output is read one-shot, one character at a time, and from real ids.
"""

from __future__ import annotations

import pytest

import toolwire
from support import real_tokenizer

FORMATS = ("deepseek_r1", "deepseek_v31", "deepseek_v32", "deepseek_v4", "deepseek_v41", "gigachat35")
TOKENIZERS = {"deepseek_r1": "DeepSeek-V3", "deepseek_v31": "DeepSeek-V3", "deepseek_v4": "DeepSeek-V4",
              "deepseek_v41": "DeepSeek-V4"}
# GigaChat drops the blank line after </think> (its template writes it); DeepSeek keeps it as written
AFTER = {"gigachat35": "Lamp is on."}


def _both(fmt, text: str):
    one = fmt.parse(text, [], thinking=False)
    stream = fmt.stream([], thinking=False)
    for ch in text:
        stream.feed(ch)
    streamed = stream.finish()
    assert (streamed.content, streamed.reasoning) == (one.content, one.reasoning)
    return one


@pytest.mark.parametrize("name", FORMATS)
def test_opener_written_first_opens_reasoning(name):
    fmt = toolwire.get_format(name)
    out = _both(fmt, "<think>\nCheck the lamp first.\n</think>\n\nLamp is on.")
    assert out.reasoning == "\nCheck the lamp first.\n"
    assert out.content == AFTER.get(name, "\n\nLamp is on.")
    assert "reasoning_close_in_content" not in [d.code for d in out.diagnostics]


@pytest.mark.parametrize("name", FORMATS)
def test_opener_elsewhere_or_cut_stays_content(name):
    fmt = toolwire.get_format(name)
    later = _both(fmt, "Lamp <think> is on.")
    assert (later.content, later.reasoning) == ("Lamp <think> is on.", "")
    cut = _both(fmt, "<thi")  # the output ends inside what might have been the opener: kept as written
    assert (cut.content, cut.reasoning) == ("<thi", "")
    spaced = _both(fmt, " <think>x</think>y")  # not the very first thing: no reasoning opens
    assert spaced.reasoning == "" and spaced.content.startswith(" <think>x")


@pytest.mark.parametrize("name", sorted(TOKENIZERS))
def test_from_real_ids(name):
    pytest.importorskip("tokenizers")
    from toolwire.tokenize import vocabulary

    tok = real_tokenizer(TOKENIZERS[name])
    fmt = toolwire.get_format(name)
    text = "<think>\nCheck the lamp first.\n</think>\n\nLamp is on."
    ids = vocabulary(tok).encode(text)
    stream = fmt.stream([], tokenizer=tok, thinking=False)
    for tid in ids:
        stream.feed(ids=[tid])
    out = stream.finish()
    assert (out.content, out.reasoning) == ("\n\nLamp is on.", "\nCheck the lamp first.\n")
