"""Typed request model: messages, tool calls and tool definitions (OpenAI Chat Completions shape).

Renderers accept plain dicts or these models; :func:`normalize_messages` and :func:`normalize_tools`
turn either into validated models and report problems as :class:`~toolwire.errors.InvalidRequest`
naming the message index and field.
"""

from __future__ import annotations

import json
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, PrivateAttr, TypeAdapter, ValidationError, model_validator
from pydantic_core import SchemaValidator, core_schema

from .errors import InvalidRequest, InvalidToolResult
from .request_values import (MAX_REQUEST_DEPTH, call_arguments, check_json_value, check_message_text, check_text,
                             check_tool_text, lone_surrogate)


REASONING_ALIASES = ("thinking", "reasoning")
"""Other names a message's reasoning may come under (after ``reasoning_content``), as in transformers."""


def alias_reasoning(data: Any) -> Any:
    """What :class:`Message` validates for ``data``: when ``reasoning_content`` is missing or None, the first string
    among the :data:`REASONING_ALIASES` fields becomes it (the alias field stays, as an extra field)."""
    if isinstance(data, dict) and data.get("reasoning_content") is None:
        for key in REASONING_ALIASES:
            alias = data.get(key)
            if isinstance(alias, str):
                return {**data, "reasoning_content": alias}
    return data


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
    """One chat message. Unknown extra fields (``task``, ``wo_eos`` ...) are kept for formats that use them.

    ``content`` is a string, a list of content parts, None, or (a tool result's structured content) a JSON
    object, which only tool messages may carry (``Format.render`` refuses it elsewhere)."""

    role: str
    content: Union[str, list[ContentPart], dict[str, Any], None] = None
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _alias_reasoning(cls, data: Any) -> Any:
        """Reasoning may come as ``reasoning_content`` or, as transformers also accepts, ``thinking`` or
        ``reasoning``; the first string found becomes ``reasoning_content``, so renderers read one field."""
        return alias_reasoning(data)

    def text(self, joiner: str = "\n\n") -> str:
        """The content as one string: ``None`` is empty, text parts are joined by ``joiner``, a JSON object is its
        JSON text."""
        content = self.content
        if isinstance(content, str):
            return content
        if content is None:
            return ""
        if content.__class__ is dict:
            return json.dumps(content, ensure_ascii=False)
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
_TOOL_LIST = TypeAdapter(list[Tool])


def _plain_message_list() -> SchemaValidator | None:
    """A validator of ``list[Message]`` without Message's Python ``before`` step (:func:`alias_reasoning`), which
    costs about as much as the rest of a message's validation: :func:`normalize_messages` applies that step first,
    in Python, to the few dicts that carry an alias field. It is Message's own model schema with the step taken
    out, so it builds the very same models. (pydantic reuses a complete model's validator wherever its schema
    appears, so the class is marked incomplete while this one is built.) None, and the plain adapter is used, if
    pydantic lays the schema out otherwise or the two disagree on a probe request. Kept because it saves 12-16 % of
    ``normalize_messages`` (``bench/bench_tricks.py``); ``tests/core/test_fast_paths.py`` runs the plain adapter against
    it over the golden render requests."""
    try:
        schema = dict(Message.__pydantic_core_schema__)
    except (TypeError, ValueError):  # not a built schema (a pydantic that builds it later)
        return None
    inner = schema.get("schema") or {}
    if schema.get("type") != "model" or inner.get("type") != "function-before" or not Message.__pydantic_complete__:
        return None
    schema["schema"] = inner["schema"]
    Message.__pydantic_complete__ = False
    try:
        validator = SchemaValidator(core_schema.list_schema(schema))
    except Exception:  # noqa: BLE001 - a pydantic whose schemas this does not fit: the plain adapter it is
        return None
    finally:
        Message.__pydantic_complete__ = True
    probe = [{"role": "system", "content": "s", "x": [1]}, {"role": "user", "content": [{"type": "text", "text": "t"}]},
             {"role": "assistant", "content": None, "thinking": "r", "tool_calls": [
                 {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}, "index": 0},
                 {"function": {"name": "g", "arguments": {"a": 1}}}]},
             {"role": "tool", "tool_call_id": "c", "content": "r", "reasoning_content": None, "reasoning": "x"}]
    probe.append(_MESSAGE_LIST.validate_python([probe[0]])[0])
    expected = _MESSAGE_LIST.validate_python(probe)
    try:
        got = validator.validate_python([alias_reasoning(raw) for raw in probe])
    except ValidationError:
        return None
    return validator if _same_state(got, expected) and got[-1] is probe[-1] else None


def _same_state(a: Any, b: Any) -> bool:
    """Whether two values hold the same models: type, field values in order, fields set, extras, privates."""
    if isinstance(a, list):
        return type(b) is list and len(a) == len(b) and all(map(_same_state, a, b))
    if isinstance(a, BaseModel):
        return (type(a) is type(b) and list(a.__dict__) == list(b.__dict__)
                and all(_same_state(a.__dict__[k], b.__dict__[k]) for k in a.__dict__)
                and a.__pydantic_fields_set__ == b.__pydantic_fields_set__
                and a.__pydantic_extra__ == b.__pydantic_extra__ and a.__pydantic_private__ == b.__pydantic_private__)
    return type(a) is type(b) and a == b


_PLAIN_MESSAGES = _plain_message_list()

_set_slot = object.__setattr__


def _plain_tool_list() -> SchemaValidator | None:
    """A validator of ``list[Tool]`` without Tool's Python ``model_post_init`` (which only sets the private
    ``_raw`` to None, and costs about as much as validating the tool): :func:`normalize_tools` sets the private
    attributes itself, to the dict given. Checked on a probe as :func:`_plain_message_list` is. Kept because it saves
    about 20 % of ``normalize_tools`` (``bench/bench_tricks.py``), tested as :func:`_plain_message_list` is."""
    try:
        schema = dict(Tool.__pydantic_core_schema__)
    except (TypeError, ValueError):  # not a built schema (a pydantic that builds it later)
        return None
    if schema.get("type") != "model" or schema.get("post_init") != "model_post_init" or not Tool.__pydantic_complete__:
        return None
    del schema["post_init"]
    Tool.__pydantic_complete__ = False
    try:
        validator = SchemaValidator(core_schema.list_schema(schema))
    except Exception:  # noqa: BLE001 - as in _plain_message_list
        return None
    finally:
        Tool.__pydantic_complete__ = True
    probe = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}, "x": 1},
             {"function": {"name": "g", "description": "d"}}]
    expected = _TOOL_LIST.validate_python(probe)
    for tool, raw in zip(expected, probe):
        tool._raw = raw
    try:
        got = validator.validate_python(probe)
    except ValidationError:
        return None
    for tool, raw in zip(got, probe):
        _set_slot(tool, "__pydantic_private__", {"_raw": raw})
    return validator if _same_state(got, expected) else None


_PLAIN_TOOLS = _plain_tool_list()


def normalize_messages(messages: Any) -> list[Message]:
    """Validate ``messages`` (dicts or :class:`Message`) into models, naming index and field on error."""
    if not isinstance(messages, (list, tuple)):
        raise InvalidRequest("messages must be a list", field="messages")
    models, objects, aliased = True, True, False  # one pass: what the list holds
    for raw in messages:
        if raw.__class__ is dict:
            models = False
            if "thinking" in raw or "reasoning" in raw:
                aliased = True
        elif not isinstance(raw, Message):
            models = False
            if not isinstance(raw, dict):
                objects = False
                break
            aliased = True  # a dict subclass: alias_reasoning decides
    if models:
        return list(messages)  # already models: what validation would return (pydantic does not revalidate them)
    if objects:
        try:  # the whole list in one pydantic call (models pass through as they are)
            if _PLAIN_MESSAGES is None:
                return _MESSAGE_LIST.validate_python(messages)
            if not aliased:
                return _PLAIN_MESSAGES.validate_python(messages)
            return _PLAIN_MESSAGES.validate_python([alias_reasoning(raw) if isinstance(raw, dict) and (
                "thinking" in raw or "reasoning" in raw) else raw for raw in messages])
        except ValidationError:
            pass  # the loop below finds the first bad message and names it
    out: list[Message] = []
    for index, raw in enumerate(messages):
        if isinstance(raw, Message):
            out.append(raw)
            continue
        if not isinstance(raw, dict) and callable(getattr(raw, "to_tool_message", None)):
            raw = _tool_result_message(raw, out, index)  # a toolwire.ToolResult
        if not isinstance(raw, dict):
            raise InvalidRequest(f"expected an object, got {type(raw).__name__}", message_index=index)
        try:
            out.append(Message.model_validate(raw))
        except ValidationError as exc:
            err = exc.errors()[0]
            raise InvalidRequest(err["msg"], message_index=index, field=_field_path(err["loc"]) or None) from None
    return out


def _tool_result_message(result: Any, earlier: list[Message], index: int) -> dict[str, Any]:
    """A :class:`toolwire.ToolResult` in a request: its tool message, once its call id is found among the calls of the
    messages before it (:class:`~toolwire.errors.InvalidToolResult` naming ``tool_call_id`` otherwise)."""
    message = result.to_tool_message()
    call_id = message.get("tool_call_id")
    for m in reversed(earlier):
        if m.tool_calls and any(c.id == call_id for c in m.tool_calls):
            return message
    raise InvalidToolResult(f"this result answers call {call_id!r}, which no earlier assistant message makes",
                            message_index=index, field="tool_call_id")


def normalize_tools(tools: Any) -> list[Tool]:
    """Validate ``tools`` (OpenAI tool dicts or :class:`Tool`) into models."""
    if tools is None:
        return []
    if not isinstance(tools, (list, tuple)):
        raise InvalidRequest("tools must be a list", field="tools")
    out: list[Tool] = []
    if _usual_tools(tools):
        try:  # the whole list in one pydantic call
            if _PLAIN_TOOLS is None:
                out = _TOOL_LIST.validate_python(tools)
                for tool, raw in zip(out, tools):
                    tool._raw = raw
            else:
                out = _PLAIN_TOOLS.validate_python(tools)
                for tool, raw in zip(out, tools):
                    _set_slot(tool, "__pydantic_private__", {"_raw": raw})  # = model_post_init + tool._raw = raw
        except ValidationError:
            out = []  # the loop below names the bad tool and field
    if out:
        for index, tool in enumerate(out):
            check_tool_text(tool, index)
        return out
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
    for index, tool in enumerate(out):
        check_tool_text(tool, index)
    return out


def _usual_tools(tools: list | tuple) -> bool:
    """Whether every tool is a plain dict with a ``function`` (the shape the plain validator takes whole)."""
    for raw in tools:
        if raw.__class__ is not dict or "function" not in raw:
            return False
    return True


def tool_to_dict(tool: Tool) -> dict[str, Any]:
    """The tool as a plain dict, exactly as given when it came as a dict (key order matters to templates)."""
    raw = tool.__pydantic_private__.get("_raw")  # tool._raw without pydantic's __getattr__ (bench/bench_tricks.py)
    if raw is not None and "function" in raw:
        return raw
    return tool.model_dump(exclude_unset=True, by_alias=True)


def function_to_dict(tool: Tool) -> dict[str, Any]:
    """The tool's ``function`` as a plain dict, in its original key order."""
    return tool_to_dict(tool).get("function") or tool.function.model_dump(exclude_unset=True, by_alias=True)


Role = Literal["system", "developer", "user", "assistant", "tool"]

__all__ = [
    "ContentPart", "FunctionCall", "ToolCall", "Message", "FunctionDef", "Tool",
    "normalize_messages", "normalize_tools", "tool_to_dict", "function_to_dict", "call_arguments",
    "check_json_value", "check_message_text", "check_text", "lone_surrogate", "MAX_REQUEST_DEPTH",
]
