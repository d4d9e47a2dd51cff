"""IBM Granite 4 (4.1, and 4.0 as ``version="4.0"``): ``<|start_of_role|>ROLE<|end_of_role|>…<|end_of_text|>``
turns with ``<tool_call>`` JSON calls.

Wire format: the assistant's content, then per call ``<tool_call>\\n{"name": NAME, "arguments": {...}}\\n</tool_call>``
(a ``\\n`` before every call but a first one with no content before it) - the grammar of
:mod:`toolwire.templates.hermes_json`, parsed by the same parser. Reference: ``Granite-4.1.jinja`` (and
``Granite-4.0.jinja``, which differs only by a default system message when the request has none) as
transformers renders them, ``arguments`` decoded to objects. Quirks kept:

* tools (each ``tojson``) and ``documents`` (an option: a list of JSON objects, each ``tojson``) become
  system-prompt blocks after the request's own system text (joined by ``\\n\\n``);
* content given as parts is its text parts joined by ``\\n`` (other parts are skipped, as the template does);
* tool results go into a ``user`` turn, each ``\\n<tool_response>\\n...\\n</tool_response>``;
* earlier reasoning is never rendered (the template reads no reasoning field).

Refused: roles other than system/user/assistant/tool (the template skips them silently), an empty message
list, and function names the call's JSON could not carry (:class:`~toolwire.errors.UnrepresentableValue`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import ClassVar

from toolwire.errors import UnsupportedByFormat
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, call_arguments, tool_to_dict
from toolwire.templates.json_text import tojson as jinja_json
from toolwire.parsers.granite import MARKERS, Granite4Parser
from toolwire.prompt import PromptBuilder, special_pattern

from .hermes_json import _check_name

M = MARKERS

TOOLS_PREFIX = ("You are a helpful assistant with access to the following tools. You may call one or more tools to "
                "assist with the user query.\n\nYou are provided with function signatures within <tools></tools> "
                "XML tags:\n<tools>")
TOOLS_SUFFIX = ("\n</tools>\n\nFor each tool call, return a json object with function name and arguments within "
                "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
                "<args-json-object>}\n</tool_call>. If a tool does not exist in the provided list of tools, notify "
                "the user that you do not have the ability to fulfill the request.")
DOCUMENTS_PREFIX = ("You are a helpful assistant with access to the following documents. You may use one or more "
                    "documents to assist with the user query.\n\nYou are given a list of documents within "
                    "<documents></documents> XML tags:\n<documents>")
DOCUMENTS_SUFFIX = ("\n</documents>\n\nWrite the response to the user's input by strictly aligning with the facts in "
                    "the provided documents. If the information needed to answer the question is not available in "
                    "the documents, inform the user that the question cannot be answered based on the available "
                    "data.")
DEFAULT_SYSTEM_40 = "You are a helpful assistant. Please ensure responses are professional, accurate, and safe."
"""Granite 4.0's system message when the request has none (4.1 writes no system turn then)."""
_ROLES = ("system", "user", "assistant", "tool")
_specials = lru_cache(maxsize=None)(special_pattern)


def _text(message: Message) -> str:
    """The template's content: a string as is, else the text parts joined by ``\\n`` (an empty text so far
    takes no ``\\n`` before the next part)."""
    if isinstance(message.content, str):
        return message.content
    val = ""
    for part in message.content or ():
        if part.type == "text":
            val += ("\n" if val else "") + (part.text or "")
    return val


class Granite4Format(Format):
    """Granite 4.1 (default) and 4.0 (``version="4.0"``): one grammar, a different default system turn."""

    special_tokens: ClassVar[frozenset[str]] = frozenset(MARKERS.values())
    parser_class = Granite4Parser

    def _open(self, out: PromptBuilder, role: str, index: int | None) -> None:
        out.special(M["role_open"], index).template(role, index).special(M["role_close"], index)

    def _close(self, out: PromptBuilder, index: int | None) -> None:
        out.special(M["end"], index).template("\n", index)

    def _system(self, messages: list[Message], tools: list[Tool], documents: list, version: str,
                out: PromptBuilder) -> None:
        specials = _specials(self.special_tokens)
        blocks: list[tuple[str, list[str], str]] = []
        if tools:
            blocks.append((TOOLS_PREFIX, [jinja_json(tool_to_dict(t)) for t in tools], TOOLS_SUFFIX))
        if documents:
            blocks.append((DOCUMENTS_PREFIX, [jinja_json(d) for d in documents], DOCUMENTS_SUFFIX))
        has_system = bool(messages) and messages[0].role == "system"
        own = _text(messages[0]) if has_system else ""
        if not own and not blocks:
            if version == "4.0":  # 4.0 writes its default whenever the system text comes out empty
                self._open(out, "system", None)
                out.template(DEFAULT_SYSTEM_40)
                self._close(out, None)
            return
        index = 0 if has_system else None
        self._open(out, "system", index)
        out.content(own, index)
        for n, (prefix, items, suffix) in enumerate(blocks):
            if has_system or n:
                out.template("\n\n", index)
            out.fixed(prefix, None, specials)
            for item in items:
                out.template("\n").content(item)
            out.fixed(suffix, None, specials)
        self._close(out, index)

    def _assistant(self, out: PromptBuilder, message: Message, i: int) -> None:
        content = _text(message)
        self._open(out, "assistant", i)
        out.content(content, i)
        for ci, call in enumerate(message.tool_calls or ()):
            name = call.function.name
            _check_name(name, i, ci)
            args = jinja_json(call_arguments(call, i, ci))
            if ci or content:
                out.template("\n", i)
            out.special(M["call_open"], i).template('\n{"name": "', i).content(name, i)
            out.template('", "arguments": ', i).content(args, i).template("}\n", i).special(M["call_close"], i)
        self._close(out, i)

    def _tool_result(self, out: PromptBuilder, messages: list[Message], i: int) -> None:
        if i == 0 or messages[i - 1].role != "tool":
            self._open(out, "user", i)
        out.template("\n", i).special(M["response_open"], i).template("\n", i).content(_text(messages[i]), i)
        out.template("\n", i).special(M["response_close"], i)
        if i == len(messages) - 1 or messages[i + 1].role != "tool":
            self._close(out, i)

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        version = options.extra["version"]  # GraniteOptions checked it
        documents = options.extra.get("documents") or []
        if not messages:
            raise UnsupportedByFormat("the template needs at least one message (it reads messages[0])",
                                      field="messages")
        self._system(messages, tools, list(documents), version, out)
        for i, message in enumerate(messages):
            if message.role not in _ROLES:
                raise UnsupportedByFormat(f"the template skips {message.role!r} messages (it renders "
                                          f"{', '.join(_ROLES)})", message_index=i, field="role")
            if message.role == "user" or (message.role == "system" and i > 0):
                self._open(out, message.role, i)
                out.content(_text(message), i)
                self._close(out, i)
            elif message.role == "assistant":
                self._assistant(out, message, i)
            elif message.role == "tool":
                self._tool_result(out, messages, i)
        if options.add_generation_prompt:
            self._open(out, "assistant", None)
        return False


FORMATS: dict[str, Format] = {f.name: f for f in (Granite4Format(),)}
