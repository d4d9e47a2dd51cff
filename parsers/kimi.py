"""Kimi K2 stream parsers: ``<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX
<|tool_call_argument_begin|>{json}<|tool_call_end|>...<|tool_calls_section_end|>``.

K2-Thinking writes ``<think>...</think>`` itself at the start of its output (the generation prompt does
not open it). The call id ``functions.NAME:IDX`` becomes the candidate's id and names the tool.
"""

from __future__ import annotations

import re

from .engine.marker_json import HEADER_BLANKS, Grammar, Header, JsonCallParser

from toolwire.families.kimi import KIMI_K2, KIMI_K2_THINKING, MARKERS
M = MARKERS

CALL_ID_PREFIX = "functions."
_CALL_ID = re.compile(r"functions\.(?P<name>.+):(?P<index>[0-9]+)", re.S)
_NAME_INDEX = re.compile(r"(?P<name>.+?)[:.](?P<index>[0-9]+)", re.S)


def split_call_id(header: str) -> Header:
    """``functions.NAME:IDX`` to (NAME, the id). Ids seen in real output in other spellings (``NAME:IDX``,
    ``functions.NAME``, ``NAME.IDX``, ``NAME``) name the tool the same way, with a
    ``kimi_call_id_variant`` diagnostic and status ``repaired`` (the unknown-tool check still applies, so
    only a declared name makes a usable call); a bare index (``0``) names no tool: it stays the call's
    (undeclared) name and the call is ``rejected``. Only ASCII blanks around
    the id are framing (:data:`~toolwire.parsers.engine.marker_json.HEADER_BLANKS`)."""
    text = header.strip(HEADER_BLANKS)
    m = _CALL_ID.fullmatch(text)
    if m:
        return Header(m["name"], text)
    if not text:
        return Header("", None, (("kimi_call_id_variant", "an empty call id names no tool", None),), "rejected")
    rest = text[len(CALL_ID_PREFIX):] if text.startswith(CALL_ID_PREFIX) else text
    v = _NAME_INDEX.fullmatch(rest)
    name = v["name"] if v else rest
    if name.isdigit() or not name:  # a bare index names no tool: the text is the (undeclared) name
        return Header(rest or text, text, (("kimi_call_id_variant", f"call id {text!r} is not functions.NAME:IDX; "
                                                  "it names no tool", None),), "rejected")
    problem = ("kimi_call_id_variant", f"call id {text!r} is not functions.NAME:IDX; read as a call of {name!r}",
               None)
    return Header(name, text, (problem,), "repaired")


class KimiParser(JsonCallParser):
    """Kimi-K2-Instruct output: content, then a tool-call section."""

    grammar = Grammar(call_open=M["call_begin"], header_end=M["argument_begin"], section_open=M["section_begin"],
                      section_close=M["section_end"], call_close=M["call_end"], bare_headers=True,
                      think_close=M["think_close"], own_reasoning=False)  # K2 has none: only thinking=True opens it
    family = KIMI_K2

    def parse_header(self, header: str) -> Header:
        """``functions.NAME:IDX``: the id names the tool (see :func:`split_call_id`)."""
        return split_call_id(header)


class KimiThinkingParser(KimiParser):
    """Kimi-K2-Thinking output: an optional leading ``<think>...</think>``, then as K2-Instruct."""

    family = KIMI_K2_THINKING

    grammar = KimiParser.grammar._replace(think_open=M["think_open"], own_reasoning=True)
