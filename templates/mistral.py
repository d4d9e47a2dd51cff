"""Mistral Small 3.2: ``[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{json}`` calls with 9-character call ids.

Reference: ``Mistral-Small-3.2-24B-Instruct-2506.jinja`` (mistralai/Mistral-Small-3.2-24B-Instruct-2506) as
transformers renders it, with ``arguments`` decoded to objects. Quirks kept:

* the default system prompt names today's date (``current_date``, else the local date);
* ``[AVAILABLE_TOOLS]`` goes before the last user message (and before any earlier user message equal to it);
* roles after the optional system message must alternate user/assistant (tool calls and results aside);
* assistant text next to tool calls is dropped; there is no generation prompt (``[/INST]`` ends the prompt).

Call ids must be exactly 9 ASCII letters or digits (what ``mistral-common`` generates and validates); the
template itself refuses any other length.
"""

from __future__ import annotations

from datetime import date

from toolwire.errors import InvalidRequest, UnsupportedByFormat
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, call_arguments, tool_to_dict
from toolwire.templates.json_text import tojson as json_dumps
from toolwire.parsers.mistral import CALL_ID_LENGTH, MARKERS, MistralParser, is_call_id
from toolwire.prompt import PromptBuilder

M = MARKERS

DEFAULT_SYSTEM = (
    "You are Mistral Small 3, a Large Language Model (LLM) created by Mistral AI, a French startup headquartered in "
    "Paris.\nYour knowledge base was last updated on 2023-10-01. The current date is {today}.\n\nWhen you're not sure "
    "about some information or when the user's request requires up-to-date or specific data, you must use the "
    "available tools to fetch the information. Do not hesitate to use tools whenever they can provide a more accurate "
    "or complete response. If no relevant tools are available, then clearly state that you don't have the information "
    "and avoid making up anything.\n\nIf the user's question is not clear, ambiguous, or does not provide enough "
    "context for you to accurately answer the question, you do not try to answer it right away and you rather ask "
    "the user to clarify their request (e.g. \"What are some good restaurants around me?\" => \"Where are you?\" or "
    "\"When is the next flight to Tokyo\" => \"Where do you travel from?\").\nYou are always very attentive to dates, "
    "and when asked about information at specific dates, you discard information that is at another date.\nYou "
    "follow these instructions in all languages, and always respond to the user in the language they use or "
    "request.\nNext sections describe the capabilities that you have.\n\n# WEB BROWSING INSTRUCTIONS\n\nYou cannot "
    "perform any web search or access internet to open URLs, links etc. If it seems like the user is expecting you "
    "to do so, you clarify the situation and ask the user to copy paste the text directly in the chat.\n\n"
    "# MULTI-MODAL INSTRUCTIONS\n\nYou have the ability to read images, but you cannot generate images. You also "
    "cannot transcribe audio files or videos.\nYou cannot read nor transcribe audio files or videos.\n\n"
    "# TOOL CALLING INSTRUCTIONS\n\nYou may have access to tools that you can use to fetch information or perform "
    "actions. You must use these tools in the following situations:\n\n1. When the request requires up-to-date "
    "information.\n2. When the request requires specific data that you do not have in your knowledge base.\n3. When "
    "the request involves actions that you cannot perform without tools.\n\nAlways prioritize using tools to "
    "provide the most accurate and helpful response. If tools are not available, inform the user that you cannot "
    "perform the requested action at the moment."
)


def check_call_id(value: object, message_index: int, field: str) -> str:
    """A Mistral call id: exactly 9 ASCII letters/digits. Anything else is refused, naming message and field."""
    if not isinstance(value, str) or len(value) != CALL_ID_LENGTH:
        raise UnsupportedByFormat(f"Tool call IDs should be alphanumeric strings with length 9! (got {value!r})",
                                  message_index=message_index, field=field)
    if not is_call_id(value):
        raise InvalidRequest(f"Tool call IDs should be alphanumeric strings with length 9! ({value!r} has other "
                             f"characters)", message_index=message_index, field=field)
    return value


def _blocks(msg: Message, out: PromptBuilder, index: int, who: str) -> None:
    """String content as is; text blocks in order, images as ``[IMG]``; other block types are refused."""
    if msg.content is None or isinstance(msg.content, str):
        out.content(msg.content or "", index)
        return
    for n, part in enumerate(msg.content):
        if part.type == "text":
            out.content(part.text or "", index)
        elif part.type in ("image", "image_url"):
            out.special(M["image"], index)
        else:
            raise UnsupportedByFormat(f"Only text and image blocks are supported in {who} content!",
                                      message_index=index, field=f"content[{n}].type")


def _first_text(msg: Message) -> str:
    if msg.content is None or isinstance(msg.content, str):
        return msg.content or ""
    return (msg.content[0].text or "") if msg.content else ""


class MistralSmall32Format(Format):
    """Mistral-Small-3.2-24B-Instruct-2506."""
    user_media = frozenset({"image", "image_url"})

    parser_class = MistralParser

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        loop = list(enumerate(messages))
        system_index = None
        if loop and loop[0][1].role == "system":
            system_index = 0
            loop = loop[1:]
        users = [m for _, m in loop if m.role == "user"]
        turn = 0
        for index, msg in loop:
            if msg.role == "tool" or msg.tool_calls:
                continue
            if (msg.role == "user") != (turn % 2 == 0):
                raise UnsupportedByFormat("After the optional system message, conversation roles must alternate "
                                          "user/assistant/user/assistant/...", message_index=index, field="role")
            turn += 1
        out.special(M["bos"]).special(M["system_open"])
        if system_index is None:
            today = options.current_date or date.today().isoformat()
            out.template(DEFAULT_SYSTEM.format(today=today))
        else:
            out.content(_first_text(messages[0]), 0)
        out.special(M["system_close"])
        for index, msg in loop:
            if msg.role == "system":
                out.special(M["system_open"], index).content(_first_text(msg), index).special(M["system_close"], index)
            elif msg.role == "user":
                if tools and msg == users[-1]:
                    out.special(M["tools_open"], index).content(json_dumps([tool_to_dict(t) for t in tools]), index)
                    out.special(M["tools_close"], index)
                out.special(M["inst_open"], index)
                _blocks(msg, out, index, "message")
                out.special(M["inst_close"], index)
            elif msg.role == "assistant":
                if msg.tool_calls:
                    for n, call in enumerate(msg.tool_calls):
                        call_id = check_call_id(call.id, index, f"tool_calls[{n}].id")
                        out.special(M["tool_calls"], index).content(call.function.name, index)
                        out.special(M["call_id"], index).content(call_id, index).special(M["args"], index)
                        out.content(json_dumps(call_arguments(call, index, n)), index)
                else:
                    _blocks(msg, out, index, "assistant")
                out.special(M["eos"], index)
            elif msg.role in ("tool", "tool_results"):
                call_id = check_call_id(msg.tool_call_id, index, "tool_call_id")
                out.special(M["results_open"], index).content(call_id, index).special(M["tool_content"], index)
                out.content(msg.text(""), index).special(M["results_close"], index)
            else:
                raise UnsupportedByFormat("Only system, user, assistant, and tool roles are supported!",
                                          message_index=index, field="role")
        return False


FORMATS: dict[str, Format] = {f.name: f for f in (MistralSmall32Format(),)}
