"""Validation: a proposed call becomes ``validated`` or ``rejected``, with errors the model can act on.

Each call is checked in this order, and every problem found is one :class:`~toolwire.output.CallError`
(``code``, JSON ``pointer``, ``expected``, ``got``, ``message`` for the model, ``retryable``):

1. what the parser saw: a truncated call (``truncated``), a call left in reasoning (``call_in_reasoning``,
   unless promoted, or recovered from reasoning that never closed: ``drift_call_in_unclosed_reasoning``),
   arguments the parser could not read (``invalid_json``), a parser limit (``too_large``);
2. the limits (:mod:`toolwire.limits`): calls per output, argument bytes, nesting depth (``too_large``);
3. ``tool_choice`` (``tool_choice_violation``) and the tool name (``unknown_tool``, with "did you mean");
4. the arguments' canonical form (:mod:`toolwire.dispatch.canonical`; ``invalid_json`` when there is none);
5. the tool's JSON Schema, through ``jsonschema`` (draft 2020-12 unless the schema names another), one
   compiled validator per tool, cached. Schema keywords map to codes: ``required``/``dependentRequired``
   ``missing_required``; ``additionalProperties``/``unevaluatedProperties``/``propertyNames``/``false``
   ``unexpected_field``; ``type`` ``type_mismatch``; ``enum``/``const`` ``enum_mismatch``; bounds, lengths,
   counts, ``multipleOf``, ``uniqueItems``, ``contains`` ``out_of_range``; ``pattern``/``format``
   ``pattern_mismatch``; anything else (``not``, ``oneOf`` matching twice ...) ``type_mismatch``.

The schema is checked against the canonical arguments (NFC strings, exact numbers), the value the
dispatch core receives as ``canonical_arguments``. ``arguments`` are never changed; schema defaults are
added to ``canonical_arguments`` only with ``fill_defaults=True``, and an ``info`` diagnostic names them.
Parser diagnostics (coercions, repairs) are kept. Errors are ``retryable`` except ``truncated``: a call cut
off by the output length limit needs a larger budget, not a different answer.
"""

from __future__ import annotations

import difflib
import json
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Iterable

from .canonical import NotCanonicalizable, canonical_value, pointer_token
from toolwire.errors import InvalidOption, InvalidToolDefinition, MissingExtra
from toolwire.limits import DEFAULT_LIMITS, Limits, size_problem
from toolwire.output import CallError, Diagnostic
from toolwire.parsers.engine.schema_coerce import json_type
from .schema_guard import TIMED_OUT, boolean_properties_as_schemas, bounded_validator_class, format_checker, search
from .specs import ToolSpec, tool_specs

if TYPE_CHECKING:
    from toolwire.output import ParsedOutput, ToolCallCandidate


def _jsonschema():
    try:
        import jsonschema
    except ImportError:
        raise MissingExtra("schema validation needs the jsonschema package: pip install toolwire[schema]") from None
    return jsonschema


# ---- compiled validators

@lru_cache(maxsize=512)
def _compile(schema_text: str, formats: bool):
    jsonschema = _jsonschema()
    schema = json.loads(schema_text)
    base = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    checker = format_checker(base)
    base.check_schema(schema, format_checker=checker)
    cls = bounded_validator_class(base)
    return cls(boolean_properties_as_schemas(schema), format_checker=checker if formats else None)


def compiled_validator(spec: ToolSpec, *, formats: bool = False, closed_objects: bool = False):
    """The ``jsonschema`` validator of the tool's input schema, compiled once and cached on the spec
    (and across specs with the same schema). With ``closed_objects`` (or a ``strict`` spec) every object of the
    schema that does not say otherwise is closed (:func:`closed_schema`)."""
    cache = spec._validator
    if cache is None:
        cache = spec._validator = {}
    closed = closed_objects or spec.strict
    validator = cache.get((formats, closed))
    if validator is None:
        schema = closed_schema(spec.input_schema) if closed else spec.input_schema
        text = json.dumps(schema, sort_keys=True, ensure_ascii=False)
        try:
            validator = cache[(formats, closed)] = _compile(text, formats)
        except _jsonschema().exceptions.SchemaError as exc:
            raise InvalidToolDefinition(f"is not a valid JSON Schema: {exc.message}", tool=spec.name,
                                        field="input_schema") from None
    return validator


class ToolSet:
    """The declared tools as specs by name, with their compiled validators. Build it once per tools list
    and pass it to ``validate`` (a plain list works too; it is converted on each call, with a cache)."""

    def __init__(self, tools: Iterable[Any] | None = None, *, formats: bool = False):
        self.specs: dict[str, ToolSpec] = tool_specs(tools)
        self.formats = formats
        self._definitions = list(tools) if isinstance(tools, (list, tuple)) else None

    def tool_definitions(self) -> list:
        """The tools as given, when they were OpenAI definitions (key order matters to templates), else each
        spec as an OpenAI definition: what ``render`` / ``parse`` / ``stream`` use when given this ToolSet."""
        given = self._definitions
        if given is not None and all(isinstance(t, dict) and ("function" in t or "parameters" in t) for t in given):
            return given
        return [spec.to_openai() for spec in self.specs.values()]

    def __contains__(self, name: str) -> bool:
        return name in self.specs

    def __len__(self) -> int:
        return len(self.specs)

    def validator(self, name: str, *, closed_objects: bool = False):
        """The compiled validator of tool ``name`` (objects closed with ``closed_objects``, or when it is strict)."""
        return compiled_validator(self.specs[name], formats=self.formats, closed_objects=closed_objects)

    def validate(self, target: "ParsedOutput | ToolCallCandidate", **options: Any):
        """Validate a ParsedOutput (all its calls, ``tool_choice``) or one candidate. Returns a new object."""
        from toolwire.output import ParsedOutput

        if isinstance(target, ParsedOutput):
            return validate_output(target, self, **options)
        return validate_candidate(target, self, **options)


@lru_cache(maxsize=64)
def _tool_set_from_json(text: str, formats: bool) -> ToolSet:
    return ToolSet(json.loads(text), formats=formats)


def as_tool_set(tools: Any, *, formats: bool = False) -> ToolSet:
    """A :class:`ToolSet` for ``tools`` (a ToolSet, a ToolSpec, or a list of definitions in any vocabulary).
    Lists of plain dicts are cached by content, so passing the same list again does not recompile."""
    if isinstance(tools, ToolSet):
        return tools
    if isinstance(tools, ToolSpec):
        tools = [tools]
    if tools is not None and not isinstance(tools, (list, tuple, dict)):
        tools = list(tools)
    if isinstance(tools, (list, tuple)) and all(isinstance(t, dict) for t in tools):
        try:
            text = json.dumps(tools, sort_keys=True, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            return ToolSet(tools, formats=formats)
        return _tool_set_from_json(text, formats)
    return ToolSet(tools, formats=formats)


# ---- closed objects (OpenAI strict mode)

_OPEN_KEYS = ("additionalProperties", "unevaluatedProperties")
_SIBLING_SOURCES = ("allOf", "$ref", "$dynamicRef", "if", "dependentSchemas")  # where an object's fields may also come from


def closed_schema(schema: Any) -> Any:
    """``schema`` with every object closed that does not say otherwise: an object schema (``type`` object, or
    ``properties`` / ``required`` / ``patternProperties``) without ``additionalProperties`` or
    ``unevaluatedProperties`` gets ``additionalProperties: false``. Alternatives (``anyOf``, ``oneOf``), items,
    properties and definitions are closed the same way. An object whose fields may also come from elsewhere
    (``allOf``, ``$ref``, ``if``, ``dependentSchemas`` beside it) is left open, and so are the branches of ``allOf``
    (closing each would refuse the fields of the others). A copy; iterative."""
    if not isinstance(schema, dict):
        return schema
    root = dict(schema)
    stack: list[dict] = [root]
    while stack:
        node = stack.pop()
        kind = node.get("type")
        is_object = kind == "object" or (isinstance(kind, list) and "object" in kind) or (
            kind is None and any(k in node for k in ("properties", "required", "patternProperties")))
        if is_object and not any(k in node for k in _OPEN_KEYS) and not any(k in node for k in _SIBLING_SOURCES):
            node["additionalProperties"] = False
        for key in ("properties", "patternProperties", "$defs", "definitions"):
            children = node.get(key)
            if isinstance(children, dict):
                node[key] = {name: _copied(child, stack) for name, child in children.items()}
        for key in ("items", "additionalProperties", "not", "contains", "then", "else", "unevaluatedItems"):
            child = node.get(key)
            if isinstance(child, dict):
                node[key] = _copied(child, stack)
            elif key == "items" and isinstance(child, list):
                node[key] = [_copied(c, stack) for c in child]
        for key in ("anyOf", "oneOf", "prefixItems"):
            children = node.get(key)
            if isinstance(children, list):
                node[key] = [_copied(c, stack) for c in children]
    return root


def _copied(child: Any, stack: list) -> Any:
    if isinstance(child, dict):
        child = dict(child)
        stack.append(child)
    return child


# ---- tool_choice

def tool_choice_mode(tool_choice: Any, tools: ToolSet) -> tuple[str, str | None]:
    """``(mode, name)``: mode is ``auto``, ``none``, ``required`` or ``named`` (then ``name`` is the tool).
    Accepts OpenAI (``"auto"``, ``{"type": "function", "function": {"name": ...}}``, the flat Responses form)
    and Anthropic (``{"type": "any" | "auto" | "none" | "tool", "name": ...}``) spellings."""
    choice = tool_choice
    if isinstance(choice, dict):
        kind = choice.get("type")
        name = (choice.get("function") or {}).get("name") if isinstance(choice.get("function"), dict) else None
        name = name or choice.get("name")
        if kind in ("function", "tool") and isinstance(name, str):
            if name not in tools:
                raise InvalidOption(f"tool_choice names {name!r}, which is not among the declared tools",
                                    field="tool_choice")
            return "named", name
        choice = kind
    if choice is None or choice == "auto":
        return "auto", None
    if choice == "none":
        return "none", None
    if choice in ("required", "any"):
        return "required", None
    raise InvalidOption(f"tool_choice must be 'auto', 'none', 'required' or a named function, got {tool_choice!r}",
                        field="tool_choice")


# ---- one candidate

_RECHECKED = frozenset({"unknown_tool", "call_in_reasoning"})  # parser reasons that validation decides anew
_ORDER = {code: i for i, code in enumerate((
    "truncated", "too_large", "call_in_reasoning", "tool_choice_violation", "unknown_tool", "invalid_json",
    "missing_required", "unexpected_field", "type_mismatch", "enum_mismatch", "out_of_range",
    "pattern_mismatch"))}


def _recovered_in_reasoning(cand: "ToolCallCandidate") -> bool:
    """A call in reasoning that never closed, recovered by the parser (issue 33): it is not refused as
    ``call_in_reasoning`` (:mod:`toolwire.parsers.engine.reasoning_calls`)."""
    from toolwire.parsers.engine.reasoning_calls import recovered_in_reasoning

    return recovered_in_reasoning(cand)


def validate_candidate(candidate: "ToolCallCandidate", tools: Any, *, tool_choice: Any = "auto",
                       limits: Limits = DEFAULT_LIMITS, fill_defaults: bool = False,
                       promote_reasoning_calls: bool = False, formats: bool = False,
                       closed_objects: bool = False) -> "ToolCallCandidate":
    """Validate one candidate against ``tools``; returns a new candidate, ``validated`` or ``rejected``.
    ``closed_objects=True`` reads a missing ``additionalProperties`` as false throughout the schema (as a tool
    declared with OpenAI's ``strict: true`` is always read): a field the schema does not list is
    ``unexpected_field``."""
    tool_set = as_tool_set(tools, formats=formats)
    mode, chosen = tool_choice_mode(tool_choice, tool_set)
    errors, canonical = _check(candidate, tool_set, mode, chosen, limits, promote_reasoning_calls, closed_objects)
    diagnostics = list(candidate.diagnostics)
    spec = tool_set.specs.get(candidate.name)
    if errors:
        errors.sort(key=lambda e: (_ORDER.get(e.code, 99), e.pointer))
        return candidate.model_copy(update={"status": "rejected", "errors": errors, "canonical_arguments": None,
                                            "tool_version": spec.version if spec else None,
                                            "diagnostics": diagnostics})
    if fill_defaults:
        filled = _fill_defaults(canonical, spec.input_schema, limits.max_depth)
        if filled:
            canonical = canonical_value(canonical)
            diagnostics.append(Diagnostic(code="default_applied", severity="info", call_index=candidate.index,
                                          message="schema defaults added to canonical_arguments at "
                                                  + ", ".join(filled)))
    return candidate.model_copy(update={"status": "validated", "errors": [], "canonical_arguments": canonical,
                                        "tool_version": spec.version, "diagnostics": diagnostics})


def _err(code: str, message: str, *, pointer: str = "", expected: Any = None, got: Any = None) -> CallError:
    return CallError(code=code, pointer=pointer, expected=expected, got=got, message=message,
                     retryable=code != "truncated")


def parser_errors(cand: "ToolCallCandidate", *, promote_reasoning_calls: bool = False,
                  check_names: bool = True) -> list[CallError]:
    """The errors that follow from what the parser saw: truncation, parser limits, unreadable arguments,
    a call inside reasoning and (unless validation re-checks it, ``check_names=False``) an unknown name."""
    if cand.status == "truncated" or any(e.code == "truncated" for e in cand.errors):
        return [_err("truncated", "The call was cut off before it ended (the output reached its length limit), "
                                  "so it was not run.")]
    errors: list[CallError] = []
    for diag in cand.diagnostics:
        if diag.code == "too_large":
            errors.append(_err("too_large", f"The call is too large: {diag.message}. Send smaller arguments."))
        elif diag.code == "unknown_tool" and check_names:
            errors.append(_err("unknown_tool", f"{diag.message}. Call one of the declared tools.", got=cand.name))
        elif diag.severity == "error" and diag.code not in _RECHECKED:
            errors.append(_err("invalid_json", f"The arguments could not be read: {diag.message}. "
                                               "Send them again as one well-formed JSON object."))
    if cand.source == "reasoning" and not promote_reasoning_calls and not _recovered_in_reasoning(cand):
        errors.append(_err("call_in_reasoning", "The call was written inside the reasoning block, so it was "
                                                "not run. Write tool calls after the reasoning."))
    parser_rejected = cand.status == "rejected" and not cand.errors  # not a status from an earlier validation
    if parser_rejected and not errors and not any(d.code in _RECHECKED for d in cand.diagnostics):
        errors.append(_err("invalid_json", "The call could not be read"
                           + "".join(f"; {d.message}" for d in cand.diagnostics)
                           + ". Send it again as one well-formed call."))
    return errors


def _check(cand: "ToolCallCandidate", tools: ToolSet, mode: str, chosen: str | None, limits: Limits,
           promote: bool, closed_objects: bool = False) -> tuple[list[CallError], Any]:
    # 1. what the parser saw
    errors = parser_errors(cand, promote_reasoning_calls=promote, check_names=False)
    if errors and errors[0].code == "truncated":
        return errors, None
    # 2. limits (unless the parser already applied its own)
    if any(e.code == "too_large" for e in errors):
        return errors, None
    if cand.index >= limits.max_calls:
        errors.append(_err("too_large", f"This output holds more than {limits.max_calls} tool calls; calls past "
                                        f"that were not run. Make at most {limits.max_calls} calls at a time.",
                           expected=limits.max_calls, got=cand.index + 1))
    problem = size_problem(cand.arguments, cand.raw_arguments, limits)
    if problem:
        errors.append(_err("too_large", problem[0].upper() + problem[1:] + "."))
    if any(e.code == "too_large" for e in errors):
        return errors, None
    # 3. tool_choice and name
    if mode == "none":
        errors.append(_err("tool_choice_violation", "Tool calls are turned off for this reply (tool_choice is "
                                                    "'none'). Answer without calling a tool.",
                           expected="no tool call", got=cand.name))
    elif mode == "named" and cand.name != chosen:
        errors.append(_err("tool_choice_violation", f"This reply must call {chosen!r} (tool_choice names it); "
                                                    f"call {chosen!r} instead of {cand.name!r}.",
                           expected=chosen, got=cand.name))
    if cand.name not in tools:
        errors.append(_unknown_tool(cand.name, tools))
    if errors:
        return errors, None
    # 4. canonical form
    try:
        canonical = canonical_value(cand.arguments)
    except NotCanonicalizable as exc:
        return [_err("invalid_json", f"The arguments are not valid JSON at {exc.pointer or 'the top'}: "
                                     f"{exc.detail}.", pointer=exc.pointer)], None
    # 5. schema
    validator = tools.validator(cand.name, closed_objects=closed_objects)
    errors = _schema_errors(validator, canonical, tools.specs[cand.name])
    return errors, canonical


def _unknown_tool(name: str, tools: ToolSet) -> CallError:
    declared = sorted(tools.specs)
    if not declared:
        return _err("unknown_tool", f"There is no tool {name!r}: no tools are available in this conversation. "
                                    "Answer without calling a tool.", expected=[], got=name)
    close = difflib.get_close_matches(name, declared, n=3, cutoff=0.5)
    hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    listing = ", ".join(declared[:20]) + (" ..." if len(declared) > 20 else "")
    return _err("unknown_tool", f"There is no tool {name!r}.{hint} The available tools are: {listing}.",
                expected=close or declared[:20], got=name)


# ---- jsonschema errors to CallErrors

_RANGE = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}
_COUNTS = {"minLength": ("at least", "characters"), "maxLength": ("at most", "characters"),
           "minItems": ("at least", "items"), "maxItems": ("at most", "items"),
           "minProperties": ("at least", "fields"), "maxProperties": ("at most", "fields"),
           "minContains": ("at least", "matching items"), "maxContains": ("at most", "matching items")}


def preview(value: Any, limit: int = 200) -> Any:
    """``value`` itself when its JSON is short, else an abbreviated JSON text (for ``got`` and messages)."""
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + f"... ({len(value):,} characters)"
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return value if len(text) <= limit else text[:limit] + "..."


def _show(value: Any) -> str:
    shown = preview(value, 80)
    return shown if isinstance(shown, str) and shown is not value else json.dumps(shown, ensure_ascii=False,
                                                                                   default=str)


def _where(pointer: str) -> str:
    return f"'{pointer}'" if pointer else "the arguments"


def _schema_errors(validator: Any, instance: Any, spec: ToolSpec) -> list[CallError]:
    out: list[CallError] = []
    reported_missing: dict[str, set[str]] = {}
    try:
        for error in validator.iter_errors(instance):
            out.extend(_map_error(error, reported_missing))
    except RecursionError:  # a recursive schema applied to a value nested past Python's stack
        return [_err("too_large", "The arguments nest too deeply to be checked against this tool's schema; "
                     "send a flatter value.", expected="a flatter value", got=None)]
    return out


def _path(error: Any) -> str:
    return "".join("/" + pointer_token(p) for p in error.absolute_path)


def _map_error(error: Any, reported_missing: dict[str, set[str]]) -> list[CallError]:
    keyword = error.validator
    pointer = _path(error)
    instance = error.instance
    value = error.validator_value
    schema = error.schema if isinstance(error.schema, dict) else {}
    if keyword in ("required", "dependentRequired"):
        needed = value if keyword == "required" else [n for deps in value.values() for n in deps]
        seen = reported_missing.setdefault(pointer, set())
        missing = [n for n in needed if isinstance(instance, dict) and n not in instance and n not in seen]
        if not missing:
            return []
        name = missing[0]
        seen.add(name)
        prop = (schema.get("properties") or {}).get(name)
        kind = _type_words(prop) if isinstance(prop, dict) else None
        return [_err("missing_required", f"Add the required field {name!r}"
                     + (f" ({kind})" if kind else "") + (f" to {_where(pointer)}" if pointer else "") + ".",
                     pointer=f"{pointer}/{pointer_token(name)}", expected=kind or "a value", got=None)]
    if keyword in ("additionalProperties", "unevaluatedProperties") and value is False:
        allowed = sorted((schema.get("properties") or {}).keys())
        patterns = list((schema.get("patternProperties") or {}).keys())
        extras = [k for k in (instance or {}) if k not in allowed
                  and not any(_search(p, k) for p in patterns)] if isinstance(instance, dict) else []
        if keyword == "unevaluatedProperties":
            extras = [k for k in re.findall(r"'((?:[^'\\]|\\.)*)'", error.message) if k in (instance or {})] or extras
        return [_unexpected(k, pointer, allowed, instance) for k in extras] or [
            _err("unexpected_field", f"Remove the fields the schema does not allow from {_where(pointer)}.",
                 pointer=pointer, expected=allowed, got=None)]
    if keyword == "propertyNames":
        return [_err("unexpected_field", f"{error.message}. Rename or remove that field.", pointer=pointer,
                     expected=value, got=None)]
    if keyword is None or (keyword == "items" and value is False) or error.schema is False:
        if keyword == "items":
            return [_err("out_of_range", f"{_where(pointer)} has more items than allowed: {error.message}.",
                         pointer=pointer, expected="fewer items", got=len(instance) if isinstance(instance, list)
                         else None)]
        return [_err("unexpected_field", f"Remove {_where(pointer)}: the schema does not allow it.",
                     pointer=pointer, expected=None, got=preview(instance))]
    if keyword == "type":
        kind = _type_words({"type": value})
        return [_err("type_mismatch", f"{_where(pointer).capitalize() if not pointer else _where(pointer)} must be "
                     f"{_article(kind)}, not {_article(json_type(instance))} ({_show(instance)}).",
                     pointer=pointer, expected=value, got=json_type(instance))]
    if keyword in ("enum", "const"):
        options = list(value) if keyword == "enum" else [value]
        close = _close_options(instance, options)
        listing = ", ".join(json.dumps(o, ensure_ascii=False) for o in options[:20])
        return [_err("enum_mismatch", f"{_where(pointer)} must be "
                     + (f"one of {listing}" if len(options) > 1 else listing)
                     + f"; got {_show(instance)}." + (f" Did you mean {close}?" if close else ""),
                     pointer=pointer, expected=options, got=preview(instance))]
    if keyword in _RANGE:
        relation = _RANGE[keyword]
        if keyword in ("minimum", "maximum") and schema.get("exclusive" + keyword[:1].upper() + keyword[1:]) is True:
            relation = relation[0]  # draft-04: a boolean exclusiveMinimum / exclusiveMaximum makes the bound strict
        return [_err("out_of_range", f"{_where(pointer)} must be {relation} {value}; got {_show(instance)}.",
                     pointer=pointer, expected=f"{relation} {value}", got=preview(instance))]
    if keyword == "not" and value == {}:  # a ``false`` property schema (see boolean_properties_as_schemas)
        return [_err("unexpected_field", f"Remove {_where(pointer)}: the schema does not allow this field.",
                     pointer=pointer, expected=None, got=preview(instance))]
    if keyword in _COUNTS:
        word, unit = _COUNTS[keyword]
        size = len(instance) if hasattr(instance, "__len__") else None
        return [_err("out_of_range", f"{_where(pointer)} must have {word} {value} {unit}; it has {size}.",
                     pointer=pointer, expected=f"{word} {value} {unit}", got=size)]
    if keyword == "multipleOf":
        return [_err("out_of_range", f"{_where(pointer)} must be a multiple of {value}; got {_show(instance)}.",
                     pointer=pointer, expected=f"multiple of {value}", got=preview(instance))]
    if keyword in ("uniqueItems", "contains"):
        return [_err("out_of_range", f"{_where(pointer)}: {error.message}.", pointer=pointer,
                     expected="unique items" if keyword == "uniqueItems" else "an item matching the schema",
                     got=preview(instance))]
    if keyword in ("pattern", "patternProperties", "additionalProperties") and TIMED_OUT in error.message:
        return [_err("pattern_mismatch", f"{_where(pointer)} could not be checked against the pattern {value} in "
                     "time (the pattern backtracks catastrophically on this value); send a value that matches it "
                     "plainly.", pointer=pointer, expected=value, got=preview(instance))]
    if keyword == "pattern" and "propertyNames" in error.absolute_schema_path:
        return [_err("pattern_mismatch", f"The field name {_show(instance)} must match the pattern {value}; rename "
                     "or remove that field.", pointer=pointer, expected=value, got=preview(instance))]
    if keyword == "pattern":
        return [_err("pattern_mismatch", f"{_where(pointer)} must match the pattern {value}; got {_show(instance)}.",
                     pointer=pointer, expected=value, got=preview(instance))]
    if keyword == "format":
        return [_err("pattern_mismatch", f"{_where(pointer)} must be a valid {value}; got {_show(instance)}.",
                     pointer=pointer, expected=f"format {value}", got=preview(instance))]
    if keyword in ("anyOf", "oneOf") and error.context:
        branches: dict[Any, list[Any]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        wrong_type = {k for k, subs in branches.items()
                      if all(e.validator == "type" and not e.relative_path for e in subs)}
        fitting = [k for k in branches if k not in wrong_type]
        if fitting:  # the value has the right type for a branch: say what is wrong inside it
            out: list[CallError] = []
            for sub in branches[fitting[0]]:
                out.extend(_map_error(sub, reported_missing))
            return out
        types: list[str] = []
        for k in sorted(wrong_type, key=str):
            for sub in branches[k]:
                for t in sub.validator_value if isinstance(sub.validator_value, list) else [sub.validator_value]:
                    if t not in types:
                        types.append(t)
        return [_err("type_mismatch", f"{_where(pointer)} must be {_article(_type_words({'type': types}))}, "
                     f"not {_article(json_type(instance))} ({_show(instance)}).",
                     pointer=pointer, expected=types, got=json_type(instance))]
    return [_err("type_mismatch", f"{_where(pointer)} does not match the schema: {error.message}.",
                 pointer=pointer, expected=preview(value), got=preview(instance))]


def _unexpected(key: str, pointer: str, allowed: list[str], instance: dict) -> CallError:
    free = [a for a in allowed if a not in instance]
    close = difflib.get_close_matches(key, free, n=1, cutoff=0.5)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    listing = f" Allowed fields: {', '.join(allowed)}." if allowed else " No fields are allowed here."
    return _err("unexpected_field", f"Remove the field {key!r} from {_where(pointer)}: it is not a parameter.{hint}"
                + listing, pointer=f"{pointer}/{pointer_token(key)}", expected=allowed, got=key)


def _search(pattern: str, text: str) -> bool:
    return bool(search(pattern, text))


def _type_words(schema: dict) -> str | None:
    kind = schema.get("type")
    if kind is None:
        if "enum" in schema:
            return "one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"][:10])
        return None
    kinds = kind if isinstance(kind, list) else [kind]
    return " or ".join(str(k) for k in kinds)


def _article(words: str | None) -> str:
    if not words:
        return "a value"
    if words.startswith("one of") or words.startswith("null"):
        return words
    return ("an " if words[0] in "aeiou" else "a ") + words


def _close_options(value: Any, options: list[Any]) -> str | None:
    if not isinstance(value, str):
        return None
    # bounded: the 64 options closest in length, compared on their first 100 characters (difflib is quadratic
    # in the string length and linear in the number of options)
    strings = sorted((o for o in options if isinstance(o, str)), key=lambda o: abs(len(o) - len(value)))[:64]
    short = {o[:100]: o for o in reversed(strings)}
    close = [short[c] for c in difflib.get_close_matches(value[:100], list(short), n=1, cutoff=0.6)]
    return json.dumps(close[0], ensure_ascii=False) if close else None


# ---- defaults (only when asked)

def _fill_defaults(value: Any, schema: Any, max_depth: int) -> list[str]:
    """Add missing properties that have a schema ``default``, in place, through nested ``properties``;
    returns the pointers filled. Iterative and depth-bounded."""
    filled: list[str] = []
    stack = [(value, schema, "", 0)]
    while stack:
        item, sub, pointer, depth = stack.pop()
        if not isinstance(item, dict) or not isinstance(sub, dict) or depth > max_depth:
            continue
        for name, prop in (sub.get("properties") or {}).items():
            if not isinstance(prop, dict):
                continue
            where = f"{pointer}/{pointer_token(name)}"
            if name not in item and "default" in prop:
                item[name] = json.loads(json.dumps(prop["default"]))
                filled.append(where)
            elif name in item:
                stack.append((item[name], prop, where, depth + 1))
    return sorted(filled)


# ---- a whole output

def validate_output(output: "ParsedOutput", tools: Any, *, tool_choice: Any = "auto",
                    limits: Limits = DEFAULT_LIMITS, fill_defaults: bool = False,
                    promote_reasoning_calls: bool = False, formats: bool = False,
                    closed_objects: bool = False) -> "ParsedOutput":
    """Validate every call of ``output`` and apply ``tool_choice`` to the output as a whole; returns a new
    ParsedOutput. ``required`` (or a named tool) with no call at all adds a ``tool_choice_violation``
    diagnostic to the output."""
    tool_set = as_tool_set(tools, formats=formats)
    mode, chosen = tool_choice_mode(tool_choice, tool_set)
    calls = [validate_candidate(c, tool_set, tool_choice=tool_choice, limits=limits, fill_defaults=fill_defaults,
                                promote_reasoning_calls=promote_reasoning_calls, closed_objects=closed_objects)
             for c in output.tool_calls]
    diagnostics = list(output.diagnostics)
    made = [c for c in calls if c.source == "content" or promote_reasoning_calls]
    problem = None
    if mode == "required" and not made:
        problem = ("tool_choice is 'required' but the output has no tool call; call one of: "
                   + ", ".join(sorted(tool_set.specs)))
    elif mode == "named" and not any(c.name == chosen for c in made):
        problem = f"tool_choice names {chosen!r} but the output has no call to it; call {chosen!r}"
    if problem:
        diag = Diagnostic(code="tool_choice_violation", message=problem, severity="error")
        if diag not in diagnostics:
            diagnostics.append(diag)
    return output.model_copy(update={"tool_calls": calls, "diagnostics": diagnostics})


__all__ = ["ToolSet", "MissingExtra", "as_tool_set", "compiled_validator", "validate_candidate", "parser_errors",
           "validate_output", "tool_choice_mode", "json_type", "preview", "closed_schema"]
