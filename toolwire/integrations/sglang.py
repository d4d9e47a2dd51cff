"""toolwire as SGLang's tool-call detector and reasoning detector (tested against SGLang 0.5.23).

For every toolwire format ``<f>``, :func:`register` adds ``toolwire_<f>`` to SGLang's
``FunctionCallParser.ToolCallParserEnum`` and ``ReasoningParser.DetectorMap``. It is the ``sglang.srt.plugins``
entry point of ``toolwire[sglang]`` (SGLang's ``load_plugins`` runs it in every process); without the entry
point, one call does it::

    import toolwire.integrations.sglang as tw; tw.register()
    # then: --tool-call-parser toolwire_qwen3 --reasoning-parser toolwire_qwen3

How it fits SGLang's serving loop: SGLang runs the reasoning detector on each chunk first and hands its
``normal_text`` to the tool detector, two objects it builds separately per request. The reasoning detector
runs a toolwire stream and passes on, raw, everything after the point where that stream closed the
reasoning; the tool detector runs a toolwire stream (starting in content) over that text and returns content
and calls. The split is toolwire's at both steps, and both streams flush their held-back text in ``finish``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, List

import toolwire
from toolwire.integrations.engine_stream import (EngineStream, ReasoningSplitter, generation_prompt_opens_reasoning,
                                                 reasoning_pair)
from toolwire.integrations.engine_stream import missing_engine

try:
    from sglang.srt.function_call.base_format_detector import BaseFormatDetector
    from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import BaseReasoningFormatDetector, ReasoningParser
    from sglang.srt.parser.reasoning_parser import StreamingParseResult as ReasoningResult
except ModuleNotFoundError as _exc:  # SGLang, or a module SGLang itself imports (torch ...), is not installed
    raise ImportError(missing_engine(__name__, "SGLang", "sglang", _exc), name=_exc.name) from _exc

PREFIX = "toolwire_"


def _tool_dicts(tools: Any) -> list[dict] | None:
    if not tools:
        return None
    return [t.model_dump(exclude_none=True) if hasattr(t, "model_dump") else dict(t) for t in tools]


@lru_cache(maxsize=None)
def _always_opens_reasoning(format_name: str) -> bool:
    """Whether the family's parser starts inside reasoning even with ``thinking=False`` (MiniMax-M2 and
    Qwen3-Thinking-2507 on toolwire 0.1: their generation prompt always opens it)."""
    closer = reasoning_pair(format_name)[1]
    return bool(closer) and toolwire.get_format(format_name).parse("x", thinking=False).content != "x"


def _content_stream(format_name: str, tools: Any) -> EngineStream:
    """A stream over the text after the reasoning (what SGLang's reasoning parser passes on): it starts in
    content; for a family whose parser always starts in reasoning, an empty block is closed first."""
    stream = EngineStream(format_name, _tool_dicts(tools), thinking=False)
    if _always_opens_reasoning(format_name):
        stream.feed(reasoning_pair(format_name)[1])
    return stream


class ToolwireDetector(BaseFormatDetector):
    """SGLang tool-call detector over one toolwire format (subclassed per format as ``toolwire_<format>``)."""

    format_name: str = ""

    def __init__(self):
        super().__init__()
        self._stream: EngineStream | None = None
        markers = toolwire.get_format(self.format_name).markers
        self.bot_token = next((markers[k] for k in ("call_open", "tool_calls_open", "section_begin",
                                                    "calls_begin", "block_open", "tool_calls", "python_tag")
                               if k in markers), "")

    @property
    def result(self):
        """The full :class:`toolwire.ParsedOutput` of the text this detector saw, once it finished."""
        return self._stream.parsed if self._stream else None

    def has_tool_call(self, text: str) -> bool:
        """Whether toolwire reads anything but plain content in ``text``: a call, or markup it does not keep
        in content (a full parse: markers alone can be quoted text). SGLang's non-streaming path keeps the
        text untouched when this is False."""
        parsed = _content_stream(self.format_name, None)
        parsed.feed(text)
        parsed.flush()
        return bool(parsed.calls) or parsed.parsed.content != text

    def _open(self, tools) -> EngineStream:
        if self._stream is None:
            self._stream = _content_stream(self.format_name, tools)
        return self._stream

    def _result(self, fold) -> StreamingParseResult:
        calls = self._stream.calls
        while len(self.prev_tool_call_arr) < len(calls):
            self.prev_tool_call_arr.append({"name": calls[len(self.prev_tool_call_arr)].name, "arguments": ""})
            self.streamed_args_for_tool.append("")
        items = []
        for piece in fold.calls:
            self.prev_tool_call_arr[piece.index]["arguments"] = calls[piece.index].arguments
            self.streamed_args_for_tool[piece.index] = calls[piece.index].arguments
            self.current_tool_id = piece.index
            items.append(ToolCallItem(tool_index=piece.index, name=piece.name, parameters=piece.arguments))
        return StreamingParseResult(normal_text=fold.content, calls=items)

    def detect_and_parse(self, text: str, tools: List[Any]) -> StreamingParseResult:
        stream = _content_stream(self.format_name, tools)
        stream.feed(text)
        stream.flush()
        calls = [ToolCallItem(tool_index=c.index, name=c.name, parameters=c.arguments) for c in stream.calls]
        return StreamingParseResult(normal_text=stream.parsed.content, calls=calls)

    def parse_streaming_increment(self, new_text: str, tools: List[Any]) -> StreamingParseResult:
        stream = self._open(tools)
        return self._result(stream.feed(new_text))

    def finish(self, tools: List[Any]) -> StreamingParseResult:
        """End of stream: the text toolwire held back, and the calls it closes."""
        stream = self._open(tools)
        return self._result(stream.flush())

    @classmethod
    def parses_without_tools(cls) -> bool:
        return True  # the family's content rules apply without tools too; calls are still reported

    def supports_structural_tag(self) -> bool:
        """True when the format has a toolwire grammar description (docs/grammar.md)."""
        from toolwire.grammar.engines import has_grammar

        return has_grammar(self.format_name)

    def get_structural_tag(self, tools=None, tool_choice="auto", thinking_mode: bool = False,
                           parallel_tool_calls: bool = True):
        """SGLang's model-native structural-tag hook: the format's toolwire grammar as an
        ``xgrammar.StructuralTag`` (None without tools or a description)."""
        from toolwire.grammar.engines import structural_tag

        dicts = [t.model_dump() if hasattr(t, "model_dump") else t for t in tools or []]
        choice = tool_choice.model_dump() if hasattr(tool_choice, "model_dump") else tool_choice
        tag = structural_tag(self.format_name, dicts, choice, thinking=thinking_mode,
                             parallel_tool_calls=parallel_tool_calls)
        if tag is None:
            return None
        from xgrammar import StructuralTag

        return StructuralTag.from_json(tag)

    def parses_required_natively(self) -> bool:
        return True  # toolwire reads the format's own syntax for tool_choice="required" too

    def structure_info(self):
        """SGLang's legacy structural-tag seam: ``name -> StructureInfo(begin, end, trigger)`` of one call, from
        the format's grammar description (the begin literal names the tool; the arguments between are JSON)."""
        from sglang.srt.function_call.core_types import StructureInfo
        from toolwire.grammar.engines import call_boundaries

        def info(name: str) -> StructureInfo:
            begin, end, trigger = call_boundaries(self.format_name, {"type": "function", "function": {
                "name": name, "parameters": {"type": "object"}}})
            return StructureInfo(begin=begin, end=end, trigger=trigger)

        return info


class ToolwireReasoningDetector(BaseReasoningFormatDetector):
    """SGLang reasoning detector over one toolwire format: reasoning as toolwire's stream splits it, then
    the rest of the output, raw, for the tool detector."""

    format_name: str = ""

    def __init__(self, stream_reasoning: bool = True, force_reasoning: bool | None = None, **kwargs: Any):
        opener, closer = reasoning_pair(self.format_name)
        super().__init__(opener, closer, stream_reasoning=True)
        if force_reasoning is None:  # SGLang's own default for a family whose prompt opens reasoning
            force_reasoning = generation_prompt_opens_reasoning(self.format_name, True)
        self._splitter = ReasoningSplitter(self.format_name, thinking=bool(force_reasoning))

    def parse_streaming_increment(self, new_text: str) -> ReasoningResult:
        reasoning, rest = self._splitter.feed(new_text)
        return ReasoningResult(reasoning_text=reasoning, normal_text=rest or "")

    def finish(self) -> ReasoningResult:
        reasoning, rest = self._splitter.flush()
        return ReasoningResult(reasoning_text=reasoning, normal_text=rest or "")

    def detect_and_parse(self, text: str) -> ReasoningResult:
        first = self.parse_streaming_increment(text)
        last = self.finish()
        return ReasoningResult(reasoning_text=(first.reasoning_text or "") + (last.reasoning_text or "") or None,
                               normal_text=(first.normal_text or "") + (last.normal_text or ""))


def _class_name(format_name: str, kind: str) -> str:
    return "Toolwire" + "".join(part.capitalize() for part in format_name.split("_")) + kind


# gpt-oss (harmony) has no reasoning markers to split at: reasoning and calls interleave by channel, which a
# reasoning detector handing raw text on cannot express. SGLang serves it through its own harmony path.
UNSUPPORTED = {"gpt_oss": "harmony channels interleave reasoning and calls; use SGLang's harmony path"}


def _build_classes() -> dict[str, tuple[type, type]]:
    classes = {}
    for name in toolwire.formats():
        if name in UNSUPPORTED:
            continue
        detector = type(_class_name(name, "Detector"), (ToolwireDetector,), {"format_name": name, "__module__": __name__})
        reasoning = type(_class_name(name, "ReasoningDetector"), (ToolwireReasoningDetector,),
                         {"format_name": name, "__module__": __name__})
        globals()[detector.__name__] = detector
        globals()[reasoning.__name__] = reasoning
        classes[name] = (detector, reasoning)
    return classes


DETECTORS = _build_classes()


def register() -> None:
    """Add ``toolwire_<format>`` for every format to SGLang's detector maps (idempotent). The
    ``sglang.srt.plugins`` entry point."""
    for name, (detector, reasoning) in DETECTORS.items():
        FunctionCallParser.ToolCallParserEnum[PREFIX + name] = detector
        ReasoningParser.DetectorMap[PREFIX + name] = reasoning


register()
