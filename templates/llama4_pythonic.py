"""Llama 4 with pythonic calls: vLLM's example template ``tool_chat_template_llama4_pythonic.jinja`` (served with
``--tool-call-parser llama4_pythonic``), written after Meta's documented Llama 4 prompt format. Not the template
Meta's checkpoints ship (that one is ``llama4``, JSON calls).

Reference: ``Llama-4-pythonic-vllm.jinja`` as transformers renders it, ``arguments`` decoded to objects. Native
Python on the family's declaration (:mod:`toolwire.families.llama4_pythonic`). What the template does, kept:

* ``<|header_start|>ROLE<|header_end|>\\n\\n`` turns ending ``<|eot|>``; no system message and tools give the
  template's own long system prompt (its function-calling rules) followed by the tools, a system message gives its
  trimmed text, then (with tools) a line naming the call format and the tools; the tools are the request's list as
  JSON indented by 4;
* an assistant turn with calls is its content (text parts untrimmed, images ``<|image|>``) then
  ``[NAME(key="VALUE", ...), ...]``, every value written as ``"%s"``: strings as they are, nothing escaped, other
  values as Python's ``str`` (``"2"``, ``"False"``, ``"['a', 'b']"``);
* other messages' text parts are trimmed; tool results are ``ipython`` turns holding the result as JSON (a string
  becomes a JSON string); the generation prompt opens the assistant turn (no reasoning, ever).

Refused where the template fails or silently loses data (:class:`~toolwire.errors.UnsupportedByFormat`): tools
with a system message whose trimmed text is empty (the template then writes no system turn, and no tools), a
system message with parts beyond one text part (only the first is read), a tool result without content, and
calls on a message that is not the assistant's (the template drops it). Refused because the parser could not read
back what the template writes (:class:`~toolwire.errors.UnrepresentableValue`): a tool or argument name that is no
name, a value whose text holds a ``"`` the parser would take for its end, and a non-string value whose text the
tool's schema does not type back to it (``2`` for a parameter without an integer or number schema: it would come
back as ``"2"``).
"""

from __future__ import annotations

from typing import Any

from toolwire.errors import UnrepresentableValue, UnsupportedByFormat
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, tool_to_dict
from toolwire.parsers.engine.tools import tool_schemas
from toolwire.parsers.llama4_pythonic import MARKERS, Llama4PythonicParser
from toolwire.parsers.engine.pythonic import named_calls, raw_string_closes_early, type_text
from toolwire.parsers.engine.schema_coerce import parameter_schema
from toolwire.prompt import PromptBuilder
from toolwire.templates.json_text import tojson, tojson_indented

M = MARKERS
BOS, HEADER_OPEN, HEADER_CLOSE, EOT, IMAGE = M.BOS, M.HEADER_OPEN, M.HEADER_CLOSE, M.EOT, M.IMAGE
SPECIAL_TOKENS = frozenset(M.spellings())
"""Every marker of the table is a control token of Llama 4's vocabulary."""
DEFAULT_SYSTEM = (
    "You are a helpful assistant and an expert in function composition. You can answer general questions using your "
    "internal knowledge OR invoke functions when necessary. Follow these strict guidelines:\n\n1. FUNCTION CALLS:\n"
    "- ONLY use functions that are EXPLICITLY listed in the function list below\n- If NO functions are listed "
    "(empty function list []), respond ONLY with internal knowledge or \"I don't have access to [Unavailable "
    "service] information\"\n- If a function is not in the list, respond ONLY with internal knowledge or \"I don't "
    "have access to [Unavailable service] information\"\n- If ALL required parameters are present AND the query "
    "EXACTLY matches a listed function's purpose: output ONLY the function call(s)\n- Use exact format: "
    "[func_name1(param1=value1, param2=value2), func_name2(...)]\nExamples:\nCORRECT: [get_weather(location="
    "\"Vancouver\"), calculate_route(start=\"Boston\", end=\"New York\")] <- Only if get_weather and "
    "calculate_route are in function list\nINCORRECT: get_weather(location=\"New York\")\nINCORRECT: Let me check "
    "the weather: [get_weather(location=\"New York\")]\nINCORRECT: [get_events(location=\"Singapore\")] <- If "
    "function not in list\n\n2. RESPONSE RULES:\n- For pure function requests matching a listed function: ONLY "
    "output the function call(s)\n- For knowledge questions: ONLY output text\n- For missing parameters: ONLY "
    "request the specific missing parameters\n- For unavailable services (not in function list): output ONLY with "
    "internal knowledge or \"I don't have access to [Unavailable service] information\". Do NOT execute a function "
    "call.\n- If the query asks for information beyond what a listed function provides: output ONLY with internal "
    "knowledge about your limitations\n- NEVER combine text and function calls in the same response\n- NEVER "
    "suggest alternative functions when the requested service is unavailable\n- NEVER create or invent new "
    "functions not listed below\n\n3. STRICT BOUNDARIES:\n- ONLY use functions from the list below - no "
    "exceptions\n- NEVER use a function as an alternative to unavailable information\n- NEVER call functions not "
    "present in the function list\n- NEVER add explanatory text to function calls\n- NEVER respond with empty "
    "brackets\n- Use proper Python/JSON syntax for function calls\n- Check the function list carefully before "
    "responding\n\n4. TOOL RESPONSE HANDLING:\n- When receiving tool responses: provide concise, natural language "
    "responses\n- Don't repeat tool response verbatim\n- Don't add supplementary information\n\nHere is a list of "
    "functions in JSON format that you can invoke:\n")
"""The template's system prompt when tools come without a system message (from Meta's Llama 4 model card)."""
TOOLS_INTRO = ("\nHere is a list of functions in JSON format that you can invoke. Use exact format: "
               "[func_name1(param1=value1, param2=value2), func_name2(...)]\n")
"""What follows a caller's system text when tools are declared."""
_TEMPLATE_ROLES = frozenset({"system", "user", "assistant"})  # other roles' names are written as request text


def _header(out: PromptBuilder, role: str, index: int | None, kind: str = "template") -> None:
    out.special(HEADER_OPEN, index)
    out.add(kind, role, index)
    out.special(HEADER_CLOSE, index).template("\n\n", index)


def _parts(out: PromptBuilder, content: Any, index: int, *, trim: bool) -> None:
    """A message's content: a string as is; text parts (trimmed when ``trim``), images as ``<|image|>``."""
    if isinstance(content, str):
        out.content(content, index)
        return
    for part in content or ():
        if part.type == "image":
            out.special(IMAGE, index)
        elif part.type == "text":
            out.content((part.text or "").strip() if trim else part.text or "", index)


def value_text(value: Any) -> str:
    """``"%s" | format(value)``: a string as it is, anything else as Python's ``str``."""
    return value if isinstance(value, str) else str(value)


class Llama4PythonicFormat(Format):
    """Llama 4 with vLLM's pythonic tool template."""

    parser_class = Llama4PythonicParser
    special_tokens = SPECIAL_TOKENS
    """Markers that are single control tokens in the model's vocabulary."""
    user_media = frozenset({"image"})  # (a tool result's parts are printed as JSON text: no media slot there)

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        out.special(BOS)
        start, sys_index = 0, None
        if messages and messages[0].role == "system":
            start, sys_index = 1, 0
            system = self._system_text(messages[0])
            if not system and tools:
                raise UnsupportedByFormat("the template drops the tool list when the system message is empty; give "
                                          "it text or leave it out", message_index=0, field="content")
        else:
            system = DEFAULT_SYSTEM if tools else ""
        if system:
            _header(out, "system", sys_index)
            if sys_index is None:
                out.template(system)
            else:
                out.content(system, 0)
            if tools:
                if sys_index is not None:
                    out.template(TOOLS_INTRO, 0)
                out.content(tojson_indented([tool_to_dict(t) for t in tools]), sys_index)
            out.special(EOT, sys_index)
        schemas = tool_schemas(tools)
        for index in range(start, len(messages)):
            message = messages[index]
            role = message.role
            if role in ("tool", "ipython"):
                self._tool_result(out, message, index)
            elif message.tool_calls:
                if role != "assistant":
                    raise UnsupportedByFormat("the template drops a message with tool calls that is not the "
                                              "assistant's", message_index=index, field="tool_calls")
                self._calls(out, message, index, schemas)
            else:
                _header(out, role, index, "template" if role in _TEMPLATE_ROLES else "content")
                _parts(out, message.content, index, trim=True)
                out.special(EOT, index)
        if options.add_generation_prompt:
            _header(out, "assistant", None)
        return False

    @staticmethod
    def _system_text(message: Message) -> str:
        content = message.content
        if content is None or isinstance(content, str):
            return (content or "").strip()
        if len(content) > 1:
            raise UnsupportedByFormat("the template reads only the first part of the system message's content; "
                                      "give it as one string", message_index=0, field="content")
        return ((content[0].text if content else "") or "").strip()

    @staticmethod
    def _tool_result(out: PromptBuilder, message: Message, index: int) -> None:
        content = message.content
        if content is None:
            raise UnsupportedByFormat("the template prints a tool result's content as JSON and fails without it",
                                      message_index=index, field="content")
        _header(out, "ipython", index)
        if isinstance(content, str):
            out.content(tojson(content), index)
        else:
            for part in content:
                if part.type == "text":
                    out.content(tojson(part.text), index)
        out.special(EOT, index)

    @staticmethod
    def _calls(out: PromptBuilder, message: Message, index: int, schemas: dict[str, dict]) -> None:
        _header(out, "assistant", index)
        _parts(out, message.content, index, trim=False)
        pieces: list[tuple[str, str]] = [("template", "[")]
        raw: list[tuple[int, str, str]] = []
        for ci, name, args, field in named_calls(message, index):
            schema = schemas.get(name) or {}
            if ci:
                pieces.append(("template", ", "))
            pieces += [("content", name), ("template", "(")]
            for k, (key, value) in enumerate(args.items()):
                where = f"{field}.arguments.{key}"
                text = value_text(value)
                _check_typed_back(value, text, parameter_schema(schema, key), schema, index, where)
                if k:
                    pieces.append(("template", ", "))
                pieces += [("content", key), ("template", '="')]
                if '"' in text:
                    raw.append((len(pieces), text, where))
                pieces += [("content", text), ("template", '"')]
            pieces.append(("template", ")"))
        pieces.append(("template", "]"))
        texts = [text for _, text in pieces]
        for at, text, where in raw:
            if raw_string_closes_early(text, '"', "".join(texts[at + 2:]) + EOT):
                raise UnrepresentableValue('the value\'s text holds a " followed by what ends a value (", key=" or '
                                           '")]"), which the template writes unescaped: it could not be read back',
                                           message_index=index, field=where)
        put = out.appender()
        for kind, text in pieces:
            if text:
                put((kind, text, index))
        put(("special", EOT, index))


def _check_typed_back(value: Any, text: str, schema: dict | None, root: dict, index: int, where: str) -> None:
    """Refuse a value whose ``"%s"`` text the parser would not type back to it (by the tool's schema)."""
    if isinstance(value, str) and (schema is None or not schema):
        return  # untyped text stays a string
    back, _ = type_text(text, schema, root)
    if back != value or tojson(back) != tojson(value):
        raise UnrepresentableValue(f"the template writes this value as the text {text[:40]!r}, which the tool's "
                                   f"schema types back as {back!r}, not {value!r}: declare its type in the tool's "
                                   "parameters (or pass it as that text)", message_index=index, field=where)


FORMATS: dict[str, Format] = {f.name: f for f in (Llama4PythonicFormat(),)}

__all__ = ["FORMATS", "Llama4PythonicFormat", "DEFAULT_SYSTEM", "value_text"]
