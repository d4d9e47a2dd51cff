"""Format: one model family's renderer and parser behind one object.

A family module in ``toolwire.templates`` subclasses :class:`Format`, implements :meth:`Format._render`
and names its stream parser class; ``parse`` is always ``stream().feed(text)`` + ``finish()``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Sequence

from .errors import InvalidOption, InvalidRequest, ToolwireError, UnsupportedByFormat
from .family import Family
from .markers import MarkerTable
from .prompt import PromptBuilder, RenderedPrompt

if TYPE_CHECKING:
    from .models import Message, Tool
    from .output import ParsedOutput

_PARSE_CHUNK = 1 << 16  # = parsers.engine.stream._FEED_CHUNK: the same steps as one feed of the whole text


@dataclass(frozen=True)
class RenderOptions:
    """The normalized render options. ``extra`` holds family-specific switches (``preserve_thinking`` ...)."""

    thinking: bool = False
    reasoning_effort: Any = None
    drop_thinking: bool = True
    add_generation_prompt: bool = True
    current_date: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    kept_reasoning: frozenset[int] = frozenset()
    """The assistant messages whose reasoning is rendered (:func:`toolwire.context_policy.plan`'s
    ``kept_indices`` for this request)."""
    policy: str | None = None
    """The caller's ``policy`` override, or None for the family's built-in policy."""

    def keeps_reasoning(self, message_index: int) -> bool:
        """Whether the context plan keeps this assistant message's reasoning (the family's own rule,
        or the caller's ``policy`` override)."""
        return message_index in self.kept_reasoning


class Format:
    """One wire format: a family's renderer and its stream parser behind one object.

    A family module in ``toolwire.templates`` subclasses this, implements :meth:`_render` and names its parser
    class (``parser_class``); everything else a family is comes from its declaration (:attr:`family`, the parser
    class's ``family``): name, reference, markers, stop tokens, reasoning markers, options, policy.

    Renderer switches that stay on the class:
      ``content_parts``  what the reference does with list content: ``"join"`` (it renders the text parts, as
                         the renderer does) or ``"refuse"`` (the template refuses or drops it: ``render``
                         raises :class:`UnsupportedByFormat` unless called with ``join_content_parts=True``);
                         ``content_parts_roles`` limits the refusal to those roles (None: every role).
    """

    content_parts: ClassVar[str] = "join"
    content_parts_roles: ClassVar[frozenset[str] | None] = None
    parser_class: ClassVar[type] = None  # type: ignore[assignment]
    tool_result_media: ClassVar[frozenset[str]] = frozenset()
    """The content-part types (``image``, ``image_url``, ``audio``, ``input_audio``, ``video``) the family's template
    has a media slot for in a tool result; any other media part in a tool result is refused by name
    (:class:`UnsupportedByFormat`), or moved into a following user turn with ``media_fallback="user_turn"``."""
    user_media: ClassVar[frozenset[str]] = frozenset()
    """The content-part types the template has a media slot for in a user message (where
    ``media_fallback="user_turn"`` may move a tool result's media)."""
    tool_result_parts: ClassVar[frozenset[str]] = frozenset()
    """Content-part types other than text and media that the template renders in a tool result (GLM-5.3's
    ``tool_reference``); any other part type is refused by name."""
    tool_result_json: ClassVar[bool] = False
    """Whether the template writes a tool result given as a JSON object (structured content) as its JSON text; in
    other families such a result is refused by name (send its JSON text, as ``ToolResult.to_tool_message`` does)."""

    @property
    def family(self) -> Family:
        """The family's declaration (:class:`toolwire.Family`)."""
        return self.parser_class.family

    @property
    def name(self) -> str:
        """The registry name (``deepseek_v4`` ...)."""
        return self.parser_class.family.name

    @property
    def reference(self) -> str:
        """What the renderer is byte-exact against, for docs and ``toolwire formats``."""
        return self.parser_class.family.reference

    @property
    def markers(self) -> MarkerTable:
        """The family's marker table (one source of truth for renderer, parser, grammar and detector)."""
        return self.parser_class.family.markers

    @property
    def stop_tokens(self) -> tuple[str, ...]:
        """The control tokens generation stops on (the model's generation_config eos), as text;
        :meth:`stop_token_ids` gives their ids in a tokenizer."""
        return self.parser_class.family.stop_tokens

    @property
    def reasoning_markers(self) -> tuple[str, str] | None:
        """The reasoning block's opener and closer as written (None: the family has none)."""
        return self.parser_class.family.reasoning

    def __repr__(self) -> str:
        return f"<toolwire.Format {self.name}>"

    # ---- rendering
    def render(self, messages: Sequence[Any], tools: Sequence[Any] | None = None, *, limits: Any = None,
               **options: Any) -> RenderedPrompt:
        """Render an OpenAI-style request into this family's exact prompt.

        ``messages`` and ``tools`` are plain dicts or toolwire models; ``tools`` may also be a
        :class:`toolwire.ToolSet`. ``options`` are read by the family's options (``fmt.family.options``, one
        mechanism for every name): ``thinking``, ``reasoning_effort``, ``drop_thinking``, ``add_generation_prompt``,
        ``current_date`` ('YYYY-MM-DD'), ``policy``, ``join_content_parts`` and the family's own switches, each also
        under the template's keyword (``enable_thinking`` ...) and its declared aliases; ``chat_template_kwargs={...}``
        is read whole. An option not given means what the family's chat template does with its keyword unset
        (Qwen3: thinking on), as ``apply_chat_template`` does. Raises an :class:`~toolwire.errors.InvalidRequest`
        subclass naming the message index and field when the request cannot be rendered (or the model's own
        template refuses it), :class:`~toolwire.errors.InvalidOption` for an unknown option, a bad value, or two
        spellings of one option that disagree. Which earlier reasoning is rendered is decided by
        :func:`toolwire.context_policy.plan`: the family's built-in policy, or ``policy`` (``keep_all``,
        ``drop_all``, ``keep_tool_loop``) to override it. List content (text parts) in a format whose template
        refuses or drops it raises :class:`UnsupportedByFormat`; ``join_content_parts=True`` joins the text parts
        with a blank line instead.

        Tool results (docs/tool-results.md): a message may be a :class:`toolwire.ToolResult` (its tool message).
        A result's image or audio goes in the family's media slot, or is refused by name; a JSON object is written
        as JSON where the template does so. Departures from the template, each on request:
        ``limits=Limits(max_result_chars=N)`` bounds each result's text (head, tail and a ``[truncated: ...]``
        line), ``results_in_call_order=True`` puts parallel results in the order of their calls,
        ``escape_result_markup=True`` escapes a result's spelling of the family's plain-text result framing,
        ``media_fallback="user_turn"`` moves media the family has no tool-result slot for into a user message after
        the results. The prompt's ``warnings`` are the context plan's pre-flight warnings (computed when first read)
        and what these options changed.
        """
        family = self.parser_class.family
        values = family.options.resolve(options, family.name)
        steps = _RENDER_STEPS or _render_steps()
        request = msgs = steps.normalize_messages(messages)
        structured = steps.check_message_text(msgs)
        results_in_call_order = values["results_in_call_order"]
        escape_result_markup, media_fallback = values["escape_result_markup"], values.get("media_fallback")
        prepared = None
        if structured or limits is not None or results_in_call_order or escape_result_markup \
                or media_fallback is not None:
            prepared = steps.prepare_results(self, msgs, structured=structured, limits=limits,
                                             results_in_call_order=results_in_call_order,
                                             escape_result_markup=escape_result_markup, media_fallback=media_fallback)
            msgs = prepared.messages
        if self.content_parts == "refuse" and not values["join_content_parts"]:
            _refuse_content_parts(msgs, family.name, self.content_parts_roles)
        tool_models = steps.normalize_tools(_tool_list(tools))
        common = family.options.COMMON
        extra = {k: v for k, v in values.items() if k not in common}
        thinking, policy = values["thinking"], values.get("policy")
        drop_thinking, add_generation_prompt = values["drop_thinking"], values["add_generation_prompt"]
        kept = steps.kept_reasoning(msgs, family.policy, thinking=thinking, policy=policy,
                                    drop_thinking=drop_thinking, tools=tool_models,
                                    add_generation_prompt=add_generation_prompt, extra=extra)
        options = RenderOptions(thinking=thinking, reasoning_effort=values.get("reasoning_effort"),
                                drop_thinking=drop_thinking, add_generation_prompt=add_generation_prompt,
                                current_date=values.get("current_date"), extra=extra, kept_reasoning=kept,
                                policy=policy)
        builder = PromptBuilder()
        if prepared is None or prepared.index is None:
            opens_reasoning = self._render(msgs, tool_models, options, builder)
        else:  # messages moved or added: provenance (and any refusal) names the request's messages
            try:
                opens_reasoning = self._render(msgs, tool_models, options, builder)
            except InvalidRequest as exc:
                raise steps.remap_error(exc, prepared) from None
            builder._pieces[:] = steps.remap_pieces(builder._pieces, prepared.index)
        plan_options = (thinking, policy, drop_thinking, add_generation_prompt, extra, limits, results_in_call_order,
                        escape_result_markup, prepared.notes if prepared is not None else None)
        return builder.build(opens_reasoning=bool(opens_reasoning), format=family.name,
                             warnings=partial(steps.render_warnings, self, request, tools, plan_options))

    def template_variables(self, **options: Any) -> dict[str, Any]:
        """``options`` (render keyword arguments) as the variables the family's chat template reads, for running
        the reference template on the same request (``toolwire fidelity``): each resolved option that mirrors a
        template keyword, under that keyword (``add_generation_prompt`` included)."""
        family = self.parser_class.family
        return family.options.template_variables(family.options.resolve(options, family.name))

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        """Write the prompt into ``out``; return whether it ends inside an opened reasoning block."""
        raise NotImplementedError

    # ---- parsing
    def stream(self, tools: Sequence[Any] | None = None, *, prompt: RenderedPrompt | None = None, **options: Any):
        """A fresh stream parser: ``feed(delta) -> list[Event]`` and ``finish() -> ParsedOutput``.

        Where the output starts: with ``prompt=`` (the :class:`RenderedPrompt` the output continues) the
        parser starts inside reasoning exactly when ``prompt.opens_reasoning``; ``thinking`` is then ignored.
        Without it, ``thinking=True`` means "the prompt opened a reasoning block" (for every family), and
        ``thinking=False`` (the default) starts in content: pass ``prompt=`` (or ``thinking=True``) where the prompt
        opened reasoning (:attr:`default_opens_reasoning` says whether the family's default prompt does). A
        reasoning opener the model writes itself is recognised either way, and a closer seen in content still
        closes reasoning (with a diagnostic). This default is toolwire's, not a template's: it is the start that
        never hides a call (output read as reasoning would report its calls as written inside the reasoning).

        Options every format takes: ``promote_reasoning_calls``, ``limits`` (:class:`toolwire.Limits`) and
        ``tokenizer`` (to ``feed(ids=...)``), ``call_ids`` (a prefix or ``index -> id`` callable for calls the
        format gives no id); some families take more (see their parser). Render options (``current_date``,
        ``reasoning_effort``, ``add_generation_prompt``, the family's own ...) are read as :meth:`render` reads them
        and otherwise ignored, so one options dict can serve both. An unknown option is an
        :class:`~toolwire.errors.InvalidOption`."""
        parser_class = self.parser_class
        family = parser_class.family
        values, rest = family.options.split(options)
        rest.update((name, values[name]) for name in parser_class.render_options if name in values)
        if prompt is not None:
            if not isinstance(prompt, RenderedPrompt):
                raise InvalidOption("prompt must be the RenderedPrompt the output continues "
                                    f"(got {type(prompt).__name__})", field="prompt")
            thinking = prompt.opens_reasoning
        else:
            thinking = values["thinking"] if _thinking_given(options, family) else False
        try:
            return parser_class(tools if tools is None or tools.__class__ is list else _tool_list(tools),
                                thinking=bool(thinking), **rest)
        except TypeError as exc:
            if "unexpected keyword argument" not in str(exc):
                raise
            bad = str(exc).rsplit("argument", 1)[-1].strip()
            raise InvalidOption(f"{family.name} parsers take no option {bad}", field="options") from None

    @cached_property
    def default_opens_reasoning(self) -> bool:
        """Whether this family's default prompt (a user message, every option left to the template) opens a
        reasoning block: the output of such a prompt is parsed with ``prompt=`` or ``thinking=True``."""
        try:
            return self.render([{"role": "user", "content": "Hi"}], [_PROBE_TOOL]).opens_reasoning
        except ToolwireError:  # pragma: no cover - every family renders this request (tested)
            return False

    def stop_token_ids(self, tokenizer: Any) -> list[int]:
        """The ids of :attr:`stop_tokens` in ``tokenizer`` (any tokenizer :mod:`toolwire.tokenize` accepts).
        Raises :class:`~toolwire.tokenize.MarkerNotInVocabulary` when one is not a control token there."""
        from .tokenize import MarkerNotInVocabulary, vocabulary

        vocab = vocabulary(tokenizer)
        ids = []
        for token in self.stop_tokens:
            if token not in vocab.control:
                raise MarkerNotInVocabulary(token, vocab.kind)
            ids.append(vocab.control[token])
        return ids

    def parse(self, text: str, tools: Sequence[Any] | None = None, *, prompt: RenderedPrompt | None = None,
              **options: Any) -> ParsedOutput:
        """Parse a complete model output (what follows the generation prompt, without the stop token).
        ``prompt`` and ``thinking`` say where it starts, as for :meth:`stream`."""
        parser = self.stream(tools, prompt=prompt, **options)
        # in the pieces a long delta is read in anyway, so the events (not needed here) of each are dropped at
        # once rather than held for the whole output: memory stays bounded by what the result keeps
        for start in range(0, len(text), _PARSE_CHUNK):
            parser.feed(text[start:start + _PARSE_CHUNK])
        return parser.finish()

    # ---- constrained decoding (toolwire.grammar)
    def grammar(self, tools: Sequence[Any] | None = None, *, tool_choice: Any = "auto", target: str = "xgrammar",
                thinking: bool = False, prompt: RenderedPrompt | None = None, special_tokens: Any = None):
        """The constraint for this format's tool calls with ``tools``: a :class:`toolwire.grammar.Grammar`.

        ``target``: ``"xgrammar"`` (a structural tag, as vLLM and SGLang take it), ``"llguidance"`` (a Lark
        grammar for ``LLMatcher``) or ``"gbnf"`` (llama.cpp's grammar, with ``grammar_lazy`` and
        ``grammar_triggers``). ``tool_choice``: ``"auto"`` (text, calls anywhere), ``"required"`` (the answer
        starts with a call), ``"none"`` (no call can start) or a named tool (``{"type": "function",
        "function": {"name": ...}}`` or ``{"name": ...}``: only that tool). Argument bodies follow each tool's
        JSON Schema. ``prompt`` / ``thinking`` say whether the output starts inside reasoning (free text up to
        the closer), as for :meth:`stream`. A bad tool, schema, ``tool_choice`` or ``target`` raises a toolwire
        error naming the field; a format without a grammar description raises :class:`UnsupportedByFormat`.
        ``special_tokens`` (llguidance): ``{marker: token id}`` of the markers that are special tokens of the
        tokenizer, written as token references (docs/grammar.md, "Targets")."""
        from toolwire.grammar import build

        return build(self, _tool_list(tools), tool_choice=tool_choice, target=target, thinking=thinking,
                     prompt=prompt, special_tokens=special_tokens)

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

class _RenderSteps(NamedTuple):
    normalize_messages: Any
    check_message_text: Any
    normalize_tools: Any
    kept_reasoning: Any
    prepare_results: Any
    remap_pieces: Any
    remap_error: Any
    render_warnings: Any


_RENDER_STEPS: _RenderSteps | None = None


def _render_steps() -> _RenderSteps:
    """The request validation and context plan :meth:`Format.render` runs, imported on the first render rather
    than with toolwire (they bring pydantic)."""
    global _RENDER_STEPS
    from toolwire.context_policy.plan import kept_reasoning, render_warnings

    from .models import check_message_text, normalize_messages, normalize_tools
    from .result_render import prepare, remap, remap_error

    _RENDER_STEPS = _RenderSteps(normalize_messages, check_message_text, normalize_tools, kept_reasoning, prepare,
                                 remap, remap_error, render_warnings)
    return _RENDER_STEPS


def _refuse_content_parts(messages: list[Message], format_name: str, roles: frozenset[str] | None) -> None:
    for index, message in enumerate(messages):
        if isinstance(message.content, list) and (roles is None or message.role in roles):
            raise UnsupportedByFormat(f"the {format_name} chat template refuses or drops list content; pass the "
                                      "text as a string, or render with join_content_parts=True to join the "
                                      "text parts", message_index=index, field="content")


def _tool_list(tools: Any) -> Any:
    """A :class:`toolwire.ToolSet` (anything with ``tool_definitions()``) as its list of definitions."""
    if tools is None or tools.__class__ is list:  # the usual request: nothing to look up (a failed getattr costs)
        return tools
    definitions = getattr(tools, "tool_definitions", None)
    return definitions() if callable(definitions) else tools


_PROBE_TOOL = {"type": "function", "function": {"name": "probe", "description": "A tool.",
                                                 "parameters": {"type": "object", "properties": {}}}}


def _thinking_given(options: dict, family: Family) -> bool:
    """Whether ``options`` set ``thinking`` under any of the family's spellings (None counts as not given)."""
    spellings = family.options.spellings
    if any(v is not None and spellings.get(k) == "thinking" for k, v in options.items()):
        return True
    nested = options.get("chat_template_kwargs")
    return isinstance(nested, dict) and any(v is not None and spellings.get(k) == "thinking"
                                            for k, v in nested.items())
