"""toolwire: the model side of LLM tool calling.

Render OpenAI-style chat requests into the exact prompt a model family was trained on, and parse its
raw output (complete or streamed) into content, reasoning and typed tool-call candidates.

>>> import toolwire
>>> fmt = toolwire.get_format("deepseek_v4")
>>> prompt = fmt.render([{"role": "user", "content": "hi"}])
"""

from .errors import InvalidRequest, MissingExtra, ToolwireError, UnknownFormat
from .format import Format, RenderOptions
from .limits import DEFAULT_LIMITS, Limits
from .models import ContentPart, FunctionCall, FunctionDef, Message, Tool, ToolCall
from .output import (
    ArgumentsDelta, CallError, ContentDelta, Diagnostic, Event, ParsedOutput, ReasoningDelta, ToolCallCandidate,
    ToolCallFinished, ToolCallStarted,
)
from .prompt import RenderedPrompt, Segment
from .registry import formats, get_format
from . import _aliases
from .dispatch.canonical import canonical_json, canonical_value, fingerprint
from .dispatch.specs import ToolSpec, tool_specs
from .dispatch.validation import ToolSet, validate_candidate, validate_output
from .integrations.openai import (
    ChatCompletionsStream, accumulate_deltas, error_result, finish_reason, to_openai_message,
)
from .output import bind_delegates

# ParsedOutput / ToolCallCandidate convenience methods delegate to these (core does not import them).
bind_delegates(validate_candidate=validate_candidate, validate_output=validate_output, fingerprint=fingerprint,
               error_result=error_result, to_openai_message=to_openai_message, finish_reason=finish_reason)
_aliases.install()  # the deprecated module paths (toolwire.validation, ...): see toolwire/_aliases.py
del bind_delegates, validate_candidate, validate_output, finish_reason

__version__ = "0.1.0"

__all__ = [
    "formats", "get_format", "Format", "RenderOptions", "RenderedPrompt", "Segment",
    "Message", "Tool", "ToolCall", "FunctionCall", "FunctionDef", "ContentPart",
    "ParsedOutput", "ToolCallCandidate", "Diagnostic", "Event", "ContentDelta", "ReasoningDelta",
    "ToolCallStarted", "ArgumentsDelta", "ToolCallFinished", "ToolwireError", "UnknownFormat", "InvalidRequest",
    "CallError", "Limits", "DEFAULT_LIMITS", "ToolSpec", "tool_specs", "canonical_json", "canonical_value",
    "fingerprint", "MissingExtra", "ToolSet", "ChatCompletionsStream", "accumulate_deltas", "error_result",
    "to_openai_message",
]
