"""GLM-4.5, GLM-4.6, GLM-4.7 and GLM-5.3: ``<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>``."""

from __future__ import annotations

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import glm47, glm53, glm_drop_before_last_user
from toolwire.family import Family, Fingerprint, Option, Options, thinking_switch
from toolwire.markers import Marker, MarkerTable

MARKERS = MarkerTable(
    GMASK="[gMASK]",
    SOP="<sop>",
    SYSTEM="<|system|>",
    USER="<|user|>",
    ASSISTANT="<|assistant|>",
    OBSERVATION="<|observation|>",
    ENDOFTEXT="<|endoftext|>",
    NOTHINK="/nothink",
    THINK_OPEN="<think>",
    THINK_CLOSE="</think>",
    CALL_OPEN="<tool_call>",
    CALL_CLOSE="</tool_call>",
    KEY_OPEN="<arg_key>",
    KEY_CLOSE="</arg_key>",
    VALUE_OPEN="<arg_value>",
    VALUE_CLOSE="</arg_value>",
    RESPONSE_OPEN="<tool_response>",
    RESPONSE_CLOSE="</tool_response>",
)
STOP = (Marker.ENDOFTEXT, Marker.USER, Marker.OBSERVATION)
REASONING = (MARKERS.THINK_OPEN, MARKERS.THINK_CLOSE)


class GlmOptions(Options):
    thinking = thinking_switch(True, "enable_thinking")


class Glm47Options(GlmOptions):
    clear_thinking = Option(bool, template="clear_thinking", retains=False,
                            doc="False keeps every earlier turn's reasoning (the template's default drops it)")


class Glm53Options(Options):
    thinking = thinking_switch(True, doc="GLM-5.3 always reasons: the prompt opens <think> (no switch)")
    reasoning_effort = Option(str, template="reasoning_effort", choices=("max", "high", "low"),
                              doc="the head line 'Reasoning Effort: Max' (the template's default), 'High' or 'Low'")
    clear_thinking = Option(bool, template="clear_thinking",
                            doc="True drops reasoning before the last user message (the template's default, False, "
                                "keeps every earlier turn's reasoning)")


_DROP = FamilyPolicy(glm_drop_before_last_user, description="drops reasoning before the last user message")

GLM45 = Family(
    name="glm45", module="glm", reference="GLM-4.5 chat template (GLM-4.5.jinja)", markers=MARKERS, stop=STOP,
    reasoning=REASONING, options=GlmOptions, policy=_DROP, grammar="glm",
    fingerprints=(Fingerprint("GLM-4.5", "44f815868bf02fa458dd2f741a338046f4bf45f398eb6d067766726b9d96cce3"),))

GLM46 = Family(
    name="glm46", module="glm", reference="GLM-4.6 chat template (GLM-4.6.jinja)", markers=MARKERS, stop=STOP,
    reasoning=REASONING, options=GlmOptions, policy=_DROP, grammar="glm",
    fingerprints=(Fingerprint("GLM-4.6", "e6e2ddfb13f8aef529a869e362f74743725c0919b8675139b93c0cb1623796c8"),))

GLM47 = Family(
    name="glm47", module="glm", reference="GLM-4.7-Flash chat template (GLM-4.7-Flash.jinja)", markers=MARKERS,
    stop=STOP, reasoning=REASONING, options=Glm47Options, grammar="glm",
    policy=FamilyPolicy(glm47, description="drops before the last user message unless clear_thinking=False"),
    fingerprints=(Fingerprint("GLM-4.7-Flash", "d63ad536c3c81880043e22ec7fd08db42b4d8fb7c89c7138bc562bfa25281375"),))

GLM53 = Family(
    name="glm53", module="glm", reference="GLM-5.3 chat template (GLM-5.3.jinja, vLLM's copy)", markers=MARKERS,
    stop=STOP, reasoning=REASONING, options=Glm53Options, grammar="glm",
    policy=FamilyPolicy(glm53, description="keeps every earlier reasoning; clear_thinking=True drops it before the "
                                           "last user message"),
    fingerprints=(Fingerprint("GLM-5.3", "01ee1742803eeb778a946236f881c37bfc2d6109e7d01fcd564905015dbe1838"),))

FAMILIES = (GLM45, GLM46, GLM47, GLM53)
