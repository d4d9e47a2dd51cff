"""DeepSeek V3.1 and R1 stream parsers (the pre-DSML ``<｜tool▁calls▁begin｜>`` formats).

* V3.1: ``<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>...``
  ``<｜tool▁calls▁end｜>``.
  With ``thinking=True`` the generation prompt opened ``<think>``, so output starts as reasoning until
  ``</think>``.
* R1: ``<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json\\n{json}\\n```<｜tool▁call▁end｜>``, calls separated
  by ``\\n``. R1's prompt opens ``<think>\\n`` after a user turn (not after tool results): pass ``prompt=`` or
  ``thinking=True`` to read the output as starting inside it. With ``thinking=False`` (the golden vectors'
  setting, whose outputs were cut from history turns where R1 renders no reasoning) the output is read as
  content. Reasoning keeps its text as written (R1's own ``\\n`` framing included).

Inside the section, a call written without ``<｜tool▁call▁begin｜>`` is read when its name is a declared tool
(``missing_call_begin``, as Kimi's; fail-closed). Read from content (``thinking=False``), a ``<think>`` the model
writes as the very first thing opens reasoning (as :meth:`toolwire.Format.stream` says of every family: R1 writes
its own opener where the prompt does not). A ``<think>`` written again at the start of opened reasoning is dropped (``duplicate_reasoning_open``), a
``</think>`` in content is dropped from it (``reasoning_close_in_content``) and a trailing
``<｜end▁of▁sentence｜>`` is stripped (``stop_token_in_output``).

The formats carry no call ids: candidates get ``call_<index>``.
"""

from __future__ import annotations

from toolwire.families.deepseek_legacy import DEEPSEEK_R1, DEEPSEEK_V31, MARKERS

from .engine.marker_json import HEADER_BLANKS, Grammar, Header, JsonCallParser

M = MARKERS

R1_FENCE_OPEN = "\n```json\n"
R1_FENCE_CLOSE = "\n```"
"""R1 wraps each call's JSON in a fenced block after the name."""


class DeepSeekV31Parser(JsonCallParser):
    """DeepSeek-V3.1 output."""

    family = DEEPSEEK_V31
    grammar = Grammar(call_open=M["call_begin"], header_end=M["sep"], section_open=M["calls_begin"],
                      section_close=M["calls_end"], call_close=M["call_end"], think_close=M["think_close"],
                      think_open=M["think_open"], bare_headers=True)  # NAME<｜tool▁sep｜> in the section without its call marker: a declared name

    def parse_header(self, header: str) -> Header:
        """The header is the tool name (ASCII blanks around it are framing); V3.1 calls carry no id."""
        return Header(header.strip(HEADER_BLANKS))


class DeepSeekR1Parser(JsonCallParser):
    """DeepSeek-R1 output: ``TYPE<｜tool▁sep｜>NAME`` headers, JSON in a ```json fence."""

    family = DEEPSEEK_R1
    grammar = Grammar(call_open=M["call_begin"], header_end=R1_FENCE_OPEN.rstrip("\n"),
                      section_open=M["calls_begin"], section_close=M["calls_end"], call_close=M["call_end"],
                      think_close=M["think_close"], think_open=M["think_open"], trailer=R1_FENCE_CLOSE.strip(),
                      bare_headers=True)

    def parse_header(self, header: str) -> Header:
        """``function<｜tool▁sep｜>NAME`` (the type must be ``function``); R1 calls carry no id."""
        kind, sep, name = header.partition(M["sep"])
        if not sep:
            return Header(header.strip(HEADER_BLANKS), None,
                          (("malformed_call", f"no {M['sep']!r} in the call header", None),))
        if kind.strip(HEADER_BLANKS) != "function":
            return Header(name.strip(HEADER_BLANKS), None,
                          (("unusual_call_type", f"call type {kind.strip()!r}, not 'function'", kind),))
        return Header(name.strip(HEADER_BLANKS))
