"""GigaChat 3.5 (``GigaChat3.5.jinja``, as llama.cpp ships it): role turns and DSML-style calls in the ``｜GCML｜``
namespace.

Reference: the model's own chat template as transformers renders it (bos ``<s>``, eos ``</s>``). The prompt:

* ``<s>``, then every turn as ``ROLE<|role_sep|>\\n`` + text + ``<|message_sep|>\\n\\n``;
* a ``developer system`` turn first: the request's own (a message with role ``developer system``, taken from the
  first position), else the template's default text (call mode, safety, knowledge cut-off, and
  ``Текущая дата: {current_date}``: the date is printed empty when ``current_date`` is not given, as the template
  does) unless ``use_devsystem=False``; ``default_devsystem`` replaces that text;
* the request's first message when it is a system message, else an empty ``system`` turn (not with
  ``use_system=False``);
* with tools, a ``function descriptions`` turn before the first user turn: the tools as a TypeScript
  ``namespace functions { ... }`` (each tool's description as ``//`` lines, ``type NAME = (_: {...}) => any;``,
  each property with its description, its numeric and format constraints and its default as comments;
  :func:`typescript`), then the tools' ``few_shot_examples`` when they have some;
* after each user turn and each block of results, an ``available functions`` turn listing the tool names as JSON
  (``[]`` without tools; a message's own ``functions`` list when it has one; not with ``use_suggester=False``, nor
  when the request has its own ``available functions`` message);
* an assistant turn: ``<think>…</think>`` (its reasoning, when the context policy keeps it), its content and one
  ``<｜GCML｜tool_calls>`` block, the parts joined by ``\\n\\n``; a call is ``<｜GCML｜invoke name="NAME">`` with one
  ``<｜GCML｜parameter name="K" string="true|false">V</｜GCML｜parameter>`` per argument (a string as it is, any
  other value as JSON), each on its own line; the turn ends ``</s>`` when it ends the request with no generation
  prompt, else ``<|message_sep|>\\n\\n``. A turn with reasoning and nothing else is refused (the template refuses
  it);
* the run of tool messages after it as one ``function result`` turn: one
  ``<function_response name="NAME">…</function_response>`` per result, matched **by position** to the calls of
  the last assistant turn with calls (a string as it is, anything else as JSON; their count must match: the
  template refuses it otherwise, and so does toolwire);
* the generation prompt ``assistant<|role_sep|>\\n``, plus ``<think>`` with ``reasoning`` (``thinking``) on.

Reasoning of assistant turns before the last user message is dropped unless ``drop_history_thinking=False``, in
thinking mode or not (:mod:`toolwire.context_policy`). Any other role is written as its own turn, as the template
does. The template's legacy roles (``reasoning``, ``function call``) are refused, and so is list content (the
template prints it as JSON text) unless ``join_content_parts=True``.

Segments: ``<s>``, ``</s>``, ``<|role_sep|>``, ``<|message_sep|>``, ``<think>``, ``</think>`` and the GCML tags'
fixed parts are ``special``; role names, layout and the default developer-system text are ``template``; request
text, tool names, argument names and values, the tool descriptions are ``content``.
"""

from __future__ import annotations

from typing import Any

from toolwire.errors import InvalidRequest, UnrepresentableValue
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, call_arguments, function_to_dict
from toolwire.parsers.gigachat import GigaChat35Parser
from toolwire.prompt import PromptBuilder
from toolwire.templates.json_text import tojson

from .glm import jinja_str, message_reasoning

M = GigaChat35Parser.family.markers

DEVSYSTEM = ("Вызов функций: последовательный\nБезопасность: соответствует законодательству РФ.\n"
             "Текущая дата: {date}\nОграничение знаний: Декабрь, 2025.\nТы сделан на базе нейросети GigaChat.")
"""The template's default developer-system text (``{date}``: ``current_date``)."""

DEVSYSTEM_ROLES = ("developer system", "developer_system")
RESULT_ROLES = ("function result", "function results", "tool", "function")
REFUSED_ROLES = ("reasoning", "assistant reasoning", "assistant thinking", "function call", "reasoning function call")
_STRING = {True: '" string="true">', False: '" string="false">'}


class GigaChat35(Format):
    """GigaChat 3.5 (see the module docstring)."""

    parser_class = GigaChat35Parser
    content_parts = "refuse"  # the template prints list content as JSON text

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        extra = options.extra
        use_devsystem = extra.get("use_devsystem", True)
        functions = [function_to_dict(tool) for tool in tools]
        names = list(dict.fromkeys(f.get("name") for f in functions))
        ids: dict[Any, dict] = {}  # the template's id -> description pairs (a later tool with the same id wins)
        for function in functions:
            ids[function.get("id", function.get("name"))] = function
        out.special(M.BOS)
        has_devsystem = any(m.role in DEVSYSTEM_ROLES for m in messages)
        rest = list(enumerate(messages))
        if use_devsystem and not has_devsystem:
            text = extra.get("default_devsystem")
            if text is None:
                _turn(out, "developer system", None, DEVSYSTEM.format(date=options.current_date or ""), "template")
            else:
                _turn(out, "developer system", None, _devsystem(text), "content")
        elif has_devsystem:
            if use_devsystem:
                _turn(out, "developer system", 0, _devsystem(_text(messages[0].content)))
            rest = rest[1:]
        if rest and rest[0][1].role == "system":
            index, message = rest.pop(0)
            _turn(out, "system", index, _text(message.content))
        elif extra.get("use_system", True):
            _turn(out, "system", None, "", "content")
        suggest = extra.get("use_suggester", True) and not any(m.role == "available functions" for m in messages)
        described = any(m.role == "function descriptions" for m in messages)
        state = _State()
        for position, (index, message) in enumerate(rest):
            role = message.role
            if state.skip:
                state.skip -= 1
            elif role in REFUSED_ROLES:
                raise InvalidRequest(f"GigaChat 3.5's template refuses the {role!r} role: put reasoning in the "
                                     "assistant message's reasoning_content and calls in its tool_calls",
                                     message_index=index, field="role")
            elif role == "function descriptions":
                _descriptions(out, index, _described(message, index, ids))
            elif role in RESULT_ROLES:
                self._results(out, rest, position, state)
                if suggest:
                    _suggest(out, index, message, names)
            elif role == "user":
                if tools and not described and not state.described:
                    _descriptions(out, None, list(ids.values()))
                    state.described = True
                _turn(out, "user", index, _text(message.content))
                if suggest:
                    _suggest(out, index, message, names)
            elif role == "assistant":
                final = position == len(rest) - 1 and not options.add_generation_prompt
                self._assistant(out, index, message, options.keeps_reasoning(index), final, state)
            else:
                _turn(out, role, index, _text(message.content))
        if options.add_generation_prompt and rest and rest[-1][1].role != "assistant" \
                and rest[-1][1].role not in REFUSED_ROLES:
            out.template("assistant").special(M.ROLE_CLOSE).template("\n")
            if options.thinking:
                out.special(M.THINK_OPEN)
                return True
        return False

    # ---- assistant turns

    def _assistant(self, out: PromptBuilder, index: int, message: Message, keep: bool, final: bool,
                   state: "_State") -> None:
        reasoning = message_reasoning(message) if keep else None
        if reasoning is not None and not isinstance(reasoning, str):
            reasoning = tojson(reasoning)
        content = _text(message.content)
        calls = message.tool_calls or []
        if reasoning is not None and not content and not calls:
            raise InvalidRequest("GigaChat 3.5's template refuses an assistant turn with reasoning and nothing else "
                                 "(add content or tool calls)", message_index=index, field="content")
        out.template("assistant", index).special(M.ROLE_CLOSE, index).template("\n", index)
        joined = False
        if reasoning is not None:
            out.special(M.THINK_OPEN, index)
            if reasoning:
                out.content(reasoning, index)
            out.special(M.THINK_CLOSE, index)
            joined = True
        if content:
            if joined:
                out.template("\n\n", index)
            out.content(content, index)
            joined = True
        if calls:
            if joined:
                out.template("\n\n", index)
            self._calls(out, index, calls)
            state.names = [call.function.name for call in calls]
        out.special(M.EOS if final else M.END, index)
        if not final:
            out.template("\n\n", index)

    @staticmethod
    def _calls(out: PromptBuilder, index: int, calls: list) -> None:
        out.special(M.TOOL_CALLS_OPEN, index).template("\n", index)
        for n, call in enumerate(calls):
            field = f"tool_calls[{n}].function"
            name = call.function.name
            _check_name(name, index, f"{field}.name")
            if n:
                out.template("\n", index)
            out.special(M.INVOKE_OPEN, index).content(name, index).template('">\n', index)
            arguments = call_arguments(call, index, n)
            for k, (key, value) in enumerate(arguments.items()):
                _check_name(key, index, f"{field}.arguments.{key}")
                text = value if isinstance(value, str) else tojson(value)
                if any(marker in text for marker in _VALUE_ENDS):
                    raise UnrepresentableValue("the value spells a GCML parameter or invoke tag, which would end it "
                                               "early; GigaChat 3.5 has no escape for it", message_index=index,
                                               field=f"{field}.arguments.{key}")
                if k:
                    out.template("\n", index)
                out.special(M.PARAMETER_OPEN, index).content(key, index)
                out.template(_STRING[isinstance(value, str)], index)
                if text:
                    out.content(text, index)
                out.special(M.PARAMETER_CLOSE, index)
            if arguments:
                out.template("\n", index)
            out.special(M.INVOKE_CLOSE, index)
        out.template("\n", index).special(M.TOOL_CALLS_CLOSE, index)

    # ---- tool results

    @staticmethod
    def _results(out: PromptBuilder, rest: list, position: int, state: "_State") -> None:
        """The run of result messages from ``position`` as one ``function result`` turn, matched by position to the
        last assistant turn's calls."""
        index = rest[position][0]
        if not state.names:
            raise InvalidRequest("GigaChat 3.5's template refuses a tool result with no assistant tool call before "
                                 "it (it names each result after its call)", message_index=index, field="role")
        items: list[tuple[int, Any]] = []
        end = position
        while end < len(rest) and (end == position or rest[end][1].role in RESULT_ROLES):
            k, message = rest[end]
            content = message.content
            # list content is here only with join_content_parts=True (the template writes each part as a result
            # of its own, as JSON): its text parts joined are one result
            items.append((k, _text(content) if isinstance(content, list) else content))
            end += 1
        state.skip = end - position - 1
        if len(items) != len(state.names):  # named: the first result past the calls, or the last result
            where = items[len(state.names)][0] if len(items) > len(state.names) else items[-1][0]
            raise InvalidRequest(f"GigaChat 3.5 matches tool results to the calls before them by position: "
                                 f"{len(items)} result(s) for {len(state.names)} call(s)", message_index=where,
                                 field="content")
        out.template("function result", index).special(M.ROLE_CLOSE, index).template("\n", index)
        for n, ((k, item), name) in enumerate(zip(items, state.names)):
            if n:
                out.template("\n", k)
            out.special(M.RESPONSE_OPEN, k).content(name, k).template('">', k)
            out.content(_result_text(item), k).special(M.RESPONSE_CLOSE, k)
        out.special(M.END, index).template("\n\n", index)


class _State:
    """What the template carries through its message loop."""

    __slots__ = ("skip", "names", "described")

    def __init__(self) -> None:
        self.skip = 0
        self.names: list[str] = []
        self.described = False


_VALUE_ENDS = (M.PARAMETER_CLOSE, M.PARAMETER_OPEN, M.INVOKE_CLOSE)
"""What ends a parameter value for the parser: a value spelling one cannot be written."""
_NAME_BREAKERS = ('"', "<", ">", "\n")


def _check_name(name: str, index: int, field: str) -> None:
    """Tool and argument names are written raw inside a tag: ``"``, ``<``, ``>`` or a newline would end it."""
    if not name.isidentifier():
        bad = next((c for c in _NAME_BREAKERS if c in name), None)
        if bad is not None:
            raise UnrepresentableValue(f"{name!r} contains {bad!r}, which would end the GCML tag",
                                       message_index=index, field=field)


def _text(content: Any) -> str:
    """A message's text: a string as is, None as '', list content (with join_content_parts) joined."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    return "\n\n".join(p.text or "" for p in content if p.type == "text")


def _turn(out: PromptBuilder, role: str, index: int | None, text: Any, kind: str = "content") -> None:
    """``ROLE<|role_sep|>\\n`` + text + ``<|message_sep|>\\n\\n`` (text that is not a string is written as JSON)."""
    if not isinstance(text, str):
        text = tojson(text)
    out.template(role, index).special(M.ROLE_CLOSE, index).template("\n", index)
    if text:
        out.add(kind, text, index)
    out.special(M.END, index).template("\n\n", index)


def _devsystem(text: str) -> str:
    """The template's ``prepare_devsystem``: separators written without their layout get it."""
    if "<|role_sep|>\n" not in text or "<|message_sep|>\n\n" not in text:
        text = text.replace("<|role_sep|>", "<|role_sep|>\n").replace("<|message_sep|>", "<|message_sep|>\n\n")
    return text


def _suggest(out: PromptBuilder, index: int, message: Message, names: list) -> None:
    """The ``available functions`` turn: the message's own ``functions`` when it has some, else every tool name."""
    own = getattr(message, "functions", None)
    _turn(out, "available functions", index, own if own else names)


def _described(message: Message, index: int, ids: dict) -> list:
    """The tools a ``function descriptions`` message names (by id, as the template looks them up)."""
    wanted = getattr(message, "function_descriptions", None)
    if wanted is None:
        raise InvalidRequest("a 'function descriptions' message needs a function_descriptions list of tool ids",
                             message_index=index, field="function_descriptions")
    missing = [w for w in wanted if w not in ids]
    if missing:
        raise InvalidRequest(f"function_descriptions names no declared tool {missing[0]!r}", message_index=index,
                             field="function_descriptions")
    return [ids[w] for w in wanted]


def _descriptions(out: PromptBuilder, index: int | None, functions: list) -> None:
    _turn(out, "function descriptions", index, namespace_text("functions", functions) + examples_text(functions))


def _result_text(item: Any) -> str:
    """One result as ``render_function_response`` writes it: a string as is, a dict as JSON without its ``id``,
    anything else as JSON."""
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        return "{" + ", ".join(f'"{k}": {tojson(v)}' for k, v in item.items() if k != "id") + "}"
    return tojson(item)


# ---------------------------------------------------------------- TypeScript tool descriptions

_CONSTRAINTS = ("format", "maxItems", "maximum", "minItems", "minimum", "pattern", "minLength", "maxLength",
                "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "uniqueItems", "minProperties",
                "maxProperties")
_NUMBERS = ("number", "integer", "int", "float")


def namespace_text(name: str, functions: list[dict]) -> str:
    """``namespace NAME { ... } // namespace NAME``: each tool's description lines and its TypeScript signature."""
    sections = [f"namespace {name} {{"]
    for function in functions:
        lines = []
        description = function.get("description")
        if description:
            lines += ["// " + line for line in description.split("\n") if line.strip()]
        params = function.get("parameters")
        if params and params.get("properties"):
            body = f"type {function['name']} = (_: {typescript(params, '  ')}) => "
        else:
            body = f"type {function['name']} = () => "
        returns = function.get("return_parameters")
        body += typescript(returns, "  ") if returns and returns.get("properties") else "any"
        lines.append(body + ";\n")
        sections.append("\n".join(lines))
    sections.append(f"}} // namespace {name}")
    return "\n".join(sections)


def typescript(schema: Any, indent: str = "", factor: int = 2, root: Any = None, chain: tuple = ()) -> str:
    """A JSON Schema as the template's ``json_schema_to_typescript`` writes it (``$ref`` inside the document,
    unions, objects with their property comments, literals, tuples and arrays)."""
    root = schema if root is None else root
    if not isinstance(schema, dict):
        return "any"
    ref = schema.get("$ref")
    if isinstance(ref, str):
        if ref in chain or not ref.startswith("#/"):
            return "any"
        node = _resolve(root, ref)
        return typescript(node, indent, factor, root, chain + (ref,)) if isinstance(node, dict) else "any"
    for key, joiner in (("anyOf", " | "), ("oneOf", " | "), ("allOf", " & ")):
        branches = schema.get(key)
        if _sequence(branches):
            return joiner.join(f"({typescript(b, indent, factor, root, chain)})" for b in branches)
    kind = schema.get("type")
    if _sequence(kind):
        return " | ".join(f"({_union_member(schema, t, indent, factor, root, chain)})" for t in kind)
    kind = "object" if kind == "dict" else kind
    has_properties = isinstance(schema.get("properties"), dict)
    if "const" in schema and kind is None and not has_properties:
        return _literal(schema["const"])
    if schema.get("enum") and kind is None and not has_properties:
        return " | ".join(f'"{e}"' if isinstance(e, str) else jinja_str(e) for e in schema["enum"])
    if kind == "object" or (kind is None and has_properties):
        return _object(schema, indent, factor, root, chain)
    if kind == "string":
        if "const" in schema:
            return _literal(schema["const"])
        if schema.get("enum"):
            return " | ".join(f'"{e}"' for e in schema["enum"] if isinstance(e, str))
        return "Date" if schema.get("format", "") in ("date-time", "date") else "string"
    if _hashable(kind) and (kind or "") in _NUMBERS:
        if "const" in schema:
            return _literal(schema["const"])
        if schema.get("enum"):
            return " | ".join(jinja_str(e) for e in schema["enum"])
        return "integer" if kind in ("integer", "int") else "number"
    if kind == "boolean":
        const = schema.get("const")
        return ("true" if const else "false") if isinstance(const, bool) else "boolean"
    if kind == "null":
        return "null"
    if kind == "array":
        return _array(schema, indent, factor, root, chain)
    return "unknown" if isinstance(schema.get("not"), dict) else "any"


def _union_member(schema: dict, kind: Any, indent: str, factor: int, root: Any, chain: tuple) -> str:
    """One member of a ``type: [...]`` union (the other keywords read for that type only)."""
    again = lambda sub: typescript(sub, indent, factor, root, chain)  # noqa: E731
    if kind == "null":
        return "null"
    if kind == "string":
        if "const" in schema:
            return again({"type": "string", "const": schema["const"]})
        if schema.get("enum"):
            return again({"type": "string", "enum": schema["enum"], "format": schema.get("format")})
        return "Date" if schema.get("format", "") in ("date-time", "date") else "string"
    if _hashable(kind) and kind in _NUMBERS:
        if "const" in schema:
            return again({"type": kind, "const": schema["const"]})
        return again({"type": kind, "enum": schema.get("enum")})
    if kind == "boolean":
        return again({"type": "boolean", "const": schema["const"]}) if "const" in schema else "boolean"
    if _hashable(kind) and kind in ("object", "dict"):
        return again({"type": "object", "properties": schema.get("properties") or {},
                      "required": schema.get("required") or [],
                      "additionalProperties": schema.get("additionalProperties")})
    if kind == "array":
        if _sequence(schema.get("prefixItems")):
            return again({"type": "array", "prefixItems": schema["prefixItems"]})
        if "items" in schema:
            return again({"type": "array", "items": schema["items"]})
        return again({"type": "array"})
    return "any"


def _object(schema: dict, indent: str, factor: int, root: Any, chain: tuple) -> str:
    pairs = list(_items(schema.get("properties", {}), "properties"))
    extra = schema.get("additionalProperties")
    if extra == True:  # noqa: E712 - the template's test (``== true``), which 1 passes too
        pairs.append(("[key: string]", {"type": "any"}))
    elif isinstance(extra, dict):
        pairs.append(("[key: string]", extra))
    required = schema.get("required", [])
    if not isinstance(required, list):
        raise UnrepresentableValue(f"GigaChat 3.5's template cannot read required={required!r} (not a list)",
                                   field="tools")
    required = required + ["[key: string]"]
    lines = ["{\n"]
    for key, value in pairs:
        if not isinstance(value, dict):
            raise UnrepresentableValue(f"GigaChat 3.5's template cannot read the schema of property {key!r} "
                                       "(not an object)", field="tools")
        description = value.get("description")
        if isinstance(description, str):
            lines += [f"{indent}// {line}\n" for line in description.split("\n") if line.strip()]
        for name, setting in value.items():
            if name in _CONSTRAINTS and setting is not None:
                shown = f'"{setting}"' if isinstance(setting, str) else jinja_str(setting)
                lines.append(f"{indent}// {name}: {shown}\n")
        shown_type = typescript(value, indent + " " * factor, factor, root, chain)
        line = f"{indent}{key}{'' if key in required else '?'}: {shown_type},"
        if "default" in value or "defalut_value" in value:
            default = value.get("default", value.get("defalut_value"))
            line += f' // default: "{default}"' if isinstance(default, str) else f" // default: {jinja_str(default)}"
        lines.append(line + "\n")
    lines.append(indent[:-2] + "}")
    return "".join(lines)


def _array(schema: dict, indent: str, factor: int, root: Any, chain: tuple) -> str:
    prefix, items = schema.get("prefixItems"), schema.get("items")
    if _sequence(prefix):
        return "[" + ", ".join(typescript(p, indent, factor, root, chain) for p in prefix) + "]"
    if isinstance(items, list):
        return "[" + ", ".join(typescript(p, indent, factor, root, chain) for p in items) + "]"
    if isinstance(items, dict):
        return f"({typescript(items, indent, factor, root, chain)})[]"
    return "Array<any>"


def _literal(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return "null" if value is None else "any"


def _resolve(root: Any, ref: str) -> Any:
    """A ``#/...`` JSON Pointer in ``root`` (None where it leads nowhere)."""
    node = root
    for raw in ref[2:].split("/"):
        segment = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and segment in node:
            node = node[segment]
        elif isinstance(node, list) and segment == str(_jinja_int(segment)):
            index = _jinja_int(segment)
            node = node[index] if -len(node) <= index < len(node) else None
        else:
            node = None
    return node


def _jinja_int(text: str) -> int:
    """Jinja's ``int`` filter on a string: the integer it spells, else 0."""
    try:
        return int(text)
    except ValueError:
        try:
            return int(float(text))
        except (ValueError, OverflowError):
            return 0


def _sequence(value: Any) -> bool:
    """Jinja's ``is sequence and is not string`` (a dict passes too: iterating it gives its keys)."""
    return isinstance(value, (list, tuple, dict))


def _hashable(value: Any) -> bool:
    return not isinstance(value, (list, dict))


def _items(value: Any, what: str):
    if not isinstance(value, dict):
        raise UnrepresentableValue(f"GigaChat 3.5's template cannot read {what}={value!r} (not an object)",
                                   field="tools")
    return value.items()


# ---------------------------------------------------------------- few-shot examples

def examples_text(functions: list[dict]) -> str:
    """``\\n\\n``, then the tools' ``few_shot_examples`` as ``//  "request" -> {"name": ..., "arguments": ...}``
    lines (the arguments in the order of the tool's schema, as the template aligns them)."""
    text = "\n\n"
    if any(f.get("few_shot_examples") for f in functions):
        text += "//Examples:"
        for function in functions:
            for example in function.get("few_shot_examples") or ():
                parameters = function.get("parameters")
                if isinstance(parameters, dict) and "properties" in parameters:
                    arguments = _aligned(example["params"], parameters)
                else:
                    arguments = tojson(example["params"])
                call = f'{{"name": "{function["name"]}", "arguments": {arguments}}}'
                text += f"\n//  {tojson(example.get('request'))} -> {call}"
    return text


def _aligned(value: Any, schema: Any) -> str:
    """The template's ``align_json_order_to_schema``: ``value`` written in the schema's property order (only the
    properties the schema names; a schema without a type writes nothing, as the template's does)."""
    if not isinstance(schema, dict):
        return _plain(value)
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, (list, tuple, dict)) and branches and "type" not in schema:
            return _aligned(value, list(branches)[0] if not isinstance(branches, dict) else list(branches)[0])
    if "type" not in schema:
        return ""
    kind = schema.get("type")
    if _hashable(kind) and kind in ("object", "dict"):
        keys = value.keys() if isinstance(value, dict) else ()
        pairs = []
        for key, sub in _items(schema.get("properties", {}), "properties"):
            if key in keys:
                item = value[key]
                if isinstance(item, dict) or (isinstance(sub, dict) and sub.get("type") == "array"):
                    pairs.append(f'"{key}": {_aligned(item, sub)}')
                else:
                    pairs.append(f'"{key}": {_plain(item)}')
        return "{" + ", ".join(pairs) + "}"
    if kind == "array" and isinstance(value, (list, tuple, dict)):
        items = schema.get("items", {})
        return "[" + ", ".join(_aligned(item, items) for item in value) + "]"
    return _plain(value)


def _plain(value: Any) -> str:
    """A value as the template prints it there: a string or boolean as JSON, anything else as Jinja prints it."""
    return tojson(value) if isinstance(value, (str, bool)) else jinja_str(value)


FORMATS: dict[str, Format] = {f.name: f for f in (GigaChat35(),)}
