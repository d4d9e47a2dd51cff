"""Typed request model: messages, tool calls and tool definitions (OpenAI Chat Completions shape).

Renderers accept plain dicts or these models; :func:`normalize_messages` and :func:`normalize_tools`
turn either into validated models and report problems as :class:`~toolwire.errors.InvalidRequest`
naming the message index and field.
"""

from __future__ import annotations

import json
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, PrivateAttr, TypeAdapter, ValidationError, model_validator

from .errors import InvalidRequest


REASONING_ALIASES = ("thinking", "reasoning")
"""Other names a message's reasoning may come under (after ``reasoning_content``), as in transformers."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class ContentPart(_Model):
    """One part of a multi-part message content. Only ``text`` parts carry text."""

    type: str = "text"
    text: str | None = None


class FunctionCall(_Model):
    """The ``function`` of an assistant tool call. ``arguments`` is a JSON string or an object."""

    name: str
    arguments: Union[str, dict[str, Any]] = "{}"


class ToolCall(_Model):
    """An assistant tool call in request history."""

    id: str | None = None
    type: str = "function"
    function: FunctionCall


class Message(_Model):
    """One chat message. Unknown extra fields (``task``, ``wo_eos`` ...) are kept for formats that use them."""

    role: str
    content: Union[str, list[ContentPart], None] = None
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _alias_reasoning(cls, data: Any) -> Any:
        """Reasoning may come as ``reasoning_content`` or, as transformers also accepts, ``thinking`` or
        ``reasoning``; the first string found becomes ``reasoning_content``, so renderers read one field."""
        if isinstance(data, dict) and data.get("reasoning_content") is None:
            for key in REASONING_ALIASES:
                alias = data.get(key)
                if isinstance(alias, str):
                    return {**data, "reasoning_content": alias}
        return data

    def text(self, joiner: str = "\n\n") -> str:
        """The content as one string: ``None`` is empty, text parts are joined by ``joiner``."""
        content = self.content
        if isinstance(content, str):
            return content
        if content is None:
            return ""
        return joiner.join(p.text or "" for p in content if p.type == "text")


class FunctionDef(_Model):
    """A function tool's definition."""

    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None


class Tool(_Model):
    """An OpenAI function tool: ``{"type": "function", "function": {...}}``."""

    type: str = "function"
    function: FunctionDef
    _raw: dict[str, Any] | None = PrivateAttr(default=None)


def _field_path(loc: tuple) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        elif item in ("str", "list[ContentPart]", "dict[str,any]", "none") or "[" in str(item):
            continue  # pydantic union branch names, not fields
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts)


_MESSAGE_LIST = TypeAdapter(list[Message])


def normalize_messages(messages: Any) -> list[Message]:
    """Validate ``messages`` (dicts or :class:`Message`) into models, naming index and field on error."""
    if not isinstance(messages, (list, tuple)):
        raise InvalidRequest("messages must be a list", field="messages")
    if all(isinstance(raw, (dict, Message)) for raw in messages):
        try:  # the whole list in one pydantic call (models pass through as they are)
            return _MESSAGE_LIST.validate_python(messages)
        except ValidationError:
            pass  # the loop below finds the first bad message and names it
    out: list[Message] = []
    for index, raw in enumerate(messages):
        if isinstance(raw, Message):
            out.append(raw)
            continue
        if not isinstance(raw, dict):
            raise InvalidRequest(f"expected an object, got {type(raw).__name__}", message_index=index)
        try:
            out.append(Message.model_validate(raw))
        except ValidationError as exc:
            err = exc.errors()[0]
            raise InvalidRequest(err["msg"], message_index=index, field=_field_path(err["loc"]) or None) from None
    return out


def normalize_tools(tools: Any) -> list[Tool]:
    """Validate ``tools`` (OpenAI tool dicts or :class:`Tool`) into models."""
    if tools is None:
        return []
    if not isinstance(tools, (list, tuple)):
        raise InvalidRequest("tools must be a list", field="tools")
    out: list[Tool] = []
    for index, raw in enumerate(tools):
        if isinstance(raw, Tool):
            out.append(raw)
            continue
        if isinstance(raw, dict) and "function" not in raw and "name" in raw:
            raw = {"type": "function", "function": raw}  # bare function definitions are accepted too
        try:
            tool = Tool.model_validate(raw)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise InvalidRequest(err["msg"], field=f"tools[{index}]." + _field_path(err["loc"])) from None
        tool._raw = raw
        out.append(tool)
    return out


def tool_to_dict(tool: Tool) -> dict[str, Any]:
    """The tool as a plain dict, exactly as given when it came as a dict (key order matters to templates)."""
    raw = tool.__pydantic_private__.get("_raw")  # tool._raw, without pydantic's slow private-attribute lookup
    if raw is not None and "function" in raw:
        return raw
    return tool.model_dump(exclude_unset=True, by_alias=True)


def function_to_dict(tool: Tool) -> dict[str, Any]:
    """The tool's ``function`` as a plain dict, in its original key order."""
    return tool_to_dict(tool).get("function") or tool.function.model_dump(exclude_unset=True, by_alias=True)


def call_arguments(call: ToolCall, message_index: int, call_index: int) -> dict[str, Any]:
    """The call's arguments as a dict. A JSON string is decoded; an invalid one is an InvalidRequest."""
    args = call.function.arguments
    if isinstance(args, dict):
        return args
    field = f"tool_calls[{call_index}].function.arguments"
    try:
        value = json.loads(args) if args.strip() else {}
    except json.JSONDecodeError as exc:
        raise InvalidRequest(f"arguments are not valid JSON ({exc.msg} at char {exc.pos})",
                             message_index=message_index, field=field) from None
    if not isinstance(value, dict):
        raise InvalidRequest("arguments must be a JSON object", message_index=message_index, field=field)
    return value


Role = Literal["system", "developer", "user", "assistant", "tool"]

__all__ = [
    "ContentPart", "FunctionCall", "ToolCall", "Message", "FunctionDef", "Tool",
    "normalize_messages", "normalize_tools", "tool_to_dict", "function_to_dict", "call_arguments",
]
