"""GLM-4.5, GLM-4.6, GLM-4.7 and GLM-5.3 (``<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>``).

Reference: the models' own chat templates (``GLM-4.5.jinja``, ``GLM-4.6.jinja``, ``GLM-4.7-Flash.jinja``,
``GLM-5.3.jinja``) as transformers renders them. Versions are data on one implementation (:class:`GlmFormat`,
:class:`GlmStyle`):

* 4.5 and 4.6 put a newline after ``<|user|>``/``<|system|>``/``<|assistant|>``, after the call name and
  after every ``</arg_value>``; with thinking off they append ``/nothink`` to user turns and pre-fill
  ``<think></think>``. 4.6 differs from 4.5 only by refusing non-object arguments, which toolwire's request
  model refuses for every family anyway.
* 4.7 writes everything without newlines, opens ``<think>`` in the generation prompt when thinking is on
  (``</think>`` when off) and accepts ``clear_thinking=False`` to keep every earlier turn's reasoning.
* 5.3 writes 4.7's wire format after a head line ``<|system|>Reasoning Effort: Max`` (``reasoning_effort``
  ``high`` / ``low``: ``High`` / ``Low``; toggling it changes the first tokens of every prompt), always opens
  ``<think>`` (``always_thinks``), keeps every earlier reasoning as written (not stripped; a turn without one gets
  ``<think></think>``; ``clear_thinking=True`` drops it before the last user message), lists each tool as its
  ``function`` (without ``defer_loading`` / ``strict``; a deferred tool is left out), writes the results of one
  ``<|observation|>`` block in the order of the calls they answer when every id pairs up (else as sent), reads
  ``output`` lists and ``tool_reference`` parts, and writes a reminder for media parts it cannot see.

Earlier reasoning is kept only for assistant turns after the last user message (4.7: all of them with
``clear_thinking=False``; 5.3: all of them unless ``clear_thinking=True``), as :mod:`toolwire.context_policy`
decides; content and kept reasoning are ``strip()``-ed, as the templates do (5.3 writes reasoning as it is).

Argument values: strings are written as they are, every other value as JSON (``tojson``: ``", "`` and
``": "`` separators, non-ASCII kept). GLM has no escape, so a value that holds its own closing tag followed
by the next structural marker (``</arg_value><arg_key>``...) raises :class:`UnrepresentableValue`
(see ``docs/xml-values.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolwire.errors import UnrepresentableValue
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, call_arguments, function_to_dict, tool_to_dict
from toolwire.parsers.glm import MARKERS, Glm45Parser, Glm46Parser, Glm47Parser, Glm53Parser
from toolwire.parsers.engine.xml_calls import early_close
from toolwire.prompt import PromptBuilder
from toolwire.templates.json_text import tojson

from .jinja import REASONING_FIELDS

M = MARKERS

_TOOLS_INTRO = ("\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
                "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n")
_TOOLS_OUTRO = "</tools>\n\nFor each function call, output the function name and arguments within the following XML format:\n"


# ---------------------------------------------------------------- helpers shared with templates/minimax.py

def arg_text(value: Any) -> str:
    """An argument value as the HF templates write it: a string as is, anything else as ``tojson``."""
    return value if isinstance(value, str) else tojson(value)


def message_reasoning(message: Message) -> Any:
    """The message's reasoning as transformers passes it to templates: the first of
    :data:`~toolwire.templates.jinja.REASONING_FIELDS` that is not None."""
    extra = message.model_extra
    if not extra:  # the usual case: reasoning_content is the only field there is
        return message.reasoning_content
    fields = {"reasoning_content": message.reasoning_content, **extra}
    return next((fields[k] for k in REASONING_FIELDS if fields.get(k) is not None), None)


def jinja_str(value: Any) -> str:
    """What ``{{ value }}`` prints for a plain Python value (``str()``: dicts print as their repr)."""
    return value if isinstance(value, str) else str(value)


def part_dict(part: Any) -> dict:
    """A content part as the dict a template sees (keys as they were set)."""
    return part.model_dump(exclude_unset=True) if hasattr(part, "model_dump") else dict(part)


def check_representable(text: str, closers, *, message_index: int, field: str) -> None:
    """Raise :class:`UnrepresentableValue` when ``text`` would close its element early on the wire."""
    tag = early_close(text, closers)
    if tag is not None:
        raise UnrepresentableValue(
            f"the value holds {tag!r} followed by a structural marker, which would end it early; "
            "this format has no escape for it", message_index=message_index, field=field)


# ---------------------------------------------------------------- GLM

@dataclass(frozen=True)
class GlmStyle:
    """What differs between GLM versions."""

    newlines: bool          # 4.5 / 4.6: newline framing and the /nothink switch
    clear_thinking: bool    # 4.7: accepts the clear_thinking option
    effort_line: bool = False   # 5.3: the "<|system|>Reasoning Effort: Max" head line
    always_thinks: bool = False  # 5.3: the prompt always opens <think>; history reasoning as written, else <think></think>
    tool_list: str = "tool"     # "tool": each tool as sent; "function": its function (5.3, see the module docstring)
    results: str = "parts"      # "parts": 4.x tool results; "ordered": 5.3's (ordered by call ids, outputs, references)
    media_reminder: bool = False  # 5.3: a media part reads as a reminder that the model cannot see it


def split_reasoning(message: Message, *, strip_both_ends: bool = False) -> tuple[str, str]:
    """(reasoning, content) as the GLM and MiniMax templates derive them: when the message has no reasoning
    field, a ``<think>…</think>`` inside the content is split off. GLM strips the newlines next to the tags
    only; MiniMax (``strip_both_ends``) strips newlines at both ends of each part."""
    content = message.text(joiner="")
    reasoning = message_reasoning(message)
    if isinstance(reasoning, str):
        return reasoning, content
    if "</think>" not in content:
        return "", content
    head, tail = content.split("</think>")[0], content.split("</think>")[-1]
    if strip_both_ends:
        return head.strip("\n").split("<think>")[-1].strip("\n"), tail.strip("\n")
    return head.rstrip("\n").split("<think>")[-1].lstrip("\n"), tail.lstrip("\n")


class GlmFormat(Format):
    """A GLM version (see the module docstring); the parser class matches the version's framing."""

    def __init__(self, style: GlmStyle, parser_class: type):
        self.style = style
        self.parser_class = parser_class
        if style.results == "ordered":  # 5.3 lists the tools a result's tool_reference parts name
            self.tool_result_parts = frozenset({"tool_reference"})

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        style = self.style
        nl = "\n" if style.newlines else ""
        text_of = _message_visible_text if style.media_reminder else _message_text
        out.special(M["gmask"]).special(M["sop"])
        if style.effort_line:
            effort = options.reasoning_effort or "max"
            out.special(M["system"]).template("Reasoning Effort: " + effort.capitalize())
        if tools:
            self._render_tools(tools, out)
        for index, message in enumerate(messages):
            role = message.role
            if role == "user":
                text = text_of(message)
                out.special(M["user"], index).template(nl, index).content(text, index)
                if style.newlines and not options.thinking and not text.endswith(M["nothink"]):
                    out.special(M["nothink"], index)
            elif role == "assistant":
                self._render_assistant(index, message, options.keeps_reasoning(index), out)
            elif role == "tool":
                if style.results == "ordered":
                    if index == 0 or messages[index - 1].role != "tool":
                        self._render_results(index, messages, tools, out)
                else:
                    self._render_tool(index, message, messages, out)
            elif role == "system":
                out.special(M["system"], index).template(nl, index).content(text_of(message), index)
        if options.add_generation_prompt:
            out.special(M["assistant"])
            if style.always_thinks:
                out.special(M["think_open"])
                return True
            if self.style.newlines:
                if not options.thinking:
                    out.template("\n").special(M["think_open"]).special(M["think_close"])
                return False
            out.special(M["think_open"] if options.thinking else M["think_close"])
            return options.thinking
        return False

    def _render_tools(self, tools: list[Tool], out: PromptBuilder) -> None:
        out.special(M["system"]).template(_TOOLS_INTRO)
        for tool in tools:
            if self.style.tool_list == "function":
                function = function_to_dict(tool)
                if function.get("defer_loading"):  # a deferred tool is listed when a tool_reference names it
                    continue
                out.content(_function_json(function)).template("\n")
            else:
                out.content(tojson(tool_to_dict(tool))).template("\n")
        out.template(_TOOLS_OUTRO)
        nl = "\n" if self.style.newlines else ""
        out.special(M["call_open"]).template("{function-name}" + nl)
        for n in (1, 2):
            out.special(M["key_open"]).template(f"{{arg-key-{n}}}").special(M["key_close"]).template(nl)
            out.special(M["value_open"]).template(f"{{arg-value-{n}}}").special(M["value_close"]).template(nl)
        out.template("..." + nl).special(M["call_close"])

    def _render_assistant(self, index: int, message: Message, keep_reasoning: bool, out: PromptBuilder) -> None:
        nl = "\n" if self.style.newlines else ""
        if self.style.always_thinks:
            reasoning, content = _reasoning_as_written(message)
        else:
            reasoning, content = split_reasoning(message)
        out.special(M["assistant"], index).template(nl, index)
        if keep_reasoning and reasoning:
            shown = reasoning if self.style.always_thinks else reasoning.strip()
            out.special(M["think_open"], index).content(shown, index).special(M["think_close"], index)
        elif self.style.newlines or self.style.always_thinks:
            out.special(M["think_open"], index).special(M["think_close"], index)
        else:
            out.special(M["think_close"], index)
        if content.strip():
            out.template(nl, index).content(content.strip(), index)
        for call_index, call in enumerate(message.tool_calls or ()):
            self._render_call(index, call_index, call, out)

    def _render_call(self, index: int, call_index: int, call: Any, out: PromptBuilder) -> None:
        nl = "\n" if self.style.newlines else ""
        where = f"tool_calls[{call_index}].function"
        name = call.function.name
        if "\n" in name or M["key_open"] in name or M["call_close"] in name:
            raise UnrepresentableValue("a GLM call name cannot hold a newline, <arg_key> or </tool_call>",
                                       message_index=index, field=f"{where}.name")
        put, content, template = out.appender(), out.content, out.template  # put: markers, never empty
        template(nl, index)
        put(("special", M["call_open"], index))
        content(name, index)
        template(nl, index)
        key_open, key_close = ("special", M["key_open"], index), ("special", M["key_close"], index)
        value_open, value_close = ("special", M["value_open"], index), ("special", M["value_close"], index)
        for key, value in call_arguments(call, index, call_index).items():
            field = f"{where}.arguments.{key}"
            if M["key_close"] in key or M["value_open"] in key or M["call_close"] in key:
                raise UnrepresentableValue("a GLM argument name cannot hold </arg_key>, <arg_value> or </tool_call>",
                                           message_index=index, field=field)
            text = arg_text(value)
            check_representable(text, self.parser_class.value_closers, message_index=index, field=field)
            put(key_open)
            content(key, index)
            put(key_close)
            template(nl, index)
            put(value_open)
            content(text, index)
            put(value_close)
            template(nl, index)
        put(("special", M["call_close"], index))

    def _render_tool(self, index: int, message: Message, messages: list[Message], out: PromptBuilder) -> None:
        nl = "\n" if self.style.newlines else ""
        if isinstance(message.content, str):
            if index == 0 or messages[index - 1].role != "tool":
                out.special(M["observation"], index)
            out.template(nl, index).special(M["response_open"], index).template(nl, index)
            out.content(message.content, index)
            out.template(nl, index).special(M["response_close"], index)
            return
        # content parts (or none): the templates print each part's ``output``, else the part itself
        out.special(M["observation"], index)
        for part in message.content or ():
            shown = part_dict(part)
            text = jinja_str(shown["output"]) if "output" in shown else jinja_str(shown)
            out.template(nl, index).special(M["response_open"], index).template(nl, index).content(text, index)
            out.template(nl, index).special(M["response_close"], index)

    # ---- GLM-5.3's tool results

    def _render_results(self, index: int, messages: list[Message], tools: list[Tool], out: PromptBuilder) -> None:
        """The run of tool messages from ``index``: ``<|observation|>`` and one ``<tool_response>`` per result,
        in the order of the calls of the assistant message before them when every result's id names one of them
        (all ids present and distinct), else as sent (GLM-5.3's template)."""
        end = index
        while end + 1 < len(messages) and messages[end + 1].role == "tool":
            end += 1
        entries = []  # (id, message index, the output entry or None for the whole message)
        for k in range(index, end + 1):
            message = messages[k]
            if _outputs_list(message.content):
                entries += [(_id_of(part), k, part) for part in map(part_dict, message.content)]
            else:
                entries.append((_id_of(message), k, None))
        previous = messages[index - 1] if index else None
        calls = previous.tool_calls if previous is not None and previous.role == "assistant" else None
        out.special(M["observation"], index)
        if calls:
            call_ids = [_id_of(call) for call in calls]
            ids = [e[0] for e in entries]
            if ("" not in ids and "" not in call_ids and len(set(ids)) == len(ids)
                    and len(set(call_ids)) == len(call_ids) and all(i in call_ids for i in ids)):
                position = {call_id: n for n, call_id in enumerate(call_ids)}
                for _, k, entry in sorted(entries, key=lambda e: position[e[0]]):
                    if entry is None:
                        self._write_result(k, messages[k].content, tools, out)
                    else:
                        self._write_output(k, entry.get("output"), tools, out)
                return
        for k in range(index, end + 1):
            self._write_result(k, messages[k].content, tools, out)

    def _write_result(self, index: int, content: Any, tools: list[Tool], out: PromptBuilder) -> None:
        """One tool message's results (the template's ``render_tool_response``)."""
        if isinstance(content, str):
            _response(out, index, content)
        elif content and part_dict(content[0]).get("type") == "tool_reference":
            _references(out, index, [part_dict(p) for p in content], tools)
        elif _outputs_list(content):
            for part in map(part_dict, content):
                self._write_output(index, part.get("output"), tools, out)
        else:
            _response(out, index, _visible_text(content))

    @staticmethod
    def _write_output(index: int, output: Any, tools: list[Tool], out: PromptBuilder) -> None:
        """One entry of an ``output`` list: a list of ``tool_reference`` parts, else its visible text."""
        if isinstance(output, list) and output and isinstance(output[0], dict) \
                and output[0].get("type") == "tool_reference":
            _references(out, index, output, tools)
        else:
            _response(out, index, _visible_text(output))


# ---------------------------------------------------------------- GLM-5.3's text helpers

_MEDIA = ("image", "image_url", "video", "video_url", "audio", "audio_url", "input_audio")


def _message_text(message: Message) -> str:
    """The text of a message as GLM 4.x templates print it (text parts joined with nothing)."""
    return message.text(joiner="")


def _message_visible_text(message: Message) -> str:
    return _visible_text(message.content)


def _visible_text(content: Any) -> str:
    """GLM-5.3's ``visible_text``: a string as is; a list's text parts and strings, a media part as a reminder
    that the model cannot see it; anything else as Jinja prints it."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, list):
        pieces = []
        for item in content:
            if isinstance(item, str):
                pieces.append(item)
                continue
            part = part_dict(item) if not isinstance(item, dict) else item
            kind = part.get("type")
            if kind == "text":
                text = part.get("text")
                pieces.append("" if text is None else jinja_str(text))
            elif kind in _MEDIA:
                media = kind.replace("_url", "").replace("input_", "")
                pieces.append(f"<reminder>You are unable to process this {media} because you don't have "
                              "multi-modal input ability. Try different methods.</reminder>")
        return "".join(pieces)
    return jinja_str(content)


def _outputs_list(content: Any) -> bool:
    """A list of result entries (its first part has an ``output``)."""
    return isinstance(content, list) and bool(content) and "output" in part_dict(content[0])


def _id_of(obj: Any) -> str:
    """The template's ``id_of``: ``tool_call_id``, else ``id``, else ''."""
    get = obj.get if isinstance(obj, dict) else (lambda key: getattr(obj, key, None))
    for key in ("tool_call_id", "id"):
        value = get(key)
        if value:
            return jinja_str(value)
    return ""


def _function_json(function: dict) -> str:
    """A tool's function as GLM-5.3 lists it: JSON without ``defer_loading`` and ``strict``."""
    return tojson({k: v for k, v in function.items() if k not in ("defer_loading", "strict")})


def _response(out: PromptBuilder, index: int, text: str) -> None:
    out.special(M["response_open"], index).content(text, index).special(M["response_close"], index)


def _references(out: PromptBuilder, index: int, refs: list, tools: list[Tool]) -> None:
    """``tool_reference`` parts: the referenced tools' definitions (deferred ones too) in one response."""
    out.special(M["response_open"], index).template("<tools>\n", index)
    functions = [function_to_dict(tool) for tool in tools]
    for ref in refs:
        name = ref.get("name") if isinstance(ref, dict) else None
        for function in functions:
            if function.get("name") == name:
                out.content(_function_json(function), index).template("\n", index)
    out.template("</tools>", index).special(M["response_close"], index)


def _reasoning_as_written(message: Message) -> tuple[str | None, str]:
    """(reasoning, content) as GLM-5.3 derives them: the reasoning field when it is a string, else the text
    before a ``</think>`` in the content (after its ``<think>``), nothing stripped; None when there is none."""
    content = _visible_text(message.content)
    reasoning = message_reasoning(message)
    if isinstance(reasoning, str):
        return reasoning, content
    if "</think>" in content:
        return content.split("</think>")[0].split("<think>")[-1], content.split("</think>")[-1]
    return None, content


FORMATS: dict[str, Format] = {f.name: f for f in (
    GlmFormat(GlmStyle(newlines=True, clear_thinking=False), Glm45Parser),
    GlmFormat(GlmStyle(newlines=True, clear_thinking=False), Glm46Parser),
    GlmFormat(GlmStyle(newlines=False, clear_thinking=True), Glm47Parser),
    GlmFormat(GlmStyle(newlines=False, clear_thinking=True, effort_line=True, always_thinks=True,
                       tool_list="function", results="ordered", media_reminder=True), Glm53Parser),
)}
