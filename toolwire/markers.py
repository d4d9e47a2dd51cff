"""Marker tables: every family's wire markers, keyed by what each marker does.

:class:`Marker` names the role a marker plays (``THINK_OPEN``, ``CALL_OPEN``, ``IM_END`` ...): one vocabulary
for every family, so generic code (the grammar emitters, ``detect``, the engine adapters, the fuzz alphabet)
reads any family's table the same way. A family's :class:`MarkerTable` maps the roles it uses to its own
spelling; each entry also reads as an attribute (``M.THINK_OPEN``), which is how renderers and parsers spell
them. A role a family does not use is missing from its table, and reading it is an error, never a default.
"""

from __future__ import annotations

import enum
from typing import Iterator, Mapping


class Marker(str, enum.Enum):
    """The role of a marker in a family's wire format (the keys of every :class:`MarkerTable`).

    A member equals its value (``Marker.THINK_OPEN == "think_open"``), so a table also answers to the role's
    plain name, as marker tables did before they were keyed by this enum (scripts that read
    ``fmt.markers["think_open"]`` keep working)."""

    # text and turn framing
    BOS = "bos"
    EOS = "eos"
    ENDOFTEXT = "endoftext"
    BOD = "bod"
    GMASK = "gmask"
    SOP = "sop"
    IM_START = "im_start"
    IM_END = "im_end"
    START = "start"
    END = "end"
    EOT = "eot"
    EOM = "eom"
    RETURN = "return"
    MESSAGE = "message"
    ROLE = "role"
    ROLE_OPEN = "role_open"
    ROLE_CLOSE = "role_close"
    SEP = "sep"
    OPEN = "open"
    CLOSE = "close"
    HEADER_OPEN = "header_open"
    HEADER_CLOSE = "header_close"
    TURN_OPEN = "turn_open"
    TURN_CLOSE = "turn_close"
    SYSTEM = "system"
    SYSTEM_OPEN = "system_open"
    SYSTEM_CLOSE = "system_close"
    USER = "user"
    USER_OPEN = "user_open"
    USER_CLOSE = "user_close"
    ASSISTANT = "assistant"
    ASSISTANT_OPEN = "assistant_open"
    ASSISTANT_CLOSE = "assistant_close"
    OBSERVATION = "observation"
    INST_OPEN = "inst_open"
    INST_CLOSE = "inst_close"
    LATEST_REMINDER = "latest_reminder"
    MIDDLE = "middle"
    # channels (harmony, Gemma 4)
    CHANNEL = "channel"
    CHANNEL_OPEN = "channel_open"
    CHANNEL_CLOSE = "channel_close"
    CONSTRAIN = "constrain"
    # reasoning
    THINK = "think"
    THINK_OPEN = "think_open"
    THINK_CLOSE = "think_close"
    NOTHINK = "nothink"
    REASONING_MODE = "reasoning_mode"
    BUDGET_OPEN = "budget_open"
    BUDGET_CLOSE = "budget_close"
    # tool declarations
    TOOLS_OPEN = "tools_open"
    TOOLS_CLOSE = "tools_close"
    TOOL_OPEN = "tool_open"
    TOOL_CLOSE = "tool_close"
    # calls
    CALL = "call"
    CALL_OPEN = "call_open"
    CALL_CLOSE = "call_close"
    CALL_BEGIN = "call_begin"
    CALL_END = "call_end"
    CALL_ID = "call_id"
    CALLS_OPEN = "calls_open"
    CALLS_CLOSE = "calls_close"
    CALLS_BEGIN = "calls_begin"
    CALLS_END = "calls_end"
    TOOL_CALLS = "tool_calls"
    TOOL_CALLS_OPEN = "tool_calls_open"
    TOOL_CALLS_CLOSE = "tool_calls_close"
    SECTION_BEGIN = "section_begin"
    SECTION_END = "section_end"
    ARGUMENT_BEGIN = "argument_begin"
    ARGS = "args"
    BLOCK_OPEN = "block_open"
    BLOCK_CLOSE = "block_close"
    INVOKE_OPEN = "invoke_open"
    INVOKE_CLOSE = "invoke_close"
    FUNCTION_OPEN = "function_open"
    FUNCTION_CLOSE = "function_close"
    PARAMETER_OPEN = "parameter_open"
    PARAMETER_CLOSE = "parameter_close"
    KEY_OPEN = "key_open"
    KEY_CLOSE = "key_close"
    VALUE_OPEN = "value_open"
    VALUE_CLOSE = "value_close"
    ATTR_CLOSE = "attr_close"
    QUOTE = "quote"
    NS = "ns"
    PYTHON_TAG = "python_tag"
    PYTHON_START = "python_start"
    PYTHON_END = "python_end"
    # tool results
    RESPONSE_OPEN = "response_open"
    RESPONSE_CLOSE = "response_close"
    RESPONSES_OPEN = "responses_open"
    RESPONSES_CLOSE = "responses_close"
    RESULTS_OPEN = "results_open"
    RESULTS_CLOSE = "results_close"
    TOOL_RESPONSE_OPEN = "tool_response_open"
    TOOL_RESPONSE_CLOSE = "tool_response_close"
    TOOL_RESULT_OPEN = "tool_result_open"
    TOOL_RESULT_CLOSE = "tool_result_close"
    TOOL_CONTENT = "tool_content"
    OUTPUT_BEGIN = "output_begin"
    OUTPUT_END = "output_end"
    OUTPUTS_BEGIN = "outputs_begin"
    OUTPUTS_END = "outputs_end"
    # media
    IMAGE = "image"
    IMAGE_PAD = "image_pad"
    AUDIO = "audio"
    VIDEO = "video"
    VIDEO_PAD = "video_pad"
    VISION_START = "vision_start"
    VISION_END = "vision_end"
    MEDIA_START = "media_start"
    MEDIA_END = "media_end"
    MEDIA_PAD = "media_pad"
    MEDIA_CONTENT = "media_content"


class MarkerTable(Mapping[Marker, str]):
    """A family's markers: :class:`Marker` -> spelling, read-only, each entry also an attribute
    (``table.THINK_OPEN``).

    Built from keyword arguments named after the roles (``MarkerTable(THINK_OPEN="<think>", ...)``); an unknown
    role name or an empty spelling is an error at import. :meth:`extend` gives a new table with more (or other)
    entries, for a family version that adds markers to a shared table.
    """

    def __init__(self, **spellings: str):
        entries: dict[Marker, str] = {}
        for name, text in spellings.items():
            try:
                role = Marker[name]
            except KeyError:
                raise ValueError(f"{name!r} is not a Marker role (toolwire.markers.Marker)") from None
            if not isinstance(text, str) or not text:
                raise ValueError(f"marker {name} must be a non-empty string, got {text!r}")
            entries[role] = text
        object.__setattr__(self, "_entries", entries)
        self.__dict__.update({role.name: text for role, text in entries.items()})

    def extend(self, **spellings: str) -> MarkerTable:
        """A new table: these entries added to (or replacing) this table's."""
        return MarkerTable(**{role.name: text for role, text in self._entries.items()}, **spellings)

    def __getitem__(self, role: Marker | str) -> str:
        return self._entries[role]

    def __iter__(self) -> Iterator[Marker]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError("marker tables are read-only")

    def __getattr__(self, name: str) -> str:
        # only reached for a role this table does not hold (held ones are in __dict__)
        if name in Marker.__members__:
            raise AttributeError(f"this family has no {name} marker")
        raise AttributeError(name)

    def __repr__(self) -> str:
        return "MarkerTable(" + ", ".join(f"{r.name}={t!r}" for r, t in self._entries.items()) + ")"

    def __reduce__(self):
        return (_table, (tuple((r.name, t) for r, t in self._entries.items()),))

    def spellings(self) -> tuple[str, ...]:
        """Every marker's spelling, in table order."""
        return tuple(self._entries.values())


def _table(entries: tuple[tuple[str, str], ...]) -> MarkerTable:
    return MarkerTable(**dict(entries))


__all__ = ["Marker", "MarkerTable"]
