"""The grammar request, checked: which tools a grammar may call (``tool_choice`` applied) and their schemas.

Every problem is a toolwire error naming the field (``tools[1].function.parameters``, ``tool_choice``,
``target``), never a raw traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from toolwire.errors import InvalidOption, InvalidRequest, InvalidToolDefinition
from toolwire.models import normalize_tools

TARGETS = ("xgrammar", "llguidance", "gbnf")
"""The grammar targets :meth:`toolwire.Format.grammar` emits."""

MODES = ("auto", "required", "none", "named")


@dataclass(frozen=True)
class ToolSpec:
    """One callable tool: its name, its parameters schema (an object schema) and its index in ``tools``."""

    name: str
    schema: dict
    index: int


@dataclass(frozen=True)
class GrammarRequest:
    """What the grammar constrains: the callable ``tools`` and the ``mode`` (``auto``, ``required``,
    ``none`` or ``named``: then ``tools`` holds that one tool)."""

    tools: tuple[ToolSpec, ...]
    mode: str
    target: str


def check_target(target: Any) -> str:
    """``target`` if it is one of :data:`TARGETS`; else an :class:`InvalidOption` naming ``target``."""
    if target not in TARGETS:
        raise InvalidOption(f"target must be one of {', '.join(map(repr, TARGETS))}, got {target!r}", field="target")
    return target


def check_special_tokens(special_tokens: Any, target: str) -> dict[str, int]:
    """``special_tokens`` as ``{marker text: token id}`` (empty for None); an :class:`InvalidOption` naming
    ``special_tokens`` when it is not such a mapping, or is given for a target other than llguidance."""
    if special_tokens is None:
        return {}
    if target != "llguidance":
        raise InvalidOption(f"special_tokens is an option of the llguidance target, not {target!r}",
                            field="special_tokens")
    if not isinstance(special_tokens, Mapping) or not all(
            isinstance(k, str) and k and isinstance(v, int) and not isinstance(v, bool) and v >= 0
            for k, v in special_tokens.items()):
        raise InvalidOption("special_tokens must map marker texts to token ids ({'<tool_call>': 151657})",
                            field="special_tokens")
    return dict(special_tokens)


def tool_choice_mode(tool_choice: Any, names: Sequence[str]) -> tuple[str, str | None]:
    """``(mode, name)`` for an OpenAI ``tool_choice``: ``"auto"`` / ``"required"`` / ``"none"``,
    ``{"type": "function", "function": {"name": ...}}`` or the plain ``{"name": ...}``."""
    choice = tool_choice
    if isinstance(choice, dict):
        fn = choice.get("function")
        name = fn.get("name") if isinstance(fn, dict) else choice.get("name")
        kind = choice.get("type", "function")
        if kind != "function" or not isinstance(name, str) or not name:
            raise InvalidOption("tool_choice as an object must be {'type': 'function', 'function': {'name': ...}} "
                                f"or {{'name': ...}}, got {tool_choice!r}", field="tool_choice")
        if name not in names:
            raise InvalidOption(f"tool_choice names {name!r}, which is not among the declared tools "
                                f"({', '.join(names) or 'none'})", field="tool_choice.function.name")
        return "named", name
    if choice is None or choice == "auto":
        return "auto", None
    if choice in ("none", "required"):
        return choice, None
    raise InvalidOption(f"tool_choice must be 'auto', 'required', 'none' or a named function, got {tool_choice!r}",
                        field="tool_choice")


def parameters_schema(parameters: Any, index: int, name: str) -> dict:
    """A tool's parameters as an object schema (``None`` is ``{"type": "object", "properties": {}}``)."""
    field = f"tools[{index}].function.parameters"
    if parameters is None:
        return {"type": "object", "properties": {}}
    if not isinstance(parameters, dict):
        raise InvalidToolDefinition(f"{field} must be a JSON Schema object", tool=name, field=field)
    kind = parameters.get("type", "object")
    if kind != "object":
        raise InvalidToolDefinition(f"{field}.type must be 'object' (tool arguments are an object), got {kind!r}",
                                    tool=name, field=f"{field}.type")
    props = parameters.get("properties", {})
    if not isinstance(props, dict):
        raise InvalidToolDefinition(f"{field}.properties must be an object", tool=name, field=f"{field}.properties")
    for key, sub in props.items():
        if not isinstance(sub, (dict, bool)):
            raise InvalidToolDefinition(f"{field}.properties.{key} must be a JSON Schema", tool=name,
                                        field=f"{field}.properties.{key}")
    required = parameters.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise InvalidToolDefinition(f"{field}.required must be a list of property names", tool=name,
                                    field=f"{field}.required")
    return parameters


def grammar_request(tools: Any, tool_choice: Any, target: Any) -> GrammarRequest:
    """Check ``tools``, ``tool_choice`` and ``target`` together."""
    target = check_target(target)
    models = normalize_tools(tools)
    specs: list[ToolSpec] = []
    seen: set[str] = set()
    for index, tool in enumerate(models):
        name = tool.function.name
        if not name:
            raise InvalidToolDefinition("a tool needs a non-empty name", field=f"tools[{index}].function.name")
        if name in seen:
            raise InvalidToolDefinition(f"tool name {name!r} is declared twice", tool=name,
                                        field=f"tools[{index}].function.name")
        seen.add(name)
        specs.append(ToolSpec(name, parameters_schema(tool.function.parameters, index, name), index))
    mode, named = tool_choice_mode(tool_choice, [s.name for s in specs])
    if mode == "named":
        specs = [s for s in specs if s.name == named]
    if mode in ("required", "auto") and not specs and mode == "required":
        raise InvalidRequest("tool_choice='required' needs at least one tool", field="tool_choice")
    return GrammarRequest(tuple(specs), mode, target)
