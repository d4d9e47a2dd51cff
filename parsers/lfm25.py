"""LFM2.5 (Liquid AI) stream parser: ``<think>…</think>`` reasoning, content, and pythonic calls in a block,
``<|tool_call_start|>[get_weather(city='Paris', days=3)]<|tool_call_end|>``.

The family's facts are its declaration's (:mod:`toolwire.families.lfm25`); how its calls write values is
:data:`DIALECT`, which the renderer (:mod:`toolwire.templates.lfm25`) and the grammar read too. The calls are read by the pythonic engine
(:mod:`toolwire.parsers.engine.pythonic`): an argument's string is raw between quotes (the template escapes nothing),
a list is Python's ``str`` of it (Python escapes), a dict is JSON (``tojson``).

Output grammar: the template never opens ``<think>`` in the prompt; the model writes ``<think>…</think>`` itself
as the first thing (blanks before it are framing), then content, and any number of call blocks with content
around them. With ``thinking=True`` (the prompt opened the block) the output starts inside the reasoning and a
repeated ``<think>`` at its very start is dropped (``duplicate_reasoning_open``). A ``</think>`` in content is
dropped with ``reasoning_close_in_content``; anywhere else ``<think>`` is text. Blanks between the block's
markers and the call list are framing.

``<|tool_call_end|>`` ends the block wherever it appears, inside a string too (the renderer refuses a value
that holds it): a call it cuts short is ``rejected`` (``unclosed_call``, ``unterminated_string``). A block in
the reasoning also ends at ``</think>``, and its calls come from the reasoning (``call_in_reasoning``).
Accepted variants (docs/variants.md): calls without the list's brackets (``<|tool_call_start|>f(x=1)<|tool_call_end|>``,
``missing_call_list_brackets``, ``repaired``), double-quoted strings (raw as well), JSON's ``true`` / ``null`` in
Python values (``json_literal``). Calls written in the block as JSON, one ``{"name": …, "arguments": {…}}`` object or
a JSON array of them (LFM2's JSON output mode, which its model card offers through the system prompt; SGLang's
LFM2 tests pin it), are read as those calls, ``repaired`` with ``json_tool_calls`` (the block's markers prove calls:
an undeclared name is ``rejected`` as for any call), emitted whole when the block ends. Other text in the block
that is no call list is kept in ``text_in_tool_call_block``; a block the output never closes is noted
(``tool_call_block_not_closed``).
"""

from __future__ import annotations

from typing import Any, Sequence

from toolwire.families.lfm25 import LFM25, MARKERS

from .engine.json_arguments import call_object_bounds, worse_status
from .engine.json_repair import call_object_arguments, element_texts
from .engine.lexer import MarkerScanner
from .engine.safe_json import loads
from .engine.pythonic import JSON, CallListReader, PythonicDialect, is_name_start
from .engine.steps import StepParser
from .engine.stop_tokens import TrailingStopToken


DIALECT = PythonicDialect("lfm25", raw_quotes="'\"", dict_mode=JSON)
"""How LFM2.5's calls write values: strings raw between quotes, dicts as JSON."""

THINK_OPEN, THINK_CLOSE = MARKERS.THINK_OPEN, MARKERS.THINK_CLOSE
CALL_OPEN, CALL_CLOSE = MARKERS.CALL_OPEN, MARKERS.CALL_CLOSE
_CONTENT = MarkerScanner((CALL_OPEN, THINK_CLOSE))
_REASONING = MarkerScanner((THINK_CLOSE, CALL_OPEN))
_JUNK = {False: MarkerScanner((CALL_CLOSE,)), True: MarkerScanner((CALL_CLOSE, THINK_CLOSE))}

_START, _TEXT, _BLOCK, _CALLS, _BLOCK_END, _BLOCK_JUNK, _LIST_OPEN = range(7)


class Lfm25Parser(TrailingStopToken, StepParser):
    """LFM2.5 output (see the module docstring)."""

    family = LFM25
    dialect = DIALECT

    def __init__(self, tools: Sequence[Any] | None = None, *, thinking: bool = False, **options: Any):
        super().__init__(tools, thinking=thinking, **options)
        self._mode = "reasoning" if thinking else "content"
        self._state = _START
        self._reader = CallListReader(self, DIALECT)
        self._junk: list[str] = []  # (at the start: the blanks read before the first other character)

    def _advance(self, final: bool) -> None:
        held = self._hold_stop_token(final)
        StepParser._advance(self, final)
        self._buf += held

    # ---- text
    def _start(self, buf: str, pos: int, final: bool) -> int | None:
        """The very start: ``<think>`` (after blanks, which are framing) opens the reasoning. Blanks are kept
        aside while they are all there is (each piece is looked at once), then dropped before ``<think>`` or
        given back as content."""
        i = self._skip_blanks(buf, pos)
        if i > pos and not final and (i == len(buf) or self._may_still_be(buf, i, THINK_OPEN)):
            self._junk.append(buf[pos:i])
            return i
        if self._marker_at(buf, i, THINK_OPEN):
            if self._mode == "reasoning":
                self._diag("duplicate_reasoning_open", "the prompt already opened the reasoning; the model wrote "
                           f"{THINK_OPEN} again at its start (dropped)", raw=THINK_OPEN)
            self._mode, self._state, self._junk = "reasoning", _TEXT, []
            return i + len(THINK_OPEN)
        if not final and self._may_still_be(buf, i, THINK_OPEN):
            return None
        self._state = _TEXT
        if self._junk:  # the blanks kept aside were text after all
            (self._emit_reasoning if self._mode == "reasoning" else self._emit_content)("".join(self._junk))
            self._junk = []
        return pos

    def _text(self, buf: str, pos: int, final: bool) -> int | None:
        reasoning = self._mode == "reasoning"
        hit = (_REASONING if reasoning else _CONTENT).scan(buf, pos, final=final, literal=self._tokens)
        (self._emit_reasoning if reasoning else self._emit_content)(buf[pos:hit.start])
        marker = hit.marker
        if marker is None:
            return None if hit.start == pos else hit.start
        if marker == CALL_OPEN:
            self._state = _BLOCK
        elif reasoning:
            self._mode = "content"
        else:
            self._diag("reasoning_close_in_content", f"{THINK_CLOSE} came with no reasoning open (dropped)",
                       raw=THINK_CLOSE)
        return hit.end

    # ---- the call block
    def _region(self) -> tuple[str, ...]:
        return (CALL_CLOSE, THINK_CLOSE) if self._mode == "reasoning" else (CALL_CLOSE,)

    def _block(self, buf: str, pos: int, final: bool) -> int | None:
        """After ``<|tool_call_start|>``: blanks (framing), then the call list's ``[`` (or a bare call)."""
        i = self._skip_blanks(buf, pos)
        if i == len(buf):
            if final:
                self._diag("tool_call_block_not_closed", f"the output ended inside {CALL_OPEN}", severity="info")
                self._state = _TEXT
            return None if i == pos else i
        reader = self._reader
        ch = buf[i]
        if ch == "[":  # a call list, or a JSON array of call objects: the first non-blank after it decides
            self._junk = ["["]
            self._state = _LIST_OPEN
            return i + 1
        if ch == "{":
            self._state = _BLOCK_JUNK  # read whole up to the block's end, then as JSON calls
            return i
        if is_name_start(ch):
            reader.start(source=self._mode, bracketed=False, region_end=self._region())
            reader.variant = ("missing_call_list_brackets", "the calls were written without the list's [ ]")
            self._state = _CALLS
            return i
        self._state = _BLOCK_END
        return i

    def _list_open(self, buf: str, pos: int, final: bool) -> int | None:
        """After the block's ``[``: blanks (kept aside, so each piece is looked at once), then ``{`` (a JSON array
        of call objects, read whole up to the block's end) or the call list's first call."""
        i = self._skip_blanks(buf, pos)
        if i == len(buf) and not final:
            self._junk.append(buf[pos:i])
            return None if i == pos else i
        if buf.startswith("{", i):
            self._junk.append(buf[pos:i])
            self._state = _BLOCK_JUNK
            return i
        self._junk = []  # "[" and blanks: the call list's framing
        self._reader.start(source=self._mode, bracketed=True, region_end=self._region())
        self._state = _CALLS
        return i

    def _calls(self, buf: str, pos: int, final: bool) -> int | None:
        reader = self._reader
        nxt = reader.read(buf, pos, final)
        if reader.done:
            self._state = _BLOCK_END
            return pos if nxt is None else nxt
        return nxt

    def _block_end(self, buf: str, pos: int, final: bool) -> int | None:
        """After the call list: blanks (framing), then ``<|tool_call_end|>``."""
        i = self._skip_blanks(buf, pos)
        for marker in self._region():
            if self._marker_at(buf, i, marker):
                if marker == THINK_CLOSE:  # the reasoning ended inside the block
                    self._diag("tool_call_block_not_closed", f"{THINK_CLOSE} came before {CALL_CLOSE}",
                               severity="info")
                    self._mode = "content"
                self._state = _TEXT
                return i + len(marker)
        if i == len(buf):
            if final:
                self._diag("tool_call_block_not_closed", f"the output ended before {CALL_CLOSE}", severity="info")
                self._state = _TEXT
            return None if i == pos else i
        if not final and any(self._may_still_be(buf, i, m) for m in self._region()):
            return None if i == pos else i
        self._state = _BLOCK_JUNK
        return i

    def _block_junk(self, buf: str, pos: int, final: bool) -> int | None:
        """Text in the block that is no call list, up to the block's end: kept in a diagnostic."""
        hit = _JUNK[self._mode == "reasoning"].scan(buf, pos, final=final, literal=self._tokens)
        self._junk.append(buf[pos:hit.start])
        if hit.marker is None:
            if final:
                self._flush_junk()
                self._diag("tool_call_block_not_closed", f"the output ended before {CALL_CLOSE}", severity="info")
                self._state = _TEXT
            return None if hit.start == pos else hit.start
        self._flush_junk()
        self._state = _BLOCK_END
        return hit.start

    def _flush_junk(self) -> None:
        text = "".join(self._junk)
        self._junk = []
        if text and not self._json_calls(text):
            self._diag("text_in_tool_call_block", f"text in {CALL_OPEN}…{CALL_CLOSE} that is no call list; kept "
                       "here", raw=text)

    def _json_calls(self, text: str) -> bool:
        """The block's text as JSON calls: one call object or an array of them, each with a string ``name`` and an
        object of ``arguments`` (or ``parameters``); emitted (``repaired``, ``json_tool_calls``) and True, else
        False with nothing emitted."""
        body = text.strip(" \t\r\n")
        if body[:1] not in ("{", "["):
            return False
        bounds = call_object_bounds(self.limits)
        try:
            value = loads(body, max_depth=bounds["max_depth"] + 1,
                          max_bytes=bounds["max_bytes"] * max(1, self.limits.max_calls))
        except ValueError:
            return False
        values = value if isinstance(value, list) else [value]
        calls = []
        for item in values:
            name = item.get("name") if isinstance(item, dict) else None
            args, key, repairs = call_object_arguments(item)
            if not isinstance(name, str) or not name.strip() or not isinstance(args, dict):
                return False
            calls.append((name, args, sorted(set(item) - {"name", key}), repairs))
        if not calls:
            return False
        raws = element_texts(body) if isinstance(value, list) else [body]
        for (name, args, extra, repairs), raw in zip(calls, raws):
            call = self._begin_call(name, source=self._mode)
            call.diag("json_tool_calls", f"the call was written as JSON in {CALL_OPEN}…{CALL_CLOSE} (LFM2's JSON "
                      "output mode), not as a Python call; read as the call", severity="warning")
            for code, message in repairs:
                call.diag(code, message, severity="warning")
            if extra:
                call.diag("unexpected_keys", f"the call object also has {extra}; ignored", severity="warning")
            for k, v in args.items():
                call.value(k, v)
            call.raw(raw)
            call.finish(worse_status(call.status, "repaired"))
        return True

    def _at_end(self) -> None:
        pass

    _STEPS = (_start, _text, _block, _calls, _block_end, _block_junk, _list_open)
    """The step of each state (_START, _TEXT, _BLOCK, _CALLS, _BLOCK_END, _BLOCK_JUNK, _LIST_OPEN)."""


__all__ = ["DIALECT", "MARKERS", "Lfm25Parser"]
