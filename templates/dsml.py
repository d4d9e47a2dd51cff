"""DeepSeek DSML family: V3.2, V4 and V4.1 (the ``<｜DSML｜tool_calls>`` wire format).

Reference: DeepSeek's published Python encoders (``encoding_dsv32.py``, V4 / V4.1 encoding),
``encode_messages(...)``; the golden vectors in ``../shared/golden`` are the truth. The three versions are
data (:class:`DsmlVersion`) on one implementation:

* V3.2 writes ``<｜DSML｜function_calls>`` blocks and renders tool results inline as
  ``<function_results><result>…</result></function_results>``, in message order.
* V4 writes ``<｜DSML｜tool_calls>``, merges tool results into user turns as ``<tool_result>…</tool_result>``
  (sorted by the order of the calls), has named reasoning efforts, ``latest_reminder`` turns and
  quick-instruction ``task`` tokens, and keeps every earlier reasoning when tools are declared.
* V4.1 is V4 with the DSML token spelled ``｜DSML｜ `` (a trailing space) and the block named ``calls``, a
  ``<｜System｜>`` token opening the system section, and a numeric reasoning effort 1-100.

Segments: role and control tokens (BOS/EOS, ``<｜User｜>``, ``<｜Assistant｜>``, ``<｜System｜>``, ``<think>``,
``</think>``, ``<｜latest_reminder｜>``, task tokens) are ``special``. DSML tags are composite: the whole tag
text the renderer writes (``<｜DSML｜invoke name="``, ``">``, ``<｜DSML｜parameter name="``,
``" string="true">``, ``</｜DSML｜parameter>`` ...) is ``special``, while the tool name, parameter names and
values inside them are ``content``. The tool preamble's example tags and ``<think>`` mentions are ``special``
too (the tokenizer reads ``｜DSML｜`` and ``<think>`` there as control tokens); the rest of the preamble and
the effort prompt are ``template``; tool schemas are ``content``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

from toolwire.errors import InvalidOption, InvalidRequest, UnrepresentableValue, UnsupportedByFormat
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, call_arguments, function_to_dict
from toolwire.families.dsml import MARKERS_V4, MARKERS_V32, MARKERS_V41
from toolwire.markers import MarkerTable
from toolwire.parsers.dsml import DeepSeekV4Parser, DeepSeekV32Parser, DeepSeekV41Parser
from toolwire.parsers.engine.dsml import DsmlStreamParser
from toolwire.prompt import PromptBuilder, special_pattern
from toolwire.templates.json_text import json_writer, tojson

TASK_TOKENS = {
    "action": "<｜action｜>",
    "query": "<｜query｜>",
    "authority": "<｜authority｜>",
    "domain": "<｜domain｜>",
    "title": "<｜title｜>",
    "read_url": "<｜read_url｜>",
}

_V32_TOOLS_HEAD = (
    "## Tools\n"
    "You have access to a set of tools you can use to answer the user's question.\n"
    'You can invoke functions by writing a "{tool_calls_open}" block like the following as part of your reply'
    " to the user:\n"
    "{tool_calls_open}\n"
    '{invoke_open}$FUNCTION_NAME">\n'
    '{parameter_open}$PARAMETER_NAME" string="true|false">$PARAMETER_VALUE{parameter_close}\n'
    "...\n"
    "{invoke_close}\n"
    '{invoke_open}$FUNCTION_NAME2">\n'
    "...\n"
    "{invoke_close}\n"
    "{tool_calls_close}\n"
    "String and scalar parameters should be specified as is without any escaping or quotes, while lists and"
    ' objects should use JSON format. The "string" attribute should be set to "true" for string type parameters'
    ' and "false" for other types (numbers, booleans, arrays, objects).\n'
    "If the thinking_mode is enabled, then after function results you should strongly consider outputting a"
    " thinking block. Here is an example:\n"
    "{tool_calls_open}\n...\n{tool_calls_close}\n"
    "<function_results>\n...\n</function_results>\n"
    "{think_open}...thinking about results{think_close}\n"
    "Here are the functions available in JSONSchema format:\n"
    "<functions>\n"
)
_V32_TOOLS_TAIL = "\n</functions>\n"

_V4_TOOLS_HEAD = (
    "## Tools\n\n"
    "You have access to a set of tools to help answer the user's question. You can invoke tools by writing a"
    ' "{tool_calls_open}" block like the following:\n\n'
    "{tool_calls_open}\n"
    '{invoke_open}$TOOL_NAME">\n'
    '{parameter_open}$PARAMETER_NAME" string="true|false">$PARAMETER_VALUE{parameter_close}\n'
    "...\n"
    "{invoke_close}\n"
    '{invoke_open}$TOOL_NAME2">\n'
    "...\n"
    "{invoke_close}\n"
    "{tool_calls_close}\n\n"
    'String parameters should be specified as is and set `string="true"`. For all other types (numbers,'
    ' booleans, arrays, objects), pass the value in JSON format and set `string="false"`.\n\n'
    "If thinking_mode is enabled (triggered by {think_open}), you MUST output your complete reasoning inside"
    " {think_open}...{think_close} BEFORE any tool calls or final response.\n\n"
    "Otherwise, output directly after {think_close} with tool calls or final response.\n\n"
    "### Available Tool Schemas\n\n"
)
_V4_TOOLS_TAIL = (
    "\n\nYou MUST strictly follow the above defined tool name and parameter schemas to invoke tool calls.\n"
)

_V4_EFFORT_PROMPTS = {
    "low": "",
    "high": (
        "Reasoning Effort: Absolute maximum with no shortcuts permitted.\n"
        "You MUST be very thorough in your thinking and comprehensively decompose the problem to resolve the root"
        " cause, rigorously stress-testing your logic against all potential paths, edge cases, and adversarial"
        " scenarios.\n"
        "Explicitly write out your entire deliberation process, documenting every intermediate step, considered"
        " alternative, and rejected hypothesis to ensure absolutely no assumption is left unchecked.\n\n"
    ),
    "max": (
        "Reasoning Effort: Beyond maximum — exhaustive, relentless, and uncompromising.\n"
        "You MUST reason with the utmost depth and rigor, leaving absolutely nothing to chance: exhaustively"
        " decompose the problem into its most fundamental components, trace every causal chain to its root, and"
        " resolve the underlying cause rather than any surface symptom.\n"
        "Do not stop reasoning until you have independently verified the solution from multiple angles and are"
        " certain that no assumption remains unchecked and no error remains undiscovered.\n\n"
    ),
}
_V41_NAMED_EFFORTS = {"low": 50, "high": 75, "max": 100}
_V41_EFFORT_PROMPT = "Reasoning Effort: {} (range 1-100, the higher the value, the more thorough the reasoning)\n\n"


@dataclass(frozen=True)
class DsmlVersion:
    """What the renderer needs beyond a DSML family's declaration (the version's own wording and rules)."""

    parser: type[DsmlStreamParser]  # the version's parser class; its ``family`` is the declaration
    tools_head: str
    tools_tail: str
    results_in_user_turns: bool  # V4+: tool results become <tool_result> blocks of a user turn
    effort: str  # "none" | "named" | "numeric"
    system_token: bool  # V4.1: <｜System｜> opens the system section
    quick_instructions: bool  # V4+: latest_reminder turns and task tokens
    keeps_reasoning_with_tools: bool  # V4+: declared tools keep every earlier reasoning

    @property
    def name(self) -> str:
        return self.parser.family.name

    @property
    def markers(self) -> MarkerTable:
        return self.parser.family.markers

    @cached_property
    def preamble_specials(self) -> re.Pattern:
        """The markers the tools preamble spells, which it emits as ``special``."""
        m = self.markers
        return special_pattern((m.TOOL_CALLS_OPEN, m.TOOL_CALLS_CLOSE, m.INVOKE_OPEN, m.INVOKE_CLOSE, m.PARAMETER_OPEN,
                                m.PARAMETER_CLOSE, m.THINK_OPEN, m.THINK_CLOSE))


V32 = DsmlVersion(
    parser=DeepSeekV32Parser, tools_head=_V32_TOOLS_HEAD.format(**MARKERS_V32), tools_tail=_V32_TOOLS_TAIL,
    results_in_user_turns=False, effort="none", system_token=False, quick_instructions=False,
    keeps_reasoning_with_tools=False,
)
V4 = DsmlVersion(
    parser=DeepSeekV4Parser, tools_head=_V4_TOOLS_HEAD.format(**MARKERS_V4), tools_tail=_V4_TOOLS_TAIL,
    results_in_user_turns=True, effort="named", system_token=False, quick_instructions=True,
    keeps_reasoning_with_tools=True,
)
V41 = DsmlVersion(
    parser=DeepSeekV41Parser, tools_head=_V4_TOOLS_HEAD.format(**MARKERS_V41), tools_tail=_V4_TOOLS_TAIL,
    results_in_user_turns=True, effort="numeric", system_token=True, quick_instructions=True,
    keeps_reasoning_with_tools=True,
)
VERSIONS = {v.name: v for v in (V32, V4, V41)}


# ---------------------------------------------------------------------------------------------------------
# reasoning retention


def drops_earlier_turns(version: DsmlVersion, *, thinking: bool, drop_thinking: bool, has_tools: bool) -> bool:
    """Whether the encoder's ``drop_thinking`` pass runs: it leaves out developer turns before the last user
    turn and changes the ``<think>`` transitions. (Which earlier *reasoning* is rendered is decided by
    :mod:`toolwire.context_policy`, whose DSML rules mirror this switch.)

    Only in thinking mode, only when ``drop_thinking`` asks for it, and never on V4+ when tools are declared.
    """
    if not (thinking and drop_thinking):
        return False
    return not (version.keeps_reasoning_with_tools and has_tools)


# ---------------------------------------------------------------------------------------------------------
# request normalization


_Turn = tuple
"""One message as the encoders see it, a plain tuple (a long conversation has hundreds):
``(role, index, text, reasoning, calls, task, wo_eos, tools, blocks)``.

* ``index``: the request message index (None for the inserted system message);
* ``calls``: ``[(call_index, name, arguments, id)]`` or None;
* ``task`` / ``wo_eos``: the V4+ quick-instruction switches;
* ``tools``: the declared tools, on the first system turn;
* ``blocks``: V4+ user turns, which may merge several request messages:
  ``[(kind "text" | "tool_result", text, index, tool_call_id)]``.
"""
ROLE, CALLS, TASK = 0, 4, 5  # the fields read outside the loops that unpack a turn


_ROLES = frozenset(("system", "developer", "user", "assistant", "tool", "latest_reminder"))


def _turns(version: DsmlVersion, messages: list[Message], tools: list[Tool]) -> list[_Turn]:
    """Validate the request and turn it into encoder messages, with the tools attached to the first system.

    V4+ (``results_in_user_turns``): a tool result becomes a ``tool_result`` block of a user turn (joining the
    latest turn when that is a user turn), and user text joins a latest user turn that has no quick-instruction
    task; the results of parallel calls are then put in the order of the calls (:func:`_sort_tool_results`),
    after the whole request is validated."""
    merge, quick = version.results_in_user_turns, version.quick_instructions
    turns: list[_Turn] = []
    pending_tools = tools or None  # until the first system turn takes them
    user_blocks: list | None = None  # V4+: the blocks of the latest turn when it is a user turn
    text_joins = False  # V4+: whether user text may join that turn (it has no task)
    results = 0  # V4+: the tool results in that turn
    parallel: list[tuple[list, list]] = []  # V4+: (blocks, the calls they answer) of turns with 2+ results
    latest_calls: list = []  # the calls of the latest assistant turn that made any
    for i, msg in enumerate(messages):
        role = msg.role
        if role not in _ROLES or (role == "latest_reminder" and not quick):
            raise UnsupportedByFormat(f"role {role!r} is not supported by {version.name}", message_index=i,
                                      field="role")
        task, wo_eos = None, False
        extra = msg.model_extra
        if extra:  # quick-instruction switches come as extra message fields
            task, wo_eos = _quick_instruction(version, extra, i)
        calls = msg.tool_calls
        if calls and role != "assistant":
            raise InvalidRequest("only assistant messages carry tool_calls", message_index=i, field="tool_calls")
        text = msg.content
        if text.__class__ is not str:
            text = msg.text()
        if merge and role == "tool":
            block = ("tool_result", text, i, msg.tool_call_id)
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
            calls = latest_calls = [(ci, c.function.name, call_arguments(c, i, ci), c.id) for ci, c in enumerate(calls)]
        attached = None
        if role == "system" and pending_tools is not None:
            attached, pending_tools = pending_tools, None
        turns.append((role, i, text, msg.reasoning_content, calls or None, task, wo_eos, attached, None))
        user_blocks, text_joins = None, False
    if pending_tools is not None:
        turns.insert(0, ("system", None, "", None, None, None, False, pending_tools, None))
    for blocks, calls in parallel:
        _sort_tool_results(blocks, calls)
    return turns


def _quick_instruction(version: DsmlVersion, extra: dict[str, Any], index: int) -> tuple[str | None, bool]:
    """A message's ``task`` and ``wo_eos`` (V4+ quick-instruction switches, given as extra message fields)."""
    task, wo_eos = extra.get("task"), extra.get("wo_eos", False)
    if (task is not None or "wo_eos" in extra) and not version.quick_instructions:
        raise UnsupportedByFormat(f"{version.name} has no quick-instruction tasks or wo_eos",
                                  message_index=index, field="task" if task is not None else "wo_eos")
    if task is not None and task not in TASK_TOKENS:
        raise InvalidRequest(f"unknown task {task!r} (known: {', '.join(TASK_TOKENS)})", message_index=index,
                             field="task")
    if not isinstance(wo_eos, bool):
        raise InvalidRequest("wo_eos must be a boolean", message_index=index, field="wo_eos")
    return task, wo_eos


def _sort_tool_results(blocks: list, calls: list) -> None:
    """V4+: the results of parallel calls are shown in the order of the ``calls`` they answer, matched by
    ``tool_call_id`` (``blocks``, a user turn's, is reordered in place)."""
    results = [b for b in blocks if b[0] == "tool_result"]
    order = {cid: n for n, (_, _, _, cid) in enumerate(calls) if cid}
    for _, _, index, cid in results:
        if cid not in order:
            raise InvalidRequest(f"tool_call_id {cid!r} matches none of the preceding assistant's calls, so the"
                                 " parallel results cannot be ordered", message_index=index, field="tool_call_id")
    ordered = iter(sorted(results, key=lambda b: order[b[3]]))
    blocks[:] = [next(ordered) if b[0] == "tool_result" else b for b in blocks]


def _drop_earlier(turns: list[_Turn], keep: tuple[str, ...]) -> list[_Turn]:
    """Leave out turns of roles not in ``keep`` (developer turns) before the last user turn, as the encoders'
    ``drop_thinking`` does. Which assistant reasoning is rendered is the context plan's decision."""
    last_user = _last_user(turns)
    return [turn for i, turn in enumerate(turns) if turn[ROLE] in keep or turn[ROLE] == "assistant" or i >= last_user]


def _last_user(turns: list[_Turn]) -> int:
    return max((i for i, t in enumerate(turns) if t[ROLE] in ("user", "developer")), default=-1)


# ---------------------------------------------------------------------------------------------------------
# pieces shared by the versions


def _effort(version: DsmlVersion, options: RenderOptions) -> Any:
    """The validated reasoning effort (V4/V4.1 default ``high`` when thinking)."""
    effort = options.reasoning_effort
    if version.effort == "none":
        if effort is not None:
            raise InvalidOption(f"{version.name} has no reasoning effort", field="reasoning_effort")
        return None
    if effort is None:
        return "high" if options.thinking else None
    if isinstance(effort, str) and effort in _V4_EFFORT_PROMPTS:
        return effort
    if version.effort == "numeric" and isinstance(effort, int) and not isinstance(effort, bool) and 1 <= effort <= 100:
        return effort
    accepted = "'low', 'high', 'max'" + (" or an integer 1-100" if version.effort == "numeric" else "")
    raise InvalidOption(f"reasoning_effort must be {accepted}, got {effort!r}", field="reasoning_effort")


def _effort_prompt(version: DsmlVersion, effort: Any) -> str:
    if version.effort == "named":
        return _V4_EFFORT_PROMPTS[effort]
    return _V41_EFFORT_PROMPT.format(_V41_NAMED_EFFORTS.get(effort, effort))


_to_strict_json = json_writer(allow_nan=False)


def _piece_list(out: PromptBuilder) -> list:
    """The list ``out`` collects its ``(kind, text, message_index)`` pieces in, so that a turn's pieces go in with
    one ``+=``. As with :meth:`PromptBuilder.appender`, empty text is not left out for the writer: every piece put
    in must have text (see :func:`_non_empty`)."""
    return out._pieces


def _non_empty(pieces: tuple) -> tuple:
    """``pieces`` without those of empty text (what :meth:`PromptBuilder.content` leaves out)."""
    return tuple(piece for piece in pieces if piece[1])


def _write_tools(version: DsmlVersion, out: PromptBuilder, tools: list[Tool]) -> None:
    out.fixed(version.tools_head, None, version.preamble_specials)
    out.content("\n".join([tojson(function_to_dict(t)) for t in tools]), None)
    out.template(version.tools_tail, None)


def parameter_value(version: DsmlVersion, value: Any) -> tuple[bool, str]:
    """``(is_string, text)`` of one argument value. A string holding the parameter's closing tag, and JSON
    text that would hold it, are written as ``string="false"`` JSON with every ``<`` escaped as ``\\u003c``."""
    close = version.markers["parameter_close"]
    if isinstance(value, str) and close not in value:
        return True, value
    try:
        if value.__class__ is int:  # JSON writes an integer as Python does (and refuses the same ones)
            return False, int.__repr__(value)
        text = _to_strict_json(value)
    except ValueError:
        raise UnrepresentableValue(f"{value!r} is not a JSON value") from None
    if close in text:
        text = text.replace("<", "\\u003c")
    return False, text


_NAME_BREAKERS = re.compile(r'["<>\n]')


def _call_field(call_index: int, key: str | None = None) -> str:
    """The request field of a call's name (``key`` None) or of one of its arguments."""
    return f"tool_calls[{call_index}].function." + ("name" if key is None else f"arguments.{key}")


def _check_name(name: str, message_index: int | None, call_index: int, key: str | None = None) -> None:
    """Tool and parameter names are written raw inside a tag: ``"``, ``<``, ``>`` or a newline would end it.
    (An identifier holds none of them, so callers test ``name.isidentifier()`` first.)"""
    bad = _NAME_BREAKERS.search(name)
    if bad:
        raise UnrepresentableValue(f"{name!r} contains {bad.group()!r}, which would end the DSML tag",
                                   message_index=message_index, field=_call_field(call_index, key))


_STRING_ATTRIBUTE = {True: '" string="true">', False: '" string="false">'}


def _write_calls(version: DsmlVersion, pieces: list, i: int | None, calls: list) -> None:
    """The ``\\n\\n<｜DSML｜tool_calls>`` block of the assistant turn of message ``i``."""
    m = version.markers
    close, invoke_open, param_open = m["parameter_close"], m["invoke_open"], m["parameter_open"]
    newline = ("template", "\n", i)
    pieces += (("template", "\n\n", i), ("special", m["tool_calls_open"], i), newline)
    for n, (ci, name, arguments, _) in enumerate(calls):
        if not name.isidentifier():
            _check_name(name, i, ci)
        invoke = (("special", invoke_open, i), ("content", name, i), ("special", '">', i), newline)
        if n:
            pieces.append(newline)
        pieces += invoke if name else _non_empty(invoke)
        for k, (key, value) in enumerate(arguments.items()):
            if not key.isidentifier():
                _check_name(key, i, ci, key)
            if value.__class__ is str and close not in value:  # parameter_value's first case, without the call
                is_string, text = True, value
            else:
                try:
                    is_string, text = parameter_value(version, value)
                except UnrepresentableValue as exc:
                    raise UnrepresentableValue(exc.detail, message_index=i, field=_call_field(ci, key)) from None
            if k:
                pieces.append(newline)
            parameter = (("special", param_open, i), ("content", key, i), ("special", _STRING_ATTRIBUTE[is_string], i),
                         ("content", text, i), ("special", close, i))
            pieces += parameter if key and text else _non_empty(parameter)
        pieces += (newline, ("special", m["invoke_close"], i))
    pieces += (newline, ("special", m["tool_calls_close"], i))


def _write_assistant(version: DsmlVersion, pieces: list, turn: _Turn, reasoning: str | None) -> None:
    """Reasoning (when shown) + ``</think>``, content, the call block and EOS."""
    _, i, text, _, calls, _, wo_eos, _, _ = turn
    if reasoning is not None:
        if reasoning:
            pieces.append(("content", reasoning, i))
        pieces.append(("special", version.markers["think_close"], i))
    if text:
        pieces.append(("content", text, i))
    if calls:
        _write_calls(version, pieces, i, calls)
    if not wo_eos:
        pieces.append(("special", version.markers["eos"], i))


# ---------------------------------------------------------------------------------------------------------
# the two transcript shapes


def _render_v32(version: DsmlVersion, turns: list[_Turn], options: RenderOptions, out: PromptBuilder) -> None:
    """V3.2: user turns carry the assistant prefix; tool results are inline ``<function_results>``."""
    m, thinking, kept = version.markers, options.thinking, options.kept_reasoning
    pieces = _piece_list(out)
    user, assistant, think_open, think_close = m["user"], m["assistant"], m["think_open"], m["think_close"]
    last_user = _last_user(turns) if thinking else -1  # read only in thinking mode
    prompted = len(turns) if options.add_generation_prompt else len(turns) - 1  # the turns a prompt follows
    owner_calls, position = None, 0  # in a run of tool results: the calls of the assistant turn before it, and where
    for i, turn in enumerate(turns):
        role, idx, text, reasoning, calls, _, _, tools, _ = turn
        prompt_follows = i < prompted
        if role == "system":
            if text:
                pieces.append(("content", text, idx))
            if tools:
                pieces.append(("template", "\n\n", idx))
                _write_tools(version, out, tools)
        elif role == "user" or role == "developer":
            pieces.append(("special", user, idx))
            if role == "developer":
                pieces.append(("template", "\n\n# The user's message is: ", idx))
            if text:
                pieces.append(("content", text, idx))
            if prompt_follows:
                pieces += (("special", assistant, idx),
                           ("special", think_open if thinking and i == last_user else think_close, idx))
        elif role == "assistant":
            if thinking and i > last_user and not (reasoning or calls):
                raise UnsupportedByFormat("in thinking mode an assistant turn after the last user turn needs"
                                          " reasoning_content or tool_calls", message_index=idx,
                                          field="reasoning_content")
            _write_assistant(version, pieces, turn, (reasoning or "") if idx in kept else None)
        else:  # tool
            if i == 0 or turns[i - 1][ROLE] != "tool":
                owner = turns[i - 1] if i > 0 else None
                owner_calls = owner[CALLS] if owner is not None and owner[ROLE] == "assistant" else None
                position = 0
            position += 1
            if not owner_calls or position > len(owner_calls):
                raise UnsupportedByFormat("tool result without a matching tool call in the preceding assistant"
                                          " message", message_index=idx, field="tool_call_id")
            pieces.append(("template", "\n\n<function_results>\n<result>" if position == 1 else "\n<result>", idx))
            if text:
                pieces.append(("content", text, idx))
            if position < len(owner_calls):
                pieces.append(("template", "</result>", idx))
            elif not prompt_follows:
                pieces.append(("template", "</result>\n</function_results>", idx))
            else:
                pieces += (("template", "</result>\n</function_results>\n\n", idx),
                           ("special", think_open if thinking and i >= last_user else think_close, idx))


def _render_v4(version: DsmlVersion, turns: list[_Turn], options: RenderOptions, out: PromptBuilder,
               effort: Any, drop: bool) -> None:
    """V4 / V4.1: tool results are user turns; transitions are written after the turn they follow."""
    m, thinking, kept = version.markers, options.thinking, options.kept_reasoning
    pieces = _piece_list(out)
    user, assistant = m["user"], m["assistant"]
    result_open, result_close = m["tool_result_open"], m["tool_result_close"]
    last_user = _last_user(turns) if drop else -1  # read only when earlier turns are dropped
    think_after_user = m["think_open"] if thinking else m["think_close"]
    final = len(turns) - 1
    if turns and thinking:
        if version.system_token:
            pieces.append(("special", m["system"], None))
        effort_prompt = _effort_prompt(version, effort)
        if effort_prompt:
            pieces.append(("template", effort_prompt, None))
    for i, turn in enumerate(turns):
        role, idx, text, reasoning, _, task, _, tools, blocks = turn
        if role == "user":
            pieces.append(("special", user, idx))
            for n, (kind, block_text, bidx, _) in enumerate(blocks):
                if n:
                    pieces.append(("template", "\n\n", bidx))
                if kind == "text":
                    if block_text:
                        pieces.append(("content", block_text, bidx))
                elif block_text:
                    pieces += (("template", result_open, bidx), ("content", block_text, bidx),
                               ("template", result_close, bidx))
                else:
                    pieces += (("template", result_open, bidx), ("template", result_close, bidx))
        elif role == "assistant":
            shows = thinking and idx in kept and not (i > 0 and turns[i - 1][TASK] is not None)  # (not after a task)
            _write_assistant(version, pieces, turn, (reasoning or "") if shows else None)
        elif role == "system":
            if version.system_token and (i or not thinking):  # (else the effort prompt opened the section)
                pieces.append(("special", m["system"], idx))
            if text:
                pieces.append(("content", text, idx))
            if tools:
                pieces.append(("template", "\n\n", idx))
                _write_tools(version, out, tools)
        else:  # developer, latest_reminder
            pieces.append(("special", user if role == "developer" else m["latest_reminder"], idx))
            if text:
                pieces.append(("content", text, idx))

        if i < final:
            if turns[i + 1][ROLE] not in ("assistant", "latest_reminder"):
                continue
        elif not options.add_generation_prompt:
            continue
        if task is not None:
            if task == "action":
                pieces += (("special", assistant, idx), ("special", think_after_user, idx))
            pieces.append(("special", TASK_TOKENS[task], idx))
        elif role == "user" or role == "developer":
            think = think_after_user if not drop or i >= last_user else m["think_close"]
            pieces += (("special", assistant, idx), ("special", think, idx))


def render(version: DsmlVersion, messages: list[Message], tools: list[Tool], options: RenderOptions,
           out: PromptBuilder) -> bool:
    """Render a request as ``version``'s reference encoder does; returns whether the prompt opens ``<think>``."""
    effort = _effort(version, options)
    turns = _turns(version, messages, tools)
    drop = drops_earlier_turns(version, thinking=options.thinking, drop_thinking=options.drop_thinking,
                               has_tools=bool(tools))
    if drop:
        keep = ("user", "system", "tool", "latest_reminder") if version.quick_instructions else ("user", "system", "tool")
        turns = _drop_earlier(turns, keep)
    out.special(version.markers["bos"], None)
    if version.results_in_user_turns:
        _render_v4(version, turns, options, out, effort, drop)
    else:
        _render_v32(version, turns, options, out)
    return options.add_generation_prompt and out.endswith(version.markers["think_open"])


# ---------------------------------------------------------------------------------------------------------
# formats


class DsmlFormat(Format):
    """A DeepSeek DSML version; subclasses set ``version``, whose parser class is theirs."""

    version: ClassVar[DsmlVersion]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.parser_class = cls.version.parser

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        return render(self.version, messages, tools, options, out)


class DeepSeekV32(DsmlFormat):
    """DeepSeek-V3.2: ``<｜DSML｜function_calls>`` and inline ``<function_results>``."""

    version = V32


class DeepSeekV4(DsmlFormat):
    """DeepSeek-V4: ``<｜DSML｜tool_calls>``, tool results in user turns, named reasoning effort."""

    version = V4


class DeepSeekV41(DsmlFormat):
    """DeepSeek-V4.1: V4 with ``<｜DSML｜ calls>``, ``<｜System｜>`` and a numeric reasoning effort."""

    version = V41


FORMATS: dict[str, Format] = {f.name: f for f in (DeepSeekV32(), DeepSeekV4(), DeepSeekV41())}
