"""Qwen3-Coder, Qwen3.5 and Qwen3.6: ChatML turns, XML calls ``<tool_call>\\n<function=NAME>\\n<parameter=K>``.

:data:`CHATML_XML` is the ChatML frame with these calls, which Qwen3.8, Nemotron 3 and Step 3.5 share."""

from __future__ import annotations

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import QWEN_NOTE, QWEN_THINK, last_real_query, never_rendered, qwen36
from toolwire.family import Family, Fingerprint, Option, Options, thinking_switch
from toolwire.markers import Marker, MarkerTable

CHATML_XML = dict(
    IM_START="<|im_start|>",
    IM_END="<|im_end|>",
    THINK_OPEN="<think>",
    THINK_CLOSE="</think>",
    CALL_OPEN="<tool_call>",
    CALL_CLOSE="</tool_call>",
    FUNCTION_OPEN="<function=",
    FUNCTION_CLOSE="</function>",
    PARAMETER_OPEN="<parameter=",
    PARAMETER_CLOSE="</parameter>",
    TOOL_RESPONSE_OPEN="<tool_response>",
    TOOL_RESPONSE_CLOSE="</tool_response>",
)
"""The ChatML turn, reasoning, XML call and tool-response markers (the families add bos, media ...)."""

MARKERS = MarkerTable(
    **CHATML_XML,
    VISION_START="<|vision_start|>",
    VISION_END="<|vision_end|>",
    IMAGE_PAD="<|image_pad|>",
    VIDEO_PAD="<|video_pad|>",
    ENDOFTEXT="<|endoftext|>",
)
STOP = (Marker.IM_END, Marker.ENDOFTEXT)
REASONING = (MARKERS.THINK_OPEN, MARKERS.THINK_CLOSE)


class Qwen35Options(Options):
    thinking = thinking_switch(True, "enable_thinking")
    add_vision_id = Option(bool, template="add_vision_id", doc="label each image and video (Picture 1: ...)")


class Qwen36Options(Qwen35Options):
    preserve_thinking = Option(bool, template="preserve_thinking", retains=True,
                               doc="True keeps every earlier reasoning")


QWEN3_CODER = Family(
    name="qwen3_coder", module="qwen_xml", reference="Qwen3-Coder chat template (transformers rendering)",
    markers=MARKERS, stop=STOP, reasoning=REASONING, options=Options, grammar="qwen_xml",
    policy=FamilyPolicy(never_rendered, description="never renders earlier reasoning"),
    fingerprints=(Fingerprint("Qwen3-Coder", "eae48a3307931acb10a6fce475a36b711709672ea79ee1a9bc52f083d8b0a2af"),))

QWEN35 = Family(
    name="qwen35", module="qwen_xml", reference="Qwen3.5-4B chat template (transformers rendering)", markers=MARKERS,
    stop=STOP, reasoning=REASONING, options=Qwen35Options, grammar="qwen_xml",
    policy=FamilyPolicy(last_real_query, user_text_note=QWEN_NOTE, think_in_content_note=QWEN_THINK,
                        description="keeps reasoning after the last real user query"),
    fingerprints=(Fingerprint("Qwen3.5-4B", "a4aee8afcf2e0711942cf848899be66016f8d14a889ff9ede07bca099c28f715"),))

QWEN36 = Family(
    name="qwen36", module="qwen_xml", reference="Qwen3.6-35B-A3B chat template (transformers rendering)",
    markers=MARKERS, stop=STOP, reasoning=REASONING, options=Qwen36Options, grammar="qwen_xml",
    policy=FamilyPolicy(qwen36, user_text_note=QWEN_NOTE, think_in_content_note=QWEN_THINK,
                        description="as Qwen3; preserve_thinking=True keeps everything"),
    fingerprints=(Fingerprint("Qwen3.6-35B-A3B", "e84f32a23fdda27689f868aa4a1a5621f41133e51a48d7f3efcbea2839574259"),))

FAMILIES = (QWEN3_CODER, QWEN35, QWEN36)
