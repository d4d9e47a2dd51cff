"""toolwire: the model side of LLM tool calling.

Render OpenAI-style chat requests into the exact prompt a model family was trained on, and parse its
raw output (complete or streamed) into content, reasoning and typed tool-call candidates.

>>> import toolwire
>>> fmt = toolwire.get_format("deepseek_v4")
>>> prompt = fmt.render([{"role": "user", "content": "hi"}])

``import toolwire`` loads only the registry, the format base and the errors: the request and output models
(pydantic), validation and the integrations are imported on first use of one of their names (PEP 562
``__getattr__`` below), so ``toolwire.Message`` and ``from toolwire import ParsedOutput`` are the same classes
as always, built when first asked for.
"""

from __future__ import annotations

import importlib
import importlib.util

from .errors import InvalidRequest, MissingExtra, ToolwireError, UnknownFormat
from .format import Format, RenderOptions
from .prompt import RenderedPrompt, Segment
from .registry import formats, get_format

__version__ = "0.1.0"

_LAZY: dict[str, str] = {  # public name -> the module that defines it, imported on first access
    **dict.fromkeys(("ContentPart", "FunctionCall", "FunctionDef", "Message", "Tool", "ToolCall"), "toolwire.models"),
    **dict.fromkeys(("ArgumentsDelta", "CallError", "ContentDelta", "Diagnostic", "Event", "ParsedOutput",
                     "ReasoningDelta", "ToolCallCandidate", "ToolCallFinished", "ToolCallStarted"), "toolwire.output"),
    **dict.fromkeys(("DEFAULT_LIMITS", "Limits"), "toolwire.limits"),
    **dict.fromkeys(("ToolResult", "ResultError", "ResultMeta", "Media"), "toolwire.results"),
    **dict.fromkeys(("canonical_json", "canonical_value", "fingerprint"), "toolwire.dispatch.canonical"),
    **dict.fromkeys(("ToolSpec", "tool_specs"), "toolwire.dispatch.specs"),
    "ToolSet": "toolwire.dispatch.validation",
    **dict.fromkeys(("ChatCompletionsStream", "accumulate_deltas", "error_result", "to_openai_message"),
                    "toolwire.integrations.openai"),
}


def __getattr__(name: str):
    """A public name of :data:`_LAZY` (imported from its module and cached here), or a submodule
    (``toolwire.models``, ``toolwire.context_policy`` ...), imported on first access."""
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
    elif not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "formats", "get_format", "Format", "RenderOptions", "RenderedPrompt", "Segment",
    "Message", "Tool", "ToolCall", "FunctionCall", "FunctionDef", "ContentPart",
    "ParsedOutput", "ToolCallCandidate", "Diagnostic", "Event", "ContentDelta", "ReasoningDelta",
    "ToolCallStarted", "ArgumentsDelta", "ToolCallFinished", "ToolwireError", "UnknownFormat", "InvalidRequest",
    "CallError", "Limits", "DEFAULT_LIMITS", "ToolSpec", "tool_specs", "canonical_json", "canonical_value",
    "fingerprint", "MissingExtra", "ToolSet", "ChatCompletionsStream", "accumulate_deltas", "error_result",
    "to_openai_message", "ToolResult", "ResultError", "ResultMeta", "Media",
]
