"""Stream parser for DeepSeek DSML output (V3.2 ``function_calls``, V4 ``tool_calls``, V4.1 ``calls``).

The grammar, after the generation prompt (``<think>`` already open when thinking)::

    [reasoning </think>] content ["\\n\\n" <｜DSML｜tool_calls>
        <｜DSML｜invoke name="NAME">
        <｜DSML｜parameter name="KEY" string="true|false">VALUE</｜DSML｜parameter> ...
        </｜DSML｜invoke> ...
    </｜DSML｜tool_calls>]

Rules (each one is tested):

* ``string="true"`` values are byte-exact and stream out as JSON string fragments while they arrive; only a
  possible prefix of the closing tag is held back. ``string="false"`` values are JSON (exact big integers,
  via :func:`toolwire.parsers.safe_json.loads_argument`, bounded by ``limits``: a value past them is kept
  as text and the call is rejected, ``too_large``). Without a ``string`` attribute a value is JSON if it
  parses, else the raw text; either way with a diagnostic.
* The ``\\n\\n`` before the block belongs to the block. Text after the block stays in content, with a
  diagnostic; a second block is parsed too.
* Output that ends inside an invoke or a parameter gives a ``truncated`` candidate; ``ParsedOutput.truncated``.
* A block written inside the reasoning is reported (``source="reasoning"``, diagnostic) and, unless
  ``promote_reasoning_calls``, is not promoted: its text stays in the reasoning as well.
* Malformed input never raises: junk between tags, duplicated or nested tags and broken attributes give
  diagnostics (``raw`` keeps the text) and the candidate's status says how usable it is.

Every character is looked at a bounded number of times (the shared :class:`MarkerScanner` plus headers of
bounded length), so streaming costs O(output) whatever the chunking, and one-shot parsing *is* feed + finish.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Sequence

from .base import CallBuilder, StreamParser
from .lexer import MarkerScanner
from .safe_json import error_code, loads_argument

MAX_HEADER = 512
"""Longest tag header (``NAME"`` or ``KEY" string="true"``) read before the tag counts as malformed."""

_HEADER_END = re.compile(r'[>\n<]')
_PARAM_TAG = re.compile(r'(?P<key>[^"]*)"(?:\s+string="(?P<string>[^"]*)")?\s*')
_RANK = {"proposed": 0, "repaired": 1, "rejected": 2}

# parser states
_REASONING, _CONTENT, _BLOCK, _INVOKE_HEADER, _INVOKE, _PARAM_HEADER, _VALUE, _AFTER_BLOCK = range(8)
_TEXT_STATES = (_REASONING, _CONTENT, _AFTER_BLOCK)


@dataclass(frozen=True)
class DsmlGrammar:
    """The markers of one DSML version, as the parser needs them (built from the family's marker table)."""

    block_open: str
    block_close: str
    invoke_open: str
    invoke_close: str
    param_open: str
    param_close: str
    think_close: str = "</think>"
    block_open_aliases: tuple[str, ...] = ()
    block_close_aliases: tuple[str, ...] = ()
    separator: str = "\n\n"
    _cache: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    @cached_property
    def opens(self) -> frozenset[str]:
        """Every accepted block opening, with and without the ``\\n\\n`` separator."""
        spellings = (self.block_open, *self.block_open_aliases)
        return frozenset(spellings + tuple(self.separator + s for s in spellings))

    @cached_property
    def closes(self) -> frozenset[str]:
        """Every accepted block closing."""
        return frozenset((self.block_close, *self.block_close_aliases))

    def scanner(self, state: int, in_reasoning: bool) -> MarkerScanner:
        """The scanner for the markers that mean something in ``state`` (cached)."""
        key = (state, in_reasoning)
        found = self._cache.get(key)
        if found is None:
            think = {self.think_close} if in_reasoning else set()
            markers = {
                _REASONING: self.opens | {self.think_close},
                _CONTENT: self.opens,
                _AFTER_BLOCK: self.opens,
                _BLOCK: {self.invoke_open} | self.closes | self.opens | think,
                _INVOKE: {self.param_open, self.invoke_close, self.invoke_open} | self.closes | think,
                _VALUE: {self.param_close} | think,
            }[state]
            found = self._cache[key] = MarkerScanner(markers)
        return found


class DsmlStreamParser(StreamParser):
    """Incremental DSML parser. Use through ``toolwire.get_format("deepseek_v4").stream(tools)``."""

    grammar: DsmlGrammar

    @classmethod
    def for_grammar(cls, grammar: DsmlGrammar, name: str = "DsmlStreamParser") -> type["DsmlStreamParser"]:
        """A parser class bound to one version's markers (what a Format's ``parser_class`` is)."""
        return type(name, (cls,), {"grammar": grammar, "__doc__": cls.__doc__})

    def __init__(self, tools: Sequence[Any] | None = None, *, thinking: bool = False, **options: Any):
        super().__init__(tools, thinking=thinking, **options)
        self._state = _REASONING if thinking else _CONTENT
        self._in_reasoning = False  # the open block was written inside the reasoning
        self._call: CallBuilder | None = None
        self._key: str | None = None
        self._mode = ""  # "string" | "json" | "guess"
        self._value: list[str] = []
        self._text = ""
        self._pos = 0
        self._header_checked = 0
        self._junk: list[str] = []
        self._block_had_call = False
        self._after_noted = False

    # ------------------------------------------------------------------ driving loop
    def _advance(self, final: bool) -> None:
        self._text, self._pos = self._buf, 0
        steps = _STEPS
        while steps[self._state](self, final):
            pass
        self._buf = self._text[self._pos:]
        if final:
            self._end_of_output()

    # ------------------------------------------------------------------ helpers
    def _scan(self, final: bool):
        return self.grammar.scanner(self._state, self._in_reasoning).scan(self._text, self._pos, final=final,
                                                                         literal=self._tokens)

    def _mirror(self, piece: str) -> None:
        """Block text written inside the reasoning stays reasoning unless its calls are promoted."""
        if self._in_reasoning and not self.promote_reasoning_calls:
            self._emit_reasoning(piece)

    def _structure(self, piece: str) -> None:
        """Consumed block text: the call's raw text while a call is open, and the reasoning mirror."""
        if piece:
            if self._call is not None:
                self._call.raw(piece)
            self._mirror(piece)

    def _mark(self, status: str) -> None:
        """Lower the open call's status to ``status`` (proposed < repaired < rejected)."""
        call = self._call
        if call is not None and _RANK.get(call.status, 3) < _RANK[status]:
            call.status = status

    def _gap(self, piece: str) -> None:
        """Text between tags: whitespace is layout, anything else is junk (kept from its first non-space)."""
        if not piece:
            return
        self._structure(piece)
        if not self._junk:
            piece = piece.lstrip()
        if piece:
            self._junk.append(piece)

    def _flush_junk(self) -> None:
        """One diagnostic per run of junk, whatever the chunking."""
        if not self._junk:
            return
        junk, self._junk = "".join(self._junk), []
        if self._call is not None:
            self._call.diag("junk_in_invoke", "text between parameters was ignored", raw=junk)
            self._mark("repaired")
        else:
            self._diag("junk_in_block", "text between invokes was ignored", raw=junk)

    def _unmatched(self, hit, final: bool, emit) -> bool:
        """No marker found: ``emit`` the safe text. At the end of output an unfinished marker is reported
        instead of emitted: inside the block any tag prefix; in free text ``<`` plus at least one more
        character (a lone ``<`` there is text). Returns False (wait for more text)."""
        text, pos, end = self._text, self._pos, hit.start
        in_text = self._state in _TEXT_STATES
        if final:
            held = self.grammar.scanner(self._state, self._in_reasoning).scan(text, pos, literal=self._tokens).start
            tail = text[held:].lstrip("\n")
            if tail[:1] == "<" and (len(tail) >= 2 or not in_text):
                end = held
        emit(text[pos:end])
        if end < len(text) and final:
            if not in_text:
                self._structure(text[end:])
            self._diag("truncated_marker", "the output ended inside a marker", raw=text[end:])
            self._truncated = True
            end = len(text)
        self._pos = end
        return False

    # ------------------------------------------------------------------ outside the block
    def _text_state(self, final: bool, emit) -> bool:
        hit = self._scan(final)
        if hit.marker is None:
            return self._unmatched(hit, final, emit)
        emit(self._text[self._pos:hit.start])
        self._pos = hit.end
        if hit.marker == self.grammar.think_close:
            self._state = _CONTENT
        else:
            self._open_block(hit.marker)
        return True

    def _reasoning(self, final: bool) -> bool:
        return self._text_state(final, self._emit_reasoning)

    def _content(self, final: bool) -> bool:
        return self._text_state(final, self._emit_content)

    def _after_block(self, final: bool) -> bool:
        return self._text_state(final, self._emit_after_block)

    def _emit_after_block(self, piece: str) -> None:
        if piece and not self._after_noted:
            self._after_noted = True
            self._diag("text_after_block", "text after the tool-call block was kept in the content")
        self._emit_content(piece)

    def _open_block(self, marker: str) -> None:
        g = self.grammar
        self._in_reasoning = self._state == _REASONING
        self._mirror(marker)
        spelling = marker[len(g.separator):] if marker.startswith(g.separator) else marker
        if spelling != g.block_open:
            self._diag("noncanonical_marker", f"block opened as {spelling!r}, expected {g.block_open!r}",
                       raw=spelling)
        if spelling == marker:
            self._diag("missing_block_separator", "the tool-call block is not preceded by a blank line",
                       severity="info")
        if self._state == _AFTER_BLOCK:
            self._diag("multiple_blocks", "another tool-call block follows the first", severity="info")
        self._block_had_call = False
        self._after_noted = False
        self._state = _BLOCK

    def _close_block(self, marker: str) -> None:
        g = self.grammar
        self._mirror(marker)
        if marker != g.block_close:
            self._diag("noncanonical_marker", f"block closed as {marker!r}, expected {g.block_close!r}", raw=marker)
        if not self._block_had_call:
            self._diag("empty_block", "the tool-call block holds no invoke", severity="info")
        self._state = _REASONING if self._in_reasoning else _AFTER_BLOCK
        self._in_reasoning = False

    def _reasoning_closed_in_block(self) -> None:
        """``</think>`` inside a block written in the reasoning: the reasoning (and the block) end there."""
        if self._call is not None:
            self._end_value(complete=False)
            self._call.diag("unclosed_invoke", "the reasoning ended before the invoke was closed")
            self._mark("repaired")
            self._finish_call(None)
        self._diag("unclosed_block", "the reasoning ended inside a tool-call block")
        self._in_reasoning = False
        self._state = _CONTENT

    # ------------------------------------------------------------------ block and invoke
    def _next_tag(self, final: bool) -> str | None:
        """Between tags: consume the gap up to the next marker and return it (None: wait for more text)."""
        hit = self._scan(final)
        if hit.marker is None:
            return self._unmatched(hit, final, self._gap) or None
        self._gap(self._text[self._pos:hit.start])
        self._flush_junk()
        self._pos = hit.end
        return hit.marker

    def _block(self, final: bool) -> bool:
        g = self.grammar
        marker = self._next_tag(final)
        if marker is None:
            return False
        if marker == g.invoke_open:
            self._mirror(marker)
            self._state, self._header_checked = _INVOKE_HEADER, 0
        elif marker in g.closes:
            self._close_block(marker)
        elif marker == g.think_close:
            self._reasoning_closed_in_block()
        else:  # a block opening inside the block
            self._mirror(marker)
            self._diag("duplicate_marker", "the tool-call block was opened again inside itself", raw=marker)
        return True

    def _header(self, final: bool) -> tuple[str, str | None] | None:
        """Read a tag header up to ``>``, or up to a ``<`` or newline that ends a broken one (not consumed).
        ``(header, None)``: no end within :data:`MAX_HEADER` or before the output ended. None: wait."""
        text, pos = self._text, self._pos
        m = _HEADER_END.search(text, pos + self._header_checked, pos + MAX_HEADER + 1)
        if m is not None:
            header, end = text[pos:m.start()], m.group()
        elif len(text) - pos > MAX_HEADER or final:
            header, end = text[pos:pos + MAX_HEADER + 1], None
        else:
            self._header_checked = len(text) - pos
            return None
        self._pos = pos + len(header) + (end == ">")
        return header, end

    def _invoke_header(self, final: bool) -> bool:
        start = self._pos
        got = self._header(final)
        if got is None:
            return False
        header, end = got
        self._mirror(self._text[start:self._pos])
        name = header.split('"', 1)[0]
        call = self._call = self._begin_call(name, source="reasoning" if self._in_reasoning else "content")
        self._block_had_call = True
        self._state = _INVOKE
        if end is None and final and len(header) <= MAX_HEADER:
            return True  # cut off inside the tag: the end of output marks the call truncated
        if end is None:
            call.diag("malformed_tag", "the invoke tag does not end", raw=header)
            self._mark("rejected")
        elif end != ">" or header != name + '"':
            call.diag("malformed_tag", "the invoke tag is malformed; its name was kept", raw=header)
            self._mark("repaired")
        if not name:
            call.diag("empty_name", "the invoke has no tool name", severity="error")
            self._mark("rejected")
        return True

    def _invoke(self, final: bool) -> bool:
        g = self.grammar
        marker = self._next_tag(final)
        if marker is None:
            return False
        if marker == g.param_open:
            self._structure(marker)
            self._state, self._header_checked = _PARAM_HEADER, 0
        elif marker == g.invoke_close:
            self._mirror(marker)
            self._finish_call(None)
            self._state = _BLOCK
        elif marker == g.think_close:
            self._reasoning_closed_in_block()
        else:  # a new invoke, or the block's end, while this invoke is open
            self._call.diag("unclosed_invoke", f"{marker!r} came before the invoke was closed")
            self._mark("repaired")
            self._finish_call(None)
            if marker == g.invoke_open:
                self._mirror(marker)
                self._state, self._header_checked = _INVOKE_HEADER, 0
            else:
                self._close_block(marker)
        return True

    def _finish_call(self, status: str | None) -> None:
        self._call.finish(status)
        self._call = None

    # ------------------------------------------------------------------ parameters
    def _param_header(self, final: bool) -> bool:
        start = self._pos
        got = self._header(final)
        if got is None:
            return False
        header, end = got
        self._structure(self._text[start:self._pos])
        call = self._call
        self._state = _INVOKE
        if end != ">":
            if not (end is None and final and len(header) <= MAX_HEADER):
                call.diag("malformed_tag", "a parameter tag does not end; the parameter was dropped", raw=header)
                self._mark("rejected")
            return True
        m = _PARAM_TAG.fullmatch(header)
        string = m.group("string") if m else None
        self._key = m.group("key") if m else header.split('"', 1)[0]
        if m is None:
            call.diag("malformed_tag", "the parameter tag is malformed; its value is read as untyped", raw=header)
        elif string is None:
            call.diag("missing_string_attribute", f"parameter {self._key!r} has no string attribute")
        elif string not in ("true", "false"):
            call.diag("invalid_string_attribute", f'parameter {self._key!r} has string="{string}"')
        if string == "true":
            self._mode = "string"
            call.begin_string(self._key)
        else:
            self._mode = "json" if string == "false" else "guess"
            self._value = []
            if self._mode == "guess":
                self._mark("repaired")
        self._state = _VALUE
        return True

    def _value_piece(self, piece: str) -> None:
        if piece:
            self._structure(piece)
            if self._mode == "string":
                self._call.string_piece(piece)
            else:
                self._value.append(piece)

    def _param_value(self, final: bool) -> bool:
        hit = self._scan(final)
        if hit.marker is None:
            return self._unmatched(hit, final, self._value_piece)
        self._value_piece(self._text[self._pos:hit.start])
        self._pos = hit.end
        if hit.marker == self.grammar.think_close:
            self._reasoning_closed_in_block()
            return True
        self._structure(hit.marker)
        self._end_value(complete=True)
        self._state = _INVOKE
        return True

    def _end_value(self, *, complete: bool) -> None:
        """Store the open parameter's value (an unfinished JSON value goes to a diagnostic instead)."""
        call, key = self._call, self._key
        if key is None:
            return
        self._key = None
        if self._mode == "string":
            value = call.end_string()
            if complete and _DSML_TOKEN in value:
                call.diag("markup_in_value", f"the value of {key!r} contains DSML markup", severity="info")
            return
        raw, self._value = "".join(self._value), []
        if not complete:
            call.diag("truncated_value", f"the value of {key!r} was cut off", raw=raw)
            return
        limits = self.limits
        try:
            call.value(key, loads_argument(raw, max_depth=limits.max_depth, max_bytes=limits.max_argument_bytes))
        except ValueError as exc:
            call.value(key, raw)
            if error_code(exc) == "too_large":
                call.reject_too_large(f"argument {key!r}: {exc}; kept as text")
            elif self._mode == "json":
                call.diag("invalid_json_value", f'the string="false" value of {key!r} is not JSON ({exc}); kept '
                          "as text", raw=raw)
                self._mark("repaired")

    # ------------------------------------------------------------------ end of output
    def _end_of_output(self) -> None:
        self._flush_junk()
        state = self._state
        if state == _REASONING:
            self._diag("unclosed_reasoning", "the output ended inside the reasoning")
            self._truncated = True
        elif state not in (_CONTENT, _AFTER_BLOCK):
            if self._call is not None:
                self._end_value(complete=False)
                self._call.diag("truncated_call", "the output ended inside the invoke")
                self._finish_call("truncated")
            else:
                self._diag("unclosed_block", "the output ended inside the tool-call block")
            self._truncated = True


_DSML_TOKEN = "｜DSML｜"

_STEPS = {
    _REASONING: DsmlStreamParser._reasoning,
    _CONTENT: DsmlStreamParser._content,
    _AFTER_BLOCK: DsmlStreamParser._after_block,
    _BLOCK: DsmlStreamParser._block,
    _INVOKE_HEADER: DsmlStreamParser._invoke_header,
    _INVOKE: DsmlStreamParser._invoke,
    _PARAM_HEADER: DsmlStreamParser._param_header,
    _VALUE: DsmlStreamParser._param_value,
}
