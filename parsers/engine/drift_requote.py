"""A streamed call's arguments with a string quoted with the wrong quote (issue 33, ``damaged_delimiters``), for the
families whose arguments stream between markers (Kimi: ``<|tool_call_argument_begin|>{...}<|tool_call_end|>``).

:class:`RequoteChecked` wraps a :class:`~toolwire.parsers.engine.marker_json.StreamedCall`: when the call's close
marker ends arguments that do not decode, and turning exactly one ``'`` into ``"`` gives an object that fits the
declared tool's schema (:func:`~toolwire.parsers.engine.drift_json.wrong_quote`), the call is ``repaired`` with
``drift_wrong_quote``, **provided what was already streamed is a prefix of the re-quoted arguments**: the opening
quote written ``'`` (``{"city": 'Paris"}``) stops the stream before the value, so the rest can be sent; a closing
quote written ``'`` (``{"city": "Paris', "days": 2}``) comes after the string's text was sent as written, so the
recovery is refused there (an ``info`` diagnostic says so) and the call closes as before. What was streamed does
not depend on the chunking (the stream stops where the JSON stops being strict), so neither does the decision.
An output that ends before the call's close marker is not re-quoted (it may have been cut off).
"""

from __future__ import annotations

from .drift import DeclaredTools, drift_diagnostic, refused_diagnostic
from .drift_json import WRONG_QUOTE, Recovered, wrong_quote
from .json_arguments import _same_prefix, finish_call
from .json_repair import LadderResult
from .marker_json import StreamedCall


class RequoteChecked(StreamedCall):
    """A streamed call whose undecodable arguments may be one wrong quote (see the module)."""

    __slots__ = ("tools",)

    def __init__(self, streamed: StreamedCall, tools: DeclaredTools):
        self.call, self.stream, self.tools = streamed.call, streamed.stream, tools

    def close(self, *, truncated: bool = False, closed: bool = False):
        stream = self.stream
        if truncated or not closed or (stream.scanner.done and stream.scanner.strict):
            return super().close(truncated=truncated, closed=closed)
        raw = stream.raw
        name = self.call.name
        reading = wrong_quote(raw.strip(" \t\r\n"), lambda value: (name, value), self.tools,
                              max_depth=stream.limits.max_depth, max_bytes=stream.limits.max_argument_bytes)
        if reading is None:
            return super().close(closed=closed)
        if isinstance(reading, Recovered):
            at = reading.requoted_at + len(raw) - len(raw.lstrip(" \t\r\n"))
            fixed = (raw[:at] + '"' + raw[at + 1:]).rstrip(" \t\r\n")
            if stream._sent_upto < 0 or _same_prefix(fixed, raw, stream._sent_upto):
                self.call.diagnostics.append(drift_diagnostic(WRONG_QUOTE, reading.message, raw, self.call.index))
                return finish_call(self.call, stream.close(decoded=LadderResult(reading.arguments, "repaired", [],
                                                                                fixed)))
            why = "the string's text was streamed as written before the output showed its quote written wrong"
        else:
            why = reading.why
        refusal = refused_diagnostic(WRONG_QUOTE, why, raw)
        self.call.diagnostics.append(refusal.model_copy(update={"call_index": self.call.index}))
        return super().close(closed=closed)


__all__ = ["RequoteChecked"]
