"""Hermes 3 (NousResearch Hermes-3-Llama-3.1, ``tool_use`` template): ChatML with ``<tool_call>`` JSON calls.

Wire format: ``<tool_call>\\n{"name": NAME, "arguments": {...}}\\n</tool_call>``, one per call (the grammar of
:mod:`toolwire.templates.hermes_json`, parsed by the same parser). Reference: ``Hermes-3-Llama-3.1-8B-tool_use.jinja``
as transformers renders it, ``arguments`` decoded to objects. Quirks kept, byte for byte:

* the prompt starts ``<|begin_of_text|>`` and always with the template's own system block listing the tools;
  each tool is written as ``{"type": "function", "function": {"name": ..., "description": "NAME(ARG: TYPE, ...)
  - DESCRIPTION\\n\\n    Args:\\n        ARG(TYPE): ARG DESCRIPTION...", "parameters": SCHEMA}}`` with the
  description text *not* JSON-escaped and the argument lines not separated (as the template writes them);
  types are printed the template's Python way (``str``, ``list[Union[]]``, ``dict[str, int]``, ``Union[str,int]``);
* a request's own system message becomes a second system turn; an assistant turn with calls drops its content
  (as the template does); tool results go into a ``tool`` turn, ``<tool_response>\\n...\\n</tool_response>``
  each, and that turn's ``<|im_end|>`` has no newline after it.

Refused, as the template refuses them (it fails on them): a request without tools; a tool without a
description or parameters; a parameter type the template cannot print (``"null"`` and any other type name it
does not know, alone or in a union); message text that is not a string. Refused because the template would
silently lose or mangle them: roles other than system/user/assistant/tool (the template skips them) and list
content in a tool result (the template prints its Python repr). Function names the call's JSON could not carry
are :class:`~toolwire.errors.UnrepresentableValue`. The model has no reasoning block; earlier reasoning is
never rendered.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from toolwire.errors import InvalidToolDefinition, UnsupportedByFormat
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, call_arguments, function_to_dict
from toolwire.templates.json_text import tojson as jinja_json
from toolwire.parsers.hermes3 import MARKERS, Hermes3Parser
from toolwire.prompt import PromptBuilder, special_pattern

from .hermes_json import _check_name

M = MARKERS
SPECIAL_TOKENS = frozenset({M["bos"], M["im_start"], M["im_end"], M["call_open"], M["call_close"],
                            M["response_open"], M["response_close"]})

SYSTEM_PREAMBLE = ("You are a function calling AI model. You are provided with function signatures within "
                   "<tools></tools> XML tags. You may call one or more functions to assist with the user query. "
                   "Don't make assumptions about what values to plug into functions. Here are the available "
                   "tools: <tools> ")
SYSTEM_POSTAMBLE = (
    " </tools>Use the following pydantic model json schema for each tool call you will make: "
    '{"properties": {"name": {"title": "Name", "type": "string"}, "arguments": {"title": "Arguments", "type": '
    '"object"}}, "required": ["name", "arguments"], "title": "FunctionCall", "type": "object"}}\n'
    "For each function call return a json object with function name and arguments within <tool_call></tool_call> "
    "XML tags as follows:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-dict>}\n</tool_call>"
    "<|im_end|>\n")
_BASIC_TYPES = {"string": "str", "number": "float", "integer": "int", "boolean": "bool"}
_ROLES = ("system", "user", "assistant", "tool")
_specials = lru_cache(maxsize=None)(special_pattern)


class _Unprintable(Exception):
    """A JSON-schema type the template's ``json_to_python_type`` macro cannot print (it recurses forever)."""


def python_type(spec: Any) -> str:
    """The template's ``json_to_python_type``: a JSON schema as a Python type name, exactly as it prints it
    (Jinja semantics: a missing ``type`` iterates as empty, so it prints ``Union[]``; ``array`` always prints
    ``list[Union[]]`` because the macro passes the schema's items *pairs*, which have no ``type``)."""
    kind = spec.get("type") if isinstance(spec, dict) else None
    missing = not isinstance(spec, dict) or "type" not in spec
    if missing:
        return "Union[]"
    if isinstance(kind, str) and kind in _BASIC_TYPES:
        return _BASIC_TYPES[kind]
    if kind == "array":
        return "list[Union[]]"
    if kind == "object":
        if "additionalProperties" in spec:
            return "dict[str, " + python_type(spec["additionalProperties"]) + "]"
        return "dict"
    if isinstance(kind, (str, list, dict)):  # iterable: a Union of each item taken as a type name
        items = list(kind)
        if isinstance(kind, str) and items:  # one character is iterable again: endless recursion
            raise _Unprintable(kind)
        return "Union[" + ",".join(python_type({"type": t}) for t in items) + "]"
    return "Any"


_MISSING = object()


def _trimmed(value: Any) -> str:
    """Jinja ``x|trim`` of a schema field: a missing one prints as empty, anything else as ``str`` stripped."""
    return "" if value is _MISSING else str(value).strip()


class Hermes3Format(Format):
    """Hermes 3 (Llama 3.1 base) with the ``tool_use`` chat template."""

    special_tokens = SPECIAL_TOKENS
    parser_class = Hermes3Parser

    # ---- the tools block
    def _type(self, spec: Any, index: int, where: str) -> str:
        try:
            return python_type(spec)
        except _Unprintable as exc:
            raise InvalidToolDefinition(f"the template cannot print the parameter type {exc.args[0]!r} (its "
                                        "json_to_python_type macro knows string, number, integer, boolean, array "
                                        "and object)", field=f"tools[{index}].function.{where}") from None

    def _tool(self, out: PromptBuilder, tool: Tool, index: int) -> None:
        fn = function_to_dict(tool)
        params = fn.get("parameters")
        if not isinstance(params, dict):
            raise InvalidToolDefinition("the template needs a parameters object", field=f"tools[{index}].function"
                                                                                          ".parameters")
        if not isinstance(fn.get("description"), str):
            raise InvalidToolDefinition("the template needs a description (it concatenates it)",
                                        field=f"tools[{index}].function.description")
        props = params.get("properties")
        props = props if isinstance(props, dict) else {}
        types = {k: self._type(v, index, f"parameters.properties.{k}") for k, v in props.items()}
        out.template('{"type": "function", "function": {"name": "').content(fn["name"]).template('", ')
        out.template('"description": "').content(fn["name"]).template("(")
        for n, (key, typ) in enumerate(types.items()):
            out.template(", " if n else "").content(key).template(": " + typ)
        out.template(")")
        ret = fn.get("return")
        if "return" in fn:
            out.template(" -> " + self._type(ret, index, "return"))
        out.template(" - ").content(fn["description"]).template("\n\n")
        for n, (key, typ) in enumerate(types.items()):
            out.template("    Args:\n" if n == 0 else "")
            desc = props[key].get("description", _MISSING) if isinstance(props[key], dict) else _MISSING
            out.template("        ").content(key).template("(" + typ + "): ").content(_trimmed(desc))
        if isinstance(ret, dict) and "description" in ret:
            out.template("\n    Returns:\n        ").content(str(ret["description"]))
        out.template('", "parameters": ')
        if props:
            out.content(jinja_json(params))
        else:
            out.template("{}")
        out.template("}")

    def _system(self, tools: list[Tool], out: PromptBuilder) -> None:
        specials = _specials(SPECIAL_TOKENS)
        out.special(M["bos"]).special(M["im_start"]).template("system\n")
        out.fixed(SYSTEM_PREAMBLE, None, specials)
        for index, tool in enumerate(tools):
            if index:
                out.template("\n")
            self._tool(out, tool, index)
        out.fixed(SYSTEM_POSTAMBLE, None, specials)

    # ---- turns
    @staticmethod
    def _string(message: Message, index: int) -> str:
        if not isinstance(message.content, str):
            what = "no content" if message.content is None else "content parts"
            raise UnsupportedByFormat(f"the template concatenates a {message.role} message's content as a string "
                                      f"(got {what})", message_index=index, field="content")
        return message.content

    def _calls(self, out: PromptBuilder, message: Message, index: int) -> None:
        out.special(M["im_start"], index).template("assistant", index)
        for ci, call in enumerate(message.tool_calls or ()):
            name = call.function.name
            _check_name(name, index, ci)
            args = jinja_json(call_arguments(call, index, ci))
            out.template("\n", index).special(M["call_open"], index)
            out.template('\n{"name": "', index).content(name, index).template('", "arguments": ', index)
            out.content(args, index).template("}\n", index).special(M["call_close"], index)
        out.special(M["im_end"], index).template("\n", index)

    def _tool_result(self, out: PromptBuilder, messages: list[Message], i: int) -> None:
        content = messages[i].content
        if isinstance(content, list):
            raise UnsupportedByFormat("the template prints a tool result's content parts as a Python list; "
                                      "give the result as a string", message_index=i, field="content")
        last = i == len(messages) - 1
        if i > 0 and messages[i - 1].role != "tool":
            out.special(M["im_start"], i).template("tool\n", i)
        out.special(M["response_open"], i).template("\n", i).content(content or "", i).template("\n", i)
        out.special(M["response_close"], i)
        if not last:
            out.template("\n", i)
        if last or messages[i + 1].role != "tool":
            out.special(M["im_end"], i)

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        if not tools:
            raise UnsupportedByFormat("the Hermes 3 tool_use template renders only requests with tools (it "
                                      "iterates over them); use the model's default template for plain chat",
                                      field="tools")
        self._system(tools, out)
        for i, message in enumerate(messages):
            if message.role not in _ROLES:
                raise UnsupportedByFormat(f"the template skips {message.role!r} messages (it renders "
                                          f"{', '.join(_ROLES)})", message_index=i, field="role")
            if message.role == "tool":
                self._tool_result(out, messages, i)
            elif message.role == "assistant" and message.tool_calls is not None:
                self._calls(out, message, i)
            else:
                text = self._string(message, i)
                out.special(M["im_start"], i).template(message.role + "\n", i).content(text, i)
                out.special(M["im_end"], i).template("\n", i)
        if options.add_generation_prompt:
            out.special(M["im_start"]).template("assistant\n")
        return False


FORMATS: dict[str, Format] = {f.name: f for f in (Hermes3Format(),)}
