"""Qwen2.5, Qwen3, Qwen3-Instruct-2507 and Qwen3-Thinking-2507: ChatML turns, JSON calls in ``<tool_call>``."""

from __future__ import annotations

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import QWEN_NOTE, QWEN_THINK, never_rendered, qwen3_last_query
from toolwire.family import Family, Fingerprint, Options, thinking_switch
from toolwire.markers import Marker, MarkerTable

MARKERS = MarkerTable(
    IM_START="<|im_start|>",
    IM_END="<|im_end|>",
    ENDOFTEXT="<|endoftext|>",
    CALL_OPEN="<tool_call>",
    CALL_CLOSE="</tool_call>",
    RESPONSE_OPEN="<tool_response>",
    RESPONSE_CLOSE="</tool_response>",
    THINK_OPEN="<think>",
    THINK_CLOSE="</think>",
)
STOP = (Marker.IM_END, Marker.ENDOFTEXT)
REASONING = (MARKERS.THINK_OPEN, MARKERS.THINK_CLOSE)


class Qwen3Options(Options):
    thinking = thinking_switch(True, "enable_thinking")


class AlwaysThinking(Options):
    thinking = thinking_switch(True, doc="the prompt always opens <think> (no switch in the template)")


_NEVER = FamilyPolicy(never_rendered, description="never renders earlier reasoning")
_LAST_QUERY = FamilyPolicy(qwen3_last_query, user_text_note=QWEN_NOTE, think_in_content_note=QWEN_THINK,
                           description="keeps reasoning after the last real user query")

QWEN25 = Family(
    name="qwen25", module="hermes_json", reference="Qwen2.5-7B-Instruct chat template (transformers rendering)",
    markers=MARKERS, stop=STOP, reasoning=REASONING, options=Options, policy=_NEVER, grammar="hermes_json",
    fingerprints=(Fingerprint("Qwen2.5-7B-Instruct", "55b2f4a26ac9ee719330a61a0c39d9e538b0e9322212f048326318cff4f8674a"),))

QWEN3 = Family(
    name="qwen3", module="hermes_json", reference="Qwen3-8B chat template (transformers rendering)",
    markers=MARKERS, stop=STOP, reasoning=REASONING, options=Qwen3Options, policy=_LAST_QUERY, grammar="hermes_json",
    fingerprints=(Fingerprint("Qwen3-8B", "a55ee1b1660128b7098723e0abcd92caa0788061051c62d51cbe87d9cf1974d8"),),
    template_losses=("content_parts_lost",))

QWEN3_INSTRUCT_2507 = Family(
    name="qwen3_instruct_2507", module="hermes_json",
    reference="Qwen3-4B-Instruct-2507 chat template (transformers rendering)",
    markers=MARKERS, stop=STOP, reasoning=REASONING, options=Options, policy=_NEVER, grammar="hermes_json",
    fingerprints=(Fingerprint("Qwen3-4B-Instruct-2507",
                              "64f85b198065d0fba2a81f37e10ed68161ce2c19a754c7100e67e0ca2ee9c326"),),
    template_losses=("content_parts_lost",))

QWEN3_THINKING_2507 = Family(
    name="qwen3_thinking_2507", module="hermes_json",
    reference="Qwen3-4B-Thinking-2507 chat template (transformers rendering)",
    markers=MARKERS, stop=STOP, reasoning=REASONING, options=AlwaysThinking, policy=_LAST_QUERY,
    grammar="hermes_json",
    fingerprints=(Fingerprint("Qwen3-4B-Thinking-2507",
                              "3802169b2a02b81e6adb7ab4f64f91ff02db753c8c3a64a01c35192d3a61d8d7"),),
    template_losses=("content_parts_lost",))

FAMILIES = (QWEN25, QWEN3, QWEN3_INSTRUCT_2507, QWEN3_THINKING_2507)
