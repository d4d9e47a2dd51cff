"""Gemma 4: ``<|turn>`` turns, ``<|channel>thought`` reasoning, ``<|tool_call>call:NAME{…}<tool_call|>`` calls."""

from __future__ import annotations

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import gemma4
from toolwire.family import Family, Fingerprint, Option, Options, thinking_switch
from toolwire.markers import Marker, MarkerTable

MARKERS = MarkerTable(
    BOS="<bos>",
    TURN_OPEN="<|turn>",
    TURN_CLOSE="<turn|>",
    THINK="<|think|>",
    TOOL_OPEN="<|tool>",
    TOOL_CLOSE="<tool|>",
    CALL_OPEN="<|tool_call>",
    CALL_CLOSE="<tool_call|>",
    RESPONSE_OPEN="<|tool_response>",
    RESPONSE_CLOSE="<tool_response|>",
    QUOTE='<|"|>',
    CHANNEL_OPEN="<|channel>",
    CHANNEL_CLOSE="<channel|>",
    IMAGE="<|image|>",
    AUDIO="<|audio|>",
    VIDEO="<|video|>",
)


class Gemma4Options(Options):
    thinking = thinking_switch(False, "enable_thinking")
    preserve_thinking = Option(bool, template="preserve_thinking", retains=True,
                               doc="True keeps a tool-call turn's reasoning (an answer turn's is still dropped when "
                                   "the next user message arrives)")


GEMMA4 = Family(
    name="gemma4", module="gemma",
    reference="Gemma-4-E2B-it chat template, current revision (google/gemma-4-E2B-it @ 8995379)",
    markers=MARKERS, stop=(Marker.TURN_CLOSE,), reasoning=(MARKERS.CHANNEL_OPEN + "thought", MARKERS.CHANNEL_CLOSE),
    options=Gemma4Options, grammar="gemma4",
    policy=FamilyPolicy(gemma4, description="keeps reasoning after the last user message; preserve_thinking=True "
                                            "also keeps tool-call turns"),
    fingerprints=(Fingerprint("Gemma-4-E2B-it", "603a42db292c25278e9b23d94c7abbe77453f13e26a053c43c5c2f900b4136f7"),))

FAMILIES = (GEMMA4,)
