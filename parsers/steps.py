"""The step machine some stream parsers run on (Gemma 4, MiniMax-M3, Kimi K3).

Such a parser keeps its state in ``self._state``, a small int that indexes its class attribute ``_STEPS``: a
tuple of step functions ``step(self, buf, pos, final) -> int | None``. A step reads ``buf`` from ``pos``, may
set the next state, and returns where the next step starts reading, or ``None`` when it needs more input (or,
with ``final``, has read all it can). What no step took stays in the buffer for the next feed.
"""

from __future__ import annotations

from typing import Any, Callable

from .base import StreamParser

Step = Callable[[Any, str, int, bool], "int | None"]


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

    def _at_end(self) -> None:  # pragma: no cover - abstract
        """End of output: close what is still open."""
        raise NotImplementedError
