"""Ministral 3 (Reasoning) stream parser: ``[THINK]…[/THINK]`` then content, then ``[TOOL_CALLS]NAME[ARGS]{json}``.

The Mistral call grammar (:class:`~toolwire.parsers.mistral.MistralParser`: no closing marker, the JSON scanner
finds where the arguments end, calls follow each other directly) with a reasoning block the model opens
itself as the first thing it writes (the prompt never opens it). With ``thinking=True`` (the prompt opened
reasoning, per toolwire's convention) the output starts inside it.
"""

from __future__ import annotations

from toolwire.families.ministral import MARKERS, MINISTRAL3

from .engine.marker_json import Grammar
from .mistral import MistralParser

M = MARKERS


class MinistralParser(MistralParser):
    """Ministral 3 output: optional reasoning, content, then calls."""

    family = MINISTRAL3

    grammar = Grammar(call_open=M["tool_calls"], header_end=M["args"], think_open=M["think_open"],
                      think_close=M["think_close"], json_array_calls=True)
    """As Mistral Small 3.2's, with ``[THINK]``; the format before v11 (``[TOOL_CALLS][{"name", "arguments"}, …]``,
    which Mistral checkpoints of that time, Ministral-8B-2410 among them, write; mlx-lm #1374) is read as there
    (``json_array_calls``, ``repaired``): without it a complete call was a ``truncated_call_header`` and the output
    marked truncated."""
    prompt_opens_reasoning = True  # only when the caller says so (thinking=True / a prompt that opened it)
