"""NVIDIA Nemotron 3: ChatML with Qwen3-Coder XML calls, ``<think>`` opened by the prompt by default."""

from __future__ import annotations

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import nemotron3
from toolwire.family import Family, Fingerprint, Option, Options, thinking_switch
from toolwire.markers import Marker, MarkerTable

from .qwen_xml import CHATML_XML

MARKERS = MarkerTable(**CHATML_XML)


class Nemotron3Options(Options):
    thinking = thinking_switch(True, "enable_thinking")
    truncate_history_thinking = Option(bool, template="truncate_history_thinking", retains=False,
                                       doc="False keeps every earlier reasoning (the template's default drops it)")


NEMOTRON3 = Family(
    name="nemotron3", module="nemotron",
    reference="NVIDIA-Nemotron-3-Nano-30B-A3B chat template (transformers rendering)", markers=MARKERS,
    stop=(Marker.IM_END,), reasoning=(MARKERS.THINK_OPEN, MARKERS.THINK_CLOSE), options=Nemotron3Options,
    grammar="qwen_xml",
    policy=FamilyPolicy(nemotron3, description="drops reasoning before the last user message (thinking on or off) "
                                               "unless truncate_history_thinking=False"),
    fingerprints=(Fingerprint("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
                              "43a92aacc2e169bb37055e4d8b0df31edfdc8657d8c387fcf98254cb246e626a"),),
    template_losses=("content_parts_lost",))

FAMILIES = (NEMOTRON3,)
