"""StepFun Step 3.5: ChatML with Qwen3-Coder XML calls; the prompt always opens ``<think>``."""

from __future__ import annotations

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import QWEN_NOTE, step35_last_query
from toolwire.family import Family, Fingerprint, Options, thinking_switch
from toolwire.markers import Marker, MarkerTable

from .qwen_xml import CHATML_XML

MARKERS = MarkerTable(BOS="<s>", **CHATML_XML, IMAGE="<im_patch>")


class Step35Options(Options):
    thinking = thinking_switch(True, doc="Step 3.5 always reasons: the prompt opens <think> (no switch)")


STEP35 = Family(
    name="step35", module="step35", reference="StepFun Step-3.5-Flash chat template (transformers rendering, bos <s>)",
    markers=MARKERS, stop=(Marker.IM_END,), reasoning=(MARKERS.THINK_OPEN, MARKERS.THINK_CLOSE),
    options=Step35Options, grammar="qwen_xml",
    policy=FamilyPolicy(step35_last_query, user_text_note=QWEN_NOTE,
                        description="keeps reasoning after the last real user query (always thinking)"),
    fingerprints=(Fingerprint("Step-3.5-Flash", "3a7cb642bf35cb4106cd3895147d8fcded3be856ad56cf6c88510aec879c2427"),))

FAMILIES = (STEP35,)
