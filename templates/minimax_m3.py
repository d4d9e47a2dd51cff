"""MiniMax-M3 (``minimax_m3``): ``]~b]ROLE\\n…[e~[`` turns, ``<mm:think>…</mm:think>`` reasoning, and one
``]<]minimax[>[<tool_call>`` block per turn holding an ``]<]minimax[>[<invoke name="NAME">`` per call, each argument
an element named after the parameter (``]<]minimax[>[<city>Oslo]<]minimax[>[</city>``), nested values expanded to
elements (lists as ``<item>`` children). Every structural tag carries the ``]<]minimax[>[`` prefix.

Reference: ``extra/MiniMax-M3.jinja`` as transformers renders it, ``arguments`` decoded to objects. The switch is
the template's ``thinking_mode`` (``enabled`` / ``disabled`` / ``adaptive``): toolwire's ``thinking=True`` is
``enabled`` (the prompt opens ``<mm:think>``), ``False`` is ``disabled`` (the prompt writes ``</mm:think>``);
``thinking_mode=`` is accepted as an alias and is the only way to ask for ``adaptive`` (no prefix). Quirks kept:

* a ``system`` turn always exists (MiniMax's identity text, or a leading ``root`` message) with the thinking
  instructions, then a ``developer`` turn (the request's system/developer message, else ``model_identity``,
  default "You are a helpful assistant.") with the tools, each ``tojson``, and the call-format example;
* every assistant turn writes its reasoning (``<mm:think>R</mm:think>``), or ``</mm:think>`` when it has none;
  a message without a reasoning field whose content holds ``</mm:think>`` has it split off as reasoning;
* argument values as text: numbers as Python prints them, booleans ``true``/``false``, strings raw;
  **None-valued arguments (and None values inside objects) are left out, as the template does**; an empty
  list or object writes an empty element (the parser types it by the schema).

Refused where the template fails or loses data: a tool message with no earlier assistant tool call, a tool
message without content or with parts other than text/image/video (the template prints their repr), roles
the template skips (a ``system`` message after the first), and values the parser could not read back (a
None list item, a ``]<]minimax[>[`` inside a value, a name or key holding ``<``, ``>``, ``"`` or the prefix).
"""

from __future__ import annotations

from typing import Any, ClassVar

from toolwire.errors import UnrepresentableValue, UnsupportedByFormat
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, call_arguments, tool_to_dict
from toolwire.templates.json_text import tojson as json_dumps
from toolwire.parsers.minimax_m3 import MARKERS, NS, MiniMaxM3Parser
from toolwire.prompt import PromptBuilder

M = MARKERS
IDENTITY = ("Your model version is MiniMax-M3, developed by MiniMax. Knowledge cutoff: January 2026. Founded in "
            "early 2022, MiniMax is a global AI foundation model company committed to advancing the frontiers of "
            "AI towards AGI.")
THINKING_INTRO = ("You have a thinking capability that allows you to reason step by step before responding. When "
                  "thinking is enabled, wrap your reasoning in {open}{close} tags before your response. When thinking "
                  "is disabled, begin your response directly after the {close} prefix. When thinking is adaptive, "
                  "decide on your own whether to think for the current turn.\n")
MODE_LINE = {
    "enabled": "Current thinking mode: enabled. You MUST think step by step before every response, including after "
               "receiving function/tool results.\n",
    "disabled": "Current thinking mode: disabled. Do not output any thinking process.\n",
    "adaptive": "Current thinking mode: adaptive. You are encouraged to think for complex decision-making, multi-step "
                "reasoning, or when analyzing function/tool results.\n",
}
TOOLS_INTRO = ("\n\n# Tools\nYou may call one or more tools to assist with the user query.\nHere are the tools "
               "available in JSONSchema format:\n\n<tools>\n")
DEFAULT_IDENTITY = "You are a helpful assistant."
_EXAMPLE = ("\n{ns}<tool_call>\n{ns}<invoke name=\"tool-name-1\">{ns}<param-1>value-1{ns}</param-1>{ns}<param-2>"
            "{ns}<item>{ns}<key-a>val-a{ns}</key-a>{ns}<key-b>val-b{ns}</key-b>{ns}</item>{ns}</param-2>{ns}</invoke>\n"
            "{ns}<invoke name=\"tool-name-2\">{ns}<param-1>value-1{ns}</param-1>{ns}</invoke>\n{ns}</tool_call>")
_MEDIA = {"image": M["image"], "video": M["video"]}


def _visible(out: PromptBuilder, content: Any, index: int | None) -> None:
    """The template's ``visible_text``: a string as is; text parts, image and video tokens."""
    if isinstance(content, str):
        out.content(content, index)
        return
    for part in content or ():
        if part.type == "text":
            out.content(part.text or "", index)
        elif part.type in _MEDIA:
            out.special(_MEDIA[part.type], index)


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _check_tag(name: str, index: int, field: str, what: str) -> None:
    if not name or any(c in name for c in '<>"') or NS in name:
        raise UnrepresentableValue(f"the {what} {name!r} cannot be an element name (empty, or it holds <, >, \" or "
                                   f"{NS})", message_index=index, field=field)


class MiniMaxM3Format(Format):
    """MiniMax-M3 with its XML-expanded tool calls."""
    tool_result_media = user_media = frozenset({"image", "video"})

    parser_class = MiniMaxM3Parser
    omits_none_arguments: ClassVar[bool] = True
    """The reference leaves None-valued arguments (and object members) out: the wire cannot carry them."""

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        mode = options.extra["thinking_mode"]  # MiniMaxM3Options resolves it (adaptive when nothing is given)
        rest = list(enumerate(messages))
        root = rest.pop(0) if rest and rest[0][1].role == "root" else None
        developer = rest.pop(0) if rest and rest[0][1].role in ("system", "developer") else None
        # system turn
        out.special(M["bod"]).special(M["role"]).template("system\n")
        if root is not None and root[1].content:
            _visible(out, root[1].content, root[0])
        else:
            out.template(IDENTITY)
        out.template("\n\n<thinking_instructions>\n")
        before, after = THINKING_INTRO.split("{open}{close}")
        middle, tail = after.split("{close}")
        out.template(before).special(M["think_open"]).special(M["think_close"])
        out.template(middle).special(M["think_close"]).template(tail)
        out.template(MODE_LINE[mode] + "</thinking_instructions>").special(M["eos"]).template("\n")
        # developer turn
        out.special(M["role"]).template("developer\n")
        if developer is not None and developer[1].content:
            _visible(out, developer[1].content, developer[0])
        else:
            identity = options.extra.get("model_identity")
            out.template(DEFAULT_IDENTITY) if identity is None else out.content(str(identity))
        if tools:
            out.template(TOOLS_INTRO)
            for tool in tools:
                out.template("<tool>").content(json_dumps(tool_to_dict(tool).get("function", {}))).template("</tool>\n")
            out.template("</tools>\n\nTo call tools, wrap all invocations in a single ")
            out.special(NS).template("<tool_call>").special(NS).template("</tool_call>")
            out.template(" block. Parameter values containing nested objects or arrays are recursively expanded into "
                         "XML elements. Example:\n")
            for n, piece in enumerate(_EXAMPLE.split("{ns}")):
                if n:
                    out.special(NS)
                out.template(piece)
        out.special(M["eos"]).template("\n")
        # the conversation
        called = False
        for pos, (i, msg) in enumerate(rest):
            if msg.role == "assistant":
                self._assistant(out, msg, i, options)
                called = bool(msg.tool_calls)
            elif msg.role == "tool":
                if not called:
                    raise UnsupportedByFormat("Message has tool role, but there was no previous assistant message "
                                              "with a tool call!", message_index=i, field="role")
                prev = rest[pos - 1][1].role if pos else None
                nxt = rest[pos + 1][1].role if pos + 1 < len(rest) else None
                self._tool(out, msg, i, first=prev != "tool", last=nxt != "tool")
            elif msg.role == "user":
                out.special(M["role"], i).template("user\n", i)
                _visible(out, msg.content, i)
                out.special(M["eos"], i).template("\n", i)
            else:
                raise UnsupportedByFormat(f"the template skips {msg.role!r} messages here (it renders a leading root "
                                          "and system/developer message, then user, assistant and tool)",
                                          message_index=i, field="role")
        if options.add_generation_prompt:
            out.special(M["role"]).template("ai\n")
            if mode == "disabled":
                out.special(M["think_close"])
            elif mode == "enabled":
                out.special(M["think_open"])
                return True
        return False

    def _assistant(self, out: PromptBuilder, msg: Message, i: int, options: RenderOptions) -> None:
        out.special(M["role"], i).template("ai\n", i)
        content = msg.content
        if isinstance(content, list):
            content = "".join(p.text or "" if p.type == "text" else _MEDIA.get(p.type, "") for p in content)
        content = content or ""
        if msg.reasoning_content is not None:
            reasoning = msg.reasoning_content if options.keeps_reasoning(i) else ""
        else:
            reasoning = ""
            close, open_ = M["think_close"], M["think_open"]
            if close in content:
                reasoning = content.split(close)[0].strip("\n").split(open_)[-1].strip("\n")
                content = content.split(close)[-1].strip("\n")
        if reasoning:
            out.special(M["think_open"], i).content(reasoning, i).special(M["think_close"], i)
        else:
            out.special(M["think_close"], i)
        if isinstance(msg.content, list) and not (msg.reasoning_content is None and M["think_close"] in content):
            _visible(out, msg.content, i)
        elif content:
            out.content(content, i)
        if msg.tool_calls:
            out.special(NS, i).template("<tool_call>\n", i)
            for ci, call in enumerate(msg.tool_calls):
                name = call.function.name
                _check_tag(name, i, f"tool_calls[{ci}].function.name", "function name")
                args = call_arguments(call, i, ci)
                out.special(NS, i).template('<invoke name="', i).content(name, i).template('">', i)
                field = f"tool_calls[{ci}].function.arguments"
                for key, value in args.items():
                    if value is not None:
                        self._element(out, key, value, i, field)
                out.special(NS, i).template("</invoke>\n", i)
            out.special(NS, i).template("</tool_call>", i)
        out.special(M["eos"], i).template("\n", i)

    def _element(self, out: PromptBuilder, key: str, value: Any, i: int, field: str) -> None:
        _check_tag(key, i, field, "argument key")
        out.special(NS, i).template("<", i).content(key, i).template(">", i)  # the key is request text
        self._value(out, value, i, field)
        out.special(NS, i).template("</", i).content(key, i).template(">", i)

    def _value(self, out: PromptBuilder, value: Any, i: int, field: str) -> None:
        """The template's ``to_xml``."""
        if isinstance(value, dict):
            for k, v in value.items():
                if v is not None:
                    self._element(out, k, v, i, field)
        elif isinstance(value, list):
            for item in value:
                if item is None:
                    raise UnrepresentableValue("a list item is None, which the template writes as an empty <item> "
                                               "(read back as \"\")", message_index=i, field=field)
                out.special(NS, i).template("<item>", i)
                self._value(out, item, i, field)
                out.special(NS, i).template("</item>", i)
        elif value is not None:
            text = _scalar(value)
            if NS in text:
                raise UnrepresentableValue(f"a value holds {NS!r}, which starts a tag", message_index=i, field=field)
            out.content(text, i)

    @staticmethod
    def _tool(out: PromptBuilder, msg: Message, i: int, *, first: bool, last: bool) -> None:
        content = msg.content
        if content is None or (isinstance(content, list) and any(
                p.type not in ("text", "image", "video") or (p.type == "text" and p.text is None) for p in content)):
            raise UnsupportedByFormat("the template prints a tool result's content as a string or text/image/video "
                                      "parts (other parts as their Python repr, no content fails)", message_index=i,
                                      field="content")
        if first:
            out.special(M["role"], i).template("tool", i)
        out.template("\n<response>", i)
        _visible(out, content, i)
        out.template("</response>", i)
        if last:
            out.special(M["eos"], i).template("\n", i)


FORMATS: dict[str, Format] = {f.name: f for f in (MiniMaxM3Format(),)}
