"""IBM Granite 4 (4.1, and 4.0 as ``version="4.0"``): ``<|start_of_role|>`` turns, Hermes JSON calls."""

from __future__ import annotations

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import never_rendered
from toolwire.family import Family, Fingerprint, Option, Options
from toolwire.markers import Marker, MarkerTable

from .hermes_json import MARKERS as HERMES

MARKERS = MarkerTable(
    ROLE_OPEN="<|start_of_role|>",
    ROLE_CLOSE="<|end_of_role|>",
    END="<|end_of_text|>",
    CALL_OPEN=HERMES.CALL_OPEN,
    CALL_CLOSE=HERMES.CALL_CLOSE,
    RESPONSE_OPEN=HERMES.RESPONSE_OPEN,
    RESPONSE_CLOSE=HERMES.RESPONSE_CLOSE,
)
VERSIONS = ("4.1", "4.0")


def _version(value) -> str:
    if str(value) not in VERSIONS:
        raise ValueError(f"must be one of {', '.join(VERSIONS)}")
    return str(value)


class GraniteOptions(Options):
    version = Option(object, "4.1", check=_version, doc="the template revision: 4.1 (default) or 4.0")
    documents = Option((list, tuple), template="documents", doc="documents for retrieval-augmented turns (a list of "
                                                               "JSON objects)")


GRANITE4 = Family(
    name="granite4", module="granite",
    reference="Granite-4.1 chat template (transformers rendering); Granite-4.0 with version='4.0'",
    markers=MARKERS, stop=(Marker.END,), reasoning=None, options=GraniteOptions, grammar="hermes_json",
    # the template reads only content and tool_calls of an assistant message
    policy=FamilyPolicy(never_rendered, description="never renders earlier reasoning"),
    fingerprints=(Fingerprint("Granite-4.1", "fed2756d2d24e127b951dcf139d0b03ab7db8ef23a456128ebc9c2db4901d476"),
                  Fingerprint("Granite-4.0", "9524df67b77a7b25a2dfee898f75b316a157eb9d855b51e32aeac79d7c8a83ce",
                              options={"version": "4.0"})))

FAMILIES = (GRANITE4,)
