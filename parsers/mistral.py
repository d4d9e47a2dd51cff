"""Mistral Small 3.2 stream parser: ``[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{json}`` (``[CALL_ID]ID`` optional).

The format has no closing marker: the JSON scanner alone finds where each call's arguments end. After a
call, blanks followed by ``[TOOL_CALLS]`` start the next call; any other text is content again. Ids are
the model's own; a call without one gets ``callNNNNN`` (9 alphanumerics, so it renders back).
"""

from __future__ import annotations

from .engine.marker_json import HEADER_BLANKS, Grammar, Header, JsonCallParser

from toolwire.families.mistral import MARKERS, MISTRAL_SMALL32
M = MARKERS

CALL_ID_LENGTH = 9


def is_call_id(value: object) -> bool:
    """Whether ``value`` is a Mistral call id: exactly 9 ASCII letters or digits."""
    return isinstance(value, str) and len(value) == CALL_ID_LENGTH and value.isascii() and value.isalnum()


class MistralParser(JsonCallParser):
    """Mistral Small 3.2 output: content, then calls. Also read: the format before v11,
    ``[TOOL_CALLS][{"name", "arguments", "id"}, ...]`` (with or without a blank after the marker), as
    ``repaired`` calls with ``json_array_calls``; a trailing ``</s>`` is stripped."""

    grammar = Grammar(call_open=M["tool_calls"], header_end=M["args"], json_array_calls=True)
    family = MISTRAL_SMALL32

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
