"""Hermes 3 (Llama 3.1) tool_use template: ChatML with Hermes JSON calls."""

from __future__ import annotations

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import never_rendered
from toolwire.family import Family, Fingerprint, Options
from toolwire.markers import Marker, MarkerTable

MARKERS = MarkerTable(
    BOS="<|begin_of_text|>",
    IM_START="<|im_start|>",
    IM_END="<|im_end|>",
    CALL_OPEN="<tool_call>",
    CALL_CLOSE="</tool_call>",
    RESPONSE_OPEN="<tool_response>",
    RESPONSE_CLOSE="</tool_response>",
    THINK_OPEN="<think>",
    THINK_CLOSE="</think>",
)

HERMES3 = Family(
    name="hermes3", module="hermes3", reference="Hermes-3-Llama-3.1-8B tool_use chat template (transformers rendering)",
    markers=MARKERS, stop=(Marker.IM_END,), reasoning=(MARKERS.THINK_OPEN, MARKERS.THINK_CLOSE), options=Options,
    grammar="hermes_json",
    # no reasoning field anywhere in the template (a call turn drops even its content)
    policy=FamilyPolicy(never_rendered, description="never renders earlier reasoning"),
    fingerprints=(Fingerprint("Hermes-3-Llama-3.1-8B tool_use (also Hermes-2-Pro)",
                              "ce62e308475b364e1fc76699dccbddeb9ac08344f90d59719dba86a9922834d9"),))

FAMILIES = (HERMES3,)
