"""Typed request model: messages, tool calls and tool definitions (OpenAI Chat Completions shape).

Renderers accept plain dicts or these models; :func:`normalize_messages` and :func:`normalize_tools`
turn either into validated models and report problems as :class:`~toolwire.errors.InvalidRequest`
naming the message index and field.
"""

from __future__ import annotations

import json
import re
from operator import attrgetter
from typing import Any, Iterable, Literal, Union

from pydantic import BaseModel, ConfigDict, PrivateAttr, TypeAdapter, ValidationError, model_validator
from pydantic_core import SchemaValidator, core_schema

from .errors import InvalidRequest, UnrepresentableValue


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
        return alias_reasoning(data)

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
_TOOL_LIST = TypeAdapter(list[Tool])


def _plain_message_list() -> SchemaValidator | None:
    """A validator of ``list[Message]`` without Message's Python ``before`` step (:func:`alias_reasoning`), which
    costs about as much as the rest of a message's validation: :func:`normalize_messages` applies that step first,
    in Python, to the few dicts that carry an alias field. It is Message's own model schema with the step taken
    out, so it builds the very same models. (pydantic reuses a complete model's validator wherever its schema
    appears, so the class is marked incomplete while this one is built.) None, and the plain adapter is used, if
    pydantic lays the schema out otherwise or the two disagree on a probe request."""
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
    attributes itself, to the dict given. Checked on a probe as :func:`_plain_message_list` is."""
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
    if _PLAIN_TOOLS is not None and _usual_tools(tools):
        try:
            out = _PLAIN_TOOLS.validate_python(tools)
        except ValidationError:
            pass  # the loop below names the bad tool and field
    if out:
        for index, (tool, raw) in enumerate(zip(out, tools)):
            _set_slot(tool, "__pydantic_private__", {"_raw": raw})  # what model_post_init + tool._raw = raw leave
            _check_tool_text(tool, index)
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
        tool.__pydantic_private__["_raw"] = raw  # tool._raw = raw, without pydantic's __setattr__
        out.append(tool)
    for index, tool in enumerate(out):
        _check_tool_text(tool, index)
    return out


def _usual_tools(tools: list | tuple) -> bool:
    """Whether every tool is a plain dict with a ``function`` (the shape the plain validator takes whole)."""
    for raw in tools:
        if raw.__class__ is not dict or "function" not in raw:
            return False
    return True


def _check_tool_text(tool: Tool, index: int) -> None:
    """Refuse a tool whose name or description holds a lone surrogate, or whose parameters no JSON encoder can
    write (:func:`check_json_value`)."""
    fn = tool.function
    name, description, parameters = fn.name, fn.description, fn.parameters
    if not name.isascii():  # ASCII text holds no lone surrogate
        check_text(name, field=f"tools[{index}].function.name")
    if description and not description.isascii():
        check_text(description, field=f"tools[{index}].function.description")
    if parameters is not None and not _plain_json_value(parameters):  # check_json_value's own first test
        check_json_value(parameters, field=f"tools[{index}].function.parameters")


def check_message_text(messages: list[Message]) -> None:
    """Refuse message text no tokenizer can encode (a lone surrogate), naming the message and field. Call
    arguments are checked where they are decoded (:func:`call_arguments`)."""
    for index, m in enumerate(messages):  # most messages need no closer look: ASCII text holds no lone surrogate
        content, reasoning, name, call_id, calls = _text_fields(m)
        if (not content or content.__class__ is str and (content.isascii() or _find_surrogate(content) is None)) \
                and (not reasoning or reasoning.isascii() or _find_surrogate(reasoning) is None) \
                and (not name or name.isascii() or _find_surrogate(name) is None) \
                and (not call_id or call_id.isascii() or _find_surrogate(call_id) is None) \
                and (not calls or _clean_calls(calls)):
            continue
        _check_message(index, m)  # list content (not looked into above), or a field to refuse


_text_fields = attrgetter("content", "reasoning_content", "name", "tool_call_id", "tool_calls")
"""The fields of a message :func:`check_message_text` reads, in one call. (A pydantic model's attribute reads are
slow in bytecode, which cannot specialize them: ``BaseModel`` has a ``__getattr__``; attrgetter reads them faster.)"""
_call_fields = attrgetter("id", "function")
_function_fields = attrgetter("name", "arguments")


def _clean_calls(calls: list[ToolCall]) -> bool:
    """Whether no name, id or arguments text of ``calls`` holds a lone surrogate."""
    for call in calls:
        call_id, function = _call_fields(call)
        call_name, arguments = _function_fields(function)
        if (not call_name.isascii() and _find_surrogate(call_name)) \
                or (call_id and not call_id.isascii() and _find_surrogate(call_id)) \
                or (arguments.__class__ is str and not arguments.isascii() and _find_surrogate(arguments)):
            return False
    return True


def _check_message(index: int, m: Message) -> None:
    """The per-field check of one message (the first text holding a lone surrogate is refused)."""
    content = m.content
    if isinstance(content, str):
        check_text(content, message_index=index, field="content")
    elif content:
        for n, part in enumerate(content):
            if part.text:
                check_text(part.text, message_index=index, field=f"content[{n}].text")
    for name in ("reasoning_content", "name", "tool_call_id"):
        value = getattr(m, name)
        if value:
            check_text(value, message_index=index, field=name)
    for n, call in enumerate(m.tool_calls or ()):
        check_text(call.function.name, message_index=index, field=f"tool_calls[{n}].function.name")
        if call.id:
            check_text(call.id, message_index=index, field=f"tool_calls[{n}].id")
        if isinstance(call.function.arguments, str):
            check_text(call.function.arguments, message_index=index, field=f"tool_calls[{n}].function.arguments")


def tool_to_dict(tool: Tool) -> dict[str, Any]:
    """The tool as a plain dict, exactly as given when it came as a dict (key order matters to templates)."""
    raw = tool.__pydantic_private__.get("_raw")  # tool._raw, without pydantic's slow private-attribute lookup
    if raw is not None and "function" in raw:
        return raw
    return tool.model_dump(exclude_unset=True, by_alias=True)


def function_to_dict(tool: Tool) -> dict[str, Any]:
    """The tool's ``function`` as a plain dict, in its original key order."""
    return tool_to_dict(tool).get("function") or tool.function.model_dump(exclude_unset=True, by_alias=True)


MAX_REQUEST_DEPTH = 256
"""How deeply a request value (call arguments, tool parameters) may nest. Deeper values, and values that
contain themselves, are refused with the field named: no template or encoder can write them."""

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_find_surrogate = _LONE_SURROGATE.search
_INT_DIGITS = 4300  # CPython's int <-> str limit (sys.int_max_str_digits' default), above ~14,000 bits


def lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (U+D800..U+DFFF): text no UTF-8 encoder or tokenizer can encode."""
    return not text.isascii() and _LONE_SURROGATE.search(text) is not None


def check_text(text: str, *, message_index: int | None = None, field: str | None = None) -> None:
    """Refuse request text holding a lone surrogate (the rule for every renderer and ``token_ids``)."""
    if lone_surrogate(text):
        at = _LONE_SURROGATE.search(text).start()
        raise UnrepresentableValue(f"holds a lone surrogate U+{ord(text[at]):04X} at char {at}, which no tokenizer can "
                                   "encode (pass the text as valid Unicode)", message_index=message_index, field=field)


def check_json_value(value: Any, *, message_index: int | None = None, field: str) -> None:
    """Refuse a request value that no JSON encoder can write: a type JSON has no place for (set, bytes ...),
    a non-string key, nesting deeper than :data:`MAX_REQUEST_DEPTH` (a value that contains itself nests
    forever), an integer of more than 4300 digits, or text with a lone surrogate. Iterative: a value
    nested a million levels deep is refused, never a RecursionError."""
    if _plain_json_value(value):
        return
    stack: list[tuple[Any, int, str]] = [(value, 1, "")]
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, str):
            if lone_surrogate(item):
                check_text(item, message_index=message_index, field=field + path)
        elif isinstance(item, (dict, list, tuple)):
            if depth > MAX_REQUEST_DEPTH:
                raise UnrepresentableValue(f"nests deeper than {MAX_REQUEST_DEPTH} levels (or contains itself)",
                                           message_index=message_index, field=field)
            if isinstance(item, dict):
                for key, inner in item.items():
                    if not isinstance(key, str):
                        raise UnrepresentableValue(f"has a key of type {type(key).__name__} ({key!r}); JSON keys are "
                                                   "strings", message_index=message_index, field=field + path)
                    stack.append((inner, depth + 1, f"{path}.{key}"))
                    if lone_surrogate(key):
                        check_text(key, message_index=message_index, field=field + path)
            else:
                stack.extend((inner, depth + 1, f"{path}[{i}]") for i, inner in enumerate(item))
        elif isinstance(item, int) and not isinstance(item, bool):
            if item.bit_length() > 14_000 and _too_many_digits(item):
                raise UnrepresentableValue(f"holds an integer of more than {_INT_DIGITS} digits",
                                           message_index=message_index, field=field + path)
        elif item is not None and not isinstance(item, (bool, float)):
            raise UnrepresentableValue(f"holds a {type(item).__name__}, which is not a JSON value",
                                       message_index=message_index, field=field + path)


def _plain_json_value(item: Any, depth: int = 1) -> bool:
    """Whether :func:`check_json_value` has nothing to refuse in ``item`` (at nesting ``depth``): the same rules,
    without building the field path of every item (the path is only needed to word a refusal, so a value that
    fails is walked again). Recursive, but never past MAX_REQUEST_DEPTH + 1 levels; the strings and scalars inside
    a container are decided in its own call."""
    kind = type(item)
    if kind is dict:
        if depth > MAX_REQUEST_DEPTH:
            return False
        for key in item:
            if type(key) is not str or not (key.isascii() or _find_surrogate(key) is None):
                return False
        values: Iterable[Any] = item.values()
    elif kind is list or kind is tuple:
        if depth > MAX_REQUEST_DEPTH:
            return False
        values = item
    elif kind is str:
        return item.isascii() or _find_surrogate(item) is None
    elif kind is int:
        return item.bit_length() <= 14_000
    else:
        return item is None or kind is bool or kind is float  # another type, or a subclass: the full walk decides
    for inner in values:
        inner_kind = type(inner)
        if inner_kind is str:
            if not inner.isascii() and _find_surrogate(inner) is not None:
                return False
        elif not (inner is None or inner_kind is bool or inner_kind is float) and not _plain_json_value(
                inner, depth + 1):
            return False
    return True


def _too_many_digits(number: int) -> bool:
    try:
        str(number)
    except ValueError:  # CPython refuses to write it (sys.int_max_str_digits)
        return True
    return False


def call_arguments(call: ToolCall, message_index: int, call_index: int) -> dict[str, Any]:
    """The call's arguments as a dict. A JSON string is decoded; an invalid one is an InvalidRequest, and so is
    a value no encoder can write back (:func:`check_json_value`)."""
    args = call.function.arguments
    if isinstance(args, dict):
        check_json_value(args, message_index=message_index, field=_arguments_field(call_index))
        return args
    value = _json_object(args)  # the usual text: one JSON object, nothing around it
    if value is None:
        value = _loaded_arguments(args, message_index, _arguments_field(call_index))
    if not isinstance(value, dict):
        raise InvalidRequest("arguments must be a JSON object", message_index=message_index,
                             field=_arguments_field(call_index))
    if not (len(args) <= _SHALLOW_TEXT and args.isascii() and "\\u" not in args):
        check_json_value(value, message_index=message_index, field=_arguments_field(call_index))
    # else: decoded from short ASCII JSON text without escapes, so it holds JSON types only, no surrogate and no
    # container deeper than MAX_REQUEST_DEPTH (that takes more than _SHALLOW_TEXT brackets): nothing to refuse
    return value


def _arguments_field(call_index: int) -> str:
    """The request field of a call's arguments (worded only for a refusal or a closer look)."""
    return f"tool_calls[{call_index}].function.arguments"


_scan_json = json.JSONDecoder().scan_once  # what json.loads runs (its default decoder's scanner), without the wrapper


def _json_object(text: str) -> dict[str, Any] | None:
    """What ``json.loads(text)`` returns when ``text`` is one JSON object with nothing around it (the usual call
    arguments), read by the decoder's own scanner; None for any other text, which :func:`_loaded_arguments`
    decodes (and words any error) as before."""
    if text[:1] != "{":
        return None
    try:
        value, end = _scan_json(text, 0)
    except (StopIteration, ValueError, RecursionError):  # json.loads raises (or words) these: let it
        return None
    return value if end == len(text) else None


def _loaded_arguments(args: str, message_index: int, field: str) -> Any:
    """``json.loads(args)`` (blank text is ``{}``), its failures refused as request errors naming the field."""
    try:
        return json.loads(args) if args.strip() else {}
    except json.JSONDecodeError as exc:
        raise InvalidRequest(f"arguments are not valid JSON ({exc.msg} at char {exc.pos})",
                             message_index=message_index, field=field) from None
    except RecursionError:
        raise UnrepresentableValue(f"arguments nest deeper than {MAX_REQUEST_DEPTH} levels",
                                   message_index=message_index, field=field) from None
    except ValueError as exc:  # an integer past CPython's digit limit
        raise UnrepresentableValue(f"arguments cannot be decoded: {exc}", message_index=message_index,
                                   field=field) from None


_SHALLOW_TEXT = 2 * MAX_REQUEST_DEPTH


Role = Literal["system", "developer", "user", "assistant", "tool"]

__all__ = [
    "ContentPart", "FunctionCall", "ToolCall", "Message", "FunctionDef", "Tool",
    "normalize_messages", "normalize_tools", "tool_to_dict", "function_to_dict", "call_arguments",
    "check_json_value", "check_message_text", "check_text", "lone_surrogate", "MAX_REQUEST_DEPTH",
]
