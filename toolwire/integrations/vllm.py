"""toolwire as vLLM's tool-call parser and reasoning parser (tested against vLLM 0.33.0 and 0.34.0).

Every toolwire format ``<f>`` is registered as ``toolwire_<f>`` with vLLM's ``ToolParserManager`` and
``ReasoningParserManager`` when this module is imported, and as a tokenizer mode whose renderer is toolwire's
(:mod:`toolwire.integrations.vllm_render`: ``--tokenizer-mode toolwire_<f>``)::

    vllm serve <model> --enable-auto-tool-choice \\
        --tool-parser-plugin toolwire.integrations.vllm \\
        --tool-call-parser toolwire_qwen3 --reasoning-parser toolwire_qwen3

or, with ``toolwire[vllm]`` installed, through the ``vllm.general_plugins`` entry point (:func:`register`),
so only the two ``--…-parser`` names are needed.

How it fits vLLM's serving loop (``vllm.parser.abstract_parser.DelegatingParser.parse_delta``):

* One request = one :class:`~toolwire.integrations.engine_stream.EngineStream`, shared by the request's
  reasoning parser and tool parser. vLLM builds both in ``Parser.__init__``, the reasoning parser first and
  the tool parser right after, on the same thread; the tool parser adopts the stream the reasoning parser
  just made (a thread-local slot holding one weak reference, cleared on adoption). So reasoning, content and
  calls are split once, by one parser, consistently.
* Whichever parser vLLM calls first drives the shared stream to the end and returns everything it yields
  (reasoning, content and tool calls in one ``DeltaMessage``): the reasoning parser never reports a
  reasoning end to vLLM (``has_engine_confirmed_reasoning_end`` stays False), so vLLM does not hand half a
  delta to the other parser. When vLLM decides from the prompt that reasoning is already over
  (``is_reasoning_end(prompt_token_ids)``), the tool parser drives instead.
* Both parsers are ``engine_based_streaming``: vLLM then calls ``finish_streaming()`` at the end of the
  stream, which flushes the text toolwire held back (a possible marker prefix, an unclosed call).
* Token ids are fed when vLLM gives them and toolwire can read the tokenizer (injection-safe: a marker
  counts only as its control token); text otherwise.
* Fail-closed (:mod:`toolwire.integrations.wire_policy`): a call to a tool the request does not declare, or one
  toolwire rejects or finds cut off, never reaches the client as a call: its text stays in the content; streamed,
  a call starts only once its name is known declared, its arguments are never complete JSON until it ends usable,
  and the last delta carries the ``toolwire`` marker naming unusable calls (docs/engines.md).
* Call ids: the id the model wrote where the format carries one (Kimi ``functions.<name>:<n>``, Mistral
  ``[CALL_ID]``), else ``chatcmpl-tool-<hash>``, derived from the prompt and the output before the call (the same
  when vLLM's stateless derender replays the output), or random without a prompt; the same id in ``parser.result``.
* ``prev_tool_call_arr`` / ``streamed_args_for_tool`` hold exactly what was streamed, so vLLM's
  end-of-stream ``get_remaining_unstreamed_args`` adds nothing.
* Where the output starts: the ``RenderedPrompt`` toolwire's renderer made for the request (found by its ids,
  :mod:`toolwire.integrations.engine_prompts`), else
  :func:`~toolwire.integrations.engine_stream.start_in_reasoning` (the prompt ids vLLM passes to
  ``set_prompt_token_ids`` first, else the request's ``chat_template_kwargs``).
* vLLM 0.34's reasoning-end API (``reasoning_end_token_ids``, ``implicit_reasoning_end_token_ids``,
  ``find_reasoning_end``) is answered from the format's reasoning markers and call openers.
* The full :class:`~toolwire.ParsedOutput` (diagnostics, typed candidates, statuses) of a finished request
  is ``parser.result``.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from typing import Any

import hashlib
import logging
from array import array
from typing import NamedTuple

import toolwire
from toolwire.integrations import engine_prompts
from toolwire.integrations.engine_stream import (Fold, ReasoningSplitter, implicit_reasoning_ends, missing_engine,
                                                 reasoning_pair, start_in_reasoning)
from toolwire.integrations.wire_policy import FailClosedStream

try:
    from vllm.entrypoints.generate.base.protocol import (DeltaFunctionCall, DeltaMessage, DeltaToolCall,
                                                         ExtractedToolCallInformation, FunctionCall, ToolCall)
    from vllm.reasoning.abs_reasoning_parsers import ReasoningParser, ReasoningParserManager
    from vllm.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager
except ModuleNotFoundError as _exc:  # vLLM, or a module vLLM itself imports (torch ...), is not installed
    raise ImportError(missing_engine(__name__, "vLLM", "vllm", _exc), name=_exc.name) from _exc

try:  # vLLM >= 0.34: where reasoning ends in token ids (structured outputs, speculative decoding)
    from vllm.parser.engine.parser_engine import ReasoningEnd
except ImportError:  # vLLM 0.33 has no such API: the same shape, for callers of find_reasoning_end
    class ReasoningEnd(NamedTuple):  # type: ignore[no-redef]
        offset: int
        implicit: bool

PREFIX = "toolwire_"
MARKER = "toolwire"
"""The extension field of the last streamed delta that lists the calls toolwire did not vouch for
(docs/engines.md, "Fail-closed on the wire")."""
logger = logging.getLogger("vllm.toolwire.parse")
_PROMPT_TAIL_TOKENS = 512  # prompt ids decoded to find the last reasoning marker (once per request)


def _tool_dicts(tools: Sequence[Any] | None) -> list[dict] | None:
    """vLLM's tool models (Chat Completions' ``ChatCompletionToolsParam``, or the Responses API's flat function
    tools) as the Chat Completions dicts toolwire reads; the Responses API's other tools (web search ...) are
    not function tools and are left out."""
    if not tools:
        return None
    if all(hasattr(tool, "model_dump") for tool in tools):
        try:  # vLLM's own list of the tools the model is shown (namespaces flattened, custom tools as functions)
            from vllm.tool_parsers.utils import get_function_tools

            tools = get_function_tools(tools)
        except ImportError:  # pragma: no cover - other vLLM versions
            pass
    out = []
    for tool in tools:
        tool = tool.model_dump(exclude_none=True) if hasattr(tool, "model_dump") else dict(tool)
        if "function" not in tool and tool.get("type") == "function" and "name" in tool:
            tool = {"type": "function", "function": {k: v for k, v in tool.items() if k != "type"}}
        if isinstance(tool.get("function"), dict):
            out.append(tool)
    return out


def _decode(tokenizer: Any, ids: Sequence[int]) -> str | None:
    """The text of ``ids`` with control tokens kept (None when the tokenizer cannot decode)."""
    try:
        return tokenizer.decode(list(ids), skip_special_tokens=False)
    except TypeError:
        try:
            return tokenizer.decode(list(ids))
        except Exception:
            return None
    except Exception:  # a tokenizer without a usable decode: the caller falls back
        return None


def _marker_ids(tokenizer: Any, text: str) -> tuple[int, ...] | None:
    """The ids ``text`` encodes to (one id when it is a control token), as vLLM's own parsers find markers in
    token ids; None when the tokenizer cannot say."""
    if not text:
        return None
    single = _single_token_id(tokenizer, text)
    if single is not None:
        return (single,)
    try:
        try:
            ids = tokenizer.encode(text, add_special_tokens=False)
        except TypeError:
            ids = tokenizer.encode(text)
    except Exception:
        return None
    ids = tuple(ids) if isinstance(ids, (list, tuple)) else ()
    return ids if ids and all(isinstance(i, int) for i in ids) else None


def _last_marker(ids: Sequence[int], markers: dict[str, tuple[int, ...]]) -> str | None:
    """Which of ``markers`` (name -> id sequence) occurs last in ``ids`` (scanning back from the end, so the
    cost is the distance to that marker, not the length of ``ids``)."""
    lasts = {seq[-1]: (name, seq) for name, seq in markers.items()}
    for end in range(len(ids) - 1, -1, -1):
        hit = lasts.get(ids[end])
        if hit is not None:
            name, seq = hit
            start = end + 1 - len(seq)
            if start >= 0 and tuple(ids[start:end + 1]) == seq:
                return name
    return None


def _single_token_id(tokenizer: Any, text: str) -> int | None:
    """The id of ``text`` when it is one token of the vocabulary (without building the vocabulary dict:
    vLLM builds parsers per request, and ``get_vocab()`` of a 150k vocabulary takes most of a second)."""
    convert = getattr(tokenizer, "convert_tokens_to_ids", None)
    if convert is None:
        return None
    try:
        token_id = convert(text)
    except Exception:  # a tokenizer that cannot look tokens up: markers are found in decoded text instead
        return None
    unk = getattr(tokenizer, "unk_token_id", None)
    return token_id if isinstance(token_id, int) and token_id != unk else None


def _named_tool(tool_choice: Any) -> str | None:
    """The tool a named ``tool_choice`` forces (a vLLM model or a dict), else None."""
    if tool_choice is None or isinstance(tool_choice, str):
        return None
    choice = tool_choice.model_dump() if hasattr(tool_choice, "model_dump") else tool_choice
    if isinstance(choice, dict):
        function = choice.get("function")
        name = function.get("name") if isinstance(function, dict) else choice.get("name")
        return name if isinstance(name, str) else None
    return None


class RequestState:
    """One request's state, shared by its toolwire reasoning parser and tool parser."""

    def __init__(self, format_name: str, tokenizer: Any):
        self.format_name = format_name
        self.tokenizer = tokenizer
        self.tools: list[dict] | None = None
        self.tool_choice: Any = None  # from the request, where a parser call carries it
        self.chat_template_kwargs: dict | None = None
        self.prompt_tail: str | None = None
        self.prompt = None  # the RenderedPrompt toolwire's renderer made for this request, when it did
        self.stream: FailClosedStream | None = None
        self.driver: object | None = None  # the parser that feeds the stream
        self.prev_tool_call_arr: list[dict] = []
        self.streamed_args_for_tool: list[str] = []
        # a tool parser vLLM runs without a toolwire reasoning parser: the reasoning (if any) is not its to
        # take, so its stream starts in content (a reasoning block the model opens itself is still read)
        self.tool_parser_alone = False
        self.adopted = False  # a toolwire tool parser took this state over (else the reasoning parser is alone)
        self.whole_output: str | None = None  # the output parse_whole read (None: streamed)
        self.last_message: DeltaMessage | None = None  # the last delta handed to vLLM (the marker may join it)
        self.id_seed: bytes | None = None  # the prompt's hash: call ids derived from it and the output
        self.seen_request = False  # a request or a prompt was seen: this parser serves a request

    def set_prompt(self, prompt_ids: Sequence[int]) -> None:
        """The prompt vLLM rendered for this request: toolwire's own RenderedPrompt when toolwire rendered it
        (``--tokenizer-mode toolwire_<format>``), else its last tokens decoded."""
        self.seen_request = True
        self.prompt = engine_prompts.recall(prompt_ids, self.format_name)
        self.id_seed = hashlib.sha256(array("q", prompt_ids).tobytes()).digest()
        if self.prompt is None:
            self.prompt_tail = _decode(self.tokenizer, prompt_ids[-_PROMPT_TAIL_TOKENS:])

    def start_in_reasoning(self) -> bool:
        if self.tool_parser_alone:
            return False
        if self.prompt is not None:
            return bool(self.prompt.opens_reasoning)
        return start_in_reasoning(self.format_name, prompt_tail=self.prompt_tail,
                                  chat_template_kwargs=self.chat_template_kwargs)

    def declared(self) -> frozenset[str] | None:
        """The tool names a call may use on the wire: the request's tools (none: nothing), only the named
        one for a named ``tool_choice``, nothing for ``tool_choice="none"``. None (every name, as toolwire's
        parse without tools) for a parser used outside a request: no request, no prompt and no tools seen."""
        if not self.tools and not self.seen_request:
            return None
        if self.tool_choice == "none":
            return frozenset()
        named = _named_tool(self.tool_choice)
        names = frozenset(t["function"]["name"] for t in self.tools or () if isinstance(t.get("function"), dict)
                          and isinstance(t["function"].get("name"), str))
        return names & {named} if named is not None else names

    def open(self, *, units: bool = True) -> FailClosedStream:
        if self.stream is None:
            prompt = self.prompt if not self.tool_parser_alone else None
            self.stream = FailClosedStream(self.format_name, self.tools, thinking=self.start_in_reasoning(),
                                           prompt=prompt, tokenizer=self.tokenizer, declared=self.declared(),
                                           units=units, id_seed=self.id_seed)
        return self.stream

    def feed(self, driver: object, delta_text: str, delta_token_ids: Sequence[int]) -> DeltaMessage | None:
        """Feed one delta (only from the driving parser: the other one's calls come back None)."""
        if self.driver is None:
            self.driver = driver
        if driver is not self.driver:
            return None
        if self.stream is not None and self.stream.flushed:
            self._restart()  # the parser object reused for another output (vLLM itself builds one per request)
        return self._message(self.open().feed(delta_text, delta_token_ids))

    def _answers(self, model_output: str) -> bool:
        """Whether the cached one-shot parse is of this output: the whole output, or the content the
        reasoning parser handed on from it."""
        if self.whole_output is None or not self.stream.flushed:
            return False
        return model_output in (self.whole_output, self.stream.content)

    def _restart(self) -> None:
        self.stream = None
        self.whole_output = None
        self.last_message = None
        self.prev_tool_call_arr.clear()
        self.streamed_args_for_tool.clear()

    def finish(self) -> DeltaMessage | None:
        if self.stream is None or self.stream.flushed:
            return None
        last = self.last_message  # the delta of the last step (vLLM merges this one's fields into it)
        message = self._message(self.stream.flush())
        if self.stream.unusable:
            marker = {"unusable_calls": [call.as_dict() for call in self.stream.unusable]}
            _log_unusable(self.format_name, self.stream)
            if message is None:
                message = DeltaMessage()
            # on the returned delta, and on the last one handed out: vLLM merges the end-of-stream delta's
            # fields into the last step's delta when both exist, and keeps that one
            for target in (message, last):
                if target is not None:
                    setattr(target, MARKER, marker)
        return message

    def _message(self, fold: Fold) -> DeltaMessage | None:
        calls = self.stream.calls
        while len(self.prev_tool_call_arr) < len(calls):
            self.prev_tool_call_arr.append({"name": calls[len(self.prev_tool_call_arr)].name, "arguments": ""})
            self.streamed_args_for_tool.append("")
        for piece in fold.calls:
            self.prev_tool_call_arr[piece.index]["arguments"] = calls[piece.index].arguments
            self.streamed_args_for_tool[piece.index] = calls[piece.index].arguments
        if not fold:
            return None
        tool_calls = [
            DeltaToolCall(index=p.index, id=p.id, type="function" if p.id else None,
                          function=DeltaFunctionCall(name=p.name, arguments=p.arguments))
            for p in fold.calls
        ]
        self.last_message = DeltaMessage(content=fold.content or None, reasoning=fold.reasoning or None,
                                         tool_calls=tool_calls)
        return self.last_message

    def parse_whole(self, model_output: str):
        """One-shot parse (non-streaming responses), cached so the sibling parser reuses it (it is handed the
        reasoning parser's content, not the whole output: the cached parse of the whole output answers it).
        Any other output is a new one (the parser object reused), parsed afresh. Read whole first; replayed one
        character at a time only when a call is unusable, to cut its text exactly (wire_policy)."""
        if self.stream is not None and not self._answers(model_output):
            self._restart()  # after a streamed output, or another whole one
        if self.stream is None:
            self.whole_output = model_output
            stream = self.open(units=False)
            stream.feed(model_output)
            stream.flush()
            if stream.unusable:
                made = stream._made_ids
                self.stream = None
                stream = self.open()
                stream._made_ids.update(made)  # the same ids as the first read
                stream.feed(model_output)
                stream.flush()
                _log_unusable(self.format_name, stream)
        return self.stream


def _log_unusable(format_name: str, stream: FailClosedStream) -> None:
    for call in stream.unusable:
        logger.warning("%s%s: tool call %s (%r, id %s) not sent as a call: %s [%s]; its text is in the content",
                       PREFIX, format_name, "never started" if call.index is None else f"{call.index}", call.name,
                       call.id, call.status, ", ".join(call.codes))


_pending = threading.local()  # .reasoning: weakref to the reasoning parser built last on this thread


class ToolwireReasoningParser(ReasoningParser):
    """vLLM reasoning parser over one toolwire format (subclassed per format as ``toolwire_<format>``)."""

    format_name: str = ""
    engine_based_streaming = True

    def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any):
        super().__init__(tokenizer, *args, **kwargs)
        self.state = RequestState(self.format_name, tokenizer)
        self.state.chat_template_kwargs = kwargs.get("chat_template_kwargs")
        self._opener, self._closer = reasoning_pair(self.format_name)
        self._marker_ids = {kind: ids for kind, ids in (("open", _marker_ids(tokenizer, self._opener)),
                                                        ("close", _marker_ids(tokenizer, self._closer))) if ids}
        self._prompt_ids: Sequence[int] | None = None
        self._implicit_ids: frozenset[int] | None = None
        self._splitter: ReasoningSplitter | None = None  # used alone (no toolwire tool parser follows)
        _pending.reasoning = weakref.ref(self)

    @property
    def reasoning_start_str(self) -> str | None:
        return self._opener

    @property
    def reasoning_end_str(self) -> str | None:
        return self._closer

    # -- where reasoning ends, in token ids (vLLM >= 0.34: structured outputs, speculative decoding)
    @property
    def reasoning_end_token_ids(self) -> frozenset[int]:
        """Every token id that alone ends reasoning: the family's closer, when it is one token of the
        tokenizer, and the call openers that end reasoning (:attr:`implicit_reasoning_end_token_ids`). Empty
        when the closer is not one token (reasoning then ends in a way one id cannot show)."""
        closer = self._marker_ids.get("close")
        if closer is None or len(closer) != 1:
            return frozenset()
        return frozenset(closer) | self.implicit_reasoning_end_token_ids

    @property
    def implicit_reasoning_end_token_ids(self) -> frozenset[int]:
        """Reasoning-end tokens that are also content: the family's call openers that end its reasoning block
        when written inside it (:func:`~toolwire.integrations.engine_stream.implicit_reasoning_ends`, read
        from the format), where each is one token. Empty for every toolwire format today: a call written
        inside reasoning is reported as such (``call_in_reasoning``), it does not end the reasoning."""
        if self._implicit_ids is None:
            ids = set()
            for opener in implicit_reasoning_ends(self.format_name):
                marker = _marker_ids(self.model_tokenizer, opener)
                if marker is not None and len(marker) == 1:
                    ids.update(marker)
            self._implicit_ids = frozenset(ids)
        return self._implicit_ids

    def find_reasoning_end(self, token_ids: Sequence[int]) -> ReasoningEnd | None:
        """The first reasoning end in ``token_ids``: its offset and whether its token is content (an implicit
        end); ``ReasoningEnd(len(token_ids), False)`` when there is none; None when the ids cannot show where
        reasoning ends (:attr:`reasoning_end_token_ids` empty)."""
        ends = self.reasoning_end_token_ids
        if not ends:
            return None
        implicit = self.implicit_reasoning_end_token_ids
        for offset, token_id in enumerate(token_ids):
            if token_id in ends:
                return ReasoningEnd(offset, token_id in implicit)
        return ReasoningEnd(len(token_ids), False)

    @property
    def result(self):
        """The request's full :class:`toolwire.ParsedOutput` once the stream ended (else None)."""
        return self.state.stream.parsed if self.state.stream else None

    # -- the prompt and the structured-output gate
    def set_prompt_token_ids(self, prompt_token_ids: Sequence[int]) -> None:
        """The prompt of this request: the RenderedPrompt toolwire's renderer made for it (its start state),
        else its last tokens, decoded (:func:`~toolwire.integrations.engine_stream.start_in_reasoning`)."""
        self._prompt_ids = prompt_token_ids
        if prompt_token_ids:
            self.state.set_prompt(prompt_token_ids)

    def is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
        """Reasoning is over at the end of ``input_ids`` unless their last reasoning marker is an opener (no
        marker: over). (The structured-output gate asks this of the prompt and of the output.)

        Asked by this request's own serving loop of the prompt it has just passed to
        :meth:`set_prompt_token_ids`, the answer is False for a family with a reasoning block: this parser
        then reads the whole output itself (reasoning the prompt opened, reasoning the model opens itself,
        content and calls), also when no tool parser follows it; answered True, vLLM would pass a ``<think>``
        the model writes itself through as content."""
        if not self._opener:
            return True
        if self._prompt_ids is not None and input_ids is self._prompt_ids:
            return False
        if len(self._marker_ids) == 2:
            return _last_marker(input_ids, self._marker_ids) != "open"
        tail = _decode(self.model_tokenizer, input_ids[-_PROMPT_TAIL_TOKENS:])
        return tail is None or tail.rfind(self._opener) <= tail.rfind(self._closer)

    def is_reasoning_end_streaming(self, input_ids: Sequence[int], delta_ids) -> bool:
        """Whether this decode step wrote the closer (checked on the delta only: the step cost stays flat)."""
        if not self._closer:
            return True
        delta_ids = list(delta_ids)
        closer = self._marker_ids.get("close")
        if closer is not None:
            window = list(input_ids[-(len(delta_ids) + len(closer) - 1):]) if delta_ids else []
            return any(tuple(window[i:i + len(closer)]) == closer for i in range(len(window) - len(closer) + 1))
        tail = _decode(self.model_tokenizer, input_ids[-(len(delta_ids) + 8):])
        return tail is not None and self._closer in tail

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        """The ids after the last reasoning closer; none while reasoning is open; all of them when the output
        has no reasoning marker and did not start in reasoning."""
        closer = self._marker_ids.get("close")
        if closer is None:
            return list(input_ids)
        lasts = _last_marker(input_ids, self._marker_ids)
        if lasts == "close":
            for end in range(len(input_ids) - 1, len(closer) - 2, -1):
                if tuple(input_ids[end + 1 - len(closer):end + 1]) == closer:
                    return list(input_ids[end + 1:])
        if lasts == "open" or (lasts is None and self.state.start_in_reasoning()):
            return []
        return list(input_ids)

    def has_engine_confirmed_reasoning_end(self) -> bool:
        """False with a toolwire tool parser: this parser then drives the whole request itself (see the module
        docstring). Alone, True once the output has left the reasoning: vLLM then passes the rest on."""
        return self._splitter is not None and self._splitter.done

    def _alone(self) -> bool:
        """Whether no toolwire tool parser shares this request (known at the first parse call, after vLLM built
        both parsers). Alone, reasoning is split off and the rest handed on as the model wrote it, for vLLM's
        content path or another tool parser (:class:`ReasoningSplitter`)."""
        return not self.state.adopted and self.state.driver is None

    def _new_splitter(self) -> ReasoningSplitter:
        return ReasoningSplitter(self.format_name, thinking=self.state.start_in_reasoning())

    # -- parsing
    def extract_reasoning(self, model_output: str, request: Any) -> tuple[str | None, str | None]:
        _take_request(self.state, request)
        if self._alone():
            splitter = self._new_splitter()
            reasoning, rest = splitter.feed(model_output)
            more, tail = splitter.flush()
            return (reasoning + more) or None, ((rest or "") + (tail or "")) or None
        stream = self.state.parse_whole(model_output)
        return stream.parsed.reasoning or None, stream.content or None

    def extract_reasoning_streaming(self, previous_text: str, current_text: str, delta_text: str,
                                    previous_token_ids: Sequence[int], current_token_ids: Sequence[int],
                                    delta_token_ids: Sequence[int]) -> DeltaMessage | None:
        if self._splitter is None and self._alone() and self.state.stream is None:
            self._splitter = self._new_splitter()
        if self._splitter is not None:
            return _split_message(*self._splitter.feed(delta_text))
        return self.state.feed(self, delta_text, delta_token_ids)

    def finish_streaming(self) -> DeltaMessage | None:
        """End of stream: the text toolwire held back, and the calls it closes."""
        if self._splitter is not None:
            return _split_message(*self._splitter.flush())
        return self.state.finish()


def _take_request(state: RequestState, request: Any) -> None:
    """What a parser call's request tells the state before its stream opens: tools, ``tool_choice``,
    ``chat_template_kwargs``."""
    if state.stream is None and request is not None:
        state.seen_request = True
        tools = getattr(request, "tools", None)
        if state.tools is None or (isinstance(tools, (list, tuple)) and tools):  # the request's own tools decide
            state.tools = _tool_dicts(tools)
        state.tool_choice = getattr(request, "tool_choice", None)
        if state.chat_template_kwargs is None:
            state.chat_template_kwargs = getattr(request, "chat_template_kwargs", None)


def _split_message(reasoning: str, rest: str | None) -> DeltaMessage | None:
    if not reasoning and not rest:
        return None
    return DeltaMessage(reasoning=reasoning or None, content=rest or None)


class ToolwireToolParser(ToolParser):
    """vLLM tool parser over one toolwire format (subclassed per format as ``toolwire_<format>``)."""

    format_name: str = ""
    engine_based_streaming = True
    # toolwire reads the format's own syntax for every tool_choice: vLLM must not force JSON output for
    # "required" / named tools, nor route those through its JSON reader
    supports_required_and_named = False
    structural_tag_model = "toolwire"  # any name: vLLM then asks get_structural_tag for the constraint

    def __init__(self, tokenizer: Any, tools: Any = None):
        super().__init__(tokenizer, tools)
        sibling = getattr(_pending, "reasoning", None)
        sibling = sibling() if sibling is not None else None
        if sibling is not None and sibling.format_name == self.format_name and sibling.state.driver is None:
            self.state = sibling.state  # the reasoning parser vLLM built for this same request
            self.state.adopted = True
            _pending.reasoning = None
        else:
            self.state = RequestState(self.format_name, tokenizer)
            self.state.tool_parser_alone = True
        self.state.tools = _tool_dicts(tools)
        # the server's end-of-stream logic reads these; they always hold exactly what was streamed
        self.prev_tool_call_arr = self.state.prev_tool_call_arr
        self.streamed_args_for_tool = self.state.streamed_args_for_tool

    @property
    def result(self):
        """The request's full :class:`toolwire.ParsedOutput` once the stream ended (else None)."""
        return self.state.stream.parsed if self.state.stream else None

    def adjust_request(self, request: Any) -> Any:
        """Keep control tokens in the text vLLM detokenizes: the format's markers are control tokens."""
        request = super().adjust_request(request)
        if getattr(request, "tools", None) and hasattr(request, "skip_special_tokens"):
            request.skip_special_tokens = False
        return request

    def get_structural_tag(self, request: Any, *, reasoning: bool = False, strict_level: Any = None):
        """Constrained decoding of tool calls: the format's toolwire grammar as an ``xgrammar.StructuralTag``
        (vLLM calls this because ``structural_tag_model`` is set, when ``tool_choice`` or a strict tool asks
        for a constraint). A tool that is not strict (and ``strict_level`` below PARAMETER) keeps free JSON
        arguments, as vLLM's own tags do; ``reasoning`` opens with the reasoning block. None (unconstrained)
        for a format without a grammar description."""
        from toolwire.grammar.engines import structural_tag

        tools = [t.model_dump() if hasattr(t, "model_dump") else t for t in (getattr(request, "tools", None) or [])]
        choice = getattr(request, "tool_choice", "auto")
        choice = choice.model_dump() if hasattr(choice, "model_dump") else choice
        level = int(strict_level) if strict_level is not None else 0
        free = [t["function"]["name"] for t in tools if isinstance(t.get("function"), dict)
                and t["function"].get("strict") is not True and level < _STRICT_PARAMETER]
        tag = structural_tag(self.format_name, tools, choice, thinking=reasoning, free_arguments=free)
        if tag is None:
            return None
        from xgrammar import StructuralTag

        return StructuralTag.from_json(tag)

    def extract_tool_calls(self, model_output: str, request: Any) -> ExtractedToolCallInformation:
        """The usable calls (declared, well formed, complete) as calls; the text of any other call stays in
        the content where the model wrote it, and ``tools_called`` is False when no usable call is left
        (docs/engines.md, "Fail-closed on the wire")."""
        _take_request(self.state, request)
        stream = self.state.parse_whole(model_output)
        usable = stream.usable_calls
        calls = [ToolCall(id=call.id, type="function", function=FunctionCall(name=call.name, arguments=call.arguments))
                 for call in usable]
        self.prev_tool_call_arr[:] = [{"name": c.name, "arguments": c.arguments} for c in usable]
        self.streamed_args_for_tool[:] = [c.arguments for c in usable]
        return ExtractedToolCallInformation(tools_called=bool(calls), tool_calls=calls,
                                            content=stream.content or None)

    def extract_tool_calls_streaming(self, previous_text: str, current_text: str, delta_text: str,
                                     previous_token_ids: Sequence[int], current_token_ids: Sequence[int],
                                     delta_token_ids: Sequence[int], request: Any) -> DeltaMessage | None:
        _take_request(self.state, request)
        return self.state.feed(self, delta_text, delta_token_ids)

    def finish_streaming(self) -> DeltaMessage | None:
        """End of stream: the text toolwire held back, and the calls it closes."""
        return self.state.finish()


try:  # vLLM's ToolStrictLevel: arguments are constrained from PARAMETER on, or for a strict tool
    from vllm.tool_parsers.abstract_tool_parser import ToolStrictLevel as _Level

    _STRICT_PARAMETER = int(_Level.PARAMETER)
except (ImportError, AttributeError):  # pragma: no cover - other vLLM versions
    _STRICT_PARAMETER = 2


def _class_name(format_name: str, kind: str) -> str:
    return "Toolwire" + "".join(part.capitalize() for part in format_name.split("_")) + kind


def _build_classes() -> dict[str, tuple[type, type]]:
    classes = {}
    for name in toolwire.formats():
        tool_cls = type(_class_name(name, "ToolParser"), (ToolwireToolParser,),
                        {"format_name": name, "__module__": __name__})
        reasoning_cls = type(_class_name(name, "ReasoningParser"), (ToolwireReasoningParser,),
                             {"format_name": name, "__module__": __name__})
        globals()[tool_cls.__name__] = tool_cls
        globals()[reasoning_cls.__name__] = reasoning_cls
        classes[name] = (tool_cls, reasoning_cls)
    return classes


PARSERS = _build_classes()


def register() -> None:
    """Register ``toolwire_<format>`` for every format with vLLM's two parser managers, and as a tokenizer mode
    (vLLM's ``TokenizerRegistry``: the model's Hugging Face tokenizer) whose renderer (``RENDERER_REGISTRY``)
    is :class:`toolwire.integrations.vllm_render.ToolwireRenderer` (idempotent). This is the
    ``vllm.general_plugins`` entry point; importing the module calls it too."""
    for name, (tool_cls, reasoning_cls) in PARSERS.items():
        ToolParserManager.register_module(PREFIX + name, module=tool_cls)
        ReasoningParserManager.register_module(PREFIX + name, module=reasoning_cls)
    _register_renderers()


def _register_renderers() -> None:
    """``--tokenizer-mode toolwire_<format>``: the classes are named, not imported (vLLM imports them when a
    server selects the mode), so the parsers do not pull vLLM's renderer stack in."""
    from vllm.renderers.registry import RENDERER_REGISTRY
    from vllm.tokenizers.registry import TokenizerRegistry

    for name in PARSERS:
        mode = PREFIX + name
        if TokenizerRegistry.tokenizers.get(mode) != _TOKENIZER:
            TokenizerRegistry.register(mode, *_TOKENIZER)
        if RENDERER_REGISTRY.renderers.get(mode) != _RENDERER:
            RENDERER_REGISTRY.register(mode, *_RENDERER)


_TOKENIZER = ("vllm.tokenizers.hf", "CachedHfTokenizer")  # the model's own Hugging Face tokenizer
_RENDERER = ("toolwire.integrations.vllm_render", "ToolwireRenderer")


register()
