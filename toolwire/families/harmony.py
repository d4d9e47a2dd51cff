"""gpt-oss (harmony): system and developer headers, analysis / commentary / final channels, ``<|call|>`` calls.

The render switches beyond the common ones choose between the two references, the Hugging Face template and
openai-harmony (``profile``), or set one of their differences at a time (docs/harmony.md)."""

from __future__ import annotations

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import gpt_oss
from toolwire.family import Family, Fingerprint, Option, Options, thinking_switch
from toolwire.markers import Marker, MarkerTable

MARKERS = MarkerTable(
    START="<|start|>",
    END="<|end|>",
    MESSAGE="<|message|>",
    CHANNEL="<|channel|>",
    CONSTRAIN="<|constrain|>",
    CALL="<|call|>",
    RETURN="<|return|>",
    ENDOFTEXT="<|endoftext|>",
)

HF_TEMPLATE, OPENAI_HARMONY = "hf_template", "openai_harmony"


class HarmonyOptions(Options):
    thinking = thinking_switch(True, doc="gpt-oss always reasons (the analysis channel); no switch")
    reasoning_effort = Option(str, template="reasoning_effort", doc="low, medium (the template's default) or high")
    model_identity = Option(str, template="model_identity", doc="the system turn's first line")
    profile = Option(str, choices=(HF_TEMPLATE, OPENAI_HARMONY),
                     doc="which reference the defaults below follow (default hf_template)")
    tool_schema_style = Option(str, choices=(HF_TEMPLATE, OPENAI_HARMONY))
    analysis_retention = Option(str, choices=(HF_TEMPLATE, OPENAI_HARMONY))
    tool_call_content_channel = Option(str, choices=("analysis", "commentary"))
    missing_date = Option(str, choices=("today", "omit"))
    instructions_trailing_newlines = Option(bool)
    constrain_json = Option(bool)
    quote_tool_results = Option(bool)
    all_tool_calls = Option(bool)
    escape_markers_in_arguments = Option(bool)


GPT_OSS = Family(
    name="gpt_oss", module="harmony",
    reference="HF chat template gpt-oss-20b.jinja (transformers); openai-harmony HarmonyGptOss with "
              "profile='openai_harmony'",
    markers=MARKERS, stop=(Marker.RETURN, Marker.CALL, Marker.ENDOFTEXT), reasoning=None, options=HarmonyOptions,
    grammar="harmony",
    policy=FamilyPolicy(gpt_oss, description="keeps a tool call's analysis until a final answer follows; drops final "
                                             "answers' analysis"),
    fingerprints=(Fingerprint("gpt-oss-20b / gpt-oss-120b",
                              "a4c9919cbbd4acdd51ccffe22da049264b1b73e59055fa58811a99efbd7c8146"),),
    template_losses=("first_call_only",))

FAMILIES = (GPT_OSS,)
