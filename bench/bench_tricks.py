"""Speed tricks audit (issue 29): each trick that leans on CPython or pydantic internals, timed on the operation it
serves, with the trick and with the plain code, side by side in one process.

Issue 29's rule: a trick stays only if it saves at least 10 % of its operation here, and has a test that runs its
slow path (the plain code) and shows the same result. This module keeps the variant the library does not have:

* for a trick the library **removed**, the trick as it was (the removed code, kept here only to be timed);
* for a trick the library **kept**, the plain code it stands for.

Each row patches that variant in (every module that holds the replaced name), runs the operation, and patches the
library's own code back. Both variants must give the same result (checked once per row before timing, as the
harness checks a parser's arguments); a row whose variants disagree stops the module.

Timing: CPU µs per call (:func:`bench.harness.per_call_us`, median of 5 batches), the two variants alternated
:data:`ROUNDS` times (A B, B A, A B ...: on the shared machine a slow spell then hits both), the median of each
variant's rounds reported. **saving** = (plain - trick) / plain: what the trick takes off its operation.

The render operations use ``bench/bench_render.py``'s conversation (each turn: user, assistant tool call, tool
result, assistant answer; a final user message) and tools (imported from it).

    python -m bench.bench_tricks [--rounds N] [--budget SECONDS] [TRICK ...]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import statistics
import sys
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterator

import toolwire
from bench import harness
from bench.bench_render import TOOLS, conversation

ROUNDS = 7
"""Times each variant is measured, alternating with the other (the median is reported)."""
BUDGET = 0.1
"""Seconds of CPU per measurement (:func:`bench.harness.per_call_us`'s budget)."""
KEEP_AT = 0.10
"""Issue 29: a trick stays if it saves at least this share of its operation."""

GOLDEN = Path(__file__).resolve().parents[2] / "shared" / "golden"

MANY_TOOLS = [{"type": "function", "function": {**t["function"], "name": f"{t['function']['name']}_{n}"}}
              for n in range(10) for t in TOOLS]
"""20 tools (:data:`TOOLS` ten times, renamed): the tricks that work per tool are also timed on a request that
declares as many tools as an agent often does."""


# ---------------------------------------------------------------- patching a variant in

Patches = dict[tuple[Any, str], Any]
"""``{(module, attribute): value}``."""


def everywhere(original: Any, replacement: Any) -> Patches:
    """Patches putting ``replacement`` wherever a toolwire module holds ``original`` (the defining module and every
    module that imported the name)."""
    found: Patches = {}
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith("toolwire"):
            continue
        for attr, value in list(vars(module).items()):
            if value is original:
                found[(module, attr)] = replacement
    assert found, f"{original!r} is held by no toolwire module"
    return found


@contextlib.contextmanager
def installed(patches: Patches) -> Iterator[None]:
    """``patches`` applied, then the library's own values put back. ``Format.render`` holds its steps once
    imported (``toolwire.format._RENDER_STEPS``): they are looked up again on both sides."""
    import toolwire.format as fmt_module

    saved = {key: getattr(*key) for key in patches}
    for (module, attr), value in patches.items():
        setattr(module, attr, value)
    fmt_module._RENDER_STEPS = None
    try:
        yield
    finally:
        for (module, attr), value in saved.items():
            setattr(module, attr, value)
        fmt_module._RENDER_STEPS = None


def old_code(module: Any, source: str) -> dict[str, Any]:
    """The functions of ``source`` (removed library code), defined in a copy of ``module``'s namespace, so that
    they see the module's names and call each other."""
    namespace = dict(vars(module))
    exec(compile(source, f"<removed from {module.__name__}>", "exec"), namespace)  # noqa: S102 - our own source
    return namespace


# ---------------------------------------------------------------- the tricks as they were (removed from the library)

_new_object, _set_attribute = object.__new__, object.__setattr__


def _frozen_render_options() -> Patches:
    """``frozen_instance(RenderOptions, {...})`` in ``Format.render``: the instance ``__dict__`` set in one step."""
    import toolwire.format as fmt_module
    from toolwire.format import RenderOptions

    def render_options(**fields: Any) -> RenderOptions:
        obj = _new_object(RenderOptions)
        _set_attribute(obj, "__dict__", fields)
        return obj

    return {(fmt_module, "RenderOptions"): render_options}


def _frozen_rendered_prompt() -> Patches:
    """``frozen_instance(RenderedPrompt, {...})`` in ``PromptBuilder.build``."""
    import toolwire.prompt as prompt_module
    from toolwire.prompt import RenderedPrompt

    def rendered_prompt(text, pieces, opens_reasoning, format, warnings_source):  # noqa: A002 - the field's name
        obj = _new_object(RenderedPrompt)
        _set_attribute(obj, "__dict__", {"text": text, "pieces": pieces, "opens_reasoning": opens_reasoning,
                                         "format": format, "warnings_source": warnings_source})
        return obj

    return {(prompt_module, "RenderedPrompt"): rendered_prompt}


def _frozen_plan_pieces() -> Patches:
    """``frozen_instance`` of the context plan's ``Boundaries`` (``find_boundaries``) and ``Context`` (``_context``)."""
    import toolwire.context_policy.boundaries as boundaries_module
    plan_module = importlib.import_module("toolwire.context_policy.plan")  # (the package's `plan` is the function)
    from toolwire.context_policy.boundaries import Boundaries
    from toolwire.context_policy.policies import Context

    def boundaries(turns, steps, turn_of):
        obj = _new_object(Boundaries)
        _set_attribute(obj, "__dict__", {"turns": turns, "steps": steps, "turn_of": turn_of})
        return obj

    def context(messages, boundaries, thinking, drop_thinking, extra, has_tools, add_generation_prompt):
        obj = _new_object(Context)
        _set_attribute(obj, "__dict__", {
            "messages": messages, "boundaries": boundaries, "thinking": thinking, "drop_thinking": drop_thinking,
            "extra": extra, "has_tools": has_tools, "add_generation_prompt": add_generation_prompt, "memo": {}})
        return obj

    return {(boundaries_module, "Boundaries"): boundaries, (plan_module, "Context"): context}


def _built_plan() -> Patches:
    """``plan()``'s ``ContextPlan`` set up by hand (``object.__new__`` and pydantic's instance slots, as
    ``model_construct`` leaves them) and its cached ``kept_indices`` written into the instance ``__dict__``,
    instead of ``ContextPlan(...)`` (validated) and the cached property computing it on first read."""
    plan_module = importlib.import_module("toolwire.context_policy.plan")  # (the package's `plan` is the function)
    from toolwire.context_policy.plan import ContextPlan

    fields_set = frozenset(ContextPlan.model_fields)

    def context_plan(**values: Any) -> ContextPlan:
        obj = _new_object(ContextPlan)
        _set_attribute(obj, "__dict__", values)
        _set_attribute(obj, "__pydantic_fields_set__", set(fields_set))
        _set_attribute(obj, "__pydantic_extra__", None)
        _set_attribute(obj, "__pydantic_private__", None)
        # plan() collected the kept steps in its loop (a list append per step); here from the decisions it built
        values["kept_indices"] = frozenset([d.message_index for d in values["decisions"] if d.action != "drop"])
        return obj

    return {(plan_module, "ContextPlan"): context_plan}


_REQUEST_VALUES_DICT_READS = '''
def call_arguments(call, message_index, call_index):
    args = call.__dict__["function"].__dict__["arguments"]  # call.function.arguments (see check_message_text)
    if isinstance(args, dict):
        check_json_value(args, message_index=message_index, field=_arguments_field(call_index))
        return args
    value = _json_object(args)
    if value is None:
        value = _loaded_arguments(args, message_index, _arguments_field(call_index))
    if not isinstance(value, dict):
        raise InvalidRequest("arguments must be a JSON object", message_index=message_index,
                             field=_arguments_field(call_index))
    if not (len(args) <= _SHALLOW_TEXT and args.isascii() and "\\\\u" not in args):
        check_json_value(value, message_index=message_index, field=_arguments_field(call_index))
    return value


def check_tool_text(tool, index):
    fields = tool.__dict__["function"].__dict__
    name, description, parameters = fields["name"], fields["description"], fields["parameters"]
    if not name.isascii():
        check_text(name, field=f"tools[{index}].function.name")
    if description and not description.isascii():
        check_text(description, field=f"tools[{index}].function.description")
    if parameters is not None and not _plain_json_value(parameters):
        check_json_value(parameters, field=f"tools[{index}].function.parameters")


def check_message_text(messages):
    structured = False
    for index, m in enumerate(messages):
        fields = m.__dict__
        content, reasoning, name, call_id, calls = (fields["content"], fields["reasoning_content"], fields["name"],
                                                    fields["tool_call_id"], fields["tool_calls"])
        if content.__class__ is not str and content is not None:
            structured = True
            _check_message(index, m)
            continue
        if (not content or content.isascii() or _encodes(content)) \\
                and (not reasoning or reasoning.isascii() or _encodes(reasoning)) \\
                and (not name or name.isascii() or _encodes(name)) \\
                and (not call_id or call_id.isascii() or _encodes(call_id)) \\
                and (not calls or _clean_calls(calls)):
            continue
        _check_message(index, m)
    return structured


def _clean_calls(calls):
    for call in calls:
        fields = call.__dict__
        call_id, function = fields["id"], fields["function"].__dict__
        call_name, arguments = function["name"], function["arguments"]
        if (not call_name.isascii() and not _encodes(call_name)) \\
                or (call_id and not call_id.isascii() and not _encodes(call_id)) \\
                or (arguments.__class__ is str and not arguments.isascii() and not _encodes(arguments)):
            return False
    return True
'''
"""``toolwire/request_values.py``'s checks as they were: a model's fields read from its ``__dict__``."""


def _request_values_dict_reads() -> Patches:
    import toolwire.request_values as rv

    old = old_code(rv, _REQUEST_VALUES_DICT_READS)
    patches: Patches = {}
    for name in ("call_arguments", "check_tool_text", "check_message_text", "_clean_calls"):
        patches.update(everywhere(getattr(rv, name), old[name]))
    return patches


_DSML_TURNS_DICT_READS = '''
def _turns(version, messages, tools):
    merge, quick = version.results_in_user_turns, version.quick_instructions
    turns = []
    pending_tools = tools or None
    user_blocks = None
    text_joins = False
    results = 0
    parallel = []
    latest_calls = []
    for i, msg in enumerate(messages):
        fields = msg.__dict__  # the model's field values: one attribute read (a model's are slow), then dict reads
        role = fields["role"]
        if role not in _ROLES or (role == "latest_reminder" and not quick):
            raise UnsupportedByFormat(f"role {role!r} is not supported by {version.name}", message_index=i,
                                      field="role")
        task, wo_eos = None, False
        extra = msg.__pydantic_extra__  # msg.model_extra, without the property call
        if extra:
            task, wo_eos = _quick_instruction(version, extra, i)
        calls = fields["tool_calls"]
        if calls and role != "assistant":
            raise InvalidRequest("only assistant messages carry tool_calls", message_index=i, field="tool_calls")
        text = fields["content"]
        if text.__class__ is not str:
            text = msg.text()
        if merge and role == "tool":
            block = ("tool_result", text, i, fields["tool_call_id"])
            if user_blocks is None:
                user_blocks, text_joins, results = [block], True, 1
                turns.append(("user", i, "", None, None, None, False, None, user_blocks))
            else:
                user_blocks.append(block)
                results += 1
                if results == 2:
                    parallel.append((user_blocks, latest_calls))
            continue
        if merge and role == "user":
            block = ("text", text, i, None)
            if text_joins:
                user_blocks.append(block)
            else:
                user_blocks, text_joins, results = [block], task is None, 0
                turns.append(("user", i, text, None, None, task, wo_eos, None, user_blocks))
            continue
        if role == "developer" and not text:
            raise UnsupportedByFormat("developer messages need content", message_index=i, field="content")
        if calls:
            calls = latest_calls = [(ci, c.__dict__["function"].__dict__["name"], call_arguments(c, i, ci),
                                     c.__dict__["id"]) for ci, c in enumerate(calls)]
        attached = None
        if role == "system" and pending_tools is not None:
            attached, pending_tools = pending_tools, None
        turns.append((role, i, text, fields["reasoning_content"], calls or None, task, wo_eos, attached, None))
        user_blocks, text_joins = None, False
    if pending_tools is not None:
        turns.insert(0, ("system", None, "", None, None, None, False, pending_tools, None))
    for blocks, calls in parallel:
        _sort_tool_results(blocks, calls)
    return turns
'''
"""``templates/dsml.py``'s ``_turns`` as it was: fields read from the model's ``__dict__``, extras from
``__pydantic_extra__``."""


def _dsml_dict_reads() -> Patches:
    import toolwire.templates.dsml as dsml

    return everywhere(dsml._turns, old_code(dsml, _DSML_TURNS_DICT_READS)["_turns"])


def _dsml_self_reach_in() -> Patches:
    """``_piece_list(out)`` as ``out.appender().__self__`` (the list behind a bound ``list.append``)."""
    import toolwire.templates.dsml as dsml

    def _piece_list(out):
        return out.appender().__self__

    return everywhere(dsml._piece_list, _piece_list)


def _extra_reads() -> Patches:
    """``message.__pydantic_extra__`` instead of ``message.model_extra`` in GLM's ``message_reasoning`` and the
    plan's ``_context`` (the latter reads it when no tools are given)."""
    plan_module = importlib.import_module("toolwire.context_policy.plan")  # (the package's `plan` is the function)
    import toolwire.templates.glm as glm

    old = old_code(glm, '''
def message_reasoning(message):
    extra = message.__pydantic_extra__
    if not extra:
        return message.reasoning_content
    fields = {"reasoning_content": message.reasoning_content, **extra}
    return next((fields[k] for k in REASONING_FIELDS if fields.get(k) is not None), None)
''')
    old_plan = old_code(plan_module, '''
def _context(msgs, b, thinking, drop_thinking, extra, tools, add_generation_prompt):
    has_tools = bool(tools) or any(m.__pydantic_extra__ and m.__pydantic_extra__.get("tools") for m in msgs)
    return Context(msgs, b, bool(thinking), bool(drop_thinking), dict(extra), has_tools, bool(add_generation_prompt))
''')
    return {**everywhere(glm.message_reasoning, old["message_reasoning"]),
            **everywhere(plan_module._context, old_plan["_context"])}


def _tuple_new_segments() -> Patches:
    """``partial(tuple.__new__, Segment)`` (the tuple made without the NamedTuple's Python-level constructor) instead
    of ``Segment._make`` for ``RenderedPrompt.segments``."""
    import toolwire.prompt as prompt_module

    return {(prompt_module, "_segment"): partial(tuple.__new__, prompt_module.Segment)}


def _tuple_new_hits() -> Patches:
    """``partial(tuple.__new__, Hit)`` instead of ``Hit._make`` in ``MarkerScanner.scan``."""
    import toolwire.parsers.engine.lexer as lexer

    return {(lexer, "_hit"): partial(tuple.__new__, lexer.Hit)}


# ---------------------------------------------------------------- the plain code of the tricks the library keeps

def _plain_messages() -> Patches:
    """``normalize_messages`` through pydantic's own ``TypeAdapter(list[Message])`` (the Python alias step run by
    pydantic for each message), instead of the validator built from Message's core schema without that step."""
    import toolwire.models as models

    return {(models, "_PLAIN_MESSAGES"): None}


def _plain_private_reads() -> Patches:
    """``tool_to_dict`` reading ``tool._raw`` (pydantic's ``__getattr__``, reached after the instance lookup fails)
    instead of ``tool.__pydantic_private__.get("_raw")``."""
    import toolwire.models as models

    def tool_to_dict(tool):
        raw = tool._raw
        if raw is not None and "function" in raw:
            return raw
        return tool.model_dump(exclude_unset=True, by_alias=True)

    return everywhere(models.tool_to_dict, tool_to_dict)


def _plain_tools() -> Patches:
    """``normalize_tools`` through ``TypeAdapter(list[Tool])`` and ``tool._raw = raw``, instead of the validator
    built from Tool's core schema without its ``model_post_init`` and the private slot set by hand."""
    import toolwire.models as models

    return {(models, "_PLAIN_TOOLS"): None}


# ---------------------------------------------------------------- operations

def _render(family: str, turns: int, *, tools: list | None = TOOLS, segments: bool = False) -> tuple[str, Callable]:
    fmt = toolwire.get_format(family)
    messages = conversation(turns)
    shown = "" if tools is TOOLS else f", {len(tools)} tools" if tools else ", no tools"
    if segments:
        return f"`{family}` render + `.segments`, {turns} turns{shown}", lambda: fmt.render(messages, tools).segments
    return f"`{family}` render, {turns} turns{shown}", lambda: _prompt_key(fmt.render(messages, tools))


def _prompt_key(prompt) -> tuple:
    return prompt.text, prompt.pieces, prompt.opens_reasoning


def _plan(turns: int) -> tuple[str, Callable]:
    from toolwire.context_policy import plan

    messages = conversation(turns)

    def run():
        p = plan(messages, "qwen3", tools=TOOLS)
        return p.kept_indices, p.model_dump()

    return f"`plan()` (qwen3) + `.kept_indices`, {turns} turns", run


def _normalize_messages(turns: int) -> tuple[str, Callable]:
    from toolwire.models import normalize_messages

    messages = conversation(turns)
    return f"`normalize_messages`, {turns} turns", lambda: _state(normalize_messages(messages))


def _normalize_tools(tools: list) -> tuple[str, Callable]:
    from toolwire.models import normalize_tools

    return f"`normalize_tools`, {len(tools)} tools", lambda: _state(normalize_tools(tools))


def _state(model: Any) -> Any:
    """Everything a model holds (type, fields in order, fields set, extras, privates), recursively."""
    if isinstance(model, list):
        return [_state(m) for m in model]
    if not hasattr(model, "__pydantic_fields_set__"):
        return model
    return (type(model).__name__, [(k, _state(v)) for k, v in model.__dict__.items()],
            sorted(model.__pydantic_fields_set__), model.__pydantic_extra__, model.__pydantic_private__)


def _stream_xml() -> tuple[str, Callable]:
    from bench import bench_xml

    fmt = toolwire.get_format("qwen3_coder")
    text, _, _ = bench_xml.output(4_000)
    deltas = [text[i:i + harness.DELTA] for i in range(0, len(text), harness.DELTA)]

    def run():
        parser = fmt.stream(bench_xml.TOOLS)
        events = [e for d in deltas for e in parser.feed(d)]
        return repr(events), parser.finish().model_dump()

    return f"`qwen3_coder` stream, 4k value in {len(deltas):,} deltas", run


def _stream_golden(family: str) -> tuple[str, Callable]:
    rows = [json.loads(line) for line in (GOLDEN / "parse" / f"{family}.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]
    fmt = toolwire.get_format(family)
    cases = [(row["tools"], row.get("prompt_opens_reasoning", False),
              [row["model_output"][i:i + harness.DELTA] for i in range(0, len(row["model_output"]), harness.DELTA)])
             for row in rows]

    def run():
        out = []
        for tools, opens, deltas in cases:
            parser = fmt.stream(tools, thinking=opens)
            events = [e for d in deltas for e in parser.feed(d)]
            out.append((repr(events), parser.finish().model_dump()))
        return out

    return f"`{family}` stream, its {len(rows)} golden outputs in {harness.DELTA}-char deltas", run


# ---------------------------------------------------------------- the tricks

@dataclass
class Trick:
    """One trick: where it is, the variant the library does not have, and the operations it serves."""

    name: str
    where: str
    library: str
    """``"removed"`` (the library has the plain code; :attr:`other` is the trick) or ``"kept"``."""
    other: Callable[[], Patches]
    operations: Callable[[], list[tuple[str, Callable]]]
    rows: list[dict] = field(default_factory=list)


def _renders(*families: str, turns: tuple[int, ...] = (2, 50), **kwargs: Any) -> Callable[[], list]:
    return lambda: [_render(f, t, **kwargs) for f in families for t in turns]


TRICKS = [
    Trick("frozen_render_options", "`toolwire/format.py`: `frozen_instance(RenderOptions, ...)`", "removed",
          _frozen_render_options, _renders("qwen3", "deepseek_v4")),
    Trick("frozen_rendered_prompt", "`toolwire/prompt.py`: `frozen_instance(RenderedPrompt, ...)`", "removed",
          _frozen_rendered_prompt, _renders("qwen3", "deepseek_v4")),
    Trick("frozen_plan_pieces", "`context_policy/boundaries.py`, `plan.py`: `frozen_instance(Boundaries / Context, "
          "...)`", "removed", _frozen_plan_pieces,
          lambda: _renders("qwen3")() + [_plan(2), _plan(50)]),
    Trick("built_plan", "`context_policy/plan.py`: `ContextPlan` by `object.__new__` + pydantic slots, "
          "`result.__dict__[\"kept_indices\"] = ...`", "removed", _built_plan, lambda: [_plan(2), _plan(50)]),
    Trick("request_values_dict_reads", "`toolwire/request_values.py`: `m.__dict__[...]` field reads", "removed",
          _request_values_dict_reads,
          lambda: _renders("qwen3", "deepseek_v4")() + _renders("qwen3", turns=(2,), tools=MANY_TOOLS)()),
    Trick("dsml_dict_reads", "`templates/dsml.py`: `c.__dict__[\"function\"].__dict__[...]`, `__pydantic_extra__`",
          "removed", _dsml_dict_reads, _renders("deepseek_v4", "deepseek_v32")),
    Trick("dsml_self_reach_in", "`templates/dsml.py`: `out.appender().__self__`", "removed", _dsml_self_reach_in,
          _renders("deepseek_v4", "deepseek_v32")),
    Trick("private_reads", "`toolwire/models.py`: `tool.__pydantic_private__.get(\"_raw\")`", "kept",
          _plain_private_reads,
          lambda: _renders("qwen3", "deepseek_v4")()
          + _renders("qwen3", "deepseek_v4", turns=(2,), tools=MANY_TOOLS)()),
    Trick("extra_reads", "`templates/glm.py`, `context_policy/plan.py`: `m.__pydantic_extra__`", "removed",
          _extra_reads, lambda: _renders("glm47")() + _renders("qwen3", tools=None)()),
    Trick("message_schema_surgery", "`toolwire/models.py`: `_plain_message_list` (Message's core schema without "
          "its `before` validator)", "kept", _plain_messages,
          lambda: [_normalize_messages(2), _normalize_messages(50)] + _renders("qwen3", "deepseek_v4")()),
    Trick("tool_schema_surgery", "`toolwire/models.py`: `_plain_tool_list` (Tool's core schema without "
          "`model_post_init`) + `__pydantic_private__` set by hand", "kept", _plain_tools,
          lambda: [_normalize_tools(TOOLS), _normalize_tools(MANY_TOOLS)]
          + _renders("qwen3", "deepseek_v4", turns=(2,))()
          + _renders("qwen3", "deepseek_v4", turns=(2,), tools=MANY_TOOLS)()),
    Trick("segment_tuple_new", "`toolwire/prompt.py`: `partial(tuple.__new__, Segment)`", "removed",
          _tuple_new_segments,
          _renders("qwen3", "deepseek_v4", segments=True)),
    Trick("hit_tuple_new", "`parsers/lexer.py`: `partial(tuple.__new__, Hit)`", "removed", _tuple_new_hits,
          lambda: [_stream_xml(), _stream_golden("gpt_oss")]),
]




def _all_removed() -> Patches:
    """Every removed trick at once: what the removals cost together."""
    patches: Patches = {}
    for trick in TRICKS:
        if trick.library == "removed":
            patches.update(trick.other())
    return patches


ALL_REMOVED = Trick("all_removed", "every trick the library removed, together", "removed", _all_removed,
                    lambda: _renders("qwen3", "deepseek_v4")() + [_plan(50)] + _renders("qwen3", turns=(50,),
                                                                                       segments=True)())
"""Not a trick: the net cost of the removals (no verdict)."""


# ---------------------------------------------------------------- measuring

def measure(trick: Trick, rounds: int, budget: float) -> None:
    """Fill ``trick.rows``: per operation, the median µs with the trick and with the plain code."""
    operations = trick.operations()
    for _, op in operations:
        op()  # every module the operation needs imported before the patches are looked up
    patches = trick.other()
    for label, op in operations:
        library_result = op()
        with installed(patches):
            other_result = op()
        assert library_result == other_result, f"{trick.name}: the two variants differ on {label}"
        times: dict[str, list[float]] = {"library": [], "other": []}
        for r in range(rounds):
            for variant in (("library", "other") if r % 2 == 0 else ("other", "library")):
                if variant == "other":
                    with installed(patches):
                        times[variant].append(harness.per_call_us(op, budget))
                else:
                    times[variant].append(harness.per_call_us(op, budget))
        library, other = statistics.median(times["library"]), statistics.median(times["other"])
        with_trick, plain = (other, library) if trick.library == "removed" else (library, other)
        trick.rows.append({"operation": label, "trick": with_trick, "plain": plain,
                           "saving": (plain - with_trick) / plain,
                           "spread": max(_spread(times["library"]), _spread(times["other"]))})


def _spread(samples: list[float]) -> float:
    """(max - min) / median of one variant's rounds: how much the machine moved during the row."""
    return (max(samples) - min(samples)) / statistics.median(samples)


def verdict(trick: Trick) -> str:
    best = max(row["saving"] for row in trick.rows)
    return "keep" if best >= KEEP_AT else "remove"


def main(argv: list[str] | None = None) -> None:
    """Measure the tricks (all, or those named) and print the table."""
    parser = argparse.ArgumentParser(prog="python -m bench.bench_tricks")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--budget", type=float, default=BUDGET)
    parser.add_argument("tricks", nargs="*", help=f"names among {', '.join(t.name for t in TRICKS)}, all_removed")
    args = parser.parse_args(argv if argv is not None else [])
    chosen = [t for t in TRICKS + [ALL_REMOVED] if not args.tricks or t.name in args.tricks]
    rows = []
    for trick in chosen:
        measure(trick, args.rounds, args.budget)
        for n, row in enumerate(trick.rows):
            rows.append([trick.name if n == 0 else "", row["operation"], f"{row['trick']:,.1f}",
                         f"{row['plain']:,.1f}", f"{row['saving']:+.1%}", f"{row['spread']:.0%}",
                         "" if n or trick is ALL_REMOVED else f"{verdict(trick)} (library: {trick.library})"])
        print(f"  measured {trick.name}", file=sys.stderr, flush=True)
    print(f"\nspeed tricks: CPU µs per operation with the trick and with the plain code (median of {args.rounds} "
          f"alternated rounds; saving = (plain - trick) / plain; keep at {KEEP_AT:.0%})\n")
    harness.print_table(["trick", "operation", "with trick µs", "plain µs", "saving", "spread", "verdict"], rows,
                        align="llrrrrl")
    for trick in chosen:
        best = max(trick.rows, key=lambda row: row["saving"])
        harness.record("tricks", f"{trick.name}: {best['operation']}", f"{best['trick']:,.1f}", "plain code",
                       f"{best['plain']:,.1f}", f"{best['plain'] / best['trick']:.2f}x")


if __name__ == "__main__":
    print(harness.environment())
    main(sys.argv[1:])
