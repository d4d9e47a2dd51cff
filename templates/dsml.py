"""DeepSeek DSML family: V3.2, V4 and V4.1 (the ``<｜DSML｜tool_calls>`` wire format).

Reference: DeepSeek's published Python encoders (``encoding_dsv32.py``, V4 / V4.1 encoding),
``encode_messages(...)``. Versions are data on one implementation.
"""

from __future__ import annotations

from toolwire.format import Format

DSML = "｜DSML｜"

# One marker table shared by the renderer and the parser (toolwire.parsers.dsml).
MARKERS = {
    "bos": "<｜begin▁of▁sentence｜>",
    "eos": "<｜end▁of▁sentence｜>",
    "user": "<｜User｜>",
    "assistant": "<｜Assistant｜>",
    "think_open": "<think>",
    "think_close": "</think>",
    "latest_reminder": "<｜latest_reminder｜>",
    "tool_calls_open": f"<{DSML}tool_calls>",
    "tool_calls_close": f"</{DSML}tool_calls>",
    "invoke_open": f'<{DSML}invoke name="',
    "invoke_close": f"</{DSML}invoke>",
    "parameter_open": f'<{DSML}parameter name="',
    "parameter_close": f"</{DSML}parameter>",
    "tool_result_open": "<tool_result>",
    "tool_result_close": "</tool_result>",
}
