"""Mistral Small 3.2: ``[INST]`` turns, ``[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{…}`` calls."""

from __future__ import annotations

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import never_rendered
from toolwire.family import Family, Fingerprint, Options
from toolwire.markers import Marker, MarkerTable

FRAME = dict(
    BOS="<s>",
    EOS="</s>",
    SYSTEM_OPEN="[SYSTEM_PROMPT]",
    SYSTEM_CLOSE="[/SYSTEM_PROMPT]",
    TOOLS_OPEN="[AVAILABLE_TOOLS]",
    TOOLS_CLOSE="[/AVAILABLE_TOOLS]",
    INST_OPEN="[INST]",
    INST_CLOSE="[/INST]",
    TOOL_CALLS="[TOOL_CALLS]",
)
MARKERS = MarkerTable(
    **FRAME,
    CALL_ID="[CALL_ID]",
    ARGS="[ARGS]",
    RESULTS_OPEN="[TOOL_RESULTS]",
    TOOL_CONTENT="[TOOL_CONTENT]",
    RESULTS_CLOSE="[/TOOL_RESULTS]",
    IMAGE="[IMG]",
)


MISTRAL_SMALL32 = Family(
    name="mistral_small32", module="mistral",
    reference="Mistral-Small-3.2-24B-Instruct-2506 chat template (mistralai/Mistral-Small-3.2-24B-Instruct-2506)",
    markers=MARKERS, stop=(Marker.EOS,), reasoning=None, options=Options, grammar="mistral",
    policy=FamilyPolicy(never_rendered, description="never renders earlier reasoning"),
    fingerprints=(Fingerprint("Mistral-Small-3.2-24B-Instruct-2506",
                              "d990bccdaaa20611e261434bf60bce767b03d8ee1f1d9b5cd0742b1cc96066b9"),))

FAMILIES = (MISTRAL_SMALL32,)
