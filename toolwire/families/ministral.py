"""Ministral 3 (Reasoning): Mistral's ``[INST]`` turns, ``[THINK]`` reasoning, ``[TOOL_CALLS]NAME[ARGS]{…}`` calls."""

from __future__ import annotations

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import keep_all
from toolwire.family import Family, Fingerprint, Options, thinking_switch
from toolwire.markers import Marker, MarkerTable

from .mistral import FRAME

MARKERS = MarkerTable(
    **FRAME,
    ARGS="[ARGS]",
    RESULTS_OPEN="[TOOL_RESULTS]",
    RESULTS_CLOSE="[/TOOL_RESULTS]",
    IMAGE="[IMG]",
    THINK_OPEN="[THINK]",
    THINK_CLOSE="[/THINK]",
)


class Ministral3Options(Options):
    thinking = thinking_switch(True, doc="Ministral 3 Reasoning always reasons (no switch in the template)")


MINISTRAL3 = Family(
    name="ministral3", module="ministral",
    reference="Ministral-3-14B-Reasoning-2512 chat template (transformers rendering)", markers=MARKERS,
    stop=(Marker.EOS,), reasoning=(MARKERS.THINK_OPEN, MARKERS.THINK_CLOSE),
    options=Ministral3Options, grammar="ministral",
    # every assistant reasoning is passed as a thinking chunk and the template writes each one
    policy=FamilyPolicy(keep_all, description="keeps every earlier reasoning (as [THINK] chunks)"),
    fingerprints=(Fingerprint("Ministral-3-14B-Reasoning-2512",
                              "31b50c917746ef1c2611c2fef122d3ebee690aca5748ab37832734f9ad375da1"),))

FAMILIES = (MINISTRAL3,)
