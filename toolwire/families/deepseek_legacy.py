"""DeepSeek V3.1 and R1: ``<｜tool▁calls▁begin｜>`` calls, the models' own chat templates."""

from __future__ import annotations

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import DS_SPLIT, never_rendered
from toolwire.family import Family, Fingerprint, Options, thinking_switch
from toolwire.markers import Marker, MarkerTable

MARKERS = MarkerTable(
    BOS="<｜begin▁of▁sentence｜>",
    EOS="<｜end▁of▁sentence｜>",
    USER="<｜User｜>",
    ASSISTANT="<｜Assistant｜>",
    THINK_OPEN="<think>",
    THINK_CLOSE="</think>",
    CALLS_BEGIN="<｜tool▁calls▁begin｜>",
    CALLS_END="<｜tool▁calls▁end｜>",
    CALL_BEGIN="<｜tool▁call▁begin｜>",
    CALL_END="<｜tool▁call▁end｜>",
    SEP="<｜tool▁sep｜>",
    OUTPUTS_BEGIN="<｜tool▁outputs▁begin｜>",
    OUTPUTS_END="<｜tool▁outputs▁end｜>",
    OUTPUT_BEGIN="<｜tool▁output▁begin｜>",
    OUTPUT_END="<｜tool▁output▁end｜>",
)
STOP = (Marker.EOS,)
REASONING = (MARKERS.THINK_OPEN, MARKERS.THINK_CLOSE)


class DeepSeekV31Options(Options):
    thinking = thinking_switch(False, "thinking")


class DeepSeekR1Options(Options):
    thinking = thinking_switch(True, doc="the prompt always opens <think> (no switch in the template)")


_POLICY = FamilyPolicy(never_rendered, think_in_content_note=DS_SPLIT,
                       description="never renders earlier reasoning; strips history content up to </think>")

DEEPSEEK_V31 = Family(
    name="deepseek_v31", module="deepseek_legacy", reference="DeepSeek-V3.1 chat template (deepseek-ai/DeepSeek-V3.1)",
    markers=MARKERS, stop=STOP, reasoning=REASONING, options=DeepSeekV31Options, policy=_POLICY,
    grammar="deepseek_v31",
    fingerprints=(Fingerprint("DeepSeek-V3.1", "d9f5f351b276cf9e81d009db08830db7d38e94927aecd09a7beb43e2aafee94e"),))

DEEPSEEK_R1 = Family(
    name="deepseek_r1", module="deepseek_legacy", reference="DeepSeek-R1 chat template (deepseek-ai/DeepSeek-R1)",
    markers=MARKERS, stop=STOP, reasoning=REASONING, options=DeepSeekR1Options, policy=_POLICY,
    grammar="deepseek_r1",
    fingerprints=(Fingerprint("DeepSeek-R1", "563b1ce7d61d50a9b4c7439a912a1116f095b712df5b5e4d3e1116049874eb64"),))

FAMILIES = (DEEPSEEK_V31, DEEPSEEK_R1)
