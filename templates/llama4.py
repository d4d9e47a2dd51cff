"""Llama 4 (Scout / Maverick Instruct, the transformers default template): ``<|header_start|>ROLE<|header_end|>``
turns ending ``<|eot|>``; a turn with calls is ``<|python_start|>CONTENT<|python_end|>`` then the calls as
``{"name": NAME, "parameters": {...}}`` objects written back to back.

Reference: ``Llama-4-transformers-default.jinja`` as transformers renders it, ``arguments`` decoded to objects.
Quirks kept: the system turn exists only when the request has a system message (its text trimmed) and says
``Environment: ipython`` whenever tools exist; custom tools go into the first message after it
(``tools_in_user_message``, default true, its text trimmed) or, with ``tools_in_user_message=False``, into the
system turn, each ``tojson(indent=4)``; other message text is not trimmed; image parts are ``<|image|>``;
tool results are printed as JSON (a string result becomes a JSON string); the date the template computes is
never printed. Earlier reasoning is never rendered (the template reads no reasoning field).

Refused where the template fails or silently loses data: no message to put the tools in, a tool result
without content, a system message whose content has parts beyond one text part (the template keeps only the
first), parts in the message that carries the tools (it prints their Python repr), an assistant message with
an empty ``tool_calls`` list (the template drops the whole message), and function names the call's JSON
could not carry.
"""

from __future__ import annotations

from typing import Any

from toolwire.errors import UnsupportedByFormat
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, call_arguments, tool_to_dict
from toolwire.templates.json_text import tojson as json_dumps, tojson_indented
from toolwire.parsers.llama4 import MARKERS, Llama4Parser
from toolwire.prompt import PromptBuilder

from .hermes_json import _check_name
from .llama import write_header

M = MARKERS
CALL_FORMAT = 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.'
USER_TOOLS_PREAMBLE = ("Given the following functions, please respond with a JSON for a function call "
                       "with its proper arguments that best answers the given prompt.\n\n")
SYSTEM_TOOLS_PREAMBLE = ("You have access to the following functions. To call a function, please respond "
                         "with JSON for a function call.")
_TEMPLATE_ROLES = frozenset({"system", "user", "assistant"})  # other roles' names are written as request text
HEADER_OPEN, HEADER_CLOSE, EOT = M["header_open"], M["header_close"], M["eot"]


_HEADER = (HEADER_OPEN, HEADER_CLOSE)


def _header(out: PromptBuilder, role: str, index: int | None, *, role_kind: str = "template") -> None:
    write_header(out, _HEADER, role, index, role_kind)


def _tool_list(tools: list[Tool], out: PromptBuilder, index: int | None) -> None:
    put = out.appender()
    put(("template", CALL_FORMAT + "Do not use variables.\n\n", index))
    blank = ("template", "\n\n", index)
    for tool in tools:
        put(("content", tojson_indented(tool_to_dict(tool)), index))
        put(blank)


def _parts(out: PromptBuilder, message: Message, index: int) -> None:
    """Message content as the template writes it: a string as is; parts as text, images as ``<|image|>``."""
    content = message.content
    if isinstance(content, str):
        out.content(content, index)
        return
    for part in content or ():
        if part.type == "image":
            out.special(M["image"], index)
        elif part.type == "text":
            out.content(part.text or "", index)


def _trimmed(message: Message, index: int, what: str) -> str:
    content = message.content
    if content is None or isinstance(content, str):
        return (content or "").strip()
    if what == "system" and len(content) == 1 and content[0].type == "text":
        return (content[0].text or "").strip()
    raise UnsupportedByFormat(f"the template reads {'only the first part of' if what == 'system' else 'as a string'}"
                              f" the {what} message's content; give it as one string", message_index=index,
                              field="content")


class Llama4Format(Format):
    """Llama 4 Instruct with JSON custom tools."""
    user_media = frozenset({"image"})
    tool_result_json = True  # the template writes a result with tojson

    parser_class = Llama4Parser

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        in_user = bool(options.extra.get("tools_in_user_message", True))
        rest = list(enumerate(messages))
        out.special(M["bos"])
        if rest and rest[0][1].role == "system":
            index, first = rest.pop(0)
            system = _trimmed(first, index, "system")
            _header(out, "system", index)
            if tools:
                out.template("Environment: ipython\n", index)
            if tools and not in_user:
                out.template(SYSTEM_TOOLS_PREAMBLE, index)
                _tool_list(tools, out, index)
            out.content(system, index).special(M["eot"], index)
        if tools and in_user:
            if not rest:
                raise UnsupportedByFormat("Cannot put tools in the first user message when there's no first user "
                                          "message!", field="messages")
            index, first = rest.pop(0)
            _header(out, "user", index)
            out.template(USER_TOOLS_PREAMBLE, index)
            _tool_list(tools, out, index)
            out.content(_trimmed(first, index, "first (tools-carrying)"), index).special(M["eot"], index)
        put = out.appender()
        for index, msg in rest:
            role = msg.role
            if role in ("tool", "ipython"):
                self._tool_result(out, msg, index)
            elif msg.tool_calls is not None:
                self._calls(out, msg, index)
            else:
                _header(out, role, index, role_kind="template" if role in _TEMPLATE_ROLES else "content")
                _parts(out, msg, index)
                put(("special", EOT, index))
        if options.add_generation_prompt:
            _header(out, "assistant", None)
        return False

    @staticmethod
    def _tool_result(out: PromptBuilder, msg: Message, index: int) -> None:
        content = msg.content
        if content is None:
            raise UnsupportedByFormat("the template prints a tool result's content as JSON and fails without it",
                                      message_index=index, field="content")
        payload: Any = content if content.__class__ is not list else [p.model_dump(exclude_none=True) for p in content]
        _header(out, "ipython", index)
        out.content(json_dumps(payload), index).special(M["eot"], index)

    @staticmethod
    def _calls(out: PromptBuilder, msg: Message, index: int) -> None:
        if not msg.tool_calls:
            raise UnsupportedByFormat("the template drops a message whose tool_calls list is empty (content "
                                      "included); leave tool_calls out", message_index=index, field="tool_calls")
        _header(out, "assistant", index)
        put = out.appender()
        put(("special", M["python_start"], index))
        _parts(out, msg, index)
        put(("special", M["python_end"], index))
        for ci, call in enumerate(msg.tool_calls):
            name = call.function.name
            _check_name(name, index, ci)
            args = call_arguments(call, index, ci)
            put(("template", '{"name": "', index))
            if name:
                put(("content", name, index))
            put(("template", '", "parameters": ', index))
            put(("content", json_dumps(args), index))
            put(("template", "}", index))
        put(("special", EOT, index))


FORMATS: dict[str, Format] = {f.name: f for f in (Llama4Format(),)}
