"""What a serving-engine adapter needs around one toolwire stream, independent of the engine.

:class:`EngineStream` is one request's stream as an engine drives it: fed text or token ids delta by delta,
it folds toolwire's events into one :class:`Fold` per delta (content, reasoning, and tool-call pieces indexed
the OpenAI way), gives each call an id that is unique per request (or the id the model wrote, where the
format carries one: Kimi's ``functions.<name>:<n>``, Mistral's ``[CALL_ID]``), and flushes held-back text at
the end. :func:`start_in_reasoning` decides where the output starts from what the engine knows of the prompt.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Sequence

import toolwire
from toolwire.errors import ToolwireError
from toolwire.tokenize import vocabulary
from toolwire.output import (ArgumentsDelta, ContentDelta, ParsedOutput, ReasoningDelta, ToolCallFinished,
                             ToolCallStarted)
from toolwire.prompt import RenderedPrompt
from toolwire.parsers.engine.reasoning_calls import recovered_in_reasoning


def random_call_id() -> str:
    """A fresh id in the OpenAI style vLLM and SGLang use (``chatcmpl-tool-<32 hex>``)."""
    return f"chatcmpl-tool-{uuid.uuid4().hex}"


@dataclass
class CallPiece:
    """A piece of one tool call in a delta: ``id``/``name`` on its first piece only, then argument text."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass
class Fold:
    """The events of one delta folded the way an engine's delta message holds them."""

    content: str = ""
    reasoning: str = ""
    calls: list[CallPiece] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.content or self.reasoning or self.calls)


@dataclass
class StreamedCall:
    """One call as sent so far: what the engine's end-of-stream logic reads (``prev_tool_call_arr`` ...)."""

    index: int
    id: str
    name: str
    arguments: str = ""
    finished: bool = False


class EngineStream:
    """One request's toolwire stream. Feed it with :meth:`feed` (text or ids, whichever the first non-empty
    delta brings), end it with :meth:`flush`; :attr:`parsed` is then the full :class:`ParsedOutput`
    (diagnostics, typed candidates, statuses), the same as ``Format.parse`` of the whole output.

    Calls the model wrote inside its reasoning are not streamed as calls (toolwire reports them, rejected,
    in :attr:`parsed` unless ``promote_reasoning_calls``); every other candidate is, in order, indexed 0, 1,
    ... over the streamed calls. ``prompt``: the :class:`~toolwire.RenderedPrompt` the output continues (where
    it starts; ``thinking`` is then ignored). A call the format gives no id gets ``make_id()``, one per call, and
    the candidate in :attr:`parsed` has the same id.
    """

    def __init__(self, format_name: str, tools: Sequence[Any] | None = None, *, thinking: bool = False,
                 prompt: RenderedPrompt | None = None, tokenizer: Any = None,
                 make_id: Callable[[], str] = random_call_id, **options: Any):
        self.format = toolwire.get_format(format_name)
        self._make_id = make_id
        self._made_ids: dict[int, str] = {}
        self._tokenizer = tokenizer
        # toolwire's own call ids are the wire ids (one id per call, the same in ``parsed`` and on the wire)
        self._options = dict(options, thinking=thinking, call_ids=self._call_id)
        if prompt is not None:  # the RenderedPrompt the output continues: it says where the output starts
            self._options["prompt"] = prompt
        self._parser = self.format.stream(tools, **self._options)
        self._id_parser = None
        self._tools = tools
        self._mode: str | None = None  # "text" or "ids", fixed by the first non-empty delta
        self._index: dict[int, int] = {}  # toolwire call index -> streamed index
        self.calls: list[StreamedCall] = []
        self.parsed: ParsedOutput | None = None

    @property
    def feeds_ids(self) -> bool:
        """Whether this stream reads token ids (decided by the first non-empty delta)."""
        return self._mode == "ids"

    @property
    def flushed(self) -> bool:
        return self.parsed is not None

    def feed(self, text: str = "", ids: Sequence[int] | None = None) -> Fold:
        """One delta. Token ids are used when given and a tokenizer toolwire reads was passed: a marker then
        counts only where the model wrote its control token (an injected ``<tool_call>`` typed as text stays
        text). Otherwise the text is used. Never raises on model output."""
        if self.parsed is not None:
            return Fold()
        if self._mode is None:
            if ids and self._tokenizer is not None and self._start_ids():
                self._mode = "ids"
            elif text:
                self._mode = "text"
            else:
                return Fold()
        if self._mode == "ids":
            events = self._parser.feed(ids=list(ids)) if ids else []
        else:
            events = self._parser.feed(text) if text else []
        return self._fold(events)

    def flush(self) -> Fold:
        """End of output: what the parser held back, and the calls it closes. Idempotent (a second call
        returns an empty fold)."""
        if self.parsed is not None:
            return Fold()
        fold = self._fold(self._parser.flush())
        self.parsed = self._parser.finish()
        return fold

    def _call_id(self, index: int) -> str:
        """The id of toolwire's call ``index`` when the format carries none: one fresh id per call, the same for
        the streamed call and the candidate in :attr:`parsed`."""
        made = self._made_ids.get(index)
        if made is None:
            made = self._made_ids[index] = self._make_id()
        return made

    def _start_ids(self) -> bool:
        """Rebuild the (still unfed) parser with the tokenizer; False when toolwire cannot read it."""
        try:
            vocabulary(self._tokenizer)  # the stream reads it lazily: a tokenizer toolwire cannot read means text
            # no token spans: the wire has no field for them, so the engine does not pay for them per delta
            self._parser = self.format.stream(self._tools, tokenizer=self._tokenizer, spans=False, **self._options)
            return True
        except Exception:  # noqa: BLE001 - whatever reading it raises (a test double's spec error too)
            return False

    def _fold(self, events: list) -> Fold:
        fold = Fold()
        if not events:
            return fold
        content, reasoning = [], []
        index = self._index
        for event in events:
            kind = type(event)
            if kind is ContentDelta:
                content.append(event.text)
            elif kind is ReasoningDelta:
                reasoning.append(event.text)
            elif kind is ArgumentsDelta:
                at = index.get(event.index)
                if at is None:
                    continue
                self.calls[at].arguments += event.fragment
                last = fold.calls[-1] if fold.calls else None
                if last is not None and last.index == at:
                    last.arguments += event.fragment
                else:
                    fold.calls.append(CallPiece(at, arguments=event.fragment))
            elif kind is ToolCallStarted:
                if event.source == "reasoning":
                    continue
                at = index[event.index] = len(self.calls)
                self.calls.append(StreamedCall(at, event.id, event.name))
                fold.calls.append(CallPiece(at, event.id, event.name))
            elif kind is ToolCallFinished:
                at = index.get(event.index)
                if at is not None:
                    self.calls[at].finished = True
                elif recovered_in_reasoning(event.candidate):  # issue 33: sent whole at the end of the output
                    self._send_whole(event.candidate, fold)
        fold.content = "".join(content)
        fold.reasoning = "".join(reasoning)
        return fold


    def _send_whole(self, cand: Any, fold: Fold) -> None:
        """A call in reasoning that never closed, recovered at the end of the output (its ToolCallFinished comes
        at the flush, ``repaired``): sent as one call piece (id, name, arguments), as a streamed call that ends."""
        at = self._index[cand.index] = len(self.calls)
        arguments = cand.arguments_json()
        self.calls.append(StreamedCall(at, cand.id, cand.name, arguments, finished=True))
        fold.calls.append(CallPiece(at, cand.id, cand.name, arguments))


class ReasoningSplitter:
    """A reasoning parser that hands the rest of the output on raw, for an engine component that only
    splits reasoning (SGLang's reasoning detector; vLLM's reasoning parser when no toolwire tool parser
    follows it): reasoning as toolwire's stream reads it, then, from the point where that stream leaves the
    reasoning, the remaining output as the model wrote it (without the closer and the separator the family
    writes after it), for whatever reads content and calls next.

    :meth:`feed` returns ``(reasoning, rest)``: ``rest`` is None while the output is still in reasoning, and
    after that every later delta is rest. Never raises on model output.
    """

    def __init__(self, format_name: str, *, thinking: bool):
        self._opener, self._closer = reasoning_pair(format_name)
        self._opened = thinking
        self._parser = toolwire.get_format(format_name).stream(None, thinking=thinking)
        self._raw: list[str] = []
        self._seen_reasoning = False
        self.done = False  # reasoning is over: later text passes through

    def feed(self, text: str) -> tuple[str, str | None]:
        if self.done:
            return "", text
        self._raw.append(text)
        return self._take(self._parser.feed(text) if text else [])

    def flush(self) -> tuple[str, str | None]:
        """End of output: reasoning still held back, or the rest if the output left reasoning at the end."""
        if self.done:
            return "", None
        reasoning, rest = self._take(self._parser.flush())
        self.done = True
        return reasoning, rest

    def _take(self, events: list) -> tuple[str, str | None]:
        reasoning, first = [], None
        for event in events:
            if type(event) is ReasoningDelta:
                reasoning.append(event.text)
                self._seen_reasoning = True
            elif type(event) in (ContentDelta, ToolCallStarted):
                first = event
                self.done = True
                break
        if not self.done:
            return "".join(reasoning), None
        raw = "".join(self._raw)
        self._raw = []
        at = raw.find(self._closer) if self._closer else -1
        # the closer is not content when reasoning was open, or when nothing but whitespace precedes it (a
        # leading closer in content, which toolwire's stream drops with reasoning_close_in_content)
        if at < 0 or not (self._opened or self._seen_reasoning or raw.lstrip().startswith(self._opener)
                          or not raw[:at].strip()):
            return "".join(reasoning), raw
        tail = raw[at + len(self._closer):]
        # the separator the family writes after its closer (whitespace toolwire's stream did not put in
        # content) is not content either: drop it here, so what reads the rest starts where content starts
        if type(first) is ContentDelta:
            skip = tail.find(first.text)
            if skip > 0 and not tail[:skip].strip():
                tail = tail[skip:]
        else:
            tail = tail.lstrip()
        return "".join(reasoning), tail


def streamed_calls(parsed: ParsedOutput) -> list:
    """The candidates an :class:`EngineStream` streams as calls (those not written inside the reasoning, and those
    recovered from reasoning that never closed)."""
    return [call for call in parsed.tool_calls if call.source != "reasoning" or recovered_in_reasoning(call)]


# ---------------------------------------------------------------- importing an engine adapter

def missing_engine(module: str, engine: str, extra: str, exc: ModuleNotFoundError) -> str:
    """The message of the ImportError an engine adapter raises when the engine, or a module the engine itself
    imports (``torch`` ...), is not installed."""
    return (f"{module} needs {engine} installed with its own dependencies, and importing it failed: no module "
            f"named {exc.name!r}. Install them with: pip install 'toolwire[{extra}]' (or install {engine} as its "
            f"documentation says; a CPU-only machine needs torch first)")


# ---------------------------------------------------------------- where the output starts

def reasoning_pair(format_name: str) -> tuple[str, str]:
    """The family's reasoning opener and closer (``("", "")`` for a family without a reasoning block)."""
    return _reasoning_markers(format_name) or ("", "")


def _reasoning_markers(format_name: str) -> tuple[str, str] | None:
    fmt = toolwire.get_format(format_name)
    if getattr(fmt, "reasoning_markers", None):  # families whose reasoning block is not think_open/think_close
        return fmt.reasoning_markers
    markers = fmt.markers
    if "think_open" in markers and "think_close" in markers:
        return markers["think_open"], markers["think_close"]
    return None


@lru_cache(maxsize=None)
def implicit_reasoning_ends(format_name: str) -> tuple[str, ...]:
    """The call openers that end the family's reasoning block when the model writes one inside it (the
    opener then starts content), read from the format: its reasoning markers, and the call opener of its grammar
    description (``toolwire.grammar.engines.call_boundaries``), tried by toolwire's own parse of a reasoning
    block holding a call. Empty for every format today (a call in reasoning is reported ``call_in_reasoning``;
    the reasoning goes on)."""
    if not reasoning_pair(format_name)[1]:
        return ()
    from toolwire.grammar.engines import call_boundaries, has_grammar

    if not has_grammar(format_name):
        return ()
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    begin, end, trigger = call_boundaries(format_name, tool)
    opener = trigger.strip()
    if not opener:
        return ()
    text = ("" if begin.startswith(opener) else opener) + begin + ("{}" if end else "") + end
    try:
        parsed = toolwire.get_format(format_name).parse("r " + text, [tool], thinking=True)
    except ToolwireError:
        return ()
    return (opener,) if any(call.source == "content" for call in parsed.tool_calls) else ()


def prompt_opens_reasoning(format_name: str, prompt_tail: str) -> bool:
    """Whether a prompt ending in ``prompt_tail`` leaves a reasoning block open: its last reasoning marker
    is the family's opener (``<think>``, ``<seed:think>`` ...) and no closer follows it."""
    pair = _reasoning_markers(format_name)
    if pair is None:
        return False
    opener, closer = pair
    return prompt_tail.rfind(opener) > prompt_tail.rfind(closer)


def generation_prompt_opens_reasoning(format_name: str, thinking: bool | None = None,
                                      chat_template_kwargs: dict[str, Any] | None = None) -> bool:
    """Whether the family's generation prompt opens reasoning for these options, learnt by rendering a one-message
    request with toolwire's byte-exact renderer (MiniMax-M2 always; DeepSeek-V3.1 in thinking mode; Qwen3 never:
    the model writes its own ``<think>``). ``thinking`` None and no ``chat_template_kwargs`` mean what the
    family's template does when the request sets nothing (Qwen3.5: thinking on). Keys the family's template does
    not read are left out, as a chat template ignores them; a value the renderer refuses reads as not opening
    reasoning. One render of one message, about 50 µs."""
    try:
        fmt = toolwire.get_format(format_name)
        # the keys the family's template reads (as a chat template ignores the others: vLLM's own keys, another
        # family's switches); the generation prompt is the question, so add_generation_prompt is not one of them
        known = {k: v for k, v in (chat_template_kwargs or {}).items()
                 if k in fmt.family.options.spellings and k != "add_generation_prompt"}
        options: dict[str, Any] = {"chat_template_kwargs": known}
        if thinking is not None:
            options["thinking"] = thinking
        prompt = fmt.render([{"role": "user", "content": "."}], **options)
    except ToolwireError:
        return False
    return bool(prompt.opens_reasoning)


def start_in_reasoning(format_name: str, *, prompt_tail: str | None = None,
                       chat_template_kwargs: dict | None = None) -> bool:
    """Where a request's output starts. The rule, first that applies:

    1. the engine's own rendered prompt (its last characters, ``prompt_tail``): reasoning is open when its
       last reasoning marker is an opener (exact, whatever template or ``continue_final_message`` made it);
    2. otherwise the request's ``chat_template_kwargs`` (its thinking switch, or nothing: what the template does
       then), through the family's generation prompt as toolwire renders it
       (:func:`generation_prompt_opens_reasoning`).
    """
    if prompt_tail is not None:
        return prompt_opens_reasoning(format_name, prompt_tail)
    return generation_prompt_opens_reasoning(format_name, chat_template_kwargs=chat_template_kwargs)
