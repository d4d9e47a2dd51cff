"""ByteDance Seed-OSS: ``<seed:bos>`` turns, ``<seed:think>`` reasoning, Qwen3-Coder-style XML calls."""

from __future__ import annotations

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import keep_all
from toolwire.family import Family, Fingerprint, Option, Options
from toolwire.markers import Marker, MarkerTable

MARKERS = MarkerTable(
    BOS="<seed:bos>",
    EOS="<seed:eos>",
    THINK_OPEN="<seed:think>",
    THINK_CLOSE="</seed:think>",
    CALL_OPEN="<seed:tool_call>",
    CALL_CLOSE="</seed:tool_call>",
    BUDGET_OPEN="<seed:cot_budget_reflect>",
    BUDGET_CLOSE="</seed:cot_budget_reflect>",
    FUNCTION_OPEN="<function=",
    FUNCTION_CLOSE="</function>",
    PARAMETER_OPEN="<parameter=",
    PARAMETER_CLOSE="</parameter>",
)


class SeedOssOptions(Options):
    thinking_budget = Option(int, template="thinking_budget", doc="-1 (the template's default): unlimited; 0: no thinking")
    use_json_tooldef = Option(bool, template="use_json_tooldef", doc="declare the tools as JSON")


SEED_OSS = Family(
    name="seed_oss", module="seed_oss", reference="Seed-OSS-36B-Instruct chat template (transformers rendering)",
    markers=MARKERS, stop=(Marker.EOS,), reasoning=(MARKERS.THINK_OPEN, MARKERS.THINK_CLOSE), options=SeedOssOptions,
    grammar="qwen_xml",
    policy=FamilyPolicy(keep_all, description="keeps every earlier reasoning (trimmed), thinking on or off"),
    fingerprints=(Fingerprint("Seed-OSS-36B-Instruct",
                              "3f9e0dc4adeb8032287d0129dc75b6298fee8698a52ab41e863dbc89929330d3"),))

FAMILIES = (SEED_OSS,)
