"""Llama 3.1 and 3.2: JSON tool calls ``{"name": ..., "parameters": {...}}`` and ``<|python_tag|>`` built-in calls.

Reference: ``Llama-3.1-8B-Instruct.jinja`` (meta-llama/Llama-3.1-8B-Instruct, identical to 3.3) as transformers
renders it, with ``arguments`` decoded to objects. Quirks kept:

* custom tools go into the *first* message after the system message (``tools_in_user_message``, default
  true), each as ``tojson(indent=4)``; the system header says ``Environment: ipython`` whenever tools exist;
* assistant text next to a tool call is dropped; only one call per message (more are refused, as the
  template refuses them); tool results are printed as JSON (a string result becomes a JSON string);
* message text is stripped (Jinja ``trim``); the date line defaults to the template's ``26 Jul 2024``
  (``current_date`` overrides it);
* ``builtin_tools`` (e.g. ``["brave_search", "wolfram_alpha"]``) adds the ``Tools:`` line, renders calls to
  those tools as ``<|python_tag|>NAME.call(k="v")`` and ends every tool-call turn with ``<|eom_id|>``.

Llama 3.2 (``Llama-3.2-3B-Instruct.jinja``, also 1B and the 3.2 Vision text path) is the same template without
built-in tools, dated today (``strftime_now``) unless ``current_date`` is given: data on the same class.
"""

from __future__ import annotations

from datetime import date

from toolwire.errors import InvalidOption, UnsupportedByFormat
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, call_arguments, tool_to_dict
from toolwire.parsers.llama import MARKERS, Llama31Parser, Llama32Parser
from toolwire.prompt import PromptBuilder
from toolwire.templates.json_text import tojson as json_dumps, tojson_indented

M = MARKERS

DEFAULT_DATE = "26 Jul 2024"
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
CALL_FORMAT = 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.'
USER_TOOLS_PREAMBLE = ("Given the following functions, please respond with a JSON for a function call "
                       "with its proper arguments that best answers the given prompt.\n\n")
SYSTEM_TOOLS_PREAMBLE = ("You have access to the following functions. To call a function, please respond "
                         "with JSON for a function call.")


def date_line(current_date: str | None, *, today: bool = False) -> str:
    """``current_date`` ('YYYY-MM-DD') in the template's ``26 Jul 2024`` form; without it, today's date when
    ``today`` (Llama 3.2's ``strftime_now("%d %b %Y")``), else the template default."""
    if not current_date:
        if today:
            return date_line(date.today().isoformat())
        return DEFAULT_DATE
    year, month, day = current_date.split("-")
    return f"{day} {_MONTHS[int(month) - 1]} {year}"


HEADER_OPEN, HEADER_CLOSE, EOT = M["header_open"], M["header_close"], M["eot"]
_TEMPLATE_ROLES = frozenset({"system", "user", "assistant"})  # other roles' names are written as request text


def write_header(out: PromptBuilder, markers: tuple[str, str], role: str, index: int | None,
                 role_kind: str = "template") -> None:
    """A role header: ``markers`` (the family's header open and close tokens) around the role, then a blank line
    (Llama 3.x and Llama 4 differ only in the markers)."""
    put = out.appender()
    put(("special", markers[0], index))
    if role:
        put((role_kind, role, index))
    put(("special", markers[1], index))
    put(("template", "\n\n", index))


_HEADER = (HEADER_OPEN, HEADER_CLOSE)


def _header(out: PromptBuilder, role: str, index: int | None, *, role_kind: str = "template") -> None:
    write_header(out, _HEADER, role, index, role_kind)


def _tool_list(tools: list[Tool], out: PromptBuilder) -> None:
    put = out.appender()
    put(("template", CALL_FORMAT + "Do not use variables.\n\n", None))
    blank = ("template", "\n\n", None)
    for tool in tools:
        put(("content", tojson_indented(tool_to_dict(tool)), None))  # tojson(indent=4), never empty
        put(blank)


def _builtin_call(out: PromptBuilder, index: int, name: str, args: dict, call_index: int) -> None:
    out.special(M["python_tag"], index).content(name, index).template(".call(", index)
    for n, (key, value) in enumerate(args.items()):
        if not isinstance(value, str):
            raise UnsupportedByFormat(f"built-in tool arguments must be strings (the template concatenates them);"
                                      f" {key!r} is {type(value).__name__}", message_index=index,
                                      field=f"tool_calls[{call_index}].function.arguments")
        out.template(", " if n else "", index).content(key, index).template('="', index).content(value, index)
        out.template('"', index)
    out.template(")", index)


class Llama31Format(Format):
    """Llama 3.1 / 3.3 Instruct with JSON custom tools and optional built-in (``<|python_tag|>``) tools."""
    tool_result_json = True  # the template writes a result with tojson

    content_parts = "refuse"  # the template prints list content as a Python list ...
    content_parts_roles = frozenset({"system", "user", "assistant"})  # ... tool results it writes as JSON
    parser_class = Llama31Parser
    dated_today = False  # Llama 3.2: the date line is today's unless current_date is given

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        in_user = bool(options.extra.get("tools_in_user_message", True))
        builtin = options.extra.get("builtin_tools")
        if builtin is not None and (not isinstance(builtin, (list, tuple)) or
                                    not all(isinstance(b, str) for b in builtin)):
            raise InvalidOption("builtin_tools must be a list of tool names", field="builtin_tools")
        rest = list(enumerate(messages))
        system = ""
        if rest and rest[0][1].role == "system":
            system = rest.pop(0)[1].text().strip()
        out.special(M["bos"])
        _header(out, "system", None)
        if builtin is not None or tools:
            out.template("Environment: ipython\n")
        if builtin is not None:
            out.template("Tools: ").content(", ".join(b for b in builtin if b != "code_interpreter"))
            out.template("\n\n")
        today = date_line(options.current_date, today=self.dated_today)
        out.template(f"Cutting Knowledge Date: December 2023\nToday Date: {today}\n\n")
        if tools and not in_user:
            out.template(SYSTEM_TOOLS_PREAMBLE)
            _tool_list(tools, out)
        out.content(system, 0 if system else None).special(M["eot"])
        if tools and in_user:
            if not rest:
                raise UnsupportedByFormat("Cannot put tools in the first user message when there's no first user "
                                          "message!", field="messages")
            index, first = rest.pop(0)
            _header(out, "user", index)
            out.template(USER_TOOLS_PREAMBLE, index)
            _tool_list(tools, out)
            out.content(first.text().strip(), index).special(M["eot"], index)
        put = out.appender()
        for index, msg in rest:
            role = msg.role
            if role in ("tool", "ipython"):
                _header(out, "ipython", index)
                content = msg.content
                payload = content if content.__class__ is not list else [  # a JSON object as itself (tojson)
                    p.model_dump(exclude_none=True) for p in content]
                out.content(json_dumps(payload if payload is not None else ""), index).special(M["eot"], index)
            elif msg.tool_calls:
                if len(msg.tool_calls) != 1:
                    raise UnsupportedByFormat("This model only supports single tool-calls at once!",
                                              message_index=index, field="tool_calls")
                call = msg.tool_calls[0]
                args = call_arguments(call, index, 0)
                _header(out, "assistant", index)
                if builtin is not None and call.function.name in builtin:
                    _builtin_call(out, index, call.function.name, args, 0)
                else:
                    put(("template", '{"name": "', index))
                    out.content(call.function.name, index)
                    put(("template", '", "parameters": ', index))
                    put(("content", json_dumps(args), index))
                    put(("template", "}", index))
                put(("special", M["eom"] if builtin is not None else EOT, index))
            else:
                _header(out, role, index, role_kind="template" if role in _TEMPLATE_ROLES else "content")
                content = msg.content
                out.content((content if content.__class__ is str else msg.text()).strip(), index)
                put(("special", EOT, index))
        if options.add_generation_prompt:
            _header(out, "assistant", None)
        return False


class Llama32Format(Llama31Format):
    """Llama 3.2 Instruct: the 3.1 template without built-in tools (no ``builtin_tools`` option), dated today."""

    parser_class = Llama32Parser
    dated_today = True


FORMATS: dict[str, Format] = {f.name: f for f in (Llama31Format(), Llama32Format())}
