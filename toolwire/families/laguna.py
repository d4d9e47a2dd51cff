"""poolside Laguna: ``<assistant>…</assistant>`` turns with GLM-style calls (no newlines)."""

from __future__ import annotations

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import laguna
from toolwire.family import Family, Fingerprint, Option, Options, thinking_switch
from toolwire.markers import Marker, MarkerTable

from .glm import MARKERS as GLM

MARKERS = MarkerTable(
    BOS="〈|EOS|〉",
    SYSTEM_OPEN="<system>",
    SYSTEM_CLOSE="</system>",
    USER_OPEN="<user>",
    USER_CLOSE="</user>",
    ASSISTANT_OPEN="<assistant>",
    ASSISTANT_CLOSE="</assistant>",
    THINK_OPEN=GLM.THINK_OPEN,
    THINK_CLOSE=GLM.THINK_CLOSE,
    CALL_OPEN=GLM.CALL_OPEN,
    CALL_CLOSE=GLM.CALL_CLOSE,
    KEY_OPEN=GLM.KEY_OPEN,
    KEY_CLOSE=GLM.KEY_CLOSE,
    VALUE_OPEN=GLM.VALUE_OPEN,
    VALUE_CLOSE=GLM.VALUE_CLOSE,
    RESPONSE_OPEN=GLM.RESPONSE_OPEN,
    RESPONSE_CLOSE=GLM.RESPONSE_CLOSE,
)


class LagunaOptions(Options):
    thinking = thinking_switch(True, "enable_thinking")
    preserve_thinking = Option(bool, template="preserve_thinking", retains=True,
                               doc="True keeps every earlier reasoning with thinking off")


LAGUNA = Family(
    name="laguna", module="laguna",
    reference="poolside Laguna-S-2.1 chat template (transformers rendering; stop </assistant>)",
    markers=MARKERS, stop=(Marker.ASSISTANT_CLOSE,), reasoning=(MARKERS.THINK_OPEN, MARKERS.THINK_CLOSE),
    options=LagunaOptions, grammar="glm",
    policy=FamilyPolicy(laguna, description="keeps every earlier reasoning with thinking on (or preserve_thinking="
                                            "True); none with thinking off"),
    fingerprints=(Fingerprint("Laguna-S-2.1", "444819b8ad4612870827ac05b9147fe9e3344d3850cae8c2790898fc514099ff"),),
    template_losses=("content_parts_lost",))

FAMILIES = (LAGUNA,)
