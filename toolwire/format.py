"""Format: one model family's renderer and parser behind one object.

A family module in ``toolwire.templates`` subclasses :class:`Format`, implements :meth:`Format._render`
and names its stream parser class; ``parse`` is always ``stream().feed(text)`` + ``finish()``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar, Sequence

from toolwire.context_policy.plan import plan as make_plan

from .errors import InvalidOption, UnsupportedByFormat
from .models import Message, Tool, normalize_messages, normalize_tools
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
      ``content_parts``  what the reference does with list content: ``"join"`` (it renders the text parts, as
                         the renderer does) or ``"refuse"`` (the template refuses or drops it: ``render``
                         raises :class:`UnsupportedByFormat` unless called with ``join_content_parts=True``).
    """

    name: ClassVar[str] = ""
    reference: ClassVar[str] = ""
    markers: ClassVar[dict[str, str]] = {}
    extra_options: ClassVar[frozenset[str]] = frozenset()
    content_parts: ClassVar[str] = "join"
    parser_class: ClassVar[type] = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<toolwire.Format {self.name}>"

    # ---- rendering
    def render(self, messages: Sequence[Any], tools: Sequence[Any] | None = None, *, thinking: bool = False,
               reasoning_effort: Any = None, drop_thinking: bool = True, add_generation_prompt: bool = True,
               current_date: str | None = None, policy: str | None = None, join_content_parts: bool = False,
               **extra: Any) -> RenderedPrompt:
        """Render an OpenAI-style request into this family's exact prompt.

        ``messages`` and ``tools`` are plain dicts or toolwire models. Raises an
        :class:`~toolwire.errors.InvalidRequest` subclass naming the message index and field when the
        request cannot be rendered (or the model's own template refuses it). Which earlier reasoning is
        rendered is decided by :func:`toolwire.context_policy.plan`: the family's built-in policy, or
        ``policy`` (``keep_all``, ``drop_all``, ``keep_tool_loop``) to override it. List content (text
        parts) in a format whose template refuses or drops it raises :class:`UnsupportedByFormat`;
        ``join_content_parts=True`` joins the text parts with a blank line instead.
        """
        unknown = set(extra) - self.extra_options
        if unknown:
            raise InvalidOption(f"unknown option(s) {sorted(unknown)} for format {self.name!r}"
                                f" (accepted: {sorted(self.extra_options) or 'none'})", field="options")
        if current_date is not None and not _DATE.match(str(current_date)):
            raise InvalidOption("current_date must be 'YYYY-MM-DD'", field="current_date")
        msgs = normalize_messages(messages)
        if self.content_parts == "refuse" and not join_content_parts:
            _refuse_content_parts(msgs, self.name)
        tool_models = normalize_tools(tools)
        ctx_plan = make_plan(msgs, self, thinking=bool(thinking), policy=policy, drop_thinking=bool(drop_thinking),
                             tools=tool_models, check=False, add_generation_prompt=bool(add_generation_prompt),
                             **extra)
        options = RenderOptions(bool(thinking), reasoning_effort, bool(drop_thinking), bool(add_generation_prompt),
                                current_date, extra, ctx_plan)
        builder = PromptBuilder()
        opens_reasoning = self._render(msgs, tool_models, options, builder)
        return builder.build(opens_reasoning=bool(opens_reasoning), format=self.name)

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


def _refuse_content_parts(messages: list[Message], format_name: str) -> None:
    for index, message in enumerate(messages):
        if isinstance(message.content, list):
            raise UnsupportedByFormat(f"the {format_name} chat template refuses or drops list content; pass the "
                                      "text as a string, or render with join_content_parts=True to join the "
                                      "text parts", message_index=index, field="content")
