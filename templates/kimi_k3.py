"""Kimi K3 (``kimi_k3``): XTML turns ``<|open|>message role="ROLE"<|sep|>…<|close|>message<|sep|><|end_of_msg|>``;
an assistant turn holds a ``think`` channel (thinking mode), a ``response`` channel and a ``tools`` channel of
``<|open|>call tool="NAME" index="N"<|sep|>`` elements, one typed ``<|open|>argument key="K" type="T"<|sep|>`` per
argument (strings raw, other values JSON).

Reference: ``extra/Kimi-K3.jinja`` (a Jinja port of Moonshot's Python encoder) as transformers renders it,
``arguments`` decoded to objects. Switches: ``thinking`` (the template's default is on; toolwire's ``thinking``
flag is passed as it is) and ``reasoning_effort`` ``low`` / ``high`` / ``max`` (default ``max``), which the
template calls ``thinking_effort`` (accepted as an alias). ``tool_choice`` (``required`` / ``none``) adds the
template's instruction message. Quirks kept:

* the tool declaration is the request's tool list as JSON with every object's keys sorted (case-insensitively,
  Jinja's ``dictsort``) and no spaces; the effort instruction is a system message after it (thinking mode);
* in thinking mode every assistant turn writes its ``think`` channel (empty when it has no reasoning); with
  thinking off none does;
* a run of tool results is written in the order of the calls they answer when every result's
  ``tool_call_id`` matches a call, else in the order given (named by ``name``, or by position);
* attribute values escape ``&`` and ``"``; image parts are ``<|kimi_image_placeholder|>``.

Refused where the template fails or loses data: roles it skips (``developer``...), a tool result whose tool
cannot be named, an unsupported effort, and argument values holding an XTML marker (the parser could not
tell where they end).
"""

from __future__ import annotations

from typing import Any

from toolwire.errors import InvalidOption, UnrepresentableValue, UnsupportedByFormat
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, call_arguments, tool_to_dict
from toolwire.templates.json_text import tojson
from toolwire.parsers.kimi_k3 import MARKERS, STRUCTURE, KimiK3Parser
from toolwire.prompt import PromptBuilder

M = MARKERS
EFFORTS = ("low", "high", "max")
EFFORT_TEXT = ("`thinking_effort` guides on how much to think in your thinking channel (not including the response "
               "channel), supported values include `low`, `medium`, `high`, and `max`.\nNow the system is invoked with "
               "`thinking_effort={}`.")
TOOL_CHOICE_TEXT = {
    "required": "The system is invoked with `tool_choice=required`.\nYou MUST call tools in the next message.",
    "none": "The system is invoked with `tool_choice=none`.\nYou MUST NOT call any tools in the next message.",
}
STATIC_TOOLS = "# Tools\nHere are the available tools, described in JSONSchema.\n\n```json\n"
DYNAMIC_TOOLS = ("## New Tools Available\nThe system dynamically extends the toolset via lazy-loading.\nYou have "
                 "access to all existing and extended tools.\nHere are the specs for the extended tools.\n\n```json\n")


def escape_attr(value: Any) -> str:
    return _s(value).replace("&", "&amp;").replace('"', "&quot;")


def _s(value: Any) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    return str(value)


def json_sorted(value: Any) -> str:
    """The template's ``json_sorted``: compact JSON, each object's keys in ``dictsort`` order."""
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: kv[0].lower() if isinstance(kv[0], str) else kv[0])
        return "{" + ",".join(tojson(k) + ":" + json_sorted(v) for k, v in items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(json_sorted(v) for v in value) + "]"
    return tojson(value)


def xtml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object" if isinstance(value, dict) else "array"


def xtml_value(value: Any) -> str:
    return value if isinstance(value, str) else tojson(value)


class KimiK3Format(Format):
    """Kimi K3 (XTML)."""
    tool_result_media = user_media = frozenset({"image", "image_url"})

    parser_class = KimiK3Parser

    # ---- tags
    @staticmethod
    def _open(out: PromptBuilder, tag: str, attrs: tuple = (), index: int | None = None) -> None:
        out.special(M["open"], index).template(tag, index)
        for key, value, kind in attrs:
            out.template(f' {key}="', index).add(kind, escape_attr(value), index).template('"', index)
        out.special(M["sep"], index)

    @staticmethod
    def _close(out: PromptBuilder, tag: str, index: int | None = None) -> None:
        out.special(M["close"], index).template(tag, index).special(M["sep"], index)

    def _message_end(self, out: PromptBuilder, index: int | None) -> None:
        self._close(out, "message", index)
        out.special(M["end"], index)

    def _system(self, out: PromptBuilder, kind: str, body: str) -> None:
        self._open(out, "message", (("role", "system", "template"), ("type", kind, "template")))
        out.template(body.strip())
        self._message_end(out, None)

    def _declare(self, out: PromptBuilder, tools: list, dynamic: bool, index: int | None) -> None:
        self._open(out, "message", (("role", "system", "template"), ("type", "tool-declare", "template")), index)
        out.template(DYNAMIC_TOOLS if dynamic else STATIC_TOOLS, index)
        out.content(json_sorted(tools), index).template("\n```", index)
        self._message_end(out, index)

    @staticmethod
    def _content(out: PromptBuilder, content: Any, index: int) -> None:
        if isinstance(content, str):
            out.content(content, index)
            return
        for part in content or ():
            if part.type in ("image", "image_url"):
                out.special(M["image"], index)
            else:
                out.content(_s(part.text), index)

    # ---- render
    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        thinking = options.thinking
        effort = options.reasoning_effort if options.reasoning_effort is not None else "max"
        if thinking and effort not in EFFORTS:
            raise InvalidOption(f"Unsupported thinking_effort={effort}; supported values are low, high, and max.",
                                field="reasoning_effort")
        choice = options.extra.get("tool_choice")
        if choice is not None and not isinstance(choice, str):
            raise InvalidOption("tool_choice must be 'required', 'none' or 'auto'", field="tool_choice")
        if tools:
            self._declare(out, [tool_to_dict(t) for t in tools], False, None)
        if thinking:
            self._system(out, "thinking-effort", EFFORT_TEXT.format(effort))
        calls: list | None = None
        tool_index = 0
        i = 0
        while i < len(messages):
            msg = messages[i]
            extra = msg.model_extra or {}
            if msg.role in ("user", "system") and not (msg.role == "system" and extra.get("tools")):
                attrs = (("role", msg.role, "template"),) + ((("name", msg.name, "content"),) if msg.name else ())
                self._open(out, "message", attrs, i)
                self._content(out, msg.content, i)
                self._message_end(out, i)
            elif msg.role == "system":
                self._declare(out, extra["tools"], True, i)
            elif msg.role == "assistant":
                calls, tool_index = msg.tool_calls, 0
                attrs = (("role", "assistant", "template"),) + ((("name", msg.name, "content"),) if msg.name else ())
                self._open(out, "message", attrs, i)
                self._assistant(out, msg, i, options)
                self._message_end(out, i)
            elif msg.role == "tool":
                j = i
                while j < len(messages) and messages[j].role == "tool":
                    j += 1
                tool_index = self._tool_run(out, messages, i, j, calls, tool_index)
                i = j
                continue
            else:
                raise UnsupportedByFormat(f"the template skips {msg.role!r} messages (it renders system, user, "
                                          "assistant and tool)", message_index=i, field="role")
            i += 1
        if choice in TOOL_CHOICE_TEXT:
            self._system(out, "tool-choice", TOOL_CHOICE_TEXT[choice])
        if options.add_generation_prompt:
            self._open(out, "message", (("role", "assistant", "template"),))
            self._open(out, "think" if thinking else "response")
            return thinking
        return False

    def _assistant(self, out: PromptBuilder, msg: Message, i: int, options: RenderOptions) -> None:
        if options.thinking:
            self._open(out, "think", (), i)
            reasoning = msg.reasoning_content
            if reasoning is not None and reasoning.strip() and options.keeps_reasoning(i):
                out.content(reasoning, i)
            self._close(out, "think", i)
        self._open(out, "response", (), i)
        self._content(out, msg.content, i)
        self._close(out, "response", i)
        if not msg.tool_calls:
            return
        self._open(out, "tools", (), i)
        for ci, call in enumerate(msg.tool_calls):
            self._open(out, "call", (("tool", call.function.name, "content"), ("index", ci + 1, "template")), i)
            args = call_arguments(call, i, ci)
            field = f"tool_calls[{ci}].function.arguments"
            for key, value in args.items():
                text = xtml_value(value)
                if any(marker in text for marker in STRUCTURE):
                    raise UnrepresentableValue(f"argument {key!r} holds an XTML marker, which would end it",
                                               message_index=i, field=field)
                self._open(out, "argument", (("key", key, "content"), ("type", xtml_type(value), "template")), i)
                out.content(text, i)
                self._close(out, "argument", i)
            self._close(out, "call", i)
        self._close(out, "tools", i)

    def _tool_run(self, out: PromptBuilder, messages: list[Message], start: int, end: int, calls: list | None,
                  tool_index: int) -> int:
        run = list(range(start, end))
        ids = [c.id for c in calls or () if c.id is not None]

        def result_id(k: int) -> str | None:
            return messages[k].tool_call_id if messages[k].tool_call_id is not None else (
                (messages[k].model_extra or {}).get("id"))

        resolved = all(result_id(k) is not None and str(result_id(k)) in {str(x) for x in ids} for k in run)
        order: list[tuple[int, str | None]] = []
        if run and resolved:
            emitted: list[str] = []
            for call in calls or ():
                if call.id is None or str(call.id) in emitted:
                    continue
                emitted.append(str(call.id))
                order += [(k, call.function.name) for k in run if str(result_id(k)) == str(call.id)]
        else:
            order = [(k, None) for k in run]
        for k, name in order:
            tool_index += 1
            msg = messages[k]
            extra = msg.model_extra or {}
            if name is None:
                name = extra["tool"] if "tool" in extra else msg.name
            if name is None and calls is not None and tool_index <= len(calls):
                name = calls[tool_index - 1].function.name
            if name is None:
                raise UnsupportedByFormat("Kimi K3 tool messages need a resolvable tool name: carry `tool`/`name`, or "
                                          "match a preceding assistant tool_call by order.", message_index=k,
                                          field="tool_call_id")
            self._open(out, "message", (("role", "tool", "template"), ("tool", name, "content"),
                                        ("index", tool_index, "template")), k)
            self._content(out, msg.content, k)
            self._message_end(out, k)
        return tool_index


FORMATS: dict[str, Format] = {f.name: f for f in (KimiK3Format(),)}
