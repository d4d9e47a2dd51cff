"""Tencent Hy3: ``<｜hy_Assistant:opensource｜>`` turns, ``<think:opensource>`` reasoning, tagged calls."""

from __future__ import annotations

from typing import Any

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import hy3
from toolwire.errors import InvalidOption
from toolwire.family import Family, Fingerprint, Option, Options, thinking_switch
from toolwire.markers import Marker, MarkerTable

MARKERS = MarkerTable(
    BOS="<｜hy_begin_of_sentence:opensource｜>",
    EOS="<｜hy_eos:opensource｜>",
    USER="<｜hy_User:opensource｜>",
    ASSISTANT="<｜hy_Assistant:opensource｜>",
    REASONING_MODE="<｜reasoning_mode:opensource｜>",
    THINK_OPEN="<think:opensource>",
    THINK_CLOSE="</think:opensource>",
    CALLS_OPEN="<tool_calls:opensource>",
    CALLS_CLOSE="</tool_calls:opensource>",
    CALL_OPEN="<tool_call:opensource>",
    CALL_CLOSE="</tool_call:opensource>",
    SEP="<tool_sep:opensource>",
    KEY_OPEN="<arg_key:opensource>",
    KEY_CLOSE="</arg_key:opensource>",
    VALUE_OPEN="<arg_value:opensource>",
    VALUE_CLOSE="</arg_value:opensource>",
    RESPONSES_OPEN="<tool_responses:opensource>",
    RESPONSES_CLOSE="</tool_responses:opensource>",
    RESPONSE_OPEN="<tool_response:opensource>",
    RESPONSE_CLOSE="</tool_response:opensource>",
)
EFFORTS = ("no_think", "low", "high")
DEFAULT_THINKING_EFFORT = "high"


class Hy3Options(Options):
    """The template's one switch is ``reasoning_effort``: ``no_think`` (its default) is thinking off, ``low`` /
    ``high`` thinking on; ``thinking=True`` alone means ``high``."""

    thinking = thinking_switch(False, doc="thinking mode; the template spells it reasoning_effort (no_think: off)")
    reasoning_effort = Option(str, doc="no_think (the template's default: thinking off), low or high")
    preserved_thinking = Option(bool, template="preserved_thinking", retains=True,
                                doc="keep every earlier reasoning (the template's default when tools are declared)")
    raw_last_assistant = Option(bool, template="raw_last_assistant")

    @classmethod
    def normalize(cls, values: dict[str, Any], given: frozenset[str]) -> dict[str, Any]:
        effort, thinking = values.get("reasoning_effort"), values["thinking"]
        if effort is None:
            values["reasoning_effort"] = DEFAULT_THINKING_EFFORT if thinking else None
            return values
        if effort not in EFFORTS:
            raise InvalidOption(f"reasoning_effort error : {effort!r}, should be no_think/low/high",
                                field="reasoning_effort")
        if effort == "no_think":
            if thinking and "thinking" in given:
                raise InvalidOption("thinking=True and reasoning_effort='no_think' disagree", field="reasoning_effort")
            values["thinking"], values["reasoning_effort"] = False, None
        else:
            values["thinking"] = True
        return values

    @classmethod
    def template_variables(cls, values: dict[str, Any]) -> dict[str, Any]:
        out = super().template_variables(values)
        out["reasoning_effort"] = values["reasoning_effort"] if values["thinking"] else "no_think"
        return out


HY3 = Family(
    name="hy3", module="hy3", reference="Tencent Hy3 chat template (transformers rendering)", markers=MARKERS,
    stop=(Marker.EOS,), reasoning=(MARKERS.THINK_OPEN, MARKERS.THINK_CLOSE), options=Hy3Options, grammar="hy3",
    policy=FamilyPolicy(hy3, description="keeps every earlier reasoning when tools are declared (preserved_thinking); "
                                         "otherwise only after the last user message"),
    fingerprints=(Fingerprint("Hy3", "84437b9746423f042920c15289ac84d4eba7a50a11ebc05e8b414c460f814873"),))

FAMILIES = (HY3,)
