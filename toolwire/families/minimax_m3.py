"""MiniMax-M3: ``]~b]`` turns, ``<mm:think>`` reasoning, one ``]<]minimax[>[<tool_call>`` block of invoke calls."""

from __future__ import annotations

from typing import Any

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import keep_all
from toolwire.errors import InvalidOption
from toolwire.family import Family, Fingerprint, Option, Options, thinking_switch
from toolwire.markers import Marker, MarkerTable

MARKERS = MarkerTable(
    BOD="]~!b[",
    ROLE="]~b]",
    EOS="[e~[",
    NS="]<]minimax[>[",
    THINK_OPEN="<mm:think>",
    THINK_CLOSE="</mm:think>",
    IMAGE="]<]image[>[",
    VIDEO="]<]video[>[",
    BLOCK_OPEN="]<]minimax[>[<tool_call>",
    BLOCK_CLOSE="]<]minimax[>[</tool_call>",
)
THINKING_MODES = ("enabled", "disabled", "adaptive")


class MiniMaxM3Options(Options):
    """The template's switch is ``thinking_mode``: ``adaptive`` (its default), ``enabled`` or ``disabled``;
    ``thinking=True`` / ``False`` is ``enabled`` / ``disabled``."""

    thinking = thinking_switch(False, doc="True: thinking_mode enabled; False: disabled (not given: adaptive)")
    thinking_mode = Option(str, template="thinking_mode", choices=THINKING_MODES,
                           doc="adaptive (the template's default), enabled or disabled")
    model_identity = Option(str, template="model_identity", doc="the default system text")

    @classmethod
    def normalize(cls, values: dict[str, Any], given: frozenset[str]) -> dict[str, Any]:
        mode = values.get("thinking_mode")
        if mode is None:
            values["thinking_mode"] = ("enabled" if values["thinking"] else "disabled") if "thinking" in given \
                else "adaptive"
        elif "thinking" in given and values["thinking"] != (mode == "enabled"):
            raise InvalidOption(f"thinking={values['thinking']!r} and thinking_mode={mode!r} disagree",
                                field="thinking_mode")
        values["thinking"] = values["thinking_mode"] == "enabled"
        return values


MINIMAX_M3 = Family(
    name="minimax_m3", module="minimax_m3", reference="MiniMax-M3 chat template (extra/MiniMax-M3.jinja)",
    markers=MARKERS, stop=(Marker.EOS,), reasoning=(MARKERS.THINK_OPEN, MARKERS.THINK_CLOSE),
    options=MiniMaxM3Options, grammar="minimax_m3",
    # "all-turn visible": every assistant turn writes its reasoning, thinking mode whatever
    policy=FamilyPolicy(keep_all, description="keeps every earlier reasoning (all-turn visible), in every thinking "
                                              "mode"),
    fingerprints=(Fingerprint("MiniMax-M3", "c56d1f3ab70881b0e2ed8f51fa6de435d37b84d6c804ebb19a0ec4986fa5ffa9"),))

FAMILIES = (MINIMAX_M3,)
