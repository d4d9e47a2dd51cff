"""Llama 3.1 / 3.3 and Llama 3.2: ``<|start_header_id|>`` turns, bare JSON calls (``{"name": …, "parameters": …}``)."""

from __future__ import annotations

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import never_rendered
from toolwire.family import Family, Fingerprint, Option, Options
from toolwire.markers import Marker, MarkerTable

MARKERS = MarkerTable(
    BOS="<|begin_of_text|>",
    HEADER_OPEN="<|start_header_id|>",
    HEADER_CLOSE="<|end_header_id|>",
    EOT="<|eot_id|>",
    EOM="<|eom_id|>",
    ENDOFTEXT="<|end_of_text|>",
    PYTHON_TAG="<|python_tag|>",
)
STOP = (Marker.EOT, Marker.EOM, Marker.ENDOFTEXT)


class Llama32Options(Options):
    tools_in_user_message = Option(bool, template="tools_in_user_message",
                                   doc="custom tools in the first user message (the template's default) or the system")


class Llama31Options(Llama32Options):
    builtin_tools = Option(list, template="builtin_tools", doc='built-in tools, e.g. ["brave_search", "wolfram_alpha"]')


_NEVER = FamilyPolicy(never_rendered, description="never renders earlier reasoning")

LLAMA31 = Family(
    name="llama31", module="llama",
    reference="Llama-3.1-8B-Instruct chat template (meta-llama/Llama-3.1-8B-Instruct)", markers=MARKERS, stop=STOP,
    reasoning=None, options=Llama31Options, policy=_NEVER, grammar="llama31",
    fingerprints=(Fingerprint("Llama-3.1-8B-Instruct / Llama-3.3-70B-Instruct",
                              "93c0e9aa3629bbd77e68dbc0f5621f6e6b23aa8d74b932595cdb8d64684526d7"),),
    template_losses=("content_parts_lost",))

LLAMA32 = Family(
    name="llama32", module="llama",
    reference="Llama-3.2-3B-Instruct chat template (meta-llama/Llama-3.2-3B-Instruct)", markers=MARKERS, stop=STOP,
    reasoning=None, options=Llama32Options, policy=_NEVER, grammar="llama31",
    fingerprints=(Fingerprint("Llama-3.2-3B-Instruct",
                              "d82792f95932f1c9cef5c4bd992f171225e3bf8c7b609b4557c9e1ec96be819f"),),
    template_losses=("content_parts_lost",))

FAMILIES = (LLAMA31, LLAMA32)
