"""Kimi K3: XTML channels ``<|open|>TAG attrs<|sep|>…<|close|>TAG<|sep|>``, turns ending ``<|end_of_msg|>``."""

from __future__ import annotations

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import kimi_k3
from toolwire.family import Family, Fingerprint, Option, Options, thinking_switch
from toolwire.markers import Marker, MarkerTable

MARKERS = MarkerTable(
    OPEN="<|open|>",
    CLOSE="<|close|>",
    SEP="<|sep|>",
    END="<|end_of_msg|>",
    IMAGE="<|kimi_image_placeholder|>",
)


class KimiK3Options(Options):
    thinking = thinking_switch(True, "thinking")
    reasoning_effort = Option(str, template="thinking_effort", doc="low, high or max (the template's default)")
    tool_choice = Option(str, template="tool_choice", doc="required or none: adds the template's instruction")


KIMI_K3 = Family(
    name="kimi_k3", module="kimi_k3", reference="Kimi-K3 chat template (extra/Kimi-K3.jinja, a port of Moonshot's encoder)",
    markers=MARKERS, stop=(Marker.END,),
    reasoning=(MARKERS.OPEN + "think" + MARKERS.SEP, MARKERS.CLOSE + "think" + MARKERS.SEP),
    options=KimiK3Options, grammar="kimi_k3",
    policy=FamilyPolicy(kimi_k3, description="keeps every earlier reasoning in thinking mode; none with thinking off"),
    fingerprints=(Fingerprint("Kimi-K3", "f0c33f4b63ef8403f3dd16e10917440251ba16743c2a36d31675ac04b0ad1a1e"),))

FAMILIES = (KIMI_K3,)
