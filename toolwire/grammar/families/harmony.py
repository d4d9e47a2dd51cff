"""gpt-oss harmony (``gpt_oss``; parser :class:`~toolwire.parsers.harmony.HarmonyStreamParser`).

The output continues the prompt's ``<|start|>assistant``, so it is structured from its first character:
messages, not text with triggered calls. The grammar is the whole output (``CallWire.whole``)::

    [ <|channel|>analysis<|message|> TEXT <|end|> <|start|>assistant ]        reasoning, optional
    ( CALL | <|channel|>final<|message|> TEXT )                               by tool_choice

    CALL = ( " to=functions.NAME<|channel|>commentary"          the recipient in the role part (the template)
           | "<|channel|>commentary to=functions.NAME" )        or after the channel (what gpt-oss also writes)
           ( " json" | " <|constrain|>json" ) <|message|> ARGS  ARGS: JSON following the tool's schema

``auto`` allows a call or a final answer, ``required`` / a named tool a call, ``none`` a final answer. The call
ends the output: ``<|call|>`` is the stop token (a stop token, so the grammar stops before it; the final answer
ends at ``<|return|>`` the same way). TEXT spells no harmony marker. Markers from the parser's ``MARKERS``,
content types from its ``KNOWN_CONTENT_TYPES``.
"""

from __future__ import annotations

import os

from toolwire.parsers.harmony import CHANNEL, CONSTRAIN, END, MARKERS, MESSAGE, START

from ..ir import Alt, CallWire, Lit, Seq, Tag, Text, json_node, optional
from . import describes

ROLE = "assistant"
ANALYSIS, COMMENTARY, FINAL = "analysis", "commentary", "final"
"""The channels: reasoning, tool calls (and preambles), the answer."""
RECIPIENT = "to=functions."
"""A call's recipient prefix (``to=functions.NAME``)."""
JSON_TYPE = "json"
"""The content type of a call's arguments; also written ``<|constrain|>json``."""
TEXT_STOPS = tuple(MARKERS.values())
"""Message text spells no harmony marker."""
JSON_STOPS = (os.path.commonprefix(TEXT_STOPS),)
"""A JSON string in the arguments never spells ``<|``, the start every harmony marker shares (xgrammar's
``json_schema`` excludes; one short word instead of seven markers compiles 10-20x faster; a narrowing)."""


def call_message(name: str, schema: dict) -> Seq:
    """A call to ``name`` in either header order, with either content-type spelling, then its JSON arguments."""
    recipient = RECIPIENT + name
    header = Alt((Lit(" " + recipient + CHANNEL + COMMENTARY), Lit(CHANNEL + COMMENTARY + " " + recipient)))
    content_type = Alt((Lit(" " + JSON_TYPE), Lit(" " + CONSTRAIN + JSON_TYPE)))
    return Seq((header, content_type, Lit(MESSAGE), json_node(schema, "", JSON_STOPS)))


@describes("harmony")
def harmony(fmt, request, *, thinking: bool) -> CallWire:
    """An optional analysis message, then a call or a final answer as ``tool_choice`` allows."""
    calls = tuple((tool.name, call_message(tool.name, tool.schema)) for tool in request.tools)
    analysis = Seq((Tag(CHANNEL + ANALYSIS + MESSAGE, Text(tuple(m for m in TEXT_STOPS if m != END)), END),
                    Lit(START + ROLE)))
    final = Tag(CHANNEL + FINAL + MESSAGE, Text(TEXT_STOPS), "")
    choices = [node for _, node in calls] if request.mode != "none" else []
    if request.mode in ("auto", "none") or not choices:
        choices.append(final)
    answer = Alt(tuple(choices)) if len(choices) > 1 else choices[0]
    return CallWire(fmt.name, (" " + RECIPIENT, CHANNEL + COMMENTARY + " " + RECIPIENT), calls,
                    stop_tokens=tuple(fmt.stop_tokens), family="harmony",
                    whole=Seq((optional(analysis), answer)))
