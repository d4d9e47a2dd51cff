"""One error hierarchy for toolwire. Every error carries a stable ``code``.

Renderer errors caused by the request name the offending message index and field, so a serving
stack can return a precise 400 to its client.
"""

from __future__ import annotations

from typing import Iterable


class ToolwireError(Exception):
    """Base of every toolwire error. ``code`` is stable and safe to match on."""

    code = "toolwire_error"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class UnknownFormat(ToolwireError, KeyError):
    """``get_format`` was asked for a name that is not registered."""

    code = "unknown_format"

    def __init__(self, name: str, known: Iterable[str]):
        import difflib  # only when a name is unknown: ``import toolwire`` stays light

        known = sorted(known)
        self.name = name
        self.closest = difflib.get_close_matches(name, known, n=3, cutoff=0.4)
        hint = f"; did you mean {', '.join(self.closest)}?" if self.closest else ""
        super().__init__(f"unknown format {name!r}{hint} (known: {', '.join(known)})")

    def __str__(self) -> str:  # KeyError would repr() the message otherwise
        return self.message


class InvalidRequest(ToolwireError, ValueError):
    """The request cannot be rendered. ``message_index`` and ``field`` locate the problem.

    ``message_index`` is ``None`` for problems outside ``messages`` (``tools``, options).
    """

    code = "invalid_request"

    def __init__(self, detail: str, *, message_index: int | None = None, field: str | None = None):
        self.detail = detail
        self.message_index = message_index
        self.field = field
        where = []
        if message_index is not None:
            where.append(f"messages[{message_index}]")
        if field:
            where.append(field)
        prefix = ".".join(where)
        super().__init__(f"{prefix}: {detail}" if prefix else detail)


class UnsupportedByFormat(InvalidRequest):
    """The request is well formed, but the model's own template refuses it (``expected_error``)."""

    code = "unsupported_by_format"


class UnrepresentableValue(InvalidRequest):
    """An argument value the wire format cannot carry unambiguously and has no escape for."""

    code = "unrepresentable_value"


class InvalidOption(InvalidRequest):
    """A render or parse option has a value the format does not accept."""

    code = "invalid_option"


class InvalidToolResult(InvalidRequest):
    """A tool result cannot be built or sent to the model: data that is not JSON, an MCP content block of an
    unknown type, structured content its tool's output schema refuses, a result whose call id no call has.
    ``field`` names the offending field (``data.items[3]``, ``content[2].type``, ``call``)."""

    code = "invalid_tool_result"


class InvalidToolDefinition(ToolwireError, ValueError):
    """A tool definition is malformed. Names the tool and the field."""

    code = "invalid_tool_definition"

    def __init__(self, detail: str, *, tool: str | None = None, field: str | None = None):
        self.detail = detail
        self.tool = tool
        self.field = field
        where = " ".join(p for p in (f"tool {tool!r}" if tool else "", field or "") if p)
        super().__init__(f"{where}: {detail}" if where else detail)


class MissingExtra(ToolwireError, ImportError):
    """An optional dependency is needed for this feature; the message names the extra to install."""

    code = "missing_extra"


class StreamClosed(ToolwireError, RuntimeError):
    """``feed`` or ``finish`` was called on a stream parser that already finished."""

    code = "stream_closed"
