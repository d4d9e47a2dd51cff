"""GigaChat 3.5: ``ROLE<|role_sep|>\\n…<|message_sep|>\\n\\n`` turns, DSML-style calls in its own ``｜GCML｜`` namespace
(``<｜GCML｜tool_calls>`` / ``<｜GCML｜invoke name="...">`` / ``<｜GCML｜parameter name="..." string="...">``)."""

from __future__ import annotations

from dataclasses import replace

from toolwire.context_policy.policies import FamilyPolicy
from toolwire.context_policy.rules import gigachat35
from toolwire.family import Family, Fingerprint, Option, Options, thinking_switch
from toolwire.markers import Marker, MarkerTable

GCML = "｜GCML｜"
"""GigaChat's namespace token in its call markup (DeepSeek's is ``｜DSML｜``)."""

MARKERS = MarkerTable(
    BOS="<s>",
    EOS="</s>",
    ROLE_CLOSE="<|role_sep|>",
    END="<|message_sep|>",
    THINK_OPEN="<think>",
    THINK_CLOSE="</think>",
    TOOL_CALLS_OPEN=f"<{GCML}tool_calls>",
    TOOL_CALLS_CLOSE=f"</{GCML}tool_calls>",
    INVOKE_OPEN=f'<{GCML}invoke name="',
    INVOKE_CLOSE=f"</{GCML}invoke>",
    PARAMETER_OPEN=f'<{GCML}parameter name="',
    PARAMETER_CLOSE=f"</{GCML}parameter>",
    RESPONSE_OPEN='<function_response name="',
    RESPONSE_CLOSE="</function_response>",
)
STOP = (Marker.EOS, Marker.END)
"""``</s>`` ends the last turn of a conversation, ``<|message_sep|>`` every other one (a turn with calls, which the
function result follows): generation stops on either."""


class GigaChatOptions(Options):
    thinking = thinking_switch(False, "reasoning", doc="the prompt opens <think> (the template's reasoning switch, "
                                                       "off by default)")
    current_date = replace(Options.current_date, template="current_date",
                           doc="the date printed in the default developer-system turn, 'YYYY-MM-DD' (not given: "
                               "printed empty, as the template does)")
    drop_history_thinking = Option(bool, template="drop_history_thinking", retains=False,
                                   doc="False keeps every earlier turn's reasoning (the template's default drops it "
                                       "before the last user message)")
    use_devsystem = Option(bool, template="use_devsystem",
                           doc="False leaves out the developer-system turn (the template's default writes one)")
    default_devsystem = Option(str, template="default_devsystem",
                               doc="the developer-system text when the request has none (default: the template's, "
                                   "with current_date)")
    use_system = Option(bool, template="use_system",
                        doc="False leaves out the empty system turn written when the request has no system message")
    use_suggester = Option(bool, template="use_suggester",
                           doc="False leaves out the 'available functions' turn after each user turn and result")


GIGACHAT35 = Family(
    name="gigachat35", module="gigachat", reference="GigaChat 3.5 chat template (GigaChat3.5.jinja, llama.cpp's copy)",
    markers=MARKERS, stop=STOP, reasoning=(MARKERS.THINK_OPEN, MARKERS.THINK_CLOSE), options=GigaChatOptions,
    grammar="gcml",
    policy=FamilyPolicy(gigachat35, description="drops reasoning before the last user message (thinking or not) "
                                                "unless drop_history_thinking=False"),
    fingerprints=(Fingerprint("GigaChat 3.5", "ce621f3ef0af5747c73f0b4c48320f5247c62ef35c5ff70c46d83650a6e45a28"),),
    template_losses=("content_parts_lost",))

FAMILIES = (GIGACHAT35,)
