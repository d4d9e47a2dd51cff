"""Qwen XML-call family: Qwen3-Coder, Qwen3.5 and Qwen3.6 (``<tool_call>\\n<function=NAME>\\n<parameter=K>``).

Reference: the models' own chat templates (``Qwen3-Coder.jinja``, ``Qwen3.5-4B.jinja``,
``Qwen3.6-35B-A3B.jinja``) as transformers renders them, with ``arguments`` decoded to objects. Native
Python, not a Jinja run. What differs between the three (data on one implementation):

* **argument values** - Qwen3-Coder and Qwen3.5 write objects and arrays as JSON and everything else
  with Python's ``str`` (``False``, ``None``, ``1e-07``); Qwen3.6 writes strings as is and everything
  else as JSON (``false``, ``null``);
* **tools** - Qwen3-Coder lists tools as XML (``<function><name>...``); 3.5/3.6 as one JSON line each;
* **history reasoning** - Qwen3-Coder never renders reasoning; 3.5/3.6 render ``<think>\\n...\\n</think>\\n\\n``
  only on assistant turns after the last real user query, 3.6 on every assistant turn when
  ``preserve_thinking=True``;
* **generation prompt** - 3.5/3.6 open ``<think>\\n`` themselves when thinking is on (so the model's output
  starts inside reasoning) and write an empty closed block when it is off.

Content given as a list of parts is joined without a separator (Qwen3.5/3.6 also render image and video
parts as vision markers); ``None`` content renders as empty text.

Rendering safety: a value that contains a closing sequence the parser would take as the end of the value
(``</parameter>`` followed by ``<parameter=`` ...; see ``docs/xml-values.md``) has no escape in this format
and raises :class:`~toolwire.errors.UnrepresentableValue` naming the argument.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from toolwire.errors import UnrepresentableValue, UnsupportedByFormat
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, call_arguments, function_to_dict, tool_to_dict
from toolwire.parsers.engine.tools import tool_schemas
from toolwire.markers import Marker
from toolwire.parsers.qwen_xml import MARKERS, QWEN_GRAMMAR, Qwen3CoderParser, Qwen35Parser, Qwen36Parser
from toolwire.parsers.engine.xml_tool import XmlGrammar
from toolwire.parsers.engine.schema_coerce import declared_parameter
from toolwire.prompt import PromptBuilder, special_pattern
from toolwire.templates.json_text import tojson

from .chatml import chatml_special_tokens

# One marker table shared by the renderer and the parser (toolwire.parsers.qwen_xml).
M = MARKERS

SPECIAL_TOKENS = chatml_special_tokens(MARKERS, Marker.VISION_START, Marker.VISION_END, Marker.IMAGE_PAD,
                                       Marker.VIDEO_PAD)
"""Markers that are single control tokens in the Qwen vocabulary (``<function=`` etc. are plain text)."""

_SPECIALS = special_pattern(SPECIAL_TOKENS)


# ---------------------------------------------------------------- shared rendering helpers

def jinja_str(value: Any) -> str:
    """Jinja's ``|string`` on a JSON value: Python's ``str`` (``True``, ``None``, ``['a']``, ``1e-07``)."""
    return value if isinstance(value, str) else str(value)


def jinja_json(value: Any) -> str:
    """transformers' ``tojson``: ``json.dumps`` keeping non-ASCII, default separators."""
    return tojson(value)


def coder_value(value: Any) -> str:
    """Qwen3-Coder / Qwen3.5: objects and arrays as JSON, everything else with ``|string``."""
    return jinja_json(value) if isinstance(value, (dict, list)) else jinja_str(value)


def json_value(value: Any) -> str:
    """Qwen3.6: strings as is, everything else as JSON."""
    return value if isinstance(value, str) else jinja_json(value)


_NAME_BREAKERS = re.compile("[<>\n\r]")


def check_name(name: str, what: str, message_index: int, field: str) -> None:
    """A function or parameter name the parser could not read back (``>``, ``<`` or a newline in it)."""
    if _NAME_BREAKERS.search(name):
        raise UnrepresentableValue(f"{what} {name!r} contains '<', '>' or a newline, which the XML call format "
                                   "cannot carry", message_index=message_index, field=field)


def call_values(message: Message, index: int, grammar: XmlGrammar, to_text: Callable[[Any], str],
                tools: Any = None) -> list[tuple[str, list[tuple[str, str]]]]:
    """Each call's ``(name, [(key, value text)])``, refusing values and names the parser would misread: a
    closing sequence (``grammar.unsafe_value``), or the tag of a parameter the call's tool declares in
    ``tools`` (``<parameter=KEY>``, which the parser takes as the next argument of an unclosed value)."""
    calls = []
    schemas = tool_schemas(tools)
    for ci, call in enumerate(message.tool_calls or ()):
        name = call.function.name
        check_name(name, "function name", index, f"tool_calls[{ci}].function.name")
        args = []
        for key, value in call_arguments(call, index, ci).items():
            if _NAME_BREAKERS.search(key):  # (the field is worded only for a refusal)
                check_name(key, "argument name", index, f"tool_calls[{ci}].function.arguments.{key}")
            text = to_text(value)
            bad = grammar.unsafe_value(text) or next_parameter_tag(text, grammar, schemas.get(name))
            if bad is not None:
                raise UnrepresentableValue(
                    f"argument {key!r} contains {bad!r}, which would close the value early; this format has no "
                    "escape for it", message_index=index, field=f"tool_calls[{ci}].function.arguments.{key}")
            args.append((key, text))
        calls.append((name, args))
    return calls


def next_parameter_tag(text: str, grammar: XmlGrammar, tool_schema: dict | None) -> str | None:
    """The first ``<parameter=KEY>`` in ``text`` whose ``KEY`` the tool declares, or None."""
    opener = grammar.parameter_open
    start = text.find(opener) if tool_schema else -1
    while start != -1:
        end = text.find(">", start + len(opener))
        if end == -1:
            return None
        if declared_parameter(tool_schema, text[start + len(opener):end]):
            return text[start:end + 1]
        start = text.find(opener, start + 1)
    return None


def write_call(out: PromptBuilder, index: int, name: str, args: list[tuple[str, str]], framing: str,
               call_open: str, call_close: str) -> None:
    """``<call_open>\\n<function=NAME>\\n<parameter=K>{f}V{f}</parameter>\\n...</function>\\n<call_close>``."""
    put, content = out.appender(), out.content  # put: markers and fixed wording, never empty
    put(("special", call_open, index))
    put(("template", _FUNCTION_OPEN, index))
    content(name, index)
    put(("template", ">\n", index))
    if args:
        key_close, value_close = ("template", ">" + framing, index), ("template", framing + _PARAMETER_CLOSE, index)
        for key, text in args:
            put(("template", QWEN_GRAMMAR.parameter_open, index))
            content(key, index)
            put(key_close)
            content(text, index)
            put(value_close)
    put(("template", _FUNCTION_CLOSE, index))
    put(("special", call_close, index))


_FUNCTION_OPEN = "\n" + QWEN_GRAMMAR.function_open
_PARAMETER_CLOSE = QWEN_GRAMMAR.parameter_close + "\n"
_FUNCTION_CLOSE = QWEN_GRAMMAR.function_close + "\n"


# ---------------------------------------------------------------- Qwen3-Coder

_CODER_PREAMBLE = "You are Qwen, a helpful AI assistant that can interact with a computer to solve tasks."
_CODER_INSTRUCTIONS = (
    "\n</tools>\n\nIf you choose to call a tool ONLY reply in the following format with NO suffix:\n\n<tool_call>\n"
    "<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n"
    "<parameter=example_parameter_2>\nvalue_2\n</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n"
    "- Function calls MUST follow the specified format: the tool calling block MUST begin with an opening "
    "<tool_call> tag and end with a closing </tool_call> tag.\n- Required parameters MUST be specified\n"
    "- You may provide optional reasoning for your function call in natural language BEFORE the function call, "
    "but NOT after\n- If there is no function call available, answer the question like normal with your current "
    "knowledge and do not tell the user about function calls\n</IMPORTANT>")


def _extra_keys(out: PromptBuilder, fields: Any, handled: tuple[str, ...], index: int | None) -> None:
    """Qwen3-Coder's ``render_extra_keys``: ``\\n<key>value</key>`` for every other key of a mapping."""
    if not isinstance(fields, dict):
        return
    for key, value in fields.items():
        if key in handled:
            continue
        text = jinja_json(value) if isinstance(value, (dict, list)) else jinja_str(value)
        out.template("\n<", index).content(str(key), index).template(">", index).content(text, index)
        out.template("</", index).content(str(key), index).template(">", index)


def coder_tool_list(out: PromptBuilder, tools: list[Tool], index: int | None, *,
                    enum_and_required: bool = False) -> None:
    """Qwen3-Coder's tool list as XML (``\\n<function>\\n<name>...</function>`` per tool), its extra keys
    included; with ``enum_and_required`` (Nemotron 3) also each parameter's ``<enum>`` and the ``<required>``
    list, as JSON."""
    param_keys = ("name", "type", "description", "enum") if enum_and_required else ("name", "type", "description")
    schema_keys = ("type", "properties", "required") if enum_and_required else ("type", "properties")
    put, content = out.appender(), out.content  # put: fixed wording (adjacent wording joins in the segments)
    for tool in tools:
        fn = function_to_dict(tool)
        put(("template", "\n<function>\n<name>", index))
        content(jinja_str(fn.get("name")), index)
        put(("template", "</name>", index))
        if "description" in fn:
            put(("template", "\n<description>", index))
            content(jinja_str(fn["description"]).strip(), index)
            put(("template", "</description>", index))
        put(("template", "\n<parameters>", index))
        params = fn.get("parameters")
        if isinstance(params, dict) and isinstance(params.get("properties"), dict):
            for pname, pfields in params["properties"].items():
                put(("template", "\n<parameter>\n<name>", index))
                content(str(pname), index)
                put(("template", "</name>", index))
                fields = pfields if isinstance(pfields, dict) else None
                if fields is not None and "type" in fields:
                    put(("template", "\n<type>", index))
                    content(jinja_str(fields["type"]), index)
                    put(("template", "</type>", index))
                if fields is not None and "description" in fields:
                    put(("template", "\n<description>", index))
                    content(jinja_str(fields["description"]).strip(), index)
                    put(("template", "</description>", index))
                if enum_and_required and fields is not None and "enum" in fields:
                    put(("template", "\n<enum>", index))
                    content(jinja_json(fields["enum"]), index)
                    put(("template", "</enum>", index))
                _extra_keys(out, pfields, param_keys, index)
                put(("template", "\n</parameter>", index))
        _extra_keys(out, params, schema_keys, index)
        if enum_and_required and isinstance(params, dict) and "required" in params:
            put(("template", "\n<required>", index))
            content(jinja_json(params["required"]), index)
            put(("template", "</required>", index))
        put(("template", "\n</parameters>", index))
        _extra_keys(out, fn, ("type", "name", "description", "parameters"), index)
        put(("template", "\n</function>", index))


def _flat(message: Message) -> str:
    """Content as one string (text parts joined without a separator; None is empty)."""
    return message.text("")


def _tool_turn(out: PromptBuilder, messages: list[Message], pos: int, index: int, body: Any, *,
               header: str, open_: str, close: str) -> None:
    """A tool result; consecutive results share one user turn (Qwen templates' ``previtem``/``nextitem``). ``body``
    is the result's text, or (Qwen3.5) its ``(kind, text)`` pieces, trimmed as one text, so that media markers in a
    result stay control tokens."""
    if pos > 0 and messages[pos - 1].role != "tool":
        out.special(M["im_start"], index).template(header, index)
    out.template(open_[0], index).special(M["tool_response_open"], index).template(open_[1], index)
    if body.__class__ is str:
        out.content(body, index)
    else:
        _write_trimmed(out, body, index)
    out.template(close[0], index).special(M["tool_response_close"], index).template(close[1], index)
    last = pos == len(messages) - 1
    if last or messages[pos + 1].role != "tool":
        out.special(M["im_end"], index).template("\n", index)


class Qwen3Coder(Format):
    """Qwen3-Coder (``Qwen3-Coder.jinja``): no reasoning; tools as XML; values ``str``/JSON."""

    content_parts = "refuse"  # the template refuses or drops list content
    parser_class = Qwen3CoderParser

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        has_system = bool(messages) and messages[0].role == "system"
        loop = messages[1:] if has_system else messages
        offset = 1 if has_system else 0
        sys_index = 0 if has_system else None
        if has_system:
            out.special(M["im_start"], 0).template("system\n", 0).content(_flat(messages[0]), 0)
        elif tools:
            out.special(M["im_start"]).template("system\n" + _CODER_PREAMBLE)
        if tools:
            out.template("\n\n# Tools\n\nYou have access to the following tools:\n\n<tools>", sys_index)
            coder_tool_list(out, tools, sys_index)
            out.fixed(_CODER_INSTRUCTIONS, sys_index, _SPECIALS)
        if has_system or tools:
            out.special(M["im_end"], sys_index).template("\n", sys_index)
        for pos, message in enumerate(loop):
            index = pos + offset
            role = message.role
            if role == "assistant" and message.tool_calls:
                calls = call_values(message, index, QWEN_GRAMMAR, coder_value, tools)
                out.special(M["im_start"], index).template("assistant", index)
                content = message.content.strip() if isinstance(message.content, str) else ""
                if content:
                    out.template("\n", index).content(content, index).template("\n", index)
                for name, args in calls:
                    out.template("\n", index)
                    write_call(out, index, name, args, "\n", M["call_open"], M["call_close"])
                out.special(M["im_end"], index).template("\n", index)
            elif role == "tool":
                _tool_turn(out, loop, pos, index, _flat(message), header="user\n",
                           open_=("", "\n"), close=("\n", "\n"))
            else:
                out.special(M["im_start"], index).template(role + "\n", index).content(_flat(message), index)
                out.special(M["im_end"], index).template("\n", index)
        if options.add_generation_prompt:
            out.special(M["im_start"]).template("assistant\n")
        return False


# ---------------------------------------------------------------- Qwen3.5 / Qwen3.6

_QWEN35_INSTRUCTIONS = (
    "\n</tools>\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n"
    "<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n"
    "<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n"
    "</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n- Function calls MUST follow the specified "
    "format: an inner <function=...></function> block must be nested within <tool_call></tool_call> XML tags\n"
    "- Required parameters MUST be specified\n- You may provide optional reasoning for your function call in "
    "natural language BEFORE the function call, but NOT after\n- If there is no function call available, answer "
    "the question like normal with your current knowledge and do not tell the user about function calls\n"
    "</IMPORTANT>")


def _part_kind(part: Any) -> str:
    extra = part.model_extra or {}
    if part.type == "image" or "image" in extra or "image_url" in extra:
        return "image"
    if part.type == "video" or "video" in extra:
        return "video"
    if part.text is not None or "text" in (part.model_fields_set or ()):
        return "text"
    return "other"


class _Content:
    """Qwen3.5's ``render_content``: text as is, media as vision markers, counted across the conversation."""

    def __init__(self, add_vision_id: bool):
        self.add_vision_id = add_vision_id
        self.images = 0
        self.videos = 0

    def pieces(self, message: Message, index: int, *, count: bool, system: bool = False) -> list[tuple[str, str]]:
        content = message.content
        if content is None:
            return []
        if isinstance(content, str):
            return [("content", content)]
        out: list[tuple[str, str]] = []
        for part in content:
            kind = _part_kind(part)
            if kind in ("image", "video"):
                if system:
                    raise UnsupportedByFormat(f"System message cannot contain {kind}s.", message_index=index,
                                              field="content")
                label = "Picture" if kind == "image" else "Video"
                if count:
                    if kind == "image":
                        self.images += 1
                    else:
                        self.videos += 1
                if self.add_vision_id:
                    out.append(("template", f"{label} {self.images if kind == 'image' else self.videos}: "))
                pad = M["image_pad"] if kind == "image" else M["video_pad"]
                out.extend([("special", M["vision_start"]), ("special", pad), ("special", M["vision_end"])])
            elif kind == "text":
                out.append(("content", part.text or ""))
            else:
                raise UnsupportedByFormat("Unexpected item type in content.", message_index=index, field="content")
        return out

    def text(self, message: Message, index: int, *, count: bool, system: bool = False) -> str:
        return "".join(t for _, t in self.pieces(message, index, count=count, system=system))


def _write_trimmed(out: PromptBuilder, pieces: list[tuple[str, str]], index: int) -> None:
    """Pieces with the whole concatenation ``|trim``-ed (whitespace removed at both ends, across pieces)."""
    text = "".join(t for _, t in pieces)
    lead = len(text) - len(text.lstrip())
    keep = len(text.rstrip()) - lead
    pos = 0
    for kind, piece in pieces:
        start, end = max(lead - pos, 0), min(lead + keep - pos, len(piece))
        pos += len(piece)
        if start < end:
            out.add(kind, piece[start:end], index)


def _split_think(content: str) -> tuple[str, str]:
    """Reasoning written inline as ``<think>...</think>`` in the content (the template's fallback)."""
    reasoning = content.split("</think>")[0].rstrip("\n").split("<think>")[-1].lstrip("\n")
    return reasoning, content.split("</think>")[-1].lstrip("\n")


class Qwen35(Format):
    """Qwen3.5 (``Qwen3.5-4B.jinja``): JSON tool list, reasoning kept after the last user query."""
    tool_result_media = user_media = frozenset({"image", "image_url", "video"})

    parser_class = Qwen35Parser
    value_text: Callable[[Any], str] = staticmethod(coder_value)
    split_inline_think: bool = True  # content ``<think>...</think>`` without reasoning_content becomes reasoning

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        if not messages:
            raise UnsupportedByFormat("No messages provided.", field="messages")
        media = _Content(bool(options.extra.get("add_vision_id")))
        self._system(out, messages, tools, options, media)
        self._check_has_query(messages, media)
        for index, message in enumerate(messages):
            pieces = media.pieces(message, index, count=True)
            role = message.role
            if role == "system":
                if index != 0:
                    raise UnsupportedByFormat("System message must be at the beginning.", message_index=index,
                                              field="role")
            elif role == "user":
                out.special(M["im_start"], index).template("user\n", index)
                _write_trimmed(out, pieces, index)
                out.special(M["im_end"], index).template("\n", index)
            elif role == "assistant":
                self._assistant(out, message, index, pieces, options, tools)
            elif role == "tool":
                _tool_turn(out, messages, index, index, pieces, header="user", open_=("\n", "\n"), close=("\n", ""))
            else:
                raise UnsupportedByFormat("Unexpected message role.", message_index=index, field="role")
        if options.add_generation_prompt:
            out.special(M["im_start"]).template("assistant\n")
            if options.thinking:
                out.special(M["think_open"]).template("\n")
            else:
                out.special(M["think_open"]).template("\n\n").special(M["think_close"]).template("\n\n")
        return options.add_generation_prompt and options.thinking

    def _system(self, out: PromptBuilder, messages: list[Message], tools: list[Tool], options: RenderOptions,
                media: _Content) -> None:
        """The system turn: the tool list and instructions, then the system message's text."""
        has_system = messages[0].role == "system"
        if tools:
            sys_index = 0 if has_system else None
            out.special(M["im_start"], sys_index).template("system\n" + self._preface(options) + "# Tools\n\nYou "
                                                            "have access to the following functions:\n\n<tools>",
                                                            sys_index)
            for tool in tools:
                out.template("\n", sys_index).content(jinja_json(tool_to_dict(tool)), sys_index)
            out.fixed(_QWEN35_INSTRUCTIONS, sys_index, _SPECIALS)
            if has_system:
                pieces = media.pieces(messages[0], 0, count=False, system=True)
                if "".join(t for _, t in pieces).strip():
                    out.template("\n\n", 0)
                    _write_trimmed(out, pieces, 0)
            out.special(M["im_end"], sys_index).template("\n", sys_index)
        elif has_system:
            out.special(M["im_start"], 0).template("system\n", 0)
            _write_trimmed(out, media.pieces(messages[0], 0, count=False, system=True), 0)
            out.special(M["im_end"], 0).template("\n", 0)

    def _preface(self, options: RenderOptions) -> str:
        """Text the system turn starts with before the tool list (Qwen3.8's effort instruction)."""
        return ""

    @staticmethod
    def _check_has_query(messages: list[Message], media: _Content) -> None:
        """The template refuses a conversation without a real user query (reasoning retention itself is
        decided by :mod:`toolwire.context_policy`). The refusal names a message, as every request error does:
        the last user message (its content is only a tool response), else the last message (its role)."""
        last_user = None
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if message.role == "user":
                text = media.text(message, index, count=False).strip()
                if not (text.startswith("<tool_response>") and text.endswith("</tool_response>")):
                    return
                last_user = index if last_user is None else last_user
        where = (last_user, "content") if last_user is not None else (len(messages) - 1, "role")
        raise UnsupportedByFormat("No user query found in messages.", message_index=where[0], field=where[1])

    def _assistant(self, out: PromptBuilder, message: Message, index: int, pieces: list[tuple[str, str]],
                   options: RenderOptions, tools: list[Tool]) -> None:
        calls = call_values(message, index, QWEN_GRAMMAR, self.value_text, tools)
        content = "".join(t for _, t in pieces).strip()
        reasoning = message.reasoning_content
        split = self.split_inline_think and reasoning is None and "</think>" in content
        if split:
            reasoning, content = _split_think(content)
        reasoning = (reasoning or "").strip()
        out.special(M["im_start"], index).template("assistant\n", index)
        if options.keeps_reasoning(index):
            out.special(M["think_open"], index).template("\n", index).content(reasoning, index)
            out.template("\n", index).special(M["think_close"], index).template("\n\n", index)
        if split:
            out.content(content, index)
        else:
            _write_trimmed(out, pieces, index)
        for ci, (name, args) in enumerate(calls):
            if ci:
                out.template("\n", index)
            elif content.strip():
                out.template("\n\n", index)
            write_call(out, index, name, args, "\n", M["call_open"], M["call_close"])
        out.special(M["im_end"], index).template("\n", index)


class Qwen36(Qwen35):
    """Qwen3.6 (``Qwen3.6-35B-A3B.jinja``): as Qwen3.5, values as JSON, and ``preserve_thinking``."""

    parser_class = Qwen36Parser
    value_text = staticmethod(json_value)


FORMATS: dict[str, Format] = {f.name: f for f in (Qwen3Coder(), Qwen35(), Qwen36())}

__all__ = ["FORMATS", "MARKERS", "SPECIAL_TOKENS", "Qwen3Coder", "Qwen35", "Qwen36",
           "jinja_str", "jinja_json", "coder_value", "json_value", "check_name", "call_values", "next_parameter_tag", "write_call",
           "coder_tool_list"]
