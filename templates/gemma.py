"""Gemma 4 (``gemma4``): ``<|turn>ROLE\\n…<turn|>`` turns, calls ``<|tool_call>call:NAME{k:v,…}<tool_call|>`` with
strings in ``<|"|>…<|"|>``, tool results inside the model turn as ``<|tool_response>response:NAME{value:…}
<tool_response|>``, reasoning ``<|channel>thought\\n…\\n<channel|>``.

Reference: ``Gemma-4-E2B-it.jinja`` (the current revision, google/gemma-4-E2B-it @ 8995379) as transformers
renders it, ``arguments`` decoded to objects. TRL also pins the revisions ``Gemma-4-E2B-it-release``,
``Gemma-4-31B-it`` and ``Gemma-4-31B-it-interleaved``; this renderer follows the current one only (against
those, ``toolwire fidelity`` gives 11/26, 9/26 and 2/26 scenarios byte-equal: they are different templates, not
yet named options).
Quirks kept, as the template has them:

* a system turn exists when thinking is on (``<|think|>\\n`` at its top), tools are declared, or the first
  message is a system/developer one (its text trimmed; given as parts, each part's text trimmed plus ``" "``);
* tool declarations are Gemma's own object notation (keys sorted case-insensitively, as Jinja's
  ``dictsort``; strings in ``<|"|>``; a union ``type`` prints as the Python list, upper-cased:
  ``['STRING', 'NULL']``; a ``parameters`` object without ``type`` leaves its brace open);
* a call message writes its reasoning, its calls, then the results of the tool messages that follow it
  (each string result as ``value:<|"|>…<|"|>``), and only then its content; a tool-call turn without
  results ends ``<|tool_response>`` (where generation would stop);
* consecutive assistant messages continue one model turn; after tool results the generation prompt opens
  nothing (the model continues its turn), or ``<|channel>thought\\n`` in thinking mode;
* earlier reasoning is rendered after the last user message (thinking on or off), and on tool-call
  messages with ``preserve_thinking=True`` (the plan: the family's declared rule);
* the model's own content is rendered without any ``<|channel>…<channel|>`` block it holds, trimmed.

Refused where the template fails or silently loses data: a tool message that follows no assistant tool
call (the template skips it), and string argument values or names that carry a ``<|"|>`` or a
``<tool_call|>`` (a parser could not tell where they end).
"""

from __future__ import annotations

from typing import Any, Callable

from toolwire.errors import UnrepresentableValue, UnsupportedByFormat
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, call_arguments, tool_to_dict
from toolwire.parsers.gemma import MARKERS, GemmaParser
from toolwire.prompt import PromptBuilder

M = MARKERS
Q = M["quote"]
_STANDARD_KEYS = ("description", "type", "properties", "required", "nullable")
_MEDIA = {"image": M["image"], "image_url": M["image"], "audio": M["audio"], "input_audio": M["audio"],
          "video": M["video"]}


class _Undefined:
    """Jinja's Undefined: falsy, prints as nothing."""

    def __bool__(self) -> bool:
        return False

    def __str__(self) -> str:
        return ""


UNDEFINED = _Undefined()


def _get(value: Any, key: str) -> Any:
    """``value[key]`` as Jinja reads it: Undefined where the key is missing or ``value`` is no mapping."""
    if isinstance(value, dict):
        return value.get(key, UNDEFINED)
    return UNDEFINED


def _s(value: Any) -> str:
    """Jinja's ``{{ value }}``: Python's ``str`` (``None`` prints ``None``, Undefined nothing)."""
    if isinstance(value, bool):
        return "True" if value else "False"
    return str(value)


def _upper(value: Any) -> str:
    return _s(value).upper()


def _dictsort(mapping: dict) -> list[tuple[Any, Any]]:
    """Jinja's ``dictsort``: by key, case-insensitively (stable). Only an object can be sorted so (the
    template's ``dictsort`` fails on anything else, so toolwire refuses it)."""
    if not isinstance(mapping, dict):
        raise UnsupportedByFormat(f"a schema 'properties' / 'items' mapping must be an object, got "
                                  f"{type(mapping).__name__}", field="tools")
    return sorted(mapping.items(), key=lambda kv: kv[0].lower() if isinstance(kv[0], str) else kv[0])


class Notation:
    """Gemma's object notation as ``(kind, text)`` pieces: the template's own ``<|"|>`` quotes are ``special``, text
    the request supplies (strings, names, keys, numbers, descriptions) ``content``, the notation's punctuation and
    keywords ``template``. The renderer writes these pieces as they are: written text is never split again at
    ``<|"|>``, so a ``<|"|>`` inside a tool result or a description stays text, and so does what follows it."""

    __slots__ = ("pieces",)

    def __init__(self) -> None:
        self.pieces: list[tuple[str, str]] = []

    def t(self, text: str) -> "Notation":
        """Template text (punctuation, keywords)."""
        self.pieces.append(("template", text))
        return self

    def c(self, text: str) -> "Notation":
        """Request text written bare (a name, a key, a number)."""
        self.pieces.append(("content", text))
        return self

    def q(self, text: str) -> "Notation":
        """Request text as a string: between the template's quotes."""
        self.pieces += (("special", Q), ("content", text), ("special", Q))
        return self

    @property
    def text(self) -> str:
        return "".join(text for _, text in self.pieces)

    def write(self, out: PromptBuilder, index: int | None = None) -> None:
        for kind, text in self.pieces:
            out.add(kind, text, index)  # type: ignore[arg-type]


def format_argument(value: Any, escape_keys: bool = True) -> str:
    """The template's ``format_argument``: Gemma's object notation of a JSON value."""
    return argument_notation(Notation(), value, escape_keys).text


def argument_notation(n: Notation, value: Any, escape_keys: bool = True) -> Notation:
    """:func:`format_argument` written into ``n``."""
    if value is None or value is UNDEFINED:
        return n.c("null") if value is None else n
    if isinstance(value, str):
        return n.q(value)
    if isinstance(value, bool):
        return n.c("true" if value else "false")
    if isinstance(value, dict):
        n.t("{")
        for k, (key, item) in enumerate(_dictsort(value)):
            if k:
                n.t(",")
            (n.q(_s(key)) if escape_keys else n.c(_s(key))).t(":")
            argument_notation(n, item, escape_keys)
        return n.t("}")
    if isinstance(value, (list, tuple)):
        n.t("[")
        for k, item in enumerate(value):
            if k:
                n.t(",")
            argument_notation(n, item, escape_keys)
        return n.t("]")
    return n.c(_s(value))


def _quoted_list(n: Notation, items: Any) -> Notation:
    for k, item in enumerate(items):
        if k:
            n.t(",")
        n.q(_s(item))
    return n


def format_parameters(properties: dict, required: Any, filter_keys: bool = False) -> str:
    """The template's ``format_parameters`` (``required`` is passed but never read, as in the template)."""
    return parameters_notation(Notation(), properties, required, filter_keys).text


def parameters_notation(n: Notation, properties: dict, required: Any, filter_keys: bool = False) -> Notation:
    """:func:`format_parameters` written into ``n``."""
    between = _separator(n)
    for key, value in _dictsort(properties):
        if filter_keys and key in _STANDARD_KEYS:
            continue
        between()
        n.c(_s(key)).t(":{")
        part = _separator(n)  # the parts of one property, joined by ","
        vtype = _upper(_get(value, "type"))
        if _get(value, "description"):
            part()
            n.t("description:").q(_s(_get(value, "description")))
        if vtype == "STRING":
            if _get(value, "enum"):
                part()
                argument_notation(n.t("enum:"), _get(value, "enum"))
        elif vtype == "ARRAY":
            items = _get(value, "items")
            if isinstance(items, dict) and items:
                part()
                _items(n.t("items:{"), items).t("}")
        if _get(value, "nullable"):
            part()
            n.t("nullable:true")
        if vtype == "OBJECT":
            props = _get(value, "properties")
            own_required = _get(value, "required") or []
            if isinstance(props, dict):
                part()
                parameters_notation(n.t("properties:{"), props, own_required).t("}")
            elif isinstance(value, dict):
                part()
                parameters_notation(n.t("properties:{"), value, own_required, filter_keys=True).t("}")
            if _get(value, "required"):
                part()
                _quoted_list(n.t("required:["), _get(value, "required")).t("]")
        part()
        n.t("type:").q(vtype).t("}")
    return n


def _separator(n: Notation) -> Callable[[], None]:
    """A function that writes ``,`` into ``n`` each time it is called but the first (before each item of a list)."""
    first = [True]

    def between() -> None:
        if first[0]:
            first[0] = False
        else:
            n.t(",")
    return between


def _items(n: Notation, items: dict) -> Notation:
    between = _separator(n)
    for item_key, item_value in _dictsort(items):
        if item_value is None:
            continue
        between()
        if item_key == "properties":
            n.t("properties:{")
            if isinstance(item_value, dict):
                parameters_notation(n, item_value, items.get("required") or [])
            n.t("}")
        elif item_key == "required":
            _quoted_list(n.t("required:["), item_value).t("]")
        elif item_key == "type":
            if isinstance(item_value, str):
                argument_notation(n.t("type:"), item_value.upper())
            else:
                argument_notation(n.t("type:"), [_upper(t) for t in item_value])
        else:
            argument_notation(n.c(_s(item_key)).t(":"), item_value)
    return n


def function_declaration(tool: dict) -> str:
    """The template's ``format_function_declaration``, trimmed."""
    return declaration_notation(tool).text


def declaration_notation(tool: dict) -> Notation:
    """:func:`function_declaration` as pieces (the template trims it: it starts and ends with no blank)."""
    fn = tool.get("function", {})
    n = Notation().t("declaration:").c(_s(_get(fn, "name"))).t("{description:").q(_s(_get(fn, "description")))
    params = _get(fn, "parameters")
    if params:
        n.t(",parameters:{")
        if _get(params, "properties"):
            parameters_notation(n.t("properties:{"), params["properties"], _get(params, "required")).t("},")
        if _get(params, "required"):
            _quoted_list(n.t("required:["), params["required"]).t("],")
        if _get(params, "type"):
            n.t("type:").q(_upper(params["type"])).t("}")
    if isinstance(fn, dict) and "response" in fn:
        response = fn["response"]
        n.t(",response:{")
        if _get(response, "description"):
            n.t("description:").q(_s(response["description"])).t(",")
        if _upper(_get(response, "type")) == "OBJECT":
            n.t("type:").q(_upper(response["type"])).t("}")
    return n.t("}")


def strip_thinking(text: str) -> str:
    """The template's ``strip_thinking``: drop every ``<|channel>…<channel|>`` block, then trim."""
    result = ""
    for part in text.split(M["channel_close"]):
        result += part.split(M["channel_open"])[0] if M["channel_open"] in part else part
    return result.strip()


def _bare_key(key: str) -> bool:
    """Whether a key written bare (``key:value``) reads back as itself."""
    return not (any(c in key for c in ":,{}[]") or Q in key or M["call_close"] in key
                or key[:1] in ("\"", "'", " ", "\t", "\r", "\n"))


def _check_call(name: str, args: dict, index: int, ci: int) -> None:
    for bad in (Q, M["call_close"], "{"):
        if bad in name:
            raise UnrepresentableValue(f"the function name holds {bad!r}, which would end it in the call",
                                       message_index=index, field=f"tool_calls[{ci}].function.name")
    stack: list[tuple[Any, str]] = [(args, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict):
            for k, v in value.items():
                if not _bare_key(k):
                    raise UnrepresentableValue(f"argument key {k!r} cannot be written bare (it holds one of "
                                               f":,{{}}[] or a marker, or starts with a quote or a blank)",
                                               message_index=index, field=f"tool_calls[{ci}].function.arguments")
                stack.append((v, f"{path}.{k}" if path else k))
        elif isinstance(value, list):
            stack.extend((v, f"{path}[{n}]") for n, v in enumerate(value))
        elif isinstance(value, str) and (Q in value or M["call_close"] in value):
            raise UnrepresentableValue(f"a string value holds {Q!r} or {M['call_close']!r}, which end it (at {path or 'the top'})",
                                       message_index=index, field=f"tool_calls[{ci}].function.arguments")


class Gemma4Format(Format):
    """Gemma 4 (E2B/E4B/26B/31B-it), the current template revision."""
    tool_result_media = frozenset({"image", "image_url", "audio", "input_audio", "video"})  # after <tool_response|>
    user_media = tool_result_media

    parser_class = GemmaParser

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        thinking = options.thinking
        out.special(M["bos"])
        prev_type: str | None = None
        offset = 0
        has_system = bool(messages) and messages[0].role in ("system", "developer")
        if thinking or tools or has_system:
            index = 0 if has_system else None
            out.special(M["turn_open"], index).template("system\n", index)
            if thinking:
                out.special(M["think"], index).template("\n", index)
                prev_type = "think"
            if has_system:
                self._system_text(out, messages[0])
                offset = 1
            for n, tool in enumerate(tools):
                out.special(M["tool_open"])
                try:
                    declaration = declaration_notation(tool_to_dict(tool))
                except UnsupportedByFormat as exc:
                    raise UnsupportedByFormat(exc.detail, field=f"tools[{n}].function.parameters") from None
                declaration.write(out)
                out.special(M["tool_close"])
                prev_type = "tool"
            out.special(M["turn_close"], index).template("\n", index)
        loop = list(range(offset, len(messages)))
        self._check_tool_messages(messages, loop)
        prev_role: str | None = None
        for pos, i in enumerate(loop):
            msg = messages[i]
            if msg.role == "tool":
                continue
            prev_type = None
            role = "model" if msg.role == "assistant" else msg.role
            if not (role == "model" and prev_role == "assistant"):
                out.special(M["turn_open"], i).add("template" if msg.role in ("user", "assistant", "system",
                                                                              "developer") else "content",
                                                   role, i).template("\n", i)
            if msg.role == "assistant" and msg.reasoning_content and options.keeps_reasoning(i):
                out.special(M["channel_open"], i).template("thought\n", i).content(msg.reasoning_content, i)
                out.template("\n", i).special(M["channel_close"], i)
            responded = False
            if msg.tool_calls:
                for ci, call in enumerate(msg.tool_calls):
                    self._call(out, call, i, ci)
                prev_type = "tool_call"
                for k in loop[pos + 1:]:
                    if messages[k].role != "tool":
                        break
                    self._response(out, msg, messages[k], k)
                    responded, prev_type = True, "tool_response"
            captured = self._content(out, msg, role, i)
            nxt = next((messages[j] for j in loop[pos + 1:] if messages[j].role != "tool"), None)
            continues = role == "model" and nxt is not None and nxt.role == "assistant" and (
                not msg.tool_calls or responded)
            if prev_type == "tool_call" and not responded:
                out.special(M["response_open"], i)
            elif continues:
                pass
            elif not (responded and not captured.strip() and nxt is None):
                out.special(M["turn_close"], i).template("\n", i)
            prev_role = msg.role
        if options.add_generation_prompt:
            if prev_type not in ("tool_response", "tool_call"):
                out.special(M["turn_open"]).template("model\n")
            elif prev_type == "tool_response" and thinking:
                out.special(M["channel_open"]).template("thought\n")
                return True
        return False

    # ---- pieces
    @staticmethod
    def _system_text(out: PromptBuilder, msg: Message) -> None:
        if isinstance(msg.content, str):
            out.content(msg.content.strip(), 0)
        elif msg.content is not None:
            for part in msg.content:
                out.content((part.text or "").strip() + " ", 0)

    def _call(self, out: PromptBuilder, call: Any, index: int, ci: int) -> None:
        name = call.function.name
        raw = call.function.arguments
        args = call_arguments(call, index, ci) if not (isinstance(raw, str) and raw.strip() == "null") else None
        _check_call(name, args or {}, index, ci)
        out.special(M["call_open"], index).template("call:", index).content(name, index).template("{", index)
        if args:
            n = Notation()
            for k, (key, value) in enumerate(_dictsort(args)):
                argument_notation((n.t(",") if k else n).c(_s(key)).t(":"), value, escape_keys=False)
            n.write(out, index)
        out.template("}", index).special(M["call_close"], index)

    def _response(self, out: PromptBuilder, call_msg: Message, result: Message, index: int) -> None:
        name = result.name or "unknown"
        for tc in call_msg.tool_calls or ():
            if tc.id == result.tool_call_id:
                name = tc.function.name
        body = result.content
        media: list[str] = []
        if isinstance(body, list):
            media = [_MEDIA[p.type] for p in body if p.type in _MEDIA]
            body = "".join(p.text or "" for p in body if p.type == "text")
        out.special(M["response_open"], index).template("response:", index).content(name, index)
        out.template("{value:", index)
        argument_notation(Notation(), body, escape_keys=False).write(out, index)
        out.template("}", index).special(M["response_close"], index)
        for token in media:
            out.special(token, index)

    @staticmethod
    def _content(out: PromptBuilder, msg: Message, role: str, index: int) -> str:
        """The message's content as the template captures it; returns the captured text."""
        content = msg.content
        captured = ""
        if isinstance(content, str):
            text = strip_thinking(content) if role == "model" else content.strip()
            out.content(text, index)
            return text
        for part in content or ():
            if part.type == "text":
                text = strip_thinking(part.text or "") if role == "model" else (part.text or "").strip()
                out.content(text, index)
                captured += text
            elif part.type in _MEDIA:
                out.special(_MEDIA[part.type], index)
                captured += _MEDIA[part.type]
        return captured

    @staticmethod
    def _check_tool_messages(messages: list[Message], loop: list[int]) -> None:
        """A tool message the template would skip (no assistant tool call before it) is refused."""
        answered = False
        for i in loop:
            msg = messages[i]
            if msg.role == "tool":
                if not answered:
                    raise UnsupportedByFormat("the template renders a tool result only after an assistant message "
                                              "with tool_calls (it would skip this one)", message_index=i,
                                              field="role")
            else:
                answered = msg.role == "assistant" and bool(msg.tool_calls)


FORMATS: dict[str, Format] = {f.name: f for f in (Gemma4Format(),)}
