"""Qwen3.8: the Qwen3.6 XML-call format with a reasoning-effort instruction, keeping every earlier reasoning."""

from __future__ import annotations

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import QWEN_NOTE, qwen38
from toolwire.family import Family, Fingerprint, Option

from .qwen_xml import MARKERS, REASONING, STOP, Qwen36Options


class Qwen38Options(Qwen36Options):
    reasoning_effort = Option(str, template="reasoning_effort", doc="xhigh (the template's default), medium or low")


QWEN38 = Family(
    name="qwen38", module="qwen38", reference="Qwen3.8-27B chat template (transformers rendering)", markers=MARKERS,
    stop=STOP, reasoning=REASONING, options=Qwen38Options, grammar="qwen_xml",
    policy=FamilyPolicy(qwen38, user_text_note=QWEN_NOTE,
                        description="keeps every earlier reasoning; preserve_thinking=False keeps only reasoning "
                                    "after the last real user query"),
    fingerprints=(Fingerprint("Qwen3.8-27B", "c3cf9e34abf4f9e36c2d72165aa9c132d3e2a725b6c2586aaa3a8af9d7a81041"),))

FAMILIES = (QWEN38,)
