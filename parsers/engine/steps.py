"""The step machine some stream parsers run on (Gemma 4, MiniMax-M3, Kimi K3).

Such a parser keeps its state in ``self._state``, a small int that indexes its class attribute ``_STEPS``: a
tuple of step functions ``step(self, buf, pos, final) -> int | None``. A step reads ``buf`` from ``pos``, may
set the next state, and returns where the next step starts reading, or ``None`` when it needs more input (or,
with ``final``, has read all it can). What no step took stays in the buffer for the next feed.
"""

from __future__ import annotations

from typing import Any, Callable

from .stream import StreamParser
from .lexer import Hit

Step = Callable[[Any, str, int, bool], "int | None"]

BLANKS = " \t\r\n"


class StepParser(StreamParser):
    """A :class:`StreamParser` whose :meth:`_advance` runs the steps of ``_STEPS`` (see the module docstring);
    at the end of output it calls :meth:`_at_end`."""

    _STEPS: tuple[Step, ...] = ()
    _state: int

    def _advance(self, final: bool) -> None:
        steps, buf, pos = self._STEPS, self._buf, 0
        while True:
            nxt = steps[self._state](self, buf, pos, final)
            if nxt is None:
                break
            pos = nxt
        self._buf = buf[pos:]
        if final:
            self._at_end()

    @staticmethod
    def _skip_blanks(buf: str, i: int) -> int:
        """The first position at or after ``i`` that is not a blank (space, tab, CR, LF)."""
        while i < len(buf) and buf[i] in BLANKS:
            i += 1
        return i

    @staticmethod
    def _may_still_be(buf: str, i: int, marker: str) -> bool:
        """Whether more output could still make ``marker`` start at ``i``: the buffer ends before ``i``, or
        inside a prefix of ``marker``."""
        rest = buf[i:i + len(marker)]
        return len(rest) < len(marker) and marker.startswith(rest)

    def _stop_token(self, buf: str, pos: int, hit: Hit, final: bool, keep: Callable[[str], None]) -> int | None:
        """The text scan met the stop token ``hit.marker``. Held back while output may follow it; at the very
        end of output it is dropped (``stop_token_in_output``, info); with text after it, it is kept through
        ``keep`` (``text_after_stop_token``, info). Returns where the next step reads (``None``: wait)."""
        marker = hit.marker
        if hit.end == len(buf):
            if not final:
                return None if hit.start == pos else hit.start
            self._diag("stop_token_in_output", f"the output ends with the stop token {marker}", raw=marker,
                       severity="info")
        else:
            keep(marker)
            self._diag("text_after_stop_token", f"text follows {marker}, where generation stops; kept",
                       raw=marker, severity="info")
        return hit.end

    def _at_end(self) -> None:  # pragma: no cover - abstract
        """End of output: close what is still open."""
        raise NotImplementedError
