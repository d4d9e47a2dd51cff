"""Tool specs: one typed description of a tool, whatever vocabulary it was declared in.

A :class:`ToolSpec` is built from an OpenAI tool definition, an Anthropic one (``input_schema``), an MCP
one (``inputSchema``, ``outputSchema``, ``annotations``) or a plain Python function (type hints and
docstring). A malformed definition raises :class:`~toolwire.errors.InvalidToolDefinition` naming the tool
and the field. ``side_effect`` defaults to ``irreversible`` (assume the worst) unless the definition says
otherwise: MCP ``readOnlyHint`` maps to ``none``, ``destructiveHint`` to ``irreversible`` (MCP's default),
``destructiveHint: false`` to ``reversible``.
"""

from __future__ import annotations

import inspect
import json
import re
import typing
from typing import Any, Callable, Iterable, Literal, Optional

from pydantic import BaseModel, ConfigDict, PrivateAttr, TypeAdapter

from toolwire.errors import InvalidToolDefinition

SideEffect = Literal["none", "reversible", "irreversible"]
SIDE_EFFECTS = ("none", "reversible", "irreversible")
EMPTY_OBJECT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


class ToolSpec(BaseModel):
    """A tool as the validation step and the dispatch core see it. Build it with the ``from_*`` constructors
    (or :meth:`from_definition`, which recognises the vocabulary); they check every field."""

    model_config = ConfigDict(frozen=True)

    name: str
    version: Optional[str] = None
    description: str = ""
    input_schema: dict[str, Any] = EMPTY_OBJECT_SCHEMA
    output_schema: Optional[dict[str, Any]] = None
    side_effect: SideEffect = "irreversible"
    timeout_ms: Optional[int] = None
    strict: bool = False
    """OpenAI's ``strict: true``: every object in the arguments is closed (no field its schema does not list) unless
    the schema says otherwise (an explicit ``additionalProperties``); validation then refuses extra fields."""
    _validator: Any = PrivateAttr(default=None)  # compiled by toolwire.dispatch.validation, cached here

    # ---- constructors
    @classmethod
    def create(cls, name: Any, *, input_schema: Any = None, description: Any = None, version: Any = None,
               output_schema: Any = None, side_effect: Any = "irreversible", timeout_ms: Any = None,
               strict: Any = False, field_names: dict[str, str] | None = None) -> "ToolSpec":
        """Check every field and build the spec. ``field_names`` maps a spec field to the name the original
        definition gives it (``{"input_schema": "function.parameters"}``), so errors name the field as written."""
        names = field_names or {}

        def fail(field: str, detail: str) -> InvalidToolDefinition:
            head, _, rest = field.partition(".")
            return InvalidToolDefinition(detail, tool=tool, field=names.get(head, head) + (f".{rest}" if rest else ""))

        tool = name if isinstance(name, str) and name.strip() else None
        if not isinstance(name, str) or not name.strip():
            raise fail("name", f"must be a non-empty string, got {name!r}")
        if description is not None and not isinstance(description, str):
            raise fail("description", f"must be a string, got {type(description).__name__}")
        if version is not None and not isinstance(version, str):
            raise fail("version", f"must be a string, got {type(version).__name__}")
        if side_effect not in SIDE_EFFECTS:
            raise fail("side_effect", f"must be one of {', '.join(SIDE_EFFECTS)}, got {side_effect!r}")
        if timeout_ms is not None and (not isinstance(timeout_ms, int) or isinstance(timeout_ms, bool)
                                       or timeout_ms <= 0):
            raise fail("timeout_ms", f"must be a positive integer (milliseconds), got {timeout_ms!r}")
        if not isinstance(strict, bool):
            raise fail("strict", f"must be true or false, got {strict!r}")
        schema = _check_object_schema(EMPTY_OBJECT_SCHEMA if input_schema is None else input_schema, fail)
        if output_schema is not None and not isinstance(output_schema, dict):
            raise fail("output_schema", f"must be a JSON Schema object, got {type(output_schema).__name__}")
        _check_meta_schema(schema, fail, "input_schema")
        if output_schema is not None:
            _check_meta_schema(output_schema, fail, "output_schema")
        return cls(name=name, version=version, description=description or "", input_schema=schema,
                   output_schema=output_schema, side_effect=side_effect, timeout_ms=timeout_ms, strict=strict)

    @classmethod
    def from_openai(cls, definition: Any, **overrides: Any) -> "ToolSpec":
        """From ``{"type": "function", "function": {name, description, parameters}}`` (Chat Completions), the
        flat Responses shape ``{"type": "function", "name": ..., "parameters": ...}``, a bare function dict
        or a :class:`toolwire.Tool`. ``overrides`` set version, side_effect, timeout_ms, output_schema, strict. The
        definition's ``strict: true`` closes every object of the arguments (see :attr:`strict`)."""
        data = _as_dict(definition)
        field_names = {"input_schema": "parameters"}
        if "function" in data:
            kind = data.get("type", "function")
            if kind != "function":
                raise InvalidToolDefinition(f"only function tools are supported, got {kind!r}",
                                            tool=_name_of(data.get("function")), field="type")
            data = data["function"]
            field_names = {"name": "function.name", "description": "function.description",
                           "input_schema": "function.parameters", "strict": "function.strict"}
            if not isinstance(data, dict):
                raise InvalidToolDefinition("must be an object", field="function")
        elif data.get("type", "function") != "function":
            raise InvalidToolDefinition(f"only function tools are supported, got {data.get('type')!r}",
                                        tool=_name_of(data), field="type")
        if "strict" not in overrides and data.get("strict") is not None:
            overrides = {**overrides, "strict": data["strict"]}
        return cls.create(data.get("name"), input_schema=data.get("parameters"),
                          description=data.get("description"), field_names=field_names, **overrides)

    @classmethod
    def from_anthropic(cls, definition: Any, **overrides: Any) -> "ToolSpec":
        """From an Anthropic Messages API tool: ``{name, description, input_schema}``."""
        data = _as_dict(definition)
        if "input_schema" not in data:
            raise InvalidToolDefinition("is required (server tools without one cannot be called by the model "
                                        "through toolwire)", tool=_name_of(data), field="input_schema")
        return cls.create(data.get("name"), input_schema=data["input_schema"], description=data.get("description"),
                          **overrides)

    @classmethod
    def from_mcp(cls, definition: Any, **overrides: Any) -> "ToolSpec":
        """From an MCP tool: ``{name, description, inputSchema, outputSchema, annotations}``.

        ``annotations.readOnlyHint: true`` gives side effect ``none``; otherwise ``destructiveHint`` (MCP's
        default is true) gives ``irreversible``, and ``destructiveHint: false`` gives ``reversible``."""
        data = _as_dict(definition)
        name = _name_of(data)
        if "inputSchema" not in data:
            raise InvalidToolDefinition("is required for an MCP tool", tool=name, field="inputSchema")
        annotations = data.get("annotations")
        annotations = {} if annotations is None else annotations
        if not isinstance(annotations, dict):
            raise InvalidToolDefinition("must be an object", tool=name, field="annotations")
        for hint in ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"):
            if annotations.get(hint) is not None and not isinstance(annotations[hint], bool):
                raise InvalidToolDefinition(f"must be a boolean, got {annotations[hint]!r}", tool=name,
                                            field=f"annotations.{hint}")
        if annotations.get("readOnlyHint"):
            side_effect = "none"
        elif annotations.get("destructiveHint", True):
            side_effect = "irreversible"
        else:
            side_effect = "reversible"
        fields = {"side_effect": side_effect, "output_schema": data.get("outputSchema"), **overrides}
        field_names = {"input_schema": "inputSchema"}
        if "output_schema" not in overrides:
            field_names["output_schema"] = "outputSchema"
        return cls.create(data.get("name"), input_schema=data["inputSchema"], description=data.get("description"),
                          field_names=field_names, **fields)

    @classmethod
    def from_function(cls, fn: Callable[..., Any], *, name: str | None = None, description: str | None = None,
                      **overrides: Any) -> "ToolSpec":
        """From a Python function: parameters typed by their hints (through pydantic's JSON Schema), described
        by the docstring's ``Args:`` / ``:param x:`` / numpy ``Parameters`` section; the docstring's first
        paragraph is the description and the return hint the output schema. Every parameter needs a hint;
        ``*args``, ``**kwargs`` and positional-only parameters cannot be called with JSON arguments."""
        if not callable(fn):
            raise InvalidToolDefinition(f"expected a function, got {type(fn).__name__}")
        tool = name or getattr(fn, "__name__", None) or type(fn).__name__
        doc = inspect.getdoc(fn) or ""
        summary, param_docs = _split_docstring(doc)
        try:
            signature = inspect.signature(fn)
            hints = typing.get_type_hints(fn, include_extras=True)
        except (TypeError, ValueError, NameError) as exc:
            raise InvalidToolDefinition(f"cannot read the signature or type hints: {exc}", tool=tool,
                                        field="parameters") from None
        properties: dict[str, Any] = {}
        required: list[str] = []
        defs: dict[str, Any] = {}
        for param in signature.parameters.values():
            field = f"parameters.{param.name}"
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
                raise InvalidToolDefinition(f"{param.kind.description} parameters cannot be called with JSON "
                                            "arguments", tool=tool, field=field)
            if param.name not in hints:
                raise InvalidToolDefinition("has no type hint", tool=tool, field=field)
            schema = _type_schema(hints[param.name], defs, tool, field)
            if param.name in param_docs and "description" not in schema:
                schema["description"] = param_docs[param.name]
            if param.default is param.empty:
                required.append(param.name)
            else:
                default = _json_default(hints[param.name], param.default)
                if default is not _NO_DEFAULT:
                    schema["default"] = default
            properties[param.name] = schema
        input_schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            input_schema["required"] = required
        input_schema["additionalProperties"] = False
        if defs:
            input_schema["$defs"] = defs
        if "output_schema" not in overrides:
            returns = hints.get("return", inspect.Signature.empty)
            if returns not in (inspect.Signature.empty, None, type(None)):
                out_defs: dict[str, Any] = {}
                output = _type_schema(returns, out_defs, tool, "return")
                if out_defs:
                    output["$defs"] = out_defs
                overrides["output_schema"] = output
        return cls.create(tool, input_schema=input_schema, description=description or summary, **overrides)

    @classmethod
    def from_definition(cls, definition: Any, **overrides: Any) -> "ToolSpec":
        """Any supported definition: a ToolSpec, a function, an OpenAI / Anthropic / MCP dict or model."""
        if isinstance(definition, ToolSpec):
            return definition.model_copy(update=overrides) if overrides else definition
        if callable(definition) and not isinstance(definition, (dict, BaseModel)):
            return cls.from_function(definition, **overrides)
        data = _as_dict(definition)
        if "inputSchema" in data:
            return cls.from_mcp(data, **overrides)
        if "input_schema" in data and "function" not in data:
            return cls.from_anthropic(data, **overrides)
        return cls.from_openai(data, **overrides)

    # ---- back to wire vocabularies
    def to_openai(self) -> dict[str, Any]:
        """The Chat Completions tool definition (what ``Format.render`` takes as ``tools``)."""
        function = {"name": self.name, "description": self.description, "parameters": self.input_schema}
        if self.strict:
            function["strict"] = True
        return {"type": "function", "function": function}

    def to_anthropic(self) -> dict[str, Any]:
        """The Anthropic Messages API tool definition."""
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    def to_mcp(self) -> dict[str, Any]:
        """The MCP tool definition; the side effect becomes ``readOnlyHint`` / ``destructiveHint``."""
        out: dict[str, Any] = {"name": self.name, "description": self.description, "inputSchema": self.input_schema}
        if self.output_schema is not None:
            out["outputSchema"] = self.output_schema
        out["annotations"] = {"readOnlyHint": self.side_effect == "none",
                              "destructiveHint": self.side_effect == "irreversible"}
        return out


def tool_specs(tools: Iterable[Any] | None) -> dict[str, ToolSpec]:
    """Specs by name for a list of definitions in any supported vocabulary (or a ``{name: spec}`` dict).
    A name declared twice is an error."""
    if tools is None:
        return {}
    if isinstance(tools, dict):
        tools = tools.values()
    out: dict[str, ToolSpec] = {}
    for index, definition in enumerate(tools):
        try:
            spec = ToolSpec.from_definition(definition)
        except InvalidToolDefinition as exc:
            raise InvalidToolDefinition(exc.detail, tool=exc.tool,
                                        field=f"tools[{index}]" + (f".{exc.field}" if exc.field else "")) from None
        if spec.name in out:
            raise InvalidToolDefinition("is declared twice", tool=spec.name, field=f"tools[{index}].name")
        out[spec.name] = spec
    return out


# ---- helpers

def _as_dict(definition: Any) -> dict[str, Any]:
    if isinstance(definition, dict):
        return definition
    if isinstance(definition, BaseModel):
        from toolwire.models import Tool, tool_to_dict  # a toolwire Tool keeps its original dict

        if isinstance(definition, Tool):
            return tool_to_dict(definition)
        return definition.model_dump(by_alias=True, exclude_none=True)
    raise InvalidToolDefinition(f"expected a tool definition object, got {type(definition).__name__}")


def _name_of(data: Any) -> str | None:
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) else None


def _check_object_schema(schema: Any, fail: Callable[[str, str], Exception], field: str = "input_schema") -> dict:
    if not isinstance(schema, dict):
        raise fail(field, f"must be a JSON Schema object, got {type(schema).__name__}")
    kind = schema.get("type", "object")
    if kind != "object":
        raise fail(f"{field}.type", f"the arguments are a JSON object, so the type must be 'object', got {kind!r}")
    props = schema.get("properties", {})
    if not isinstance(props, dict):
        raise fail(f"{field}.properties", f"must be an object, got {type(props).__name__}")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise fail(f"{field}.required", f"must be a list of property names, got {required!r}")
    return schema


def _check_meta_schema(schema: dict, fail: Callable[[str, str], Exception], field: str) -> None:
    """Check against the JSON Schema meta-schema when ``jsonschema`` is installed (validation needs it anyway)."""
    from .schema_guard import check_schema, format_checker

    check_schema(schema, fail, field)  # bounded depth, local $refs only, no loop that never descends
    try:
        from jsonschema import exceptions, validators
    except ImportError:
        return
    cls = validators.validator_for(schema, default=validators.Draft202012Validator)
    try:
        cls.check_schema(schema, format_checker=format_checker(cls))
    except exceptions.SchemaError as exc:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in exc.absolute_path)
        raise fail(f"{field}{where}", f"is not a valid JSON Schema: {exc.message}") from None


def _type_schema(hint: Any, defs: dict[str, Any], tool: str, field: str) -> dict[str, Any]:
    """JSON Schema of a type hint (pydantic's generator); ``$defs`` are hoisted into ``defs``."""
    description = None
    if typing.get_origin(hint) is typing.Annotated:
        args = typing.get_args(hint)
        description = next((m for m in args[1:] if isinstance(m, str)), None)
    try:
        schema = TypeAdapter(hint).json_schema()
    except Exception as exc:  # pydantic raises several error types for unsupported hints
        raise InvalidToolDefinition(f"type {hint!r} has no JSON Schema ({type(exc).__name__}: {exc})",
                                    tool=tool, field=field) from None
    for key, value in schema.pop("$defs", {}).items():
        if key in defs and defs[key] != value:
            raise InvalidToolDefinition(f"two different types are both named {key!r}", tool=tool, field=field)
        defs[key] = value
    if description:
        schema["description"] = description
    return schema


_NO_DEFAULT = object()


def _json_default(hint: Any, default: Any) -> Any:
    """The default as JSON (an Enum member becomes its value, a model its dict), or ``_NO_DEFAULT``."""
    try:
        value = TypeAdapter(hint).dump_python(default, mode="json")
        json.dumps(value, allow_nan=False)
    except Exception:  # not representable: the schema simply has no default
        return _NO_DEFAULT
    return value


_SECTION = re.compile(r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments)\s*:?\s*$")
_OTHER_SECTION = re.compile(r"^(Returns?|Yields?|Raises?|Examples?|Notes?|See Also|Warnings?|Attributes)\s*:?\s*$")
_GOOGLE_ITEM = re.compile(r"^(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")  # "name: text", "name (type): text"
_NUMPY_ITEM = re.compile(r"^(\w+)(?:\s+:.*)?$")  # "name : type" (the text follows, indented)
_SPHINX_ITEM = re.compile(r"^:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")


def _split_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The first paragraph, and parameter descriptions from Google, numpy or Sphinx style sections."""
    lines = doc.splitlines()
    summary_lines: list[str] = []
    for line in lines:
        if not line.strip() or _SECTION.match(line.strip()) or line.strip().startswith(":"):
            break
        summary_lines.append(line.strip())
    params: dict[str, str] = {}
    current: str | None = None
    in_section = False
    base_indent = 0
    for line in lines:
        stripped = line.strip()
        sphinx = _SPHINX_ITEM.match(stripped)
        if sphinx:
            current = sphinx.group(1)
            params[current] = sphinx.group(2).strip()
            continue
        if _SECTION.match(stripped):
            in_section, current, base_indent = True, None, -1
            continue
        if _OTHER_SECTION.match(stripped) or (stripped.startswith(":") and not sphinx):
            in_section, current = False, None
            continue
        if not stripped or set(stripped) <= {"-"}:
            continue
        indent = len(line) - len(line.lstrip())
        if in_section:
            if base_indent < 0:
                base_indent = indent
            if indent == base_indent:
                item = _GOOGLE_ITEM.match(stripped) or _NUMPY_ITEM.match(stripped)
                if item:
                    current = item.group(1)
                    params[current] = (item.group(2) or "").strip() if item.re is _GOOGLE_ITEM else ""
                    continue
            if current is not None and indent > base_indent:
                params[current] = (params[current] + " " + stripped).strip()
        elif current is not None and indent > 0:
            params[current] = (params[current] + " " + stripped).strip()
    return " ".join(summary_lines), params


__all__ = ["ToolSpec", "SideEffect", "SIDE_EFFECTS", "tool_specs"]
