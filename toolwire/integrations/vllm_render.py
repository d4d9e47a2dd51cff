"""toolwire as vLLM's prompt renderer: ``--tokenizer-mode toolwire_<format>`` (tested against vLLM 0.33.0 and 0.34.0).

vLLM picks the code that turns a chat request into prompt token ids by tokenizer mode: ``TokenizerRegistry``
(``vllm/tokenizers/registry.py``) names the tokenizer class, ``RENDERER_REGISTRY`` (``vllm/renderers/registry.py``)
the renderer class. :func:`toolwire.integrations.vllm.register` (the ``vllm.general_plugins`` entry point, which
also registers the parsers) adds ``toolwire_<format>`` to both for every toolwire format: the model's own
Hugging Face tokenizer (vLLM's ``CachedHfTokenizer``), and :class:`ToolwireRenderer`. Then::

    vllm serve MODEL --tokenizer-mode toolwire_qwen3 \\
        --enable-auto-tool-choice --tool-call-parser toolwire_qwen3 --reasoning-parser toolwire_qwen3

renders every Chat Completions, Responses and Anthropic Messages request (vLLM turns the last two into chat
messages first) with toolwire's byte-exact renderer:

* **Token ids from the provenance segments** (:meth:`toolwire.RenderedPrompt.token_ids`): only the format's own
  markers become control tokens; request text that spells one (``<|im_end|>`` in a tool result) stays text.
* **Options**: the request's ``chat_template_kwargs`` (and what vLLM derives from the request:
  ``add_generation_prompt``, ``reasoning_effort``, ``enable_thinking``; the server's
  ``--default-chat-template-kwargs``) go through :meth:`toolwire.Format.render`'s keyword interface: its own
  keywords (``thinking``, ``reasoning_effort``, ``drop_thinking``, ``current_date``, ``policy`` ...) as
  keywords, the rest (``enable_thinking`` and the family's own switches) as ``chat_template_kwargs``. An option
  the format does not take is a 400 naming it. ``continue_final_message`` and ``documents`` are refused;
  vLLM's own bookkeeping keys (``tools``, ``tokenize``, ``chat_template``, ``return_dict``, ``cohere_format``)
  are not options.
* **Context policy**: the format's built-in reasoning-retention policy (or the ``policy`` option) decides
  which earlier reasoning is rendered; :func:`toolwire.context_policy.plan`'s warnings are logged once per
  request (logger ``vllm.toolwire.render``).
* **Start state for the parser**: the :class:`~toolwire.RenderedPrompt` is kept, keyed by its token ids, for
  the toolwire parser of the same request (:mod:`toolwire.integrations.engine_prompts`), which then starts
  where the prompt leaves off (``Format.stream(prompt=...)``).

Media (images, audio) cannot be rendered by toolwire: such a request is a 400. ``--chat-template`` is not used
(the format is the template); it is logged once when given.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any

import toolwire
from toolwire.errors import ToolwireError
from toolwire.integrations import engine_prompts
from toolwire.history.faithful import TOKEN_IDS_FIELD, splice_token_ids

from toolwire.integrations.engine_stream import missing_engine

try:
    from vllm.exceptions import VLLMValidationError
    from vllm.renderers.chat_utils import parse_chat_messages, parse_chat_messages_async
    from vllm.renderers.hf import HfRenderer
    from vllm.utils.async_utils import make_async
except ModuleNotFoundError as _exc:  # vLLM, or a module vLLM itself imports (torch ...), is not installed
    raise ImportError(missing_engine(__name__, "vLLM", "vllm", _exc), name=_exc.name) from _exc

PREFIX = "toolwire_"
logger = logging.getLogger("vllm.toolwire.render")

VLLM_KEYS = frozenset({"tools", "tokenize", "chat_template", "return_dict", "cohere_format"})
"""Keys vLLM puts in the template kwargs for its own renderers; they are not toolwire options."""

REFUSED_KEYS = {"continue_final_message": "toolwire renders a new turn; it does not continue the final message",
                "documents": "toolwire's formats have no documents section"}
"""Template kwargs a toolwire format cannot honour (a 400 when set)."""


def format_of_mode(tokenizer_mode: str) -> str:
    """The toolwire format a ``toolwire_<format>`` tokenizer mode names."""
    if not tokenizer_mode.startswith(PREFIX) or tokenizer_mode[len(PREFIX):] not in toolwire.formats():
        raise ValueError(f"tokenizer mode {tokenizer_mode!r} is not toolwire_<format> "
                         f"(formats: {', '.join(toolwire.formats())})")
    return tokenizer_mode[len(PREFIX):]


def _render_keywords(fmt: Any) -> frozenset[str]:
    """The keyword options ``fmt.render`` names (read from its signature, not from toolwire's internals)."""
    params = inspect.signature(fmt.render).parameters
    return frozenset(name for name, p in params.items()
                     if p.kind is inspect.Parameter.KEYWORD_ONLY)


def render_options(fmt: Any, template_kwargs: dict[str, Any]) -> dict[str, Any]:
    """vLLM's template kwargs for a request as keyword arguments of ``fmt.render`` (raises
    :class:`VLLMValidationError` naming a key toolwire cannot honour)."""
    keywords = _render_keywords(fmt)
    options: dict[str, Any] = {}
    nested: dict[str, Any] = {}
    for key, value in template_kwargs.items():
        if key in VLLM_KEYS:
            continue
        if key in REFUSED_KEYS:
            if value:
                raise VLLMValidationError(f"{key}: {REFUSED_KEYS[key]}", parameter=key, value=value)
            continue
        if key in keywords:
            if value is not None:
                options[key] = value
        else:
            nested[key] = value
    if nested:
        options["chat_template_kwargs"] = nested
    return options


def plain(value: Any) -> Any:
    """A request value as plain JSON-like data (pydantic models dumped, iterables listed)."""
    if hasattr(value, "model_dump"):
        return plain(value.model_dump(exclude_none=True))
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "__iter__"):
        return [plain(v) for v in value]
    return value


RESPONSES_TEXT_PARTS = frozenset({"input_text", "output_text"})
"""The Responses API's text part types (vLLM hands a Responses input message's parts on as they are)."""


def _chat_parts(message: Any) -> Any:
    """A message whose content parts use the Responses API's text types, with Chat Completions' ``text``."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list) and any(isinstance(p, dict) and p.get("type") in RESPONSES_TEXT_PARTS
                                         for p in content):
        message = dict(message, content=[dict(p, type="text") if isinstance(p, dict) and p.get("type")
                                         in RESPONSES_TEXT_PARTS else p for p in content])
    return message


def request_tools(tools: Any) -> list[dict] | None:
    """The tools vLLM hands the template (``ChatCompletionToolsParam.model_dump()``) without its None fields."""
    if not tools:
        return None
    out = []
    for tool in plain(tools):
        tool = {k: v for k, v in tool.items() if v is not None}
        if isinstance(tool.get("function"), dict):
            tool["function"] = {k: v for k, v in tool["function"].items() if v is not None}
        out.append(tool)
    return out


class ToolwireRenderer(HfRenderer):
    """vLLM's Hugging Face renderer with the chat step done by toolwire (see the module docstring). Completion
    prompts, tokenization and detokenization stay the Hugging Face renderer's."""

    def __init__(self, config: Any, tokenizer: Any) -> None:
        super().__init__(config, tokenizer)
        self.format_name = format_of_mode(config.model_config.tokenizer_mode)
        self.format = toolwire.get_format(self.format_name)
        self._toolwire_render_async = make_async(self._toolwire_render, executor=self._executor)
        self._told_template = False

    # -- vLLM's seam: one conversation -> (conversation messages, prompt)
    def render_messages(self, messages: list, params: Any) -> tuple[list, dict]:
        conversation = self._conversation(parse_chat_messages(messages, self.model_config, content_format="string",
                                                              media_io_kwargs=params.media_io_kwargs,
                                                              mm_processor_kwargs=params.mm_processor_kwargs))
        return conversation, self._toolwire_render(messages, params)

    async def render_messages_async(self, messages: list, params: Any) -> tuple[list, dict]:
        conversation = self._conversation(await parse_chat_messages_async(
            messages, self.model_config, content_format="string", media_io_kwargs=params.media_io_kwargs,
            mm_processor_kwargs=params.mm_processor_kwargs))
        return conversation, await self._toolwire_render_async(messages, params)

    @staticmethod
    def _conversation(parsed: tuple) -> list:
        conversation, mm_data, _uuids = parsed
        if mm_data:
            raise VLLMValidationError("toolwire renders text only: this request carries media",
                                      parameter="messages")
        return conversation

    def _toolwire_render(self, messages: list, params: Any) -> dict:
        kwargs = params.get_apply_chat_template_kwargs()
        if kwargs.get("chat_template") and not self._told_template:
            self._told_template = True
            logger.warning("%s%s renders its own format: the chat template given is not used", PREFIX,
                           self.format_name)
        msgs = [_chat_parts(message) for message in plain(list(messages))]
        tools = request_tools(kwargs.get("tools"))
        options = render_options(self.format, kwargs)
        try:
            if any(isinstance(m, dict) and m.get(TOKEN_IDS_FIELD) is not None for m in msgs):
                # assistant turns carrying the ids they were sampled as (docs/history.md): spliced verbatim,
                # each splice proven, or a 400 naming the turn (TokenSpliceError)
                spliced = splice_token_ids(self.format, msgs, tools, self.get_tokenizer(), **options)
                prompt, ids = spliced.prompt, list(spliced.ids)
            else:
                prompt = self.format.render(msgs, tools, **options)
                ids = prompt.token_ids(self.get_tokenizer())
        except ToolwireError as exc:
            field = getattr(exc, "field", None)
            raise VLLMValidationError(str(exc), parameter=field or "messages") from exc
        self._log_plan(msgs, tools, options)
        engine_prompts.remember(ids, prompt)
        return {"prompt_token_ids": ids, "prompt": prompt.text}

    def _log_plan(self, msgs: list, tools: Any, options: dict) -> None:
        """The context policy's warnings for this request (logged; the render already applied the policy)."""
        if not logger.isEnabledFor(logging.WARNING) or not any(m.get("role") == "assistant" for m in msgs):
            return
        from toolwire.context_policy import plan

        try:  # the render's own options, read by the family's options as the render read them
            warnings = plan(msgs, self.format_name, tools=tools, **options).warnings
        except ToolwireError:
            return
        for warning in warnings:
            logger.warning("%s%s context policy: %s (%s, message %s)", PREFIX, self.format_name, warning.message,
                           warning.code, warning.message_index)
