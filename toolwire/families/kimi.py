"""Kimi K2 and Kimi K2 Thinking: ``<|tool_calls_section_begin|>`` calls with ``functions.NAME:IDX`` ids."""

from __future__ import annotations

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import KIMI_PASSBACK, kimi_after_last_answer, never_rendered
from toolwire.family import Family, Fingerprint, Options, thinking_switch
from toolwire.markers import Marker, MarkerTable

MARKERS = MarkerTable(
    SYSTEM="<|im_system|>",
    USER="<|im_user|>",
    ASSISTANT="<|im_assistant|>",
    MIDDLE="<|im_middle|>",
    END="<|im_end|>",
    SECTION_BEGIN="<|tool_calls_section_begin|>",
    SECTION_END="<|tool_calls_section_end|>",
    CALL_BEGIN="<|tool_call_begin|>",
    ARGUMENT_BEGIN="<|tool_call_argument_begin|>",
    CALL_END="<|tool_call_end|>",
    THINK_OPEN="<think>",
    THINK_CLOSE="</think>",
    MEDIA_START="<|media_start|>",
    MEDIA_CONTENT="<|media_content|>",
    MEDIA_PAD="<|media_pad|>",
    MEDIA_END="<|media_end|>",
)
STOP = (Marker.END,)
REASONING = (MARKERS.THINK_OPEN, MARKERS.THINK_CLOSE)


class KimiThinkingOptions(Options):
    thinking = thinking_switch(True, doc="Kimi K2 Thinking always reasons (no switch in the template)")


KIMI_K2 = Family(
    name="kimi_k2", module="kimi", reference="Kimi-K2-Instruct chat template (moonshotai/Kimi-K2-Instruct, July 2025)",
    markers=MARKERS, stop=STOP, reasoning=REASONING, options=Options, grammar="kimi",
    policy=FamilyPolicy(never_rendered, description="never renders earlier reasoning"),
    fingerprints=(Fingerprint("Kimi-K2-Instruct", "aab20feb9bc6881f941ea649356130ffbc4943b3c2577c0991e1fba90de5a0fc"),))

KIMI_K2_THINKING = Family(
    name="kimi_k2_thinking", module="kimi", reference="Kimi-K2-Thinking chat template (moonshotai/Kimi-K2-Thinking)",
    markers=MARKERS, stop=STOP, reasoning=REASONING, options=KimiThinkingOptions, grammar="kimi",
    policy=FamilyPolicy(kimi_after_last_answer, passback=KIMI_PASSBACK,
                        description="keeps reasoning after the last assistant answer without tool calls (the current "
                                    "tool loop)"),
    fingerprints=(Fingerprint("Kimi-K2-Thinking", "f1838522f489f10c9196540a7e995578511168f9d6d7ce8a373909446c35d643"),),
    template_losses=("call_id_in_name_slot",))

FAMILIES = (KIMI_K2, KIMI_K2_THINKING)
