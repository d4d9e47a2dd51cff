"""Format: one model family's renderer and parser behind one object.

A family module in ``toolwire.templates`` subclasses :class:`Format`, implements :meth:`Format._render`
and names its stream parser class; ``parse`` is always ``stream().feed(text)`` + ``finish()``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar, Sequence

from toolwire.context_policy.plan import plan as make_plan

from .errors import InvalidOption
from .models import Message, Tool, check_message_text, normalize_messages, normalize_tools
from .output import ParsedOutput
from .prompt import PromptBuilder, RenderedPrompt

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True)
class RenderOptions:
    """The normalized render options. ``extra`` holds family-specific switches (``preserve_thinking`` ...)."""

    thinking: bool = False
    reasoning_effort: Any = None
    drop_thinking: bool = True
    add_generation_prompt: bool = True
    current_date: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    plan: Any = None  # the toolwire.context_policy.ContextPlan the renderer follows

    def keeps_reasoning(self, message_index: int) -> bool:
        """Whether the context plan keeps this assistant message's reasoning (the family's own rule,
        or the caller's ``policy`` override)."""
        return message_index in self.plan.kept_indices


class Format:
    """One wire format. Subclasses set ``name``, ``parser_class`` and implement ``_render``.

    Class attributes:
      ``name``           the registry name (``deepseek_v4``...).
      ``reference``      what the renderer is byte-exact against, for docs and ``toolwire formats``.
      ``markers``        the family's marker table (one source of truth for renderer and parser).
      ``extra_options``  names of family-specific render options accepted as keyword arguments.
    """

    name: ClassVar[str] = ""
    reference: ClassVar[str] = ""
    markers: ClassVar[dict[str, str]] = {}
    extra_options: ClassVar[frozenset[str]] = frozenset()
    option_aliases: ClassVar[dict[str, str]] = {}
    """The template's own spelling of a toolwire switch (``{"enable_thinking": "thinking"}``), accepted as an
    alias at render time (see :meth:`_template_switches`)."""
    parser_class: ClassVar[type] = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<toolwire.Format {self.name}>"

    # ---- rendering
    def render(self, messages: Sequence[Any], tools: Sequence[Any] | None = None, *, thinking: bool = False,
               reasoning_effort: Any = None, drop_thinking: bool = True, add_generation_prompt: bool = True,
               current_date: str | None = None, policy: str | None = None, **extra: Any) -> RenderedPrompt:
        """Render an OpenAI-style request into this family's exact prompt.

        ``messages`` and ``tools`` are plain dicts or toolwire models. Raises an
        :class:`~toolwire.errors.InvalidRequest` subclass naming the message index and field when the
        request cannot be rendered (or the model's own template refuses it). Which earlier reasoning is
        rendered is decided by :func:`toolwire.context_policy.plan`: the family's built-in policy, or
        ``policy`` (``keep_all``, ``drop_all``, ``keep_tool_loop``) to override it.
        """
        thinking, reasoning_effort, extra = self._template_switches(bool(thinking), reasoning_effort, dict(extra))
        unknown = set(extra) - self.extra_options
        if unknown:
            raise InvalidOption(f"unknown option(s) {sorted(unknown)} for format {self.name!r}"
                                f" (accepted: {sorted(self.extra_options) or 'none'})", field="options")
        if current_date is not None and not _DATE.match(str(current_date)):
            raise InvalidOption("current_date must be 'YYYY-MM-DD'", field="current_date")
        if reasoning_effort is not None and (isinstance(reasoning_effort, bool)
                                             or not isinstance(reasoning_effort, (str, int))):
            raise InvalidOption(f"reasoning_effort must be a string or an integer, got {reasoning_effort!r}",
                                field="reasoning_effort")
        msgs = normalize_messages(messages)
        check_message_text(msgs)
        tool_models = normalize_tools(tools)
        ctx_plan = make_plan(msgs, self, thinking=bool(thinking), policy=policy, drop_thinking=bool(drop_thinking),
                             tools=tool_models, check=False, add_generation_prompt=bool(add_generation_prompt),
                             **extra)
        options = RenderOptions(bool(thinking), reasoning_effort, bool(drop_thinking), bool(add_generation_prompt),
                                current_date, extra, ctx_plan)
        builder = PromptBuilder()
        opens_reasoning = self._render(msgs, tool_models, options, builder)
        return builder.build(opens_reasoning=bool(opens_reasoning), format=self.name)

    def _template_switches(self, thinking: bool, reasoning_effort: Any,
                           extra: dict[str, Any]) -> tuple[bool, Any, dict[str, Any]]:
        """Map the template's own switch names (:attr:`option_aliases`) onto ``thinking`` /
        ``reasoning_effort``. An alias that contradicts ``thinking=True`` or a given ``reasoning_effort`` is an
        :class:`~toolwire.errors.InvalidOption`. Families whose switch is not a plain rename override this."""
        for alias, target in self.option_aliases.items():
            if alias not in extra:
                continue
            value = extra.pop(alias)
            if target == "thinking":
                if not isinstance(value, bool):
                    raise InvalidOption(f"{alias} must be true or false (got {value!r})", field=alias)
                if thinking and not value:
                    raise InvalidOption(f"thinking=True and {alias}=False disagree", field=alias)
                thinking = value
            elif target == "reasoning_effort":
                if reasoning_effort is not None and reasoning_effort != value:
                    raise InvalidOption(f"reasoning_effort={reasoning_effort!r} and {alias}={value!r} disagree",
                                        field=alias)
                reasoning_effort = value
        return thinking, reasoning_effort, extra

    def template_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """``options`` (render keyword arguments) spelled as the family's own template reads them, for running
        the reference template on the same request (``toolwire fidelity``). Default: unchanged; families whose
        switch is not ``thinking`` (Hy3's ``reasoning_effort``) override it."""
        return options

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        """Write the prompt into ``out``; return whether it ends inside an opened reasoning block."""
        raise NotImplementedError

    # ---- parsing
    def stream(self, tools: Sequence[Any] | None = None, *, prompt: RenderedPrompt | None = None,
               thinking: bool = False, **options: Any):
        """A fresh stream parser: ``feed(delta) -> list[Event]`` and ``finish() -> ParsedOutput``.

        Where the output starts: with ``prompt=`` (the :class:`RenderedPrompt` the output continues) the
        parser starts inside reasoning exactly when ``prompt.opens_reasoning``; ``thinking`` is then ignored.
        Without it, ``thinking=True`` means "the prompt opened a reasoning block" (for every family), and
        ``thinking=False`` starts in content. A reasoning opener the model writes itself is recognised either
        way, and a closer seen in content still closes reasoning (with a diagnostic).

        Options every format takes: ``promote_reasoning_calls``, ``limits`` (:class:`toolwire.Limits`) and
        ``tokenizer`` (to ``feed(ids=...)``); some families take more (see their parser). An unknown option
        is an :class:`~toolwire.errors.InvalidOption`."""
        if prompt is not None:
            if not isinstance(prompt, RenderedPrompt):
                raise InvalidOption("prompt must be the RenderedPrompt the output continues "
                                    f"(got {type(prompt).__name__})", field="prompt")
            thinking = prompt.opens_reasoning
        try:
            return self.parser_class(tools, thinking=bool(thinking), **options)
        except TypeError as exc:
            if "unexpected keyword argument" not in str(exc):
                raise
            bad = str(exc).rsplit("argument", 1)[-1].strip()
            raise InvalidOption(f"{self.name} parsers take no option {bad}", field="options") from None

    def parse(self, text: str, tools: Sequence[Any] | None = None, *, prompt: RenderedPrompt | None = None,
              thinking: bool = False, **options: Any) -> ParsedOutput:
        """Parse a complete model output (what follows the generation prompt, without the stop token).
        ``prompt`` and ``thinking`` say where it starts, as for :meth:`stream`."""
        parser = self.stream(tools, prompt=prompt, thinking=thinking, **options)
        parser.feed(text)
        return parser.finish()

    # ---- token-level training samples (toolwire.training)
    def render_tokens(self, messages: Sequence[Any], tools: Sequence[Any] | None = None, tokenizer: Any = None,
                      **options: Any):
        """Render, then tokenize with per-token provenance: a :class:`toolwire.training.TokenizedPrompt` with
        ``ids``, the ``message_index`` of every token, ``model_mask`` (the tokens the model itself produced:
        each assistant turn after the generation prompt that opened it, through its end marker) and
        ``content_mask`` (request text versus format tokens). Built from the provenance segments, so control
        ids come only from the format. ``options`` are :meth:`render`'s."""
        from .training import render_tokens

        return render_tokens(self, messages, tools, tokenizer, **options)

    def training_sample(self, messages: Sequence[Any], tools: Sequence[Any] | None = None, tokenizer: Any = None, *,
                        train_on: str = "last_assistant", **options: Any):
        """``ids`` plus a ``loss_mask`` for SFT/RL: the tokens the model produced in the last assistant turn
        (``train_on="last_assistant"``), in every assistant turn (``"all_assistant"``) or none. The turn's
        end marker, which the model must learn to write, is inside the mask. ``add_generation_prompt``
        defaults to False here (the conversation ends with the turn being trained)."""
        from .training import training_sample

        return training_sample(self, messages, tools, tokenizer, train_on=train_on, **options)

    def bridge(self, prompt_ids: Sequence[int], completion_ids: Sequence[int], next_messages: Sequence[Any],
               tools: Sequence[Any] | None = None, tokenizer: Any = None, **options: Any):
        """The next prompt's ids when they extend ``prompt_ids + completion_ids`` exactly (so an RL rollout
        trains on the tokens it sampled), or a typed refusal: a :class:`toolwire.training.BridgeResult` with
        ``reason`` ``history_rerendered``, ``reasoning_dropped``, ``bpe_boundary_merge``,
        ``completion_truncated`` or ``prompt_mismatch``. ``next_messages`` is the whole next request
        (history, the assistant turn parsed from the completion, the tool results). Returned ids always equal
        a fresh render's."""
        from .training import bridge

        return bridge(self, prompt_ids, completion_ids, next_messages, tools, tokenizer, **options)
