"""Llama 4 with pythonic calls (vLLM's ``llama4_pythonic`` setup and its example template): content, then the
calls as a Python list, ``[get_weather(city="Paris"), search(q="x")]``, with no marker around them.

The family's facts are its declaration's (:mod:`toolwire.families.llama4_pythonic`); how the calls write values is
:data:`DIALECT`; the renderer
(:mod:`toolwire.templates.llama4_pythonic`) reads the same table. The calls are read by the pythonic engine
(:mod:`toolwire.parsers.engine.pythonic`). The template writes every value as ``"%s"`` text (``days="2"``,
``ids="['a', 'b']"``, nothing escaped), so an argument's quoted text is typed by the tool's schema
(``2``, ``["a", "b"]``); a value the model writes unquoted (``days=2``, ``ids=['a']``) is read as the Python
literal it is.

**Where the calls start.** A ``[`` starts a call list when a call follows it: blanks, a name, blanks and ``(``.
At the start of the output (nothing but blanks before it) or when the name is a declared tool that is enough;
inside other text the call must also show it is one (``name()`` or ``name(key=``), so prose such as
``[see(below)]`` stays content. Deciding looks at most :data:`~toolwire.parsers.engine.pythonic.MAX_LOOKAHEAD`
characters past the ``[``, resuming where it stopped. After the list's ``]`` the text is content again; text after
a call that is neither ``,`` nor ``]`` ends the list there (``unclosed_call_list``) and is content.

There is no reasoning block: ``thinking`` is ignored (the template has no switch and reads no reasoning).
"""

from __future__ import annotations

from typing import Any, Sequence

from toolwire.families.llama4_pythonic import LLAMA4_PYTHONIC, MARKERS

from .engine.pythonic import BLANKS, MAX_LOOKAHEAD, PY, CallListReader, PythonicDialect, is_name_char, is_name_start
from .engine.steps import StepParser
from .engine.stop_tokens import TrailingStopToken

DIALECT = PythonicDialect("llama4_pythonic", raw_quotes="\"'", dict_mode=PY, typed_text=True)
"""How the template writes values: every one as ``"%s"`` text, typed back by the tool's schema."""

_TEXT, _CALLS = range(2)
_ACCEPT, _REJECT = -1, -2


class Llama4PythonicParser(TrailingStopToken, StepParser):
    """Llama 4 pythonic output (see the module docstring)."""

    family = LLAMA4_PYTHONIC
    dialect = DIALECT

    def __init__(self, tools: Sequence[Any] | None = None, *, thinking: bool = False, **options: Any):
        super().__init__(tools, thinking=thinking, **options)
        self._state = _TEXT
        self._reader = CallListReader(self, DIALECT)
        self._fresh = True                 # nothing but blanks read so far
        self._ahead: tuple[int, int, list[str]] = (0, 0, [])  # the look-ahead after a "[": state, seen, name

    def _advance(self, final: bool) -> None:
        held = self._hold_stop_token(final)
        StepParser._advance(self, final)
        self._buf += held

    def _text(self, buf: str, pos: int, final: bool) -> int | None:
        i = buf.find("[", pos)
        end = len(buf) if i < 0 else i
        if end > pos:
            text = buf[pos:end]
            if self._fresh and text.strip(BLANKS):
                self._fresh = False
            self._emit_content(text)
        if i < 0:
            return None if end == pos else end
        verdict = self._list_ahead(buf, i, final)
        if verdict is None:
            return None if i == pos else i
        if not verdict:
            self._fresh = False
            self._emit_content("[")
            return i + 1
        self._fresh = False
        self._reader.start(source="content", bracketed=True)
        self._state = _CALLS
        return i + 1

    def _list_ahead(self, buf: str, i: int, final: bool) -> bool | None:
        """Does a call list start at the ``[`` at ``buf[i]``? None: undecided until more text arrives. States:
        0 after ``[``, 1 in the name, 2 after it, 3 after ``(``, 4 in a key, 5 after the key."""
        state, seen, name = self._ahead
        j = i + 1 + seen
        n = len(buf)
        if j > n:
            state, j, name = 0, i + 1, []
        limit = i + 1 + MAX_LOOKAHEAD
        verdict: int | None = None
        while j < n and j < limit:
            ch = buf[j]
            blank = ch in BLANKS
            if state == 0:
                state = 0 if blank else 1 if is_name_start(ch) else _REJECT
                if state == 1:
                    name.append(ch)
            elif state == 1:
                if is_name_char(ch):
                    name.append(ch)
                elif blank:
                    state = 2
                else:
                    state = 3 if ch == "(" else _REJECT
            elif state == 2:
                state = 2 if blank else 3 if ch == "(" else _REJECT
            elif state == 3:
                state = 3 if blank else _ACCEPT if ch == ")" else 4 if is_name_start(ch) else _REJECT
            elif state == 4:
                state = 4 if is_name_char(ch) else 5 if blank else _ACCEPT if ch == "=" else _REJECT
            else:
                state = 5 if blank else _ACCEPT if ch == "=" else _REJECT
            j += 1
            if state == 3 and self._plain_call_enough("".join(name)):
                state = _ACCEPT
            if state < 0:
                verdict = state
                break
        if verdict is None and (j >= limit or final):
            verdict = _REJECT
        if verdict is None:
            self._ahead = (state, j - i - 1, name)
            return None
        self._ahead = (0, 0, [])
        return verdict == _ACCEPT

    def _plain_call_enough(self, name: str) -> bool:
        """``[NAME(`` is a call list by itself at the start of the output, or when NAME is a declared tool."""
        return self._fresh or (self._names is not None and name in self._names)

    def _calls(self, buf: str, pos: int, final: bool) -> int | None:
        reader = self._reader
        nxt = reader.read(buf, pos, final)
        if reader.done:
            self._state = _TEXT
            return pos if nxt is None else nxt
        return nxt

    def _at_end(self) -> None:
        pass

    _STEPS = (_text, _calls)
    """The step of each state (_TEXT, _CALLS)."""


__all__ = ["DIALECT", "MARKERS", "Llama4PythonicParser"]
