"""Ministral 3 Reasoning (Ministral-3-14B-Reasoning-2512 and its 3B/8B siblings): Mistral ``[INST]…[/INST]``
turns, ``[THINK]…[/THINK]`` reasoning, ``[TOOL_CALLS]NAME[ARGS]{json}`` per call.

Reference: ``Ministral-3-14B-Reasoning-2512.jinja`` as transformers renders it, with an assistant's
``reasoning_content`` given as a ``thinking`` content chunk before its text (as mistral-common converts OpenAI
messages; the template reads no other reasoning field), ``arguments`` decoded to objects. Quirks kept:

* the template's own system prompt (a thinking instruction) when the request has none;
  ``[AVAILABLE_TOOLS]`` (the tool list as one ``tojson``) right after the system prompt;
* a user message of exactly two parts is written with its parts sorted by type (so an image comes first);
  image parts are ``[IMG]``; thinking chunks in the system or an assistant message are ``[THINK]…[/THINK]``;
* every assistant turn ends ``</s>``; tool results are ``[TOOL_RESULTS]…[/TOOL_RESULTS]`` with no call id;
* there is no generation prompt: the prompt ends after the last user turn or tool result (the model opens
  ``[THINK]`` itself). Earlier reasoning is rendered on every assistant turn (the family's rule: keep all).

Refused, as the template refuses them: roles other than user/assistant/tool after the optional first system
message, user and assistant turns that do not alternate (tool calls and results aside), a user message
without content, an assistant message with neither content, reasoning nor calls, unsupported chunk types.
Refused because the template would print a Python repr: content parts in a tool result.
"""

from __future__ import annotations

from functools import lru_cache

from toolwire.errors import UnsupportedByFormat
from toolwire.format import Format, RenderOptions
from toolwire.models import ContentPart, Message, Tool, call_arguments, tool_to_dict
from toolwire.templates.json_text import tojson as json_dumps
from toolwire.parsers.ministral import MARKERS, MinistralParser
from toolwire.prompt import PromptBuilder, special_pattern

M = MARKERS
DEFAULT_SYSTEM = (
    "# HOW YOU SHOULD THINK AND ANSWER\n\nFirst draft your thinking process (inner monologue) until you arrive at a "
    "response. Format your response using Markdown, and use LaTeX for any mathematical equations. Write both your "
    "thoughts and the response in the same language as the input.\n\nYour thinking process must follow the "
    "template below:[THINK]Your thoughts or/and draft, like working through an exercise on scratch paper. Be as "
    "casual and as long as you want until you are confident to generate the response to the user.[/THINK]Here, "
    "provide a self-contained response.")
ALTERNATION = ("After the optional system message, conversation roles must alternate user and assistant roles "
               "except for tool calls and results.")
_specials = lru_cache(maxsize=None)(special_pattern)


def _thinking(out: PromptBuilder, text: str, index: int) -> None:
    out.special(M["think_open"], index).content(text, index).special(M["think_close"], index)


def _chunks(out: PromptBuilder, parts: list[ContentPart], index: int, what: str) -> None:
    """System / assistant chunks: text as is, thinking as ``[THINK]…[/THINK]``; anything else is refused."""
    for n, part in enumerate(parts):
        if part.type == "text":
            out.content(part.text or "", index)
        elif part.type == "thinking":
            _thinking(out, str(getattr(part, "thinking", None) or ""), index)
        else:
            raise UnsupportedByFormat(f"Only text and thinking chunks are supported in {what} message contents.",
                                      message_index=index, field=f"content[{n}].type")


class Ministral3Format(Format):
    """Ministral 3 Reasoning: always thinks; the model opens ``[THINK]`` itself."""
    user_media = frozenset({"image", "image_url"})

    parser_class = MinistralParser

    @staticmethod
    def template_messages(messages: list) -> list:
        """The request as the reference template is fed it (``toolwire fidelity`` uses this): reasoning as a
        thinking chunk, see :func:`thinking_chunks`."""
        return thinking_chunks(messages)

    def _system(self, messages: list[Message], tools: list[Tool], out: PromptBuilder) -> list[tuple[int, Message]]:
        rest = list(enumerate(messages))
        out.special(M["bos"])
        if rest and rest[0][1].role == "system":
            index, system = rest.pop(0)
            out.special(M["system_open"], index)
            if isinstance(system.content, str):
                out.content(system.content, index)
            else:
                _chunks(out, system.content or [], index, "system")
            out.special(M["system_close"], index)
        else:
            out.special(M["system_open"]).fixed(DEFAULT_SYSTEM, None, _specials(frozenset(M.values())))
            out.special(M["system_close"])
        if tools:
            out.special(M["tools_open"]).content(json_dumps([tool_to_dict(t) for t in tools]))
            out.special(M["tools_close"])
        return rest

    @staticmethod
    def _check_turns(rest: list[tuple[int, Message]]) -> None:
        turn = 0
        for index, msg in rest:
            if msg.role not in ("user", "assistant", "tool"):
                raise UnsupportedByFormat(f"Only user, assistant and tool roles are supported, got {msg.role}.",
                                          message_index=index, field="role")
            if msg.role == "user" or (msg.role == "assistant" and not msg.tool_calls):
                if (msg.role == "user") != (turn % 2 == 0):
                    raise UnsupportedByFormat(ALTERNATION, message_index=index, field="role")
                turn += 1

    @staticmethod
    def _user(out: PromptBuilder, msg: Message, index: int) -> None:
        content = msg.content
        if isinstance(content, str):
            out.special(M["inst_open"], index).content(content, index).special(M["inst_close"], index)
            return
        if not content:
            raise UnsupportedByFormat("User message must have a string or a list of chunks in content",
                                      message_index=index, field="content")
        parts = sorted(content, key=lambda p: p.type.lower()) if len(content) == 2 else content
        out.special(M["inst_open"], index)
        for n, part in enumerate(parts):
            if part.type == "text":
                out.content(part.text or "", index)
            elif part.type in ("image", "image_url"):
                out.special(M["image"], index)
            else:
                raise UnsupportedByFormat("Only text, image and image_url chunks are supported in user message "
                                          "content.", message_index=index, field=f"content[{n}].type")
        out.special(M["inst_close"], index)

    @staticmethod
    def _assistant(out: PromptBuilder, msg: Message, index: int, options: RenderOptions) -> None:
        reasoning = msg.reasoning_content if options.keeps_reasoning(index) else None
        content = msg.content
        if not content and not reasoning and not msg.tool_calls:
            raise UnsupportedByFormat("Assistant message must have a string or a list of chunks in content or a "
                                      "list of tool calls.", message_index=index, field="content")
        if reasoning:  # mistral-common's thinking chunk, before the text
            _thinking(out, reasoning, index)
        if isinstance(content, str):
            out.content(content, index)
        else:
            _chunks(out, content or [], index, "assistant")
        for ci, call in enumerate(msg.tool_calls or ()):
            args = json_dumps(call_arguments(call, index, ci))
            out.special(M["tool_calls"], index).content(call.function.name, index)
            out.special(M["args"], index).content(args, index)
        out.special(M["eos"], index)

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        if not messages:
            raise UnsupportedByFormat("the template needs at least one message (it reads messages[0])",
                                      field="messages")
        rest = self._system(messages, tools, out)
        self._check_turns(rest)
        for index, msg in rest:
            if msg.role == "user":
                self._user(out, msg, index)
            elif msg.role == "assistant":
                self._assistant(out, msg, index, options)
            else:
                if isinstance(msg.content, list):
                    raise UnsupportedByFormat("the template prints a tool result's content parts as a Python "
                                              "list; give the result as a string", message_index=index,
                                              field="content")
                out.special(M["results_open"], index).content(msg.content or "", index)
                out.special(M["results_close"], index)
        return False  # no generation prompt: the model writes [THINK] itself


def thinking_chunks(messages: list) -> list:
    """OpenAI request messages as mistral-common feeds them to the template: an assistant's reasoning
    (``reasoning_content``, or its ``reasoning`` / ``thinking`` alias) becomes a ``thinking`` chunk before a
    ``text`` chunk holding its content. Other messages pass unchanged (the golden vectors were fed this way)."""
    out = []
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "assistant":
            reasoning = next((message[k] for k in ("reasoning_content", "reasoning", "thinking")
                              if isinstance(message.get(k), str)), None)
            if reasoning:
                content = message.get("content")
                parts = list(content) if isinstance(content, list) else [{"type": "text", "text": content or ""}]
                rest = {k: v for k, v in message.items() if k not in ("reasoning_content", "reasoning", "thinking")}
                message = {**rest, "content": [{"type": "thinking", "thinking": reasoning}] + parts}
        out.append(message)
    return out


FORMATS: dict[str, Format] = {f.name: f for f in (Ministral3Format(),)}
