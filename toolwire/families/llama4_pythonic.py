"""Llama 4 with pythonic calls (vLLM's template): ``<|header_start|>`` turns, content then ``[NAME(k="v"), ...]``
with no marker, every value written as quoted text."""

from __future__ import annotations

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import never_rendered
from toolwire.family import Family, Fingerprint, Options
from toolwire.markers import Marker, MarkerTable

MARKERS = MarkerTable(
    BOS="<|begin_of_text|>",
    HEADER_OPEN="<|header_start|>",
    HEADER_CLOSE="<|header_end|>",
    EOT="<|eot|>",
    EOM="<|eom|>",
    IMAGE="<|image|>",
)

LLAMA4_PYTHONIC = Family(
    name="llama4_pythonic", module="llama4_pythonic",
    reference="vLLM tool_chat_template_llama4_pythonic.jinja (Llama 4 Scout/Maverick, pythonic calls)",
    markers=MARKERS, stop=(Marker.EOT, Marker.EOM),  # Llama 4's generation_config eos
    reasoning=None, options=Options, grammar="llama4_pythonic",
    policy=FamilyPolicy(never_rendered, description="never renders earlier reasoning"),  # no reasoning field
    fingerprints=(Fingerprint("Llama-4 pythonic (vLLM tool_chat_template_llama4_pythonic)",
                              "fb76136a36a8422930f25fbe3326e9ae0d67e82259c7917b1b71d18ae6934cef"),))

FAMILIES = (LLAMA4_PYTHONIC,)
