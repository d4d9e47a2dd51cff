"""Mistral Small 3.2 stream parser: ``[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{json}`` (``[CALL_ID]ID`` optional).

The format has no closing marker: the JSON scanner alone finds where each call's arguments end. After a
call, blanks followed by ``[TOOL_CALLS]`` start the next call; any other text is content again. Ids are
the model's own; a call without one gets ``callNNNNN`` (9 alphanumerics, so it renders back).

Drift (issue 33), with tools declared only: a header that never meets ``[ARGS]`` and reads as ``NAME{json}`` or
one ``{"name", "arguments"}`` object is a call when the declared tools make it unambiguous (``docs/variants.md``);
so is ``{"NAME": {...}}`` / ``{"name": NAME, "k": v}`` there, one wrong quote in a header read whole, and a content
line ``NAME{json}`` whose ``[TOOL_CALLS]`` and ``[ARGS]`` a server stripped
(:mod:`~toolwire.parsers.engine.drift_stripped`).
"""

from __future__ import annotations

from .engine import drift_json
from .engine.drift import DeclaredTools, drift_diagnostic, refused_diagnostic
from .engine.drift_stripped import StrippedCalls, mistral_head
from .engine.json_arguments import finish_call
from .engine.json_repair import LadderResult
from .engine.marker_json import _BETWEEN, _HEADER, HEADER_BLANKS, Grammar, Header, JsonCallParser, StreamedCall

from toolwire.families.mistral import MARKERS, MISTRAL_SMALL32
M = MARKERS

CALL_ID_LENGTH = 9


def is_call_id(value: object) -> bool:
    """Whether ``value`` is a Mistral call id: exactly 9 ASCII letters or digits."""
    return isinstance(value, str) and len(value) == CALL_ID_LENGTH and value.isascii() and value.isalnum()


class MistralParser(StrippedCalls, JsonCallParser):
    """Mistral Small 3.2 output: content, then calls. Also read: the format before v11,
    ``[TOOL_CALLS][{"name", "arguments", "id"}, ...]`` (with or without a blank after the marker), as
    ``repaired`` calls with ``json_array_calls``; a trailing ``</s>`` is stripped."""

    grammar = Grammar(call_open=M["tool_calls"], header_end=M["args"], json_array_calls=True)
    family = MISTRAL_SMALL32
    stripped_head = staticmethod(mistral_head)  # a content line NAME{json}: [TOOL_CALLS] and [ARGS] stripped

    def __init__(self, tools=None, *, thinking: bool = False, **options):
        super().__init__(tools, thinking=thinking, **options)
        self._declared = DeclaredTools.of(tools)  # None: no tools declared, no drift recovery (issue 33)
        self._stripped_init()

    def _drop_header(self, code: str, message: str) -> None:
        """A header that never met ``[ARGS]`` (ended by the next ``[TOOL_CALLS]`` or by the output's end): with tools
        declared, ``NAME{json}`` and ``{"name", "arguments"}`` are read as a call when unambiguous (issue 33;
        :func:`~toolwire.parsers.engine.drift_json.read_mistral_header`); otherwise kept as before."""
        if self._declared is not None and code == "malformed_call" and self._drift(code):
            return
        super()._drop_header(code, message)

    def _at_end(self) -> None:
        if self._state == _HEADER and self._declared is not None and self._drift("truncated_call_header"):
            self._state = _BETWEEN
        super()._at_end()

    def _drift(self, code: str) -> bool:
        """Read the held header as a drifted call; True when the call was emitted (the header is then consumed)."""
        header = "".join(self._header)
        reading = drift_json.read_mistral_header(header, self._declared, max_depth=self.limits.max_depth,
                                                 max_bytes=self.limits.max_argument_bytes)
        raw = self.grammar.call_open + header
        if reading is None:
            return False
        if code == "truncated_call_header" and reading.code == drift_json.UNCLOSED_STRING:
            reading = drift_json.Refused(reading.code, "the output ended inside the string: it may have been cut "
                                         "off there (a second reading)")
        if isinstance(reading, drift_json.Refused):
            self._diagnostics.append(refused_diagnostic(reading.code, reading.why, raw))
            return False
        self._header, self._header_len = [], 0
        call = self._begin_call(reading.name, source=self._source, call_id=f"call{self._call_count:05d}")
        call.diagnostics.append(drift_diagnostic(reading.code, reading.message, raw, call.index))
        closed = StreamedCall(call).stream.close(decoded=LadderResult(reading.arguments, "repaired", [], None))
        finish_call(call, closed._replace(raw=header[header.find("{"):].strip(HEADER_BLANKS)))
        return True

    def parse_header(self, header: str) -> Header:
        """``NAME[CALL_ID]ID`` or ``NAME``; a missing id becomes ``callNNNNN``. Only ASCII blanks around the
        name and id are framing."""
        name, sep, call_id = header.partition(M["call_id"])
        name = name.strip(HEADER_BLANKS)
        if not sep:
            return Header(name, f"call{self._call_count:05d}")
        call_id = call_id.strip(HEADER_BLANKS)
        if is_call_id(call_id):
            return Header(name, call_id)
        return Header(name, call_id or f"call{self._call_count:05d}",
                      (("unusual_call_id", f"call id {call_id!r} is not 9 letters or digits", None),))
