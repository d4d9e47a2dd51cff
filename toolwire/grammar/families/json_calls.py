"""JSON call objects inside wrapper markers.

* Qwen/Hermes JSON (``qwen25``, ``qwen3``, ``qwen3_instruct_2507``, ``qwen3_thinking_2507``, ``hermes3``,
  ``granite4``; parser :class:`~toolwire.parsers.hermes_json.HermesJsonParser`): ``<tool_call>`` ``\\n``
  ``{"name": NAME, "arguments": ARGS}`` ``\\n`` ``</tool_call>``, each call its own region. The markers come
  from the parser's ``MARKERS``; the call object is JSON as the templates' ``tojson`` writes it (``", "`` /
  ``": "`` separators, non-ASCII kept). tests/grammar/test_grammar.py checks this framing against the template's
  own call example (``templates/hermes_json.TOOLS_EXAMPLE``).

Family modules import parsers only, never templates (``toolwire.format`` delegates to this package, so a
template import would close an import cycle); what they need of the format comes from the ``Format`` object.
"""

from __future__ import annotations

import json

from toolwire.parsers.hermes_json import MARKERS as HERMES

from ..ir import CallWire, Lit, Seq, json_node
from . import describes, reasoning_markers

CALL_FRAME = ("\n", "\n")
"""The whitespace the Qwen/Hermes templates write inside ``<tool_call>`` around the call object."""


def json_string(text: str) -> str:
    """``text`` as the JSON string the templates write (``tojson``: non-ASCII kept)."""
    return json.dumps(text, ensure_ascii=False)


def call_object(name: str, schema: dict, *, name_key: str = "name", args_key: str = "arguments") -> Seq:
    """``{"name": NAME, "arguments": ARGS}`` with the arguments following ``schema``."""
    head = "{" + json_string(name_key) + ": " + json_string(name) + ", " + json_string(args_key) + ": "
    return Seq((Lit(head), json_node(schema), Lit("}")))


@describes("hermes_json")
def hermes_json(fmt, request, *, thinking: bool) -> CallWire:
    """``<tool_call>\\n{"name": NAME, "arguments": ARGS}\\n</tool_call>`` per call."""
    opener, closer = HERMES["call_open"], HERMES["call_close"]
    calls = tuple((tool.name, Seq((Lit(opener + CALL_FRAME[0]), call_object(tool.name, tool.schema),
                                   Lit(CALL_FRAME[1] + closer))))
                  for tool in request.tools)
    return CallWire(fmt.name, (opener,), calls, reasoning=reasoning_markers(fmt),
                    stop_tokens=tuple(fmt.stop_tokens), family="json_calls",
                    self_reasoning=fmt.parser_class.think_tag_at_start)  # Qwen3 may write <think> itself
