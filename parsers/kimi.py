"""Kimi K2 stream parsers: ``<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX
<|tool_call_argument_begin|>{json}<|tool_call_end|>...<|tool_calls_section_end|>``.

K2-Thinking writes ``<think>...</think>`` itself at the start of its output (the generation prompt does
not open it). The call id ``functions.NAME:IDX`` becomes the candidate's id and names the tool.
"""

from __future__ import annotations

import re

from .engine import drift_json
from .engine.drift import DeclaredTools, Drift, drift_diagnostic, refused_diagnostic, register
from .engine.drift_requote import RequoteChecked
from .engine.drift_stripped import StrippedCalls, kimi_head
from .engine.call_builder import PastLimitCall
from .engine.json_arguments import finish_call
from .engine.marker_json import _BODY, HEADER_BLANKS, Grammar, Header, JsonCallParser, StreamedCall
from .engine.safe_json import loads

from toolwire.families.kimi import KIMI_K2, KIMI_K2_THINKING, MARKERS
M = MARKERS

CALL_ID_PREFIX = "functions."
_CALL_ID = re.compile(r"functions\.(?P<name>.+):(?P<index>[0-9]+)", re.S)
_NAME_INDEX = re.compile(r"(?P<name>.+?)[:.](?P<index>[0-9]+)", re.S)

ID_NAMES_NO_TOOL = "drift_call_id_names_no_tool"
"""A call id that names no tool (a bare counter ``0``, a client's id ``call_3`` / ``toolu_01…`` copied from the
history the template renders): with tools declared, the call of the one declared tool its arguments fit."""
register(Drift.DAMAGED_NAME, ID_NAMES_NO_TOOL)
_MAX_ID = 256


def names_no_tool(header: str, tools: DeclaredTools) -> bool:
    """Whether a call id names no tool at all: a bare counter, or one word that is no declared name and has none of
    the id's own separators (``functions``, ``:``, ``.``), so it does not even spell a (misspelled) tool reading."""
    text = header.strip(HEADER_BLANKS)
    if not text or len(text) > _MAX_ID or text in tools.names:
        return False
    if text.isdigit():
        return True
    return (not text.startswith("functions") and ":" not in text and "." not in text
            and not any(ch.isspace() or ch in "<>{}[]\"'" for ch in text))


def split_call_id(header: str) -> Header:
    """``functions.NAME:IDX`` to (NAME, the id). Ids seen in real output in other spellings (``NAME:IDX``,
    ``functions.NAME``, ``NAME.IDX``, ``NAME``) name the tool the same way, with a
    ``kimi_call_id_variant`` diagnostic and status ``repaired`` (the unknown-tool check still applies, so
    only a declared name makes a usable call); a bare index (``0``) names no tool: it stays the call's
    (undeclared) name and the call is ``rejected`` (with tools declared, :class:`KimiParser` first asks the
    arguments which tool it is: :func:`names_no_tool`). Only ASCII blanks around
    the id are framing (:data:`~toolwire.parsers.engine.marker_json.HEADER_BLANKS`)."""
    text = header.strip(HEADER_BLANKS)
    m = _CALL_ID.fullmatch(text)
    if m:
        return Header(m["name"], text)
    if not text:
        return Header("", None, (("kimi_call_id_variant", "an empty call id names no tool", None),), "rejected")
    rest = text[len(CALL_ID_PREFIX):] if text.startswith(CALL_ID_PREFIX) else text
    v = _NAME_INDEX.fullmatch(rest)
    name = v["name"] if v else rest
    if name.isdigit() or not name:  # a bare index names no tool: the text is the (undeclared) name
        return Header(rest or text, text, (("kimi_call_id_variant", f"call id {text!r} is not functions.NAME:IDX; "
                                                  "it names no tool", None),), "rejected")
    problem = ("kimi_call_id_variant", f"call id {text!r} is not functions.NAME:IDX; read as a call of {name!r}",
               None)
    return Header(name, text, (problem,), "repaired")


class KimiParser(StrippedCalls, JsonCallParser):
    """Kimi-K2-Instruct output: content, then a tool-call section. With tools declared, a content line that is a
    call whose special tokens a server stripped (``functions.NAME:IDX{json}``) is read as the call when the declared
    tools make it one (:mod:`~toolwire.parsers.engine.drift_stripped`, issue 33)."""

    stripped_head = staticmethod(kimi_head)

    grammar = Grammar(call_open=M["call_begin"], header_end=M["argument_begin"], section_open=M["section_begin"],
                      section_close=M["section_end"], call_close=M["call_end"], bare_headers=True,
                      think_close=M["think_close"], own_reasoning=False)  # K2 has none: only thinking=True opens it
    family = KIMI_K2

    def __init__(self, tools=None, *, thinking: bool = False, **options):
        super().__init__(tools, thinking=thinking, **options)
        self._declared = DeclaredTools.of(tools)  # None: no tools declared, no drift recovery (issue 33)
        self._drift_id: str | None = None         # the damaged id the header being begun was read from
        self._stripped_init()

    def parse_header(self, header: str) -> Header:
        """``functions.NAME:IDX``: the id names the tool (see :func:`split_call_id`). With tools declared, an id
        that lost its separators (``functionsexec5``, ``functions_get_weather_1``; reported with SGLang and exo)
        names the one declared tool it reads as (``drift_call_id_separators``, issue 33); the call is then
        ``repaired`` when its arguments fit that tool's schema, ``rejected`` (with the same code, ``info``)
        when they do not."""
        parsed = split_call_id(header)
        tools = self._declared
        if tools is None or parsed.name in tools.names or not parsed.name:
            return parsed
        text = header.strip(HEADER_BLANKS)
        reading = drift_json.read_kimi_id(text, tools)
        if reading is None:
            return parsed
        if isinstance(reading, drift_json.Refused):
            self._diagnostics.append(refused_diagnostic(reading.code, reading.why, text))
            return parsed
        name, message = reading
        self._drift_id = text
        diagnostic = drift_diagnostic(drift_json.CALL_ID_SEPARATORS, message, text)
        return Header(name, text, ((diagnostic.code, diagnostic.message, text),), "repaired")

    def _begin(self) -> None:
        tools = self._declared
        if tools is not None and not (self._bare or self._outside):
            text = "".join(self._header)
            if names_no_tool(text, tools):  # the name waits for the arguments (_HeldForName)
                self._header, self._header_len = [], 0
                self._call = _HeldForName(self, self.parse_header(text), text.strip(HEADER_BLANKS))
                self._state = _BODY
                return
        super()._begin()
        damaged, self._drift_id = self._drift_id, None
        if damaged is not None and self._call is not None:
            self._call = _FitChecked(self._call, self._declared, damaged)
        elif (self._declared is not None and type(self._call) is StreamedCall
              and not isinstance(self._call.call, PastLimitCall)):  # a wrong quote in its arguments (issue 33)
            self._call = RequoteChecked(self._call, self._declared)


class _FitChecked(StreamedCall):
    """A call whose name came from a damaged id: when it closes, its arguments must fit the tool's schema, or the
    recovery is not taken (the call is ``rejected``, the refusal said with the recovery's code)."""

    __slots__ = ("tools", "damaged")

    def __init__(self, streamed: StreamedCall, tools: DeclaredTools, damaged: str):
        self.call, self.stream, self.tools, self.damaged = streamed.call, streamed.stream, tools, damaged

    def close(self, *, truncated: bool = False, closed: bool = False):
        if truncated:
            return super().close(truncated=True)
        result = self.stream.close(closed=closed)
        if result.status != "rejected" and not self.tools.arguments_fit(self.call.name, result.arguments):
            self.call.status = "rejected"  # the name was streamed already: it stays, the call is not usable
            self.call.diagnostics[:] = [d for d in self.call.diagnostics if d.code != drift_json.CALL_ID_SEPARATORS]
            refusal = refused_diagnostic(drift_json.CALL_ID_SEPARATORS, "the arguments do not fit the schema of "
                                         f"{self.call.name!r}", self.damaged)
            self.call.diagnostics.append(refusal.model_copy(update={"call_index": self.call.index}))
        return finish_call(self.call, result)


class _HeldForName(StreamedCall):
    """A call whose id names no tool (:func:`names_no_tool`), tools declared: its arguments are read without
    starting the call (no event), and when they are complete the call is started, filled and finished at once,
    as the call of the one declared tool they fit (``drift_call_id_names_no_tool``, ``repaired``; the id is kept
    as the call's id). When none or several fit, or the output ended inside them, it is the call it was before
    (named by its id, an unknown tool, ``rejected``) with the refusal said at ``info``."""

    __slots__ = ("parser", "header", "written")

    def __init__(self, parser: "KimiParser", header: Header, written: str):
        held = PastLimitCall(parser, parser._call_count, header.name, parser._source, header.call_id)
        super().__init__(held)
        self.parser, self.header, self.written = parser, header, written

    def _replay(self, infer: bool) -> StreamedCall:
        p, header, raw = self.parser, self.header, self.stream.raw
        tools: DeclaredTools = p._declared
        name, why = None, "the output ended inside its arguments"
        if infer:
            try:
                arguments = loads(raw.strip(HEADER_BLANKS), max_depth=p.limits.max_depth,
                                  max_bytes=p.limits.max_argument_bytes)
            except ValueError:
                arguments, why = None, "its arguments are not a JSON object"
            if isinstance(arguments, dict):
                name = tools.unique_fit(arguments)
                why = "its arguments fit no declared tool, or several"
        if name is not None:
            call = p._begin_call(name, source=p._source, call_id=header.call_id)
            call.diagnostics.append(drift_diagnostic(
                ID_NAMES_NO_TOOL, f"call id {self.written!r} names no tool; its arguments "
                f"fit only {name!r}: read as its call", self.written, call.index))
            call.status = "repaired"
            streamed = StreamedCall(call)
        else:
            call = p._begin_call(header.name, source=p._source, call_id=header.call_id)
            for code, message, raw_text in header.problems:
                call.diag(code, message, severity="warning", raw=raw_text)
            if header.status is not None and call.status == "proposed":
                call.status = header.status
            refusal = refused_diagnostic(ID_NAMES_NO_TOOL, f"call id {self.written!r} names no tool; {why}",
                                         self.written)
            call.diagnostics.append(refusal.model_copy(update={"call_index": call.index}))
            streamed = StreamedCall(call)
            if not isinstance(call, PastLimitCall):
                streamed = RequoteChecked(streamed, tools)
        streamed.feed(raw)
        return streamed

    def close(self, *, truncated: bool = False, closed: bool = False):
        return self._replay(not truncated).close(truncated=truncated, closed=closed)

    def close_at_end(self) -> bool:
        return self._replay(False).close_at_end()


class KimiThinkingParser(KimiParser):
    """Kimi-K2-Thinking output: an optional leading ``<think>...</think>``, then as K2-Instruct."""

    family = KIMI_K2_THINKING

    grammar = KimiParser.grammar._replace(think_open=M["think_open"], own_reasoning=True)
