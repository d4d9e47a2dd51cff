"""LFM2.5 (Liquid AI): ChatML turns, one ``<|tool_call_start|>[NAME(k='v'), ...]<|tool_call_end|>`` block of
pythonic calls (read by the pythonic engine, never evaluated)."""

from __future__ import annotations

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import lfm25
from toolwire.family import Family, Fingerprint, Option, Options
from toolwire.markers import Marker, MarkerTable

MARKERS = MarkerTable(
    BOS="<|startoftext|>",
    IM_START="<|im_start|>",
    IM_END="<|im_end|>",
    THINK_OPEN="<think>",
    THINK_CLOSE="</think>",
    CALL_OPEN="<|tool_call_start|>",
    CALL_CLOSE="<|tool_call_end|>",
)


class Lfm25Options(Options):
    preserve_thinking = Option(bool, template="preserve_thinking", retains=True,
                               doc="True keeps every turn's <think> block (the default keeps the current turn's)")


LFM25 = Family(
    name="lfm25", module="lfm25", reference="LFM2.5-8B-A1B chat template (transformers rendering)",
    markers=MARKERS, stop=(Marker.IM_END,),  # LFM2's eos (generation_config eos_token_id 7)
    reasoning=(MARKERS.THINK_OPEN, MARKERS.THINK_CLOSE), options=Lfm25Options, grammar="lfm25",
    # <think> blocks after the last user message, or everywhere with preserve_thinking=True (no thinking switch)
    policy=FamilyPolicy(lfm25, description="keeps reasoning after the last user message; preserve_thinking=True "
                                           "keeps everything"),
    fingerprints=(Fingerprint("LFM2.5-8B-A1B", "6d65c8804847ad74eea912dd7eca3dc1cf7a457b53a77f47d841a14121910963"),))

FAMILIES = (LFM25,)
