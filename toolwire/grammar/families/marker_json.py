"""Marker-framed JSON arguments (parsers on :class:`~toolwire.parsers.engine.marker_json.JsonCallParser`), from each
parser's declarative ``grammar`` (a :class:`~toolwire.parsers.engine.marker_json.Grammar`: call / header / section
markers) and its header rule:

* Kimi K2 / K2-Thinking: ``<|tool_calls_section_begin|>`` ``<|tool_call_begin|>functions.NAME:IDX``
  ``<|tool_call_argument_begin|>{json}<|tool_call_end|>`` ... ``<|tool_calls_section_end|>`` (IDX: digits);
* DeepSeek V3.1: ``<｜tool▁calls▁begin｜>`` ``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>``
  ... ``<｜tool▁calls▁end｜>``;
* DeepSeek R1: the same section, ``<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME`` + ```` ```json ```` fence;
* Mistral Small 3.2: ``[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{json}`` per call (ID: 9 letters or digits, the id
  rule of the parser), no closing marker: the JSON ends the call;
* Ministral 3: ``[TOOL_CALLS]NAME[ARGS]{json}``.
"""

from __future__ import annotations

from toolwire.parsers.deepseek_legacy import MARKERS as DEEPSEEK, R1_FENCE_CLOSE, R1_FENCE_OPEN
from toolwire.parsers.kimi import CALL_ID_PREFIX
from toolwire.parsers.mistral import M as MISTRAL

from ..ir import CallWire, Chars, Lit, Section, Seq, json_node
from . import describes, reasoning_markers

MISTRAL_CALL_ID = Chars("a-zA-Z0-9", 9, 9)
"""Mistral's call id: 9 letters or digits (what ``is_call_id`` accepts without ``unusual_call_id``)."""


def _wire(fmt, request, calls, *, triggers, section=None, reserved=()) -> CallWire:
    return CallWire(fmt.name, tuple(triggers), tuple(calls), section=section, reasoning=reasoning_markers(fmt),
                    stop_tokens=tuple(fmt.stop_tokens), reserved=tuple(reserved), family="marker_json",
                    self_reasoning=fmt.parser_class.grammar.think_open is not None)


def _sectioned(fmt, request, header) -> CallWire:
    """Calls inside the grammar's section, each ``call_open`` header ``header_end`` JSON [trailer] ``call_close``."""
    g = fmt.parser_class.grammar
    calls = [(t.name, Seq((Lit(g.call_open), header(t.name), Lit(g.header_end), json_node(t.schema),
                           Lit(g.trailer + g.call_close))))
             for t in request.tools]
    return _wire(fmt, request, calls, triggers=(g.section_open,), section=Section(g.section_open, g.section_close),
                 reserved=(g.call_open,))


@describes("kimi")
def kimi(fmt, request, *, thinking: bool) -> CallWire:
    """Kimi K2: ``functions.NAME:IDX`` headers inside the tool-call section."""
    return _sectioned(fmt, request, lambda name: Seq((Lit(CALL_ID_PREFIX + name + ":"), Chars("0-9"))))


@describes("deepseek_v31")
def deepseek_v31(fmt, request, *, thinking: bool) -> CallWire:
    """DeepSeek V3.1: the header is the tool name."""
    return _sectioned(fmt, request, Lit)


@describes("deepseek_r1")
def deepseek_r1(fmt, request, *, thinking: bool) -> CallWire:
    """DeepSeek R1: ``function<｜tool▁sep｜>NAME`` then the JSON in a fenced block."""
    g = fmt.parser_class.grammar
    calls = [(t.name, Seq((Lit(g.call_open + "function" + DEEPSEEK["sep"] + t.name + R1_FENCE_OPEN),
                           json_node(t.schema), Lit(R1_FENCE_CLOSE + g.call_close))))
             for t in request.tools]
    # the template writes a line break before every call after the first (templates/deepseek_legacy.py)
    return _wire(fmt, request, calls, triggers=(g.section_open,),
                 section=Section(g.section_open, g.section_close, "\n"), reserved=(g.call_open,))


@describes("mistral")
def mistral(fmt, request, *, thinking: bool) -> CallWire:
    """Mistral Small 3.2: ``[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{json}``."""
    g = fmt.parser_class.grammar
    calls = [(t.name, Seq((Lit(g.call_open + t.name + MISTRAL["call_id"]), MISTRAL_CALL_ID, Lit(g.header_end),
                           json_node(t.schema))))
             for t in request.tools]
    return _wire(fmt, request, calls, triggers=(g.call_open,))


@describes("ministral")
def ministral(fmt, request, *, thinking: bool) -> CallWire:
    """Ministral 3: ``[TOOL_CALLS]NAME[ARGS]{json}``."""
    g = fmt.parser_class.grammar
    calls = [(t.name, Seq((Lit(g.call_open + t.name + g.header_end), json_node(t.schema)))) for t in request.tools]
    return _wire(fmt, request, calls, triggers=(g.call_open,))
