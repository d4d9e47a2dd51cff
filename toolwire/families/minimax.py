"""MiniMax-M2: ``]~b]`` turns ending ``[e~[``, ``<minimax:tool_call>`` blocks of ``<invoke name="…">`` calls."""

from __future__ import annotations

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import MINIMAX_PASSBACK, glm_drop_before_last_user
from toolwire.family import Family, Fingerprint, Option, Options, thinking_switch
from toolwire.markers import Marker, MarkerTable

MARKERS = MarkerTable(
    BOS="]~!b[",
    ROLE="]~b]",
    EOS="[e~[",
    THINK_OPEN="<think>",
    THINK_CLOSE="</think>",
    BLOCK_OPEN="<minimax:tool_call>",
    BLOCK_CLOSE="</minimax:tool_call>",
    INVOKE_OPEN='<invoke name="',
    INVOKE_CLOSE="</invoke>",
    PARAMETER_OPEN='<parameter name="',
    PARAMETER_CLOSE="</parameter>",
    ATTR_CLOSE='">',
    RESPONSE_OPEN="<response>",
    RESPONSE_CLOSE="</response>",
)


class MiniMaxOptions(Options):
    thinking = thinking_switch(True, doc="MiniMax-M2 always reasons: the prompt opens <think> (no switch)")
    model_identity = Option(str, template="model_identity", doc="the default system text")


MINIMAX_M2 = Family(
    name="minimax_m2", module="minimax", reference="MiniMax-M2 chat template (MiniMax-M2.jinja)", markers=MARKERS,
    stop=(Marker.EOS,), reasoning=(MARKERS.THINK_OPEN, MARKERS.THINK_CLOSE), options=MiniMaxOptions, grammar="minimax",
    policy=FamilyPolicy(glm_drop_before_last_user, passback=MINIMAX_PASSBACK,
                        description="keeps reasoning after the last user message"),
    fingerprints=(Fingerprint("MiniMax-M2", "a3e05b110e2d1ccf5373f2d2a09f8e2e6c7fc48247c8cb6cab5160a462dc2209"),))

FAMILIES = (MINIMAX_M2,)
