"""Checks of request values: text no tokenizer can encode (a lone surrogate), values no JSON encoder can write,
and the decoding of a call's arguments. Renderers call them on validated models (:mod:`toolwire.models`); each
refusal is an :class:`~toolwire.errors.InvalidRequest` naming the message index and field.

Plain functions only (the pydantic classes are in :mod:`toolwire.models`).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Iterable

from .errors import InvalidRequest, UnrepresentableValue

if TYPE_CHECKING:
    from .models import Message, Tool, ToolCall

MAX_REQUEST_DEPTH = 256
"""How deeply a request value (call arguments, tool parameters) may nest. Deeper values, and values that
contain themselves, are refused with the field named: no template or encoder can write them."""

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_INT_DIGITS = 4300  # CPython's int <-> str limit (sys.int_max_str_digits' default), above ~14,000 bits


def lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (U+D800..U+DFFF): text no UTF-8 encoder or tokenizer can encode."""
    return not text.isascii() and not _encodes(text)


def _encodes(text: str) -> bool:
    """Whether ``text`` holds no lone surrogate, the one kind of character UTF-8 cannot encode: encoding it says
    so faster than :data:`_LONE_SURROGATE` searches (about 2x on a short text, 4x on a long one)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
            if type(key) is not str or not (key.isascii() or _encodes(key)):
                return False
        values: Iterable[Any] = item.values()
    elif kind is list or kind is tuple:
        if depth > MAX_REQUEST_DEPTH:
            return False
        values = item
    elif kind is str:
        return item.isascii() or _encodes(item)
    elif kind is int:
        return item.bit_length() <= 14_000
    else:
        return item is None or kind is bool or kind is float  # another type, or a subclass: the full walk decides
    for inner in values:
        inner_kind = type(inner)
        if inner_kind is str:
            if not inner.isascii() and not _encodes(inner):
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


def check_tool_text(tool: Tool, index: int) -> None:
    """Refuse a tool whose name or description holds a lone surrogate, or whose parameters no JSON encoder can
    write (:func:`check_json_value`), naming ``tools[index]``'s field."""
    function = tool.function
    name, description, parameters = function.name, function.description, function.parameters
    if not name.isascii():  # ASCII text holds no lone surrogate
        check_text(name, field=f"tools[{index}].function.name")
    if description and not description.isascii():
        check_text(description, field=f"tools[{index}].function.description")
    if parameters is not None and not _plain_json_value(parameters):  # check_json_value's own first test
        check_json_value(parameters, field=f"tools[{index}].function.parameters")


def check_message_text(messages: list[Message]) -> bool:
    """Refuse message text no tokenizer can encode (a lone surrogate), naming the message and field, and a JSON
    object as the content of a message that is not a tool result. Call arguments are checked where they are
    decoded (:func:`call_arguments`). Returns whether some message's content is not a string (a list of parts,
    a JSON object): what ``Format.render`` then looks into (tool results' parts and media)."""
    structured = False
    for index, m in enumerate(messages):  # most messages need no closer look: ASCII text holds no lone surrogate
        content, reasoning, name, call_id, calls = m.content, m.reasoning_content, m.name, m.tool_call_id, m.tool_calls
        if content.__class__ is not str and content is not None:
            structured = True
            _check_message(index, m)
            continue
        if (not content or content.isascii() or _encodes(content)) \
                and (not reasoning or reasoning.isascii() or _encodes(reasoning)) \
                and (not name or name.isascii() or _encodes(name)) \
                and (not call_id or call_id.isascii() or _encodes(call_id)) \
                and (not calls or _clean_calls(calls)):
            continue
        _check_message(index, m)  # a field to refuse
    return structured


def _clean_calls(calls: list[ToolCall]) -> bool:
    """Whether no name, id or arguments text of ``calls`` holds a lone surrogate."""
    for call in calls:
        call_id, function = call.id, call.function
        call_name, arguments = function.name, function.arguments
        if (not call_name.isascii() and not _encodes(call_name)) \
                or (call_id and not call_id.isascii() and not _encodes(call_id)) \
                or (arguments.__class__ is str and not arguments.isascii() and not _encodes(arguments)):
            return False
    return True


def _check_message(index: int, m: Message) -> None:
    """The per-field check of one message (the first text holding a lone surrogate is refused)."""
    content = m.content
    if isinstance(content, str):
        check_text(content, message_index=index, field="content")
    elif content.__class__ is dict:
        if m.role != "tool":
            raise InvalidRequest("must be a string or a list of content parts (only a tool result's content may be "
                                 "a JSON object)", message_index=index, field="content")
        check_json_value(content, message_index=index, field="content")
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


__all__ = [
    "MAX_REQUEST_DEPTH", "call_arguments", "check_json_value", "check_message_text", "check_text", "check_tool_text",
    "lone_surrogate",
]
