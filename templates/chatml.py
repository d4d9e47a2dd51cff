"""The marker table of the ChatML families that write Qwen3-Coder XML calls (Qwen XML, Nemotron 3, Step 3.5):
``<|im_start|>ROLE\\n...<|im_end|>`` turns, ``<think>`` reasoning, ``<tool_call>\\n<function=NAME>`` calls and
``<tool_response>`` results. Each family adds its own markers (bos, vision) around it."""

from __future__ import annotations

from toolwire.parsers.qwen_xml import XmlGrammar

CHATML_SPECIAL_KEYS = ("im_start", "im_end", "think_open", "think_close", "call_open", "call_close",
                       "tool_response_open", "tool_response_close")
"""The keys of :func:`chatml_xml_markers` whose markers are single control tokens (``<function=`` etc. are
plain text)."""


def chatml_xml_markers(grammar: XmlGrammar) -> dict[str, str]:
    """The ChatML turn, reasoning and tool-response markers, and ``grammar``'s call markers."""
    return {
        "im_start": "<|im_start|>",
        "im_end": "<|im_end|>",
        "think_open": "<think>",
        "think_close": "</think>",
        "call_open": grammar.call_open,
        "call_close": grammar.call_close,
        "function_open": grammar.function_open,
        "function_close": grammar.function_close,
        "parameter_open": grammar.parameter_open,
        "parameter_close": grammar.parameter_close,
        "tool_response_open": "<tool_response>",
        "tool_response_close": "</tool_response>",
    }


def chatml_special_tokens(markers: dict[str, str], *extra: str) -> frozenset[str]:
    """The control-token markers of a table built on :func:`chatml_xml_markers`, plus ``extra`` keys."""
    return frozenset(markers[key] for key in CHATML_SPECIAL_KEYS + extra)


__all__ = ["CHATML_SPECIAL_KEYS", "chatml_special_tokens", "chatml_xml_markers"]
