"""Kimi K2 marker-JSON calls (``kimi_k2``, ``kimi_k2_thinking``; parsers :class:`~toolwire.parsers.kimi.KimiParser`,
:class:`~toolwire.parsers.kimi.KimiThinkingParser`)::

    <|tool_calls_section_begin|> ( <|tool_call_begin|>functions.NAME:N<|tool_call_argument_begin|>ARGS
    <|tool_call_end|> )+ <|tool_calls_section_end|>

The call id ``functions.NAME:N`` (``CALL_ID_PREFIX``, the tool's name, ``:``, a decimal index) is the header
the parser reads the tool's name from (:func:`toolwire.parsers.kimi.split_call_id`); ``N`` is any index
(the template numbers calls per message, K2 models also count across the conversation). Markers from
the parser's ``MARKERS`` / ``Grammar``; ARGS is JSON following the tool's schema.
"""

from __future__ import annotations

from toolwire.parsers.kimi import CALL_ID_PREFIX, KimiParser

from ..ir import Lit, Seq
from . import describes
from .marker_json import marker_wire, number

INDEX_SEPARATOR = ":"
"""Between the tool name and the call index in a K2 call id (``functions.NAME:IDX``)."""


def call_id(name: str) -> Seq:
    """``functions.NAME:N``."""
    return Seq((Lit(CALL_ID_PREFIX + name + INDEX_SEPARATOR), number()))


@describes(KimiParser)
def kimi_k2(fmt, request, *, thinking: bool):
    """The K2 section with ``functions.NAME:N`` headers (K2-Thinking inherits it)."""
    return marker_wire(fmt, request, call_id, family="kimi", thinking=thinking)
