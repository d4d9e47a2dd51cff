"""DeepSeek V3.2, V4 and V4.1: DSML tool calls (``<｜DSML｜invoke name="...">``), one grammar with versions as data.

The references are DeepSeek's own Python encoders (``thinking_mode="thinking"`` is toolwire's ``thinking=True``), so
no option mirrors a chat-template keyword and no template is fingerprinted (``toolwire detect`` finds llama.cpp's
ports by what they render)."""

from __future__ import annotations

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import DEEPSEEK_PASSBACK, DSV4_NOTE, dsml_v4, dsml_v32, dsml_v41
from toolwire.family import Family, Option, Options
from toolwire.markers import Marker, MarkerTable


def dsml_markers(dsml: str, block: str) -> MarkerTable:
    """The marker table of a DSML version: its namespace token (``｜DSML｜``, V4.1 ``｜DSML｜ ``) and block name."""
    return MarkerTable(
        BOS="<｜begin▁of▁sentence｜>",
        EOS="<｜end▁of▁sentence｜>",
        USER="<｜User｜>",
        ASSISTANT="<｜Assistant｜>",
        SYSTEM="<｜System｜>",
        THINK_OPEN="<think>",
        THINK_CLOSE="</think>",
        LATEST_REMINDER="<｜latest_reminder｜>",
        TOOL_CALLS_OPEN=f"<{dsml}{block}>",
        TOOL_CALLS_CLOSE=f"</{dsml}{block}>",
        INVOKE_OPEN=f'<{dsml}invoke name="',
        INVOKE_CLOSE=f"</{dsml}invoke>",
        PARAMETER_OPEN=f'<{dsml}parameter name="',
        PARAMETER_CLOSE=f"</{dsml}parameter>",
        TOOL_RESULT_OPEN="<tool_result>",
        TOOL_RESULT_CLOSE="</tool_result>",
    )


DSML = "｜DSML｜"
MARKERS_V32 = dsml_markers(DSML, "function_calls")
MARKERS_V4 = dsml_markers(DSML, "tool_calls")
MARKERS_V41 = dsml_markers(DSML + " ", "calls")
STOP = (Marker.EOS,)


class DeepSeekV4Options(Options):
    drop_thinking = Option(bool, True, retains=False,
                           doc="the encoders' switch: False keeps every earlier reasoning (True, the default, drops it "
                               "before the last user message when no tools are declared)")

DEEPSEEK_V32 = Family(
    name="deepseek_v32", module="dsml", reference="DeepSeek encoding_dsv32.py encode_messages (golden vectors)",
    markers=MARKERS_V32, stop=STOP, reasoning=(MARKERS_V32.THINK_OPEN, MARKERS_V32.THINK_CLOSE), options=Options,
    grammar="dsml",
    policy=FamilyPolicy(dsml_v32, passback=DEEPSEEK_PASSBACK,
                        description="drops reasoning before the last user message; keeps the current tool loop"))

DEEPSEEK_V4 = Family(
    name="deepseek_v4", module="dsml", reference="DeepSeek-V4 encoding_dsv4.py encode_messages (golden vectors)",
    markers=MARKERS_V4, stop=STOP, reasoning=(MARKERS_V4.THINK_OPEN, MARKERS_V4.THINK_CLOSE),
    options=DeepSeekV4Options,
    grammar="dsml",
    policy=FamilyPolicy(dsml_v4, passback=DEEPSEEK_PASSBACK, user_text_note=DSV4_NOTE,
                        description="keeps everything when tools are declared; otherwise drops before the last user "
                                    "message (tool results count as user turns)"))

DEEPSEEK_V41 = Family(
    name="deepseek_v41", module="dsml", reference="DeepSeek-V4.1 encoding encode_messages (golden vectors)",
    markers=MARKERS_V41, stop=STOP, reasoning=(MARKERS_V41.THINK_OPEN, MARKERS_V41.THINK_CLOSE),
    options=DeepSeekV4Options,
    grammar="dsml",
    policy=FamilyPolicy(dsml_v41, passback=DEEPSEEK_PASSBACK, user_text_note=DSV4_NOTE,
                        description="as V4, but tool-result-only user messages do not start a turn"))

FAMILIES = (DEEPSEEK_V32, DEEPSEEK_V4, DEEPSEEK_V41)
