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

**Calls inside Llama 4's code block.** The template writes no marker, but Llama 4 models write their calls inside
``<|python_start|>`` … ``<|python_end|>`` (the vocabulary's code-block control tokens, declared in
:mod:`toolwire.families.llama4`; vLLM's own ``llama4_pythonic`` tests pin it). A ``<|python_start|>`` that blanks and a
call list follow is framing, as the blanks after it are: the calls are read (``calls_in_python_block`` on each, status
``repaired``, as in ``llama4``) and the ``<|python_end|>`` after the list (blanks before it are framing) closes the
block; an output that ends before it gets ``python_block_not_closed`` (info). A ``<|python_start|>`` followed by
anything else, and a ``<|python_end|>`` that closes no such block, stay content as written.

There is no reasoning block: ``thinking`` is ignored (the template has no switch and reads no reasoning).
"""

from __future__ import annotations

from typing import Any, Sequence

from toolwire.families.llama4 import MARKERS as LLAMA4_MARKERS
from toolwire.families.llama4_pythonic import LLAMA4_PYTHONIC, MARKERS

from .engine.pythonic import BLANKS, MAX_LOOKAHEAD, PY, CallListReader, PythonicDialect, is_name_char, is_name_start
from .engine.steps import StepParser
from .engine.stop_tokens import TrailingStopToken
from .engine.call_builder import CallBuilder
from .engine.json_arguments import worse_status

DIALECT = PythonicDialect("llama4_pythonic", raw_quotes="\"'", dict_mode=PY, typed_text=True)
"""How the template writes values: every one as ``"%s"`` text, typed back by the tool's schema."""

PY_START, PY_END = LLAMA4_MARKERS["python_start"], LLAMA4_MARKERS["python_end"]
"""Llama 4's code-block control tokens, which the model writes around its calls (see the module docstring)."""

_TEXT, _CALLS, _OPENED, _CLOSING = range(4)
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
        self._held = ""                    # <|python_start|> and the blanks after it, until a call list decides
        self._in_block = False             # reading calls inside <|python_start|>

    def _advance(self, final: bool) -> None:
        held = self._hold_stop_token(final)
        StepParser._advance(self, final)
        self._buf += held

    def _text(self, buf: str, pos: int, final: bool) -> int | None:
        i = buf.find("[", pos)
        m = buf.find("<", pos, len(buf) if i < 0 else i)
        if m >= 0 and (self._marker_at(buf, m, PY_START) or (not final and self._may_still_be(buf, m, PY_START))):
            i = m  # a code block may open here (decided below, once the marker is whole)
        end = len(buf) if i < 0 else i
        if end > pos:
            text = buf[pos:end]
            if self._fresh and text.strip(BLANKS):
                self._fresh = False
            self._emit_content(text)
        if i < 0:
            return None if end == pos else end
        if i == m:
            if not self._marker_at(buf, i, PY_START):
                return None if i == pos else i  # a prefix of the marker at the buffer's end: wait
            self._held, self._state = PY_START, _OPENED
            return i + len(PY_START)
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
        return self._fresh or self._state == _OPENED or (self._names is not None and name in self._names)

    def _opened(self, buf: str, pos: int, final: bool) -> int | None:
        """After ``<|python_start|>``: blanks, then a call list (the marker and blanks are framing) or anything else
        (they are content, as written)."""
        i = self._skip_blanks(buf, pos)
        self._held += buf[pos:i]
        if i == len(buf) and not final:
            return None if i == pos else i
        if buf.startswith("[", i):
            verdict = self._list_ahead(buf, i, final)
            if verdict is None:
                return None if i == pos else i
            if verdict:
                self._held, self._in_block, self._fresh = "", True, False
                self._reader.start(source="content", bracketed=True)
                self._state = _CALLS
                return i + 1
        self._fresh = False
        self._emit_content(self._held)
        self._held, self._state = "", _TEXT
        if buf.startswith("[", i):
            self._emit_content("[")
            return i + 1
        return i

    def _closing(self, buf: str, pos: int, final: bool) -> int | None:
        """After a call list inside the code block: blanks, then ``<|python_end|>`` (framing, like the blanks)."""
        i = self._skip_blanks(buf, pos)
        if self._marker_at(buf, i, PY_END):
            self._held, self._in_block, self._state = "", False, _TEXT
            return i + len(PY_END)
        if not final and self._may_still_be(buf, i, PY_END):
            self._held += buf[pos:i]
            return None if i == pos else i
        self._emit_content(self._held + buf[pos:i])  # the block ends without its closer: what follows is content
        self._held, self._state = "", _TEXT
        self._block_not_closed()
        return i

    def _block_not_closed(self) -> None:
        self._in_block = False
        self._diag("python_block_not_closed", "the call list written inside <|python_start|> was not followed by "
                   "<|python_end|>", severity="info")

    def _begin_call(self, name: str, *, source: str = "content", call_id: str | None = None) -> CallBuilder:
        call = super()._begin_call(name, source=source, call_id=call_id)
        if self._in_block:
            call.diag("calls_in_python_block", "the call was written inside <|python_start|>…<|python_end|>, which "
                      "this template never writes; accepted", severity="warning")
            call.status = worse_status(call.status, "repaired")
        return call

    def _calls(self, buf: str, pos: int, final: bool) -> int | None:
        reader = self._reader
        nxt = reader.read(buf, pos, final)
        if reader.done:
            self._state = _CLOSING if self._in_block else _TEXT
            return pos if nxt is None else nxt
        return nxt

    def _at_end(self) -> None:
        if self._state == _OPENED:  # the output ended after <|python_start|> and blanks: content, as written
            self._emit_content(self._held)
            self._held, self._state = "", _TEXT

    _STEPS = (_text, _calls, _opened, _closing)
    """The step of each state (_TEXT, _CALLS, _OPENED, _CLOSING)."""


__all__ = ["DIALECT", "MARKERS", "Llama4PythonicParser"]
