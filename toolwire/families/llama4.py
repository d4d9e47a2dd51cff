"""Llama 4 (transformers' default template): ``<|header_start|>`` turns, ``<|python_start|>`` then JSON calls."""

from __future__ import annotations

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import never_rendered
from toolwire.family import Family, Fingerprint, Option, Options
from toolwire.markers import Marker, MarkerTable

MARKERS = MarkerTable(
    BOS="<|begin_of_text|>",
    HEADER_OPEN="<|header_start|>",
    HEADER_CLOSE="<|header_end|>",
    EOT="<|eot|>",
    EOM="<|eom|>",
    PYTHON_START="<|python_start|>",
    PYTHON_END="<|python_end|>",
    IMAGE="<|image|>",
)


class Llama4Options(Options):
    tools_in_user_message = Option(bool, template="tools_in_user_message",
                                   doc="custom tools in the first user message (the template's default) or the system")


LLAMA4 = Family(
    name="llama4", module="llama4",
    reference="Llama-4 transformers default chat template (Llama-4-Scout/Maverick-Instruct)", markers=MARKERS,
    stop=(Marker.EOT, Marker.EOM), reasoning=None, options=Llama4Options, grammar="llama4",
    # the template reads no reasoning field (its <|reasoning_thinking_start|> tokens are never written)
    policy=FamilyPolicy(never_rendered, description="never renders earlier reasoning"),
    fingerprints=(Fingerprint("Llama-4 (transformers default)",
                              "9bcc2b35f15730186459ff95c30804d7b97eeb97360b71b432f5564aab789f04"),))

FAMILIES = (LLAMA4,)
