"""``plan()``: boundaries, reasoning decisions and warnings for a conversation, before rendering."""

from __future__ import annotations

from functools import cached_property
from typing import Any, Sequence

from pydantic import BaseModel, ConfigDict, TypeAdapter

from toolwire.errors import InvalidOption, UnknownFormat
from toolwire.models import Message, normalize_messages

from .boundaries import Boundaries, find_boundaries
from .policies import OVERRIDES, Context, Decision, FamilyPolicy, Rule
from . import result_warnings as RW
from .rules import never_rendered
from . import warnings as W
from .warnings import PlanWarning


class ContextPlan(BaseModel):
    """The result of :func:`plan`.

    ``turns`` and ``steps`` are message indices (real user messages; assistant messages).
    ``messages`` is what the renderer sees: reasoning removed where it is dropped.
    ``decisions`` has one entry per assistant message; ``warnings`` carry stable codes.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    format: str
    policy: str
    turns: list[int]
    steps: list[int]
    messages: list[Message]
    decisions: list[Decision]
    warnings: list[PlanWarning]

    @cached_property
    def kept_indices(self) -> frozenset[int]:
        """Indices of assistant messages whose reasoning is rendered."""
        return frozenset(d.message_index for d in self.decisions if d.kept)

    def decision(self, index: int) -> Decision | None:
        return next((d for d in self.decisions if d.message_index == index), None)


_DECISIONS = TypeAdapter(list[Decision])


def plan(messages: Sequence[Any], format: Any, *, tools: Sequence[Any] | None = None, check: bool = True,
         limits: Any = None, **options: Any) -> ContextPlan:
    """Plan which earlier reasoning ``format`` re-renders, with reasons and pre-flight warnings.

    ``format`` is a format name or a :class:`~toolwire.Format`. ``options`` are :meth:`~toolwire.Format.render`'s,
    read by the family's options (an option not given means what the family's template does): ``thinking``,
    ``policy`` (None: the family's built-in policy, as its reference behaves; or an override: ``keep_all``,
    ``drop_all``, ``keep_tool_loop``), ``drop_thinking``, ``add_generation_prompt`` and the family's own switches
    (``preserve_thinking``, ``clear_thinking`` ...). An unknown format name raises
    :class:`~toolwire.errors.UnknownFormat`, an unknown option :class:`~toolwire.errors.InvalidOption`. Warnings
    about reasoning that must be passed back follow the provider's rule (the family's ``policy.passback``).

    Tool results (:mod:`.result_warnings`): unanswered, orphaned, duplicated and out-of-order results, reused call
    ids, a call repeated after an unknown outcome (side effects are read from ``tools`` when they are ToolSpecs, a
    ToolSet or MCP definitions; a tool they say nothing about counts as irreversible), large results (unless
    ``limits`` bounds them), results that spell the family's markup (the framing warning is left out with
    ``escape_result_markup``), empty results and content parts printed as a repr. ``results_in_call_order``,
    ``escape_result_markup`` and ``limits`` are the render options of the same names.
    """
    family = _family_of(format)
    name = family.name
    values = family.options.resolve(options, name)
    thinking, policy = values["thinking"], values.get("policy")
    drop_thinking, add_generation_prompt = values["drop_thinking"], values["add_generation_prompt"]
    results_in_call_order, escape_result_markup = values["results_in_call_order"], values["escape_result_markup"]
    extra = {k: v for k, v in values.items() if k not in family.options.COMMON}
    fam = family.policy
    _check_policy(policy)
    msgs = normalize_messages(messages)
    b = find_boundaries(msgs)
    ctx = _context(msgs, b, thinking, drop_thinking, extra, tools, add_generation_prompt)
    rule = _rule(fam, policy)
    required = frozenset(fam.passback.turns(ctx)) if fam.passback else frozenset()

    rows: list[dict[str, Any]] = []  # the decisions, validated together below
    dropped: set[int] = set()  # steps whose reasoning is dropped although they have some
    warnings: list[PlanWarning] = []
    for i in b.steps:
        action, reason = rule(ctx, i)
        if policy:
            native, _ = fam.rule(ctx, i)
            if (native == "drop") != (action == "drop"):
                warnings.append(PlanWarning(
                    code="policy_override", message_index=i,
                    message=f"policy {policy!r} {'keeps' if action != 'drop' else 'drops'} the reasoning of message "
                            f"{i}, which {name} was trained to {'drop' if native == 'drop' else 'see'}"))
        if action != "drop" and i in required and fam.passback.enforced:
            action, reason = "required", f"{reason}; {fam.passback.provider} requires it passed back"
        has = bool(msgs[i].reasoning_content)
        rows.append({"message_index": i, "action": action, "reason": reason, "has_reasoning": has})
        if action == "drop" and has:
            dropped.add(i)
            warnings.append(PlanWarning(code="reasoning_dropped", message_index=i,
                                        message=f"the reasoning of message {i} is not rendered: {reason}"))
    decisions = _DECISIONS.validate_python(rows)

    if check:
        warnings += W.tool_result_as_user_text(msgs, fam.user_text_note)
        if required:
            warnings += W.reasoning_missing(msgs, sorted(required), name, fam.passback)
        warnings += W.history_duplicated(msgs)
        warnings += W.reasoning_in_content(msgs, fam.think_in_content_note)
        warnings += RW.pairing(msgs, b, add_generation_prompt=add_generation_prompt)
        facts = _result_facts(format)
        warnings += RW.out_of_order(msgs, facts, in_call_order=results_in_call_order)
        warnings += RW.retry_after_unknown(msgs, tools)
        warnings += RW.content_checks(msgs, facts, limits=limits, escape_result_markup=escape_result_markup)

    rendered = msgs
    if dropped:
        rendered = [m.model_copy(update={"reasoning_content": None}) if i in dropped else m for i, m in enumerate(msgs)]
    return ContextPlan(format=name, policy=policy or "family", turns=list(b.turns), steps=list(b.steps),
                       messages=rendered, decisions=decisions, warnings=warnings)


def kept_reasoning(messages: list[Message], fam: FamilyPolicy, *, thinking: bool, policy: str | None,
                   drop_thinking: bool, tools: Sequence[Any], add_generation_prompt: bool,
                   extra: dict[str, Any]) -> frozenset[int]:
    """The assistant messages whose reasoning is rendered: the ``kept_indices`` of :func:`plan` for the same
    arguments (``messages`` already validated), without the reasons, decisions and warnings that only the plan
    reports. What ``Format.render`` asks (with its family's policy); an unknown ``policy`` is refused as
    :func:`plan` refuses it."""
    _check_policy(policy)
    rule = _rule(fam, policy)
    if rule is never_rendered or (not thinking and getattr(rule, "drops_all_without_thinking", False)):
        return _NOTHING_KEPT
    b = find_boundaries(messages)
    ctx = _context(messages, b, thinking, drop_thinking, extra, tools, add_generation_prompt)
    return frozenset([i for i in b.steps if rule(ctx, i)[0] != "drop"])


_NOTHING_KEPT: frozenset[int] = frozenset()


def _family_of(format: Any):
    """The :class:`~toolwire.Family` of a format name or :class:`~toolwire.Format`."""
    if isinstance(format, str):
        from toolwire.families import declared

        found = declared().get(format)
        if found is None:
            raise UnknownFormat(format, sorted(declared()))
        return found
    return format.family


def family_policy(format: Any) -> FamilyPolicy:
    """The built-in policy of a format (a name or a :class:`~toolwire.Format`): its family's declared policy."""
    return _family_of(format).policy


def render_warnings(fmt: Any, messages: list[Message], tools: Any, options: tuple) -> list[PlanWarning]:
    """The warnings of a rendered prompt (``RenderedPrompt.warnings``, computed when first read): :func:`plan`'s for
    the request as rendered, then the notes of what the render options changed (``(code, message, index)``)."""
    (thinking, policy, drop_thinking, add_generation_prompt, extra, limits, in_call_order, escape,
     notes) = options
    found = list(plan(messages, fmt, thinking=thinking, policy=policy, drop_thinking=drop_thinking, tools=tools,
                      add_generation_prompt=add_generation_prompt, limits=limits,
                      results_in_call_order=in_call_order, escape_result_markup=escape, **extra).warnings)
    found += [PlanWarning(code=code, message=message, message_index=index) for code, message, index in notes or ()]
    return found


def _result_facts(format: Any) -> Any:
    """The tool-result facts of ``format`` (a family name or its Format)."""
    from toolwire.result_facts import result_facts

    return result_facts(_family_of(format).format() if isinstance(format, str) else format)


def _check_policy(policy: str | None) -> None:
    if policy is not None and policy not in OVERRIDES:
        raise InvalidOption(f"unknown policy {policy!r}; use one of {sorted(OVERRIDES)} or None", field="policy")


def _rule(fam: FamilyPolicy, policy: str | None) -> Rule:
    """The rule that decides: the override, except that a template with no place for earlier reasoning cannot be
    made to show it, whatever the override."""
    return OVERRIDES[policy] if policy and fam.rule is not never_rendered else fam.rule


def _context(msgs: list[Message], b: Boundaries, thinking: Any, drop_thinking: Any, extra: dict[str, Any],
             tools: Sequence[Any] | None, add_generation_prompt: Any) -> Context:
    """What the rules see. Tools count as declared when given, or when a message carries them (``tools``)."""
    has_tools = bool(tools) or any((m.model_extra or {}).get("tools") for m in msgs)
    return Context(msgs, b, bool(thinking), bool(drop_thinking), dict(extra), has_tools, bool(add_generation_prompt))
