"""Seed-OSS (``Seed-OSS-36B-Instruct.jinja``): Qwen3-Coder-style XML calls inside ``<seed:tool_call>``.

Reference: the model's own chat template as transformers renders it, with ``arguments`` decoded to objects.
Native Python, not a Jinja run. Quirks kept:

* tools are described as Python ``def`` stubs (``number`` and ``integer`` both print as ``int``); with
  ``use_json_tooldef=True`` as one JSON list instead. A function tool without ``parameters.properties`` is
  refused, as the template fails on it;
* every argument value that is not a string is written with Python's ``str`` (``True``, ``None``,
  ``['INV-102']``, ``{'k': 1}``), values carry no ``\\n`` framing: ``<parameter=K>V</parameter>``;
* every assistant turn keeps its ``reasoning_content`` as ``<seed:think>...</seed:think>`` (trimmed);
  an assistant turn without tool calls and with empty content gets no ``<seed:eos>``;
* ``thinking_budget`` (extra option, default -1 = unlimited) adds the budget system turn, and 0 closes
  the reasoning block in the generation prompt. The ``thinking`` switch does not change the prompt: the
  model opens ``<seed:think>`` itself, so parsing always recognises it at the start of the output.

Rendering safety: as Qwen3-Coder, a value that contains a sequence the parser would take as its end raises
:class:`~toolwire.errors.UnrepresentableValue` naming the argument (see ``docs/xml-values.md``).
"""

from __future__ import annotations


from toolwire.errors import InvalidOption, UnsupportedByFormat
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, function_to_dict, tool_to_dict
from toolwire.parsers.seed_oss import MARKERS, SEED_GRAMMAR, SeedOssParser
from toolwire.prompt import PromptBuilder, special_pattern
from toolwire.templates.qwen_xml import call_values, jinja_json, jinja_str, write_call

M = MARKERS

SPECIAL_TOKENS = frozenset({M["bos"], M["eos"], M["think_open"], M["think_close"], M["call_open"],
                            M["call_close"], M["budget_open"], M["budget_close"]})
_SPECIALS = special_pattern(SPECIAL_TOKENS)

_DEFAULT_SYSTEM = "You are Doubao, a helpful AI assistant. You may call one or more functions to assist with the user query."
_JSON_TOOLDEF = ("\nTool List:\nYou are authorized to use the following tools (described in JSON Schema format). "
                 "Before performing any task, you must decide how to call them based on the descriptions and "
                 "parameters of these tools.\n")
_CALL_FORMAT = ("\n工具调用请遵循如下格式:\n<seed:tool_call>\n<function=example_function_name>\n"
                "<parameter=example_parameter_1>value_1</parameter>\n<parameter=example_parameter_2>This is the value "
                "for the second parameter\nthat can span\nmultiple lines</parameter>\n</function>\n</seed:tool_call>\n")
_BUDGET_ZERO = ("You are an intelligent assistant that can answer questions in one step without the need for reasoning "
                "and thinking, that is, your thinking budget is 0. Next, please skip the thinking process and directly "
                "start answering the user's questions.")
_BUDGET = ("You are an intelligent assistant with reflective ability. In the process of thinking and reasoning, you "
           "need to strictly follow the thinking budget, which is {b}. That is, you need to complete your thinking "
           "within {b} tokens and start answering the user's questions. You will reflect on your thinking process "
           "every {i} tokens, stating how many tokens have been used and how many are left.")
_BUDGET_ZERO_ANSWER = "The current thinking budget is 0, so I will directly start answering the question."
_REFLECTION_INTERVALS = ((0, 0), (512, 128), (1024, 256), (2048, 512), (4096, 512), (8192, 1024), (16384, 1024))


def _py_type(spec: object) -> str:
    t = spec.get("type") if isinstance(spec, dict) else None
    if t == "string":
        return "str"
    if t in ("number", "integer"):
        return "int"
    return {"boolean": "bool", "array": "list"}.get(t, "Any") if isinstance(t, str) else "Any"


def _fixed(out: PromptBuilder, text: str, index: int | None) -> None:
    out.fixed(text, index, _SPECIALS)


def _stub(out: PromptBuilder, fn: dict, index: int | None, tool_index: int) -> None:
    """One tool as the template's Python ``def`` stub with an ``Args:`` (and ``Returns:``) docstring."""
    params = fn.get("parameters")
    props = params.get("properties") if isinstance(params, dict) else None
    if not isinstance(props, dict):
        raise UnsupportedByFormat("the Seed-OSS template needs function.parameters.properties on every tool",
                                  field=f"tools[{tool_index}].function.parameters")
    required = params.get("required") or ()
    out.template("\n\nFunction:\ndef ", index).content(jinja_str(fn.get("name")), index).template("(", index)
    for i, (name, spec) in enumerate(props.items()):
        out.template("," if i else "", index).content(str(name), index).template(": " + _py_type(spec), index)
    out.template('):\n    """\n    ', index).content(jinja_str(fn.get("description", "")).strip(), index)
    out.template("\n\n", index)
    if props:
        out.template("    Args:", index)
        for name, spec in props.items():
            out.template("\n    - ", index).content(str(name), index)
            out.template(f" ({_py_type(spec)}) {'[必填]' if name in required else '[选填]'}: ", index)
            desc = spec.get("description") if isinstance(spec, dict) else None
            out.content(jinja_str(desc) if desc else "", index)
    out.template("\n", index)
    returns = fn.get("returns")
    ret_props = returns.get("properties") if isinstance(returns, dict) else None
    if ret_props:
        out.template("    Returns:", index)
        for name, spec in ret_props.items():
            out.template("\n    - ", index).content(str(name), index).template(f" ({_py_type(spec)}): ", index)
            desc = spec.get("description") if isinstance(spec, dict) else None
            out.content(jinja_str(desc) if desc else "", index)
    out.template('\n    """', index)


def _budget_interval(budget: int) -> int:
    for limit, interval in _REFLECTION_INTERVALS:
        if budget <= limit:
            return interval
    return _REFLECTION_INTERVALS[-1][1]


class SeedOss(Format):
    """Seed-OSS-36B-Instruct."""

    content_parts = "refuse"  # the template refuses or drops list content
    parser_class = SeedOssParser

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        budget = options.extra.get("thinking_budget", -1)
        if isinstance(budget, bool) or not isinstance(budget, int):
            raise InvalidOption("thinking_budget must be an integer (-1 = unlimited)", field="thinking_budget")
        has_system = bool(messages) and messages[0].role == "system"
        sys_index = 0 if has_system else None
        if has_system:
            out.special(M["bos"], 0).template("system\n", 0).content(messages[0].text(""), 0)
        elif tools:
            out.special(M["bos"]).template("system\n" + _DEFAULT_SYSTEM)
        if options.extra.get("use_json_tooldef"):
            out.template(_JSON_TOOLDEF, sys_index).content(jinja_json([tool_to_dict(t) for t in tools]), sys_index)
        else:
            for ti, tool in enumerate(tools):
                if tool.type == "function":
                    _stub(out, function_to_dict(tool), sys_index, ti)
        if tools:
            _fixed(out, _CALL_FORMAT, sys_index)
        if has_system or tools:
            out.special(M["eos"], sys_index)
        if budget != -1:
            text = _BUDGET_ZERO if budget == 0 else _BUDGET.format(b=budget, i=_budget_interval(budget))
            out.special(M["bos"]).template("system\n" + text + "\n").special(M["eos"])
        offset = 1 if has_system else 0
        for index, message in enumerate(messages[offset:], start=offset):
            self._message(out, message, index, options, tools)
        if options.add_generation_prompt:
            out.special(M["bos"]).template("assistant\n")
            if budget == 0:
                out.special(M["think_open"]).template("\n").special(M["budget_open"]).template(_BUDGET_ZERO_ANSWER)
                out.special(M["budget_close"]).template("\n").special(M["think_close"])
        return False

    @staticmethod
    def _message(out: PromptBuilder, message: Message, index: int, options: RenderOptions, tools: list[Tool]) -> None:
        role = message.role
        if role != "assistant":
            out.special(M["bos"], index).template(role + "\n", index).content(message.text(""), index)
            out.special(M["eos"], index)
            return
        calls = call_values(message, index, SEED_GRAMMAR, jinja_str, tools) if message.tool_calls else []
        out.special(M["bos"], index).template("assistant", index)
        reasoning = (message.reasoning_content or "").strip() if options.keeps_reasoning(index) else ""
        if reasoning:
            out.template("\n", index).special(M["think_open"], index).content(reasoning, index)
            out.special(M["think_close"], index)
        content = message.content.strip() if isinstance(message.content, str) else ""
        if calls:
            if content:
                out.template("\n", index).content(content, index).template("\n", index)
            for name, args in calls:
                out.template("\n", index)
                write_call(out, index, name, args, "", M["call_open"], M["call_close"])
            out.special(M["eos"], index)
        elif content:
            out.template("\n", index).content(content, index).special(M["eos"], index)


FORMATS: dict[str, Format] = {"seed_oss": SeedOss()}

__all__ = ["FORMATS", "MARKERS", "SPECIAL_TOKENS", "SeedOss"]
