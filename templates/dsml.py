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

import json
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, Mapping

from toolwire.errors import InvalidOption, InvalidRequest, UnrepresentableValue, UnsupportedByFormat
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool, call_arguments, function_to_dict
from toolwire.parsers.dsml import DsmlGrammar, DsmlStreamParser
from toolwire.prompt import PromptBuilder, special_pattern

DSML = "｜DSML｜"


def dsml_markers(dsml: str, block: str) -> dict[str, str]:
    """The marker table of one version: ``dsml`` is its DSML token, ``block`` the name of its call block."""
    return {
        "bos": "<｜begin▁of▁sentence｜>",
        "eos": "<｜end▁of▁sentence｜>",
        "user": "<｜User｜>",
        "assistant": "<｜Assistant｜>",
        "system": "<｜System｜>",
        "think_open": "<think>",
        "think_close": "</think>",
        "latest_reminder": "<｜latest_reminder｜>",
        "tool_calls_open": f"<{dsml}{block}>",
        "tool_calls_close": f"</{dsml}{block}>",
        "invoke_open": f'<{dsml}invoke name="',
        "invoke_close": f"</{dsml}invoke>",
        "parameter_open": f'<{dsml}parameter name="',
        "parameter_close": f"</{dsml}parameter>",
        "tool_result_open": "<tool_result>",
        "tool_result_close": "</tool_result>",
    }


# One marker table per version, shared by the renderer and the parser (toolwire.parsers.dsml).
MARKERS_V32 = dsml_markers(DSML, "function_calls")
MARKERS = dsml_markers(DSML, "tool_calls")  # V4
MARKERS_V41 = dsml_markers(DSML + " ", "calls")

# DSML token spellings seen in real output; the parser accepts them fail-closed (marker_spelling_variant).
DSML_VARIANTS = ("｜｜DSML｜｜", "‖DSML‖", "|DSML|")
_TAG_KEYS = ("tool_calls_open", "tool_calls_close", "invoke_open", "invoke_close", "parameter_open", "parameter_close")
# The call-block names of V3.2 and V4; each version's parser also accepts the other's (other_version_block).
_BLOCK_NAMES = ("function_calls", "tool_calls")
_V32_V4_OPENS = tuple(f"<{DSML}{b}>" for b in _BLOCK_NAMES)

# Spellings seen in real V4 output; the parser accepts them with a diagnostic.
V4_BLOCK_ALIASES = (f"<{DSML}toolcalls>", f"<{DSML}tool>")
V4_BLOCK_CLOSE_ALIASES = (f"</{DSML}toolcalls>", f"</{DSML}tool>")

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
    """Everything that differs between the DSML versions. The renderer and parser read only this."""

    name: str
    reference: str
    markers: Mapping[str, str]
    tools_head: str
    tools_tail: str
    results_in_user_turns: bool  # V4+: tool results become <tool_result> blocks of a user turn
    effort: str  # "none" | "named" | "numeric"
    system_token: bool  # V4.1: <｜System｜> opens the system section
    quick_instructions: bool  # V4+: latest_reminder turns and task tokens
    keeps_reasoning_with_tools: bool  # V4+: declared tools keep every earlier reasoning
    block_aliases: tuple[str, ...] = ()
    block_close_aliases: tuple[str, ...] = ()

    @cached_property
    def grammar(self) -> DsmlGrammar:
        """The parser's view of this version's markers."""
        m = self.markers
        return DsmlGrammar(
            block_open=m["tool_calls_open"], block_close=m["tool_calls_close"],
            invoke_open=m["invoke_open"], invoke_close=m["invoke_close"],
            param_open=m["parameter_open"], param_close=m["parameter_close"],
            think_close=m["think_close"], think_open=m["think_open"], stop_token=m["eos"],
            block_open_aliases=self.block_aliases, block_close_aliases=self.block_close_aliases,
            other_version_blocks=tuple((f"<{DSML}{b}>", f"</{DSML}{b}>") for b in _BLOCK_NAMES
                                       if m["tool_calls_open"] in _V32_V4_OPENS
                                       and f"<{DSML}{b}>" != m["tool_calls_open"]),
            spelling_variants=tuple((m[k].replace(DSML, v), m[k]) for k in _TAG_KEYS for v in DSML_VARIANTS),
        )

    @cached_property
    def preamble_specials(self) -> re.Pattern:
        """The markers the tools preamble spells, which it emits as ``special``."""
        keys = ("tool_calls_open", "tool_calls_close", "invoke_open", "invoke_close", "parameter_open",
                "parameter_close", "think_open", "think_close")
        return special_pattern(self.markers[k] for k in keys)


V32 = DsmlVersion(
    name="deepseek_v32", reference="DeepSeek encoding_dsv32.py encode_messages (golden vectors)",
    markers=MARKERS_V32, tools_head=_V32_TOOLS_HEAD.format(**MARKERS_V32), tools_tail=_V32_TOOLS_TAIL,
    results_in_user_turns=False, effort="none", system_token=False, quick_instructions=False,
    keeps_reasoning_with_tools=False,
)
V4 = DsmlVersion(
    name="deepseek_v4", reference="DeepSeek-V4 encoding_dsv4.py encode_messages (golden vectors)",
    markers=MARKERS, tools_head=_V4_TOOLS_HEAD.format(**MARKERS), tools_tail=_V4_TOOLS_TAIL,
    results_in_user_turns=True, effort="named", system_token=False, quick_instructions=True,
    keeps_reasoning_with_tools=True, block_aliases=V4_BLOCK_ALIASES, block_close_aliases=V4_BLOCK_CLOSE_ALIASES,
)
V41 = DsmlVersion(
    name="deepseek_v41", reference="DeepSeek-V4.1 encoding encode_messages (golden vectors)",
    markers=MARKERS_V41, tools_head=_V4_TOOLS_HEAD.format(**MARKERS_V41), tools_tail=_V4_TOOLS_TAIL,
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


@dataclass(slots=True)
class _Turn:
    """One message as the encoders see it (V4 user turns may merge several request messages)."""

    role: str
    index: int | None  # request message index (None for the inserted system message)
    text: str = ""
    reasoning: str | None = None
    calls: list | None = None  # [(call_index, name, arguments, id)]
    tool_call_id: str | None = None
    task: str | None = None
    wo_eos: bool = False
    tools: list[Tool] | None = None
    blocks: list | None = None  # V4 user turns: [(kind "text"|"tool_result", text, index, tool_call_id)]


_ROLES = ("system", "developer", "user", "assistant", "tool", "latest_reminder")


def _turns(version: DsmlVersion, messages: list[Message], tools: list[Tool]) -> list[_Turn]:
    """Validate the request and turn it into encoder messages, with the tools attached to the first system."""
    turns: list[_Turn] = []
    for i, msg in enumerate(messages):
        role = msg.role
        if role not in _ROLES or (role == "latest_reminder" and not version.quick_instructions):
            raise UnsupportedByFormat(f"role {role!r} is not supported by {version.name}", message_index=i,
                                      field="role")
        task, wo_eos = None, False
        extra = msg.__pydantic_extra__  # msg.model_extra, without the property call
        if extra:  # quick-instruction switches come as extra message fields
            task, wo_eos = extra.get("task"), extra.get("wo_eos", False)
            if (task is not None or "wo_eos" in extra) and not version.quick_instructions:
                raise UnsupportedByFormat(f"{version.name} has no quick-instruction tasks or wo_eos",
                                          message_index=i, field="task" if task is not None else "wo_eos")
            if task is not None and task not in TASK_TOKENS:
                raise InvalidRequest(f"unknown task {task!r} (known: {', '.join(TASK_TOKENS)})", message_index=i,
                                     field="task")
            if not isinstance(wo_eos, bool):
                raise InvalidRequest("wo_eos must be a boolean", message_index=i, field="wo_eos")
        calls = msg.tool_calls
        if calls and role != "assistant":
            raise InvalidRequest("only assistant messages carry tool_calls", message_index=i, field="tool_calls")
        text = msg.content
        if text.__class__ is not str:
            text = msg.text()
        if role == "developer" and not text:
            raise UnsupportedByFormat("developer messages need content", message_index=i, field="content")
        if calls:
            calls = [(ci, c.function.name, call_arguments(c, i, ci), c.id) for ci, c in enumerate(calls)]
        turns.append(_Turn(role, i, text, msg.reasoning_content, calls or None, msg.tool_call_id, task, wo_eos))
    if tools:
        system = next((t for t in turns if t.role == "system"), None)
        if system is None:
            system = _Turn("system", None, "")
            turns.insert(0, system)
        system.tools = tools
    return turns


def _merge_tool_results(turns: list[_Turn]) -> list[_Turn]:
    """V4+: tool results become ``tool_result`` blocks of a user turn; following user text joins that turn."""
    merged: list[_Turn] = []
    for turn in turns:
        last = merged[-1] if merged else None
        if turn.role == "tool":
            block = ("tool_result", turn.text, turn.index, turn.tool_call_id)
            if last is not None and last.role == "user":
                last.blocks.append(block)
            else:
                merged.append(_Turn("user", turn.index, blocks=[block]))
        elif turn.role == "user":
            block = ("text", turn.text, turn.index, None)
            if last is not None and last.role == "user" and last.task is None:
                last.blocks.append(block)
            else:
                merged.append(_Turn("user", turn.index, turn.text, task=turn.task, wo_eos=turn.wo_eos,
                                    blocks=[block]))
        else:
            merged.append(turn)
    _sort_tool_results(merged)
    return merged


def _sort_tool_results(turns: list[_Turn]) -> None:
    """V4+: the results of parallel calls are shown in the order of the calls, matched by ``tool_call_id``."""
    calls: list = []  # the calls of the latest assistant turn that made any
    for turn in turns:
        if turn.role == "assistant" and turn.calls:
            calls = turn.calls
            continue
        results = [b for b in turn.blocks or () if b[0] == "tool_result"]
        if len(results) < 2:
            continue
        order = {cid: n for n, (_, _, _, cid) in enumerate(calls) if cid}
        for _, _, index, cid in results:
            if cid not in order:
                raise InvalidRequest(f"tool_call_id {cid!r} matches none of the preceding assistant's calls, so the"
                                     " parallel results cannot be ordered", message_index=index, field="tool_call_id")
        ordered = iter(sorted(results, key=lambda b: order[b[3]]))
        turn.blocks = [next(ordered) if b[0] == "tool_result" else b for b in turn.blocks]


def _drop_earlier(turns: list[_Turn], keep: tuple[str, ...]) -> list[_Turn]:
    """Leave out turns of roles not in ``keep`` (developer turns) before the last user turn, as the encoders'
    ``drop_thinking`` does. Which assistant reasoning is rendered is the context plan's decision."""
    last_user = _last_user(turns)
    return [turn for i, turn in enumerate(turns) if turn.role in keep or turn.role == "assistant" or i >= last_user]


def _last_user(turns: list[_Turn]) -> int:
    return max((i for i, t in enumerate(turns) if t.role in ("user", "developer")), default=-1)


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


_to_json = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(value, ensure_ascii=False)
_to_strict_json = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


def _write_tools(version: DsmlVersion, out: PromptBuilder, tools: list[Tool]) -> None:
    out.fixed(version.tools_head, None, version.preamble_specials)
    out.content("\n".join([_to_json(function_to_dict(t)) for t in tools]), None)
    out.template(version.tools_tail, None)


def parameter_value(version: DsmlVersion, value: Any) -> tuple[bool, str]:
    """``(is_string, text)`` of one argument value. A string holding the parameter's closing tag, and JSON
    text that would hold it, are written as ``string="false"`` JSON with every ``<`` escaped as ``\\u003c``."""
    close = version.markers["parameter_close"]
    if isinstance(value, str) and close not in value:
        return True, value
    try:
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
    """Tool and parameter names are written raw inside a tag: ``"``, ``<``, ``>`` or a newline would end it."""
    bad = _NAME_BREAKERS.search(name)
    if bad:
        raise UnrepresentableValue(f"{name!r} contains {bad.group()!r}, which would end the DSML tag",
                                   message_index=message_index, field=_call_field(call_index, key))


_STRING_ATTRIBUTE = {True: '" string="true">', False: '" string="false">'}


def _write_calls(version: DsmlVersion, out: PromptBuilder, turn: _Turn) -> None:
    """The ``\\n\\n<｜DSML｜tool_calls>`` block of an assistant turn."""
    m, i = version.markers, turn.index
    put, content = out.appender(), out.content  # put: markers and fixed wording, never empty
    breaks_tag, close = _NAME_BREAKERS.search, m["parameter_close"]
    invoke_open, param_open = ("special", m["invoke_open"], i), ("special", m["parameter_open"], i)
    newline, tag_end = ("template", "\n", i), ("special", '">', i)
    put(("template", "\n\n", i))
    put(("special", m["tool_calls_open"], i))
    put(newline)
    for n, (ci, name, arguments, _) in enumerate(turn.calls):
        if breaks_tag(name):
            _check_name(name, i, ci)
        if n:
            put(newline)
        put(invoke_open)
        content(name, i)
        put(tag_end)
        put(newline)
        for k, (key, value) in enumerate(arguments.items()):
            if breaks_tag(key):
                _check_name(key, i, ci, key)
            if value.__class__ is str and close not in value:  # parameter_value's first case, without the call
                is_string, text = True, value
            else:
                try:
                    is_string, text = parameter_value(version, value)
                except UnrepresentableValue as exc:
                    raise UnrepresentableValue(exc.detail, message_index=i, field=_call_field(ci, key)) from None
            if k:
                put(newline)
            put(param_open)
            content(key, i)
            put(("special", _STRING_ATTRIBUTE[is_string], i))
            content(text, i)
            put(("special", close, i))
        put(newline)
        put(("special", m["invoke_close"], i))
    put(newline)
    put(("special", m["tool_calls_close"], i))


def _write_assistant(version: DsmlVersion, out: PromptBuilder, turn: _Turn, reasoning: str | None) -> None:
    """Reasoning (when shown) + ``</think>``, content, the call block and EOS."""
    m, i = version.markers, turn.index
    if reasoning is not None:
        out.content(reasoning, i).special(m["think_close"], i)
    out.content(turn.text, i)
    if turn.calls:
        _write_calls(version, out, turn)
    if not turn.wo_eos:
        out.special(m["eos"], i)


# ---------------------------------------------------------------------------------------------------------
# the two transcript shapes


def _render_v32(version: DsmlVersion, turns: list[_Turn], options: RenderOptions, out: PromptBuilder) -> None:
    """V3.2: user turns carry the assistant prefix; tool results are inline ``<function_results>``."""
    m, thinking = version.markers, options.thinking
    special, template, content = out.special, out.template, out.content
    put = out.appender()  # markers and fixed wording, never empty
    user, assistant = m["user"], m["assistant"]
    last_user = _last_user(turns)
    final = len(turns) - 1
    for i, turn in enumerate(turns):
        idx, role = turn.index, turn.role
        prompt_follows = i < final or options.add_generation_prompt
        if role == "system":
            content(turn.text, idx)
            if turn.tools:
                template("\n\n", idx)
                _write_tools(version, out, turn.tools)
        elif role in ("user", "developer"):
            put(("special", user, idx))
            if role == "developer":
                if turn.tools:
                    template("\n\n", idx)
                    _write_tools(version, out, turn.tools)
                template("\n\n# The user's message is: ", idx)
            content(turn.text, idx)
            if prompt_follows:
                put(("special", assistant, idx))
                put(("special", m["think_open" if thinking and i == last_user else "think_close"], idx))
        elif role == "assistant":
            if thinking and i > last_user and not (turn.reasoning or turn.calls):
                raise UnsupportedByFormat("in thinking mode an assistant turn after the last user turn needs"
                                          " reasoning_content or tool_calls", message_index=idx,
                                          field="reasoning_content")
            reasoning = (turn.reasoning or "") if options.keeps_reasoning(idx) else None
            _write_assistant(version, out, turn, reasoning)
        else:  # tool
            start = i
            while start > 0 and turns[start - 1].role == "tool":
                start -= 1
            owner = turns[start - 1] if start > 0 else None
            calls = owner.calls if owner is not None and owner.role == "assistant" else None
            position = i - start + 1
            if not calls or position > len(calls):
                raise UnsupportedByFormat("tool result without a matching tool call in the preceding assistant"
                                          " message", message_index=idx, field="tool_call_id")
            if position == 1:
                put(("template", "\n\n<function_results>", idx))
            put(("template", "\n<result>", idx))
            content(turn.text, idx)
            put(("template", "</result>", idx))
            if position == len(calls):
                put(("template", "\n</function_results>", idx))
                if prompt_follows:
                    put(("template", "\n\n", idx))
                    put(("special", m["think_open" if thinking and i >= last_user else "think_close"], idx))


def _render_v4(version: DsmlVersion, turns: list[_Turn], options: RenderOptions, out: PromptBuilder,
               effort: Any, drop: bool) -> None:
    """V4 / V4.1: tool results are user turns; transitions are written after the turn they follow."""
    m, thinking = version.markers, options.thinking
    special, template, content = out.special, out.template, out.content
    put = out.appender()  # markers and fixed wording, never empty
    user, result_open, result_close = m["user"], m["tool_result_open"], m["tool_result_close"]
    last_user = _last_user(turns)
    final = len(turns) - 1
    for i, turn in enumerate(turns):
        idx, role = turn.index, turn.role
        opened_system = False
        if i == 0 and thinking:
            if version.system_token:
                special(m["system"], None)
                opened_system = True
            template(_effort_prompt(version, effort), None)
        if role == "system":
            if version.system_token and not opened_system:
                special(m["system"], idx)
            content(turn.text, idx)
            if turn.tools:
                template("\n\n", idx)
                _write_tools(version, out, turn.tools)
        elif role == "developer":
            special(m["user"], idx)
            content(turn.text, idx)
        elif role == "user":
            put(("special", user, idx))
            for n, (kind, text, bidx, _) in enumerate(turn.blocks):
                if n:
                    put(("template", "\n\n", bidx))
                if kind == "text":
                    content(text, bidx)
                else:
                    put(("template", result_open, bidx))
                    content(text, bidx)
                    put(("template", result_close, bidx))
        elif role == "latest_reminder":
            special(m["latest_reminder"], idx)
            content(turn.text, idx)
        else:  # assistant
            after_task = i > 0 and turns[i - 1].task is not None
            shows = thinking and not after_task and options.keeps_reasoning(idx)
            _write_assistant(version, out, turn, (turn.reasoning or "") if shows else None)

        if i < final and turns[i + 1].role not in ("assistant", "latest_reminder"):
            continue
        if i == final and not options.add_generation_prompt:
            continue
        if turn.task is not None:
            if turn.task == "action":
                special(m["assistant"], idx)
                special(m["think_open" if thinking else "think_close"], idx)
            special(TASK_TOKENS[turn.task], idx)
        elif role in ("user", "developer"):
            put(("special", m["assistant"], idx))
            put(("special", m["think_open" if thinking and (not drop or i >= last_user) else "think_close"], idx))


def render(version: DsmlVersion, messages: list[Message], tools: list[Tool], options: RenderOptions,
           out: PromptBuilder) -> bool:
    """Render a request as ``version``'s reference encoder does; returns whether the prompt opens ``<think>``."""
    effort = _effort(version, options)
    turns = _turns(version, messages, tools)
    if version.results_in_user_turns:
        turns = _merge_tool_results(turns)
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
    """A DeepSeek DSML version; subclasses set ``version`` and get everything else from it."""

    version: ClassVar[DsmlVersion]
    stop_tokens = ("<｜end▁of▁sentence｜>",)  # what generation stops on (generation_config eos)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        v = cls.version
        cls.name, cls.reference, cls.markers = v.name, v.reference, dict(v.markers)
        cls.parser_class = DsmlStreamParser.for_grammar(v.grammar, f"{cls.__name__}Parser")

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


FORMATS: dict[str, Format] = {cls.version.name: cls() for cls in (DeepSeekV32, DeepSeekV4, DeepSeekV41)}
