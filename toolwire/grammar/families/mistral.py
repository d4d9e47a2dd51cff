"""Mistral ``[TOOL_CALLS]`` calls (``mistral_small32``, ``ministral3``; parsers
:class:`~toolwire.parsers.mistral.MistralParser`, :class:`~toolwire.parsers.ministral.MinistralParser`).

* Mistral Small 3.2: ``[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]ARGS`` with ``ID`` nine ASCII letters or digits
  (``CALL_ID_LENGTH``, :func:`toolwire.parsers.mistral.is_call_id`); ``[CALL_ID]ID`` may be left out (the
  parser then numbers the call itself);
* Ministral 3: ``[TOOL_CALLS]NAME[ARGS]ARGS`` (no call ids), after its ``[THINK]...[/THINK]`` reasoning.

No closing marker: the JSON's end ends the call, and the next ``[TOOL_CALLS]`` (or text) follows. Markers
from the parsers' ``MARKERS`` / ``Grammar``; ARGS is JSON following the tool's schema.
"""

from __future__ import annotations

import string

from toolwire.parsers.ministral import MinistralParser
from toolwire.parsers.mistral import CALL_ID_LENGTH, MARKERS, MistralParser

from ..ir import Lit, Seq, optional
from . import describes
from .marker_json import chars, marker_wire

CALL_ID_CHARS = string.ascii_letters + string.digits
"""The characters of a Mistral call id (``is_call_id``: ASCII letters or digits)."""


@describes(MistralParser)
def mistral_small32(fmt, request, *, thinking: bool):
    """``[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]ARGS``, the id optional."""
    call_id = Seq((Lit(MARKERS["call_id"]), chars(CALL_ID_CHARS, CALL_ID_LENGTH)))
    return marker_wire(fmt, request, lambda name: Seq((Lit(name), optional(call_id))), family="mistral", thinking=thinking)


@describes(MinistralParser)
def ministral3(fmt, request, *, thinking: bool):
    """``[TOOL_CALLS]NAME[ARGS]ARGS``."""
    return marker_wire(fmt, request, Lit, family="mistral", thinking=thinking)
