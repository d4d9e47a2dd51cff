"""Stream parser for DeepSeek DSML output (V3.2 ``function_calls``, V4 ``tool_calls``, V4.1 ``calls``), the engine
of every DSML-style family: the namespace token is data (:func:`dsml_grammar`), so GigaChat 3.5's ``｜GCML｜`` calls
(:mod:`toolwire.parsers.gigachat`) are read by the same states.

The grammar, after the generation prompt (``<think>`` already open when thinking)::

    [reasoning </think>] content ["\\n\\n" <｜DSML｜tool_calls>
        <｜DSML｜invoke name="NAME">
        <｜DSML｜parameter name="KEY" string="true|false">VALUE</｜DSML｜parameter> ...
        </｜DSML｜invoke> ...
    </｜DSML｜tool_calls>]

Rules (each one is tested):

* ``string="true"`` values are byte-exact and stream out as JSON string fragments while they arrive; only a
  possible prefix of the closing tag is held back. ``string="false"`` values are JSON (exact big integers,
  via :func:`toolwire.parsers.engine.safe_json.loads_argument`, bounded by ``limits``: a value past them is kept
  as text and the call is rejected, ``too_large``). Without a ``string`` attribute a value is JSON if it
  parses, else the raw text; either way with a diagnostic.
* The ``\\n\\n`` before the block belongs to the block. Text after the block stays in content, with a
  diagnostic; a second block is parsed too.
* Output that ends inside an invoke or a parameter gives a ``truncated`` candidate; ``ParsedOutput.truncated``.
* A block written inside the reasoning is reported (``source="reasoning"``, diagnostic) and, unless
  ``promote_reasoning_calls``, is not promoted: its text stays in the reasoning as well.
* Malformed input never raises: junk between tags (any whitespace but ASCII layout counts as junk, so
  U+3000 is kept), duplicated or nested tags and broken attributes give diagnostics (``raw`` keeps the text)
  and the candidate's status says how usable it is.
* Real-world variants (docs/variants.md, "DSML and harmony"), each ``repaired`` with a diagnostic naming it:
  another version's block (``other_version_block``); a parameter closed by the next parameter tag or by
  ``</invoke>`` (``implicit_parameter_close``); and, fail-closed (only when the first invoke names a declared
  tool, else the text stays content with the diagnostic), DSML tokens spelled ``｜｜DSML｜｜``, ``‖DSML‖`` or
  ``|DSML|`` (``marker_spelling_variant``) and an invoke without its block (``missing_invoke_block``).
* Start state: ``thinking=True`` means the prompt opened ``<think>``; a repeated ``<think>`` at its very start
  is dropped (``duplicate_reasoning_open``). ``</think>`` in content is dropped with
  ``reasoning_close_in_content``; ``<｜end▁of▁sentence｜>`` in free text is stripped (``stop_token_in_output``).
* A call starts once its name's closing quote is read: output ending inside the name gives
  ``truncated_call_header`` and no call.
* Per family (:class:`DsmlGrammar`): ``after_think``, framing written after ``</think>`` and dropped (GigaChat's
  ``\n\n``; DeepSeek has none); ``separator_joins``, the block's ``\n\n`` only joins it to text before it: it is
  taken with the block when present, and a block without it (opening the answer, or glued to text) is read without
  a note (GigaChat; DeepSeek's encoders always write it, so its absence is ``missing_block_separator``).

Every character is looked at a bounded number of times (the shared :class:`MarkerScanner` plus headers of
bounded length), so streaming costs O(output) whatever the chunking, and one-shot parsing *is* feed + finish.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import IntEnum
from functools import cached_property
from typing import Any, ClassVar, Sequence

from toolwire.family import Family
from toolwire.markers import Marker

from .call_builder import CallBuilder
from .drift import DRIFT_CODES, DeclaredTools, Drift, refused_diagnostic, register
from .stream import StreamParser
from .lexer import MarkerScanner
from .safe_json import error_code, loads, loads_argument
from .xml_drift import JSON_BODY

WRAPPED_ARGUMENTS = "drift_wrapped_arguments"
"""DSML: the arguments written as one object under a wrapper parameter the tool does not declare
(``<｜DSML｜parameter name="arguments" …>{…}</｜DSML｜parameter>``, or a JSON body ``{"arguments": {…}}``)."""
register(Drift.BORROWED_SHAPE, WRAPPED_ARGUMENTS)
BARE_PARAMETER_TAG = "drift_bare_parameter_tag"
"""DSML: a parameter opened with ``<parameter name="KEY" …>`` (the DSML token lost) between an invoke's parameters."""
register(Drift.MISSING_MARKERS, BARE_PARAMETER_TAG)
WRAPPER_KEYS = frozenset(("arguments", "input", "args", "parameters"))
"""The wrapper names seen in real DSML output (``arguments``, ``input``) and their JSON-call kin."""

MAX_HEADER = 512
"""Longest tag header (``NAME"`` or ``KEY" string="true"``) read before the tag counts as malformed."""

_HEADER_END = re.compile(r'[>\n<]')
_PARAM_TAG = re.compile(r'(?P<key>[^"]*)"(?:[ \t\n\r]+string="(?P<string>[^"]*)")?[ \t\n\r]*')
_LAYOUT = " \t\n\r"
"""The only whitespace that is layout between tags; any other (U+3000, U+00A0, ``\\x0b``...) is junk, kept."""
_LAYOUT_RUN = re.compile(r"[ \t\n\r]*")
_RANK = {"proposed": 0, "repaired": 1, "rejected": 2}

class DsmlState(IntEnum):
    """Where a DSML stream parser is (the index of its step in ``_STEPS``)."""

    REASONING = 0
    CONTENT = 1
    BLOCK = 2           # inside <｜DSML｜tool_calls>, between invokes
    INVOKE_HEADER = 3   # the tool name of <｜DSML｜invoke name="...">
    INVOKE = 4          # inside an invoke, between parameters
    PARAM_HEADER = 5    # the attributes of <｜DSML｜parameter name="..." string="...">
    VALUE = 6           # a parameter's value
    AFTER_BLOCK = 7     # content after the block
    REASONING_START = 8  # the start of reasoning the prompt opened
    SKIP = 9            # the rest of a call past Limits.max_calls
    AFTER_THINK = 10    # the framing after </think> (GigaChat drops its "\n\n")


(_REASONING, _CONTENT, _BLOCK, _INVOKE_HEADER, _INVOKE, _PARAM_HEADER, _VALUE, _AFTER_BLOCK, _REASONING_START,
 _SKIP, _AFTER_THINK) = DsmlState
_TEXT_STATES = (_REASONING, _CONTENT, _AFTER_BLOCK)
_SCANNING_STATES = (_REASONING, _CONTENT, _AFTER_BLOCK, _BLOCK, _INVOKE, _VALUE, _SKIP)


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
    think_open: str = "<think>"
    stop_tokens: tuple[str, ...] = ("<｜end▁of▁sentence｜>",)
    other_version_blocks: tuple[tuple[str, str], ...] = ()
    """``(open, close)`` of the other DSML versions' blocks in this version's DSML token: accepted, repaired."""
    spelling_variants: tuple[tuple[str, str], ...] = ()
    variant_code: str = "marker_spelling_variant"
    """The code of a call read through a ``spelling_variants`` marker (GigaChat's namespace-less markup, readable from
    text only, takes ``missing_call_wrapper``, the text-only code)."""
    """``(variant, canonical)`` for every marker spelled with a DSML token seen in the wild
    (``｜｜DSML｜｜``, ``‖DSML‖``, ``|DSML|``)."""
    namespace: str = "｜DSML｜"
    """The namespace token of the markup (a value that spells it gets the ``markup_in_value`` note)."""
    after_think: str = ""
    """Framing the format writes after the reasoning closer, dropped from the content (GigaChat: ``\n\n``)."""
    separator_joins: bool = False
    """The ``separator`` only joins the block to text before it (taken with the block when present; no
    ``missing_block_separator`` note without it): a block that opens the answer has none."""
    drift_recoveries: bool = False
    """Whether the issue-33 recoveries seen in DeepSeek's output are read (``drift_json_body``,
    ``drift_wrapped_arguments``, ``drift_bare_parameter_tag``): DeepSeek's DSML only, where the reports are."""
    bare_param_open: str = ""
    """A parameter tag written without the namespace token (``<parameter name="``), seen in real DeepSeek output
    between an invoke's parameters: read there, fail-closed (``drift_bare_parameter_tag``); "" for none."""
    _cache: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    @cached_property
    def opens(self) -> frozenset[str]:
        """Every accepted block opening, with and without the ``\\n\\n`` separator."""
        spellings = (self.block_open, *self.block_open_aliases, *(o for o, _ in self.other_version_blocks))
        return frozenset(spellings + tuple(self.separator + s for s in spellings))

    @cached_property
    def closes(self) -> frozenset[str]:
        """Every accepted block closing."""
        return frozenset((self.block_close, *self.block_close_aliases, *(c for _, c in self.other_version_blocks)))

    @cached_property
    def canonical(self) -> dict[str, str]:
        """A variant spelling -> the marker it stands for (also with the separator, for block openings)."""
        out = dict(self.spelling_variants)
        for variant, canon in self.spelling_variants:
            if canon in self.opens:
                out[self.separator + variant] = self.separator + canon
        return out

    @cached_property
    def other_version_opens(self) -> frozenset[str]:
        """The other versions' block openings."""
        return frozenset(o for o, _ in self.other_version_blocks)

    def _with_variants(self, markers: set[str]) -> set[str]:
        return markers | {v for v, c in self.canonical.items() if c in markers}

    @cached_property
    def scanners(self) -> tuple[tuple[MarkerScanner | None, ...], tuple[MarkerScanner | None, ...]]:
        """``scanners[in_reasoning][state]``: :meth:`scanner` for every state that scans (None for the others),
        built once, so a step finds its scanner by two index lookups."""
        return tuple(tuple(self.scanner(state, bool(r)) if state in _SCANNING_STATES else None
                           for state in DsmlState) for r in (0, 1))

    def scanner(self, state: int, in_reasoning: bool) -> MarkerScanner:
        """The scanner for the markers that mean something in ``state`` (cached)."""
        key = (state, in_reasoning)
        found = self._cache.get(key)
        if found is None:
            think = {self.think_close} if in_reasoning else set()
            text = {self.think_close, *self.stop_tokens}
            markers = {
                _REASONING: self.opens | text,
                _CONTENT: self._with_variants(self.opens | {self.invoke_open}) | text,
                _AFTER_BLOCK: self._with_variants(self.opens | {self.invoke_open}) | text,
                _BLOCK: self._with_variants({self.invoke_open} | self.closes | self.opens) | think,
                _INVOKE: self._with_variants({self.param_open, self.invoke_close, self.invoke_open} | self.closes)
                | think | ({self.bare_param_open} if self.bare_param_open else set()),
                _VALUE: self._with_variants({self.param_close, self.param_open, self.invoke_close}) | think,
                _SKIP: self._with_variants({self.invoke_close, self.invoke_open} | self.closes) | think,
            }[state]
            found = self._cache[key] = MarkerScanner(markers)
        return found


DSML = "｜DSML｜"
DSML_VARIANTS = ("｜｜DSML｜｜", "‖DSML‖", "|DSML|")
"""DSML token spellings seen in real output; the parser accepts them fail-closed (``marker_spelling_variant``)."""
_TAG_ROLES = (Marker.TOOL_CALLS_OPEN, Marker.TOOL_CALLS_CLOSE, Marker.INVOKE_OPEN, Marker.INVOKE_CLOSE,
              Marker.PARAMETER_OPEN, Marker.PARAMETER_CLOSE)
_BLOCK_NAMES = ("function_calls", "tool_calls")
_V32_V4_OPENS = tuple(f"<{DSML}{b}>" for b in _BLOCK_NAMES)


def dsml_grammar(family: Family, *, namespace: str = DSML, variants: tuple[str, ...] = DSML_VARIANTS,
                 block_aliases: tuple[str, ...] = (), block_close_aliases: tuple[str, ...] = (),
                 after_think: str = "", separator_joins: bool = False) -> DsmlGrammar:
    """The parser's view of a DSML-style family's markers (its declaration's table), with the spellings it accepts
    beyond them: ``block_aliases`` / ``block_close_aliases``, the V3.2 and V4 blocks in each other's place (DSML
    only), and every marker with its ``namespace`` token spelled as one of ``variants`` (DSML's seen in the wild;
    none for a namespace without such evidence). ``after_think`` and ``separator_joins``: see :class:`DsmlGrammar`."""
    m = family.markers
    return DsmlGrammar(
        block_open=m.TOOL_CALLS_OPEN, block_close=m.TOOL_CALLS_CLOSE, invoke_open=m.INVOKE_OPEN,
        invoke_close=m.INVOKE_CLOSE, param_open=m.PARAMETER_OPEN, param_close=m.PARAMETER_CLOSE,
        think_close=m.THINK_CLOSE, think_open=m.THINK_OPEN, stop_tokens=family.stop_tokens,
        block_open_aliases=block_aliases, block_close_aliases=block_close_aliases,
        other_version_blocks=tuple((f"<{DSML}{b}>", f"</{DSML}{b}>") for b in _BLOCK_NAMES
                                   if m.TOOL_CALLS_OPEN in _V32_V4_OPENS and f"<{DSML}{b}>" != m.TOOL_CALLS_OPEN),
        spelling_variants=tuple((m[r].replace(namespace, v), m[r]) for r in _TAG_ROLES for v in variants
                                if namespace in m[r]),
        namespace=namespace, after_think=after_think, separator_joins=separator_joins,
        drift_recoveries=namespace == DSML, bare_param_open='<parameter name="' if namespace == DSML else "",
    )


class DsmlStreamParser(StreamParser):
    """Incremental DSML parser (the engine; each DSML family's parser class sets ``family`` and ``grammar``).
    Use through ``toolwire.get_format("deepseek_v4").stream(tools)``."""

    grammar: ClassVar[DsmlGrammar]

    def __init__(self, tools: Sequence[Any] | None = None, *, thinking: bool = False, **options: Any):
        super().__init__(tools, thinking=thinking, **options)
        self._state = _REASONING_START if thinking else _CONTENT
        self._at_start = not thinking  # content from the start: a <think> written first opens reasoning
        self._in_reasoning = False  # the open block was written inside the reasoning
        self._call: CallBuilder | None = None
        self._key: str | None = None
        self._mode = ""  # "string" | "json" | "guess" | "wrap:<one of those>" (a possible wrapper, see _wrapper)
        self._declared = DeclaredTools.of(tools)  # None: no tools, no drift recovery
        self._value: list[str] = []
        self._text = ""
        self._pos = 0
        self._header_checked = 0
        self._junk: list[str] = []
        self._block_had_call = False
        self._after_noted = False
        # a variant every call of the open block gets (repaired, diagnosed): "" or its diagnostic code
        self._block_note = ""
        # a variant written where the shape alone proves no call (a bare invoke, a variant spelling), pending
        # until its first invoke's name is read: [anchor, resume, marker, codes, text state]; the buffer is
        # kept from ``anchor`` (just after the marker) so that the text can go back to content
        self._tentative: list | None = None
        self._scanners = self.grammar.scanners  # [in_reasoning][state]
        # while a string="true" value of a block in the content is open: its scanner's ``find`` (see _advance)
        self._string_find = None

    # ------------------------------------------------------------------ driving loop
    def _advance(self, final: bool) -> None:
        find = self._string_find
        if find is not None and not final and find(self._buf) is None:
            # the usual delta of a streamed string value: no marker and no prefix of one, so all of it is the
            # value's (what _param_value and _value_piece do for it, without their two frames)
            call, piece, self._buf = self._call, self._buf, ""
            if piece:
                call.raw_parts.append(piece)
                call.string_piece(piece)
            return
        t = self._tentative
        self._text, self._pos = self._buf, t[1] if t is not None else 0
        steps = _STEPS
        while True:
            while steps[self._state](self, final):
                pass
            if not (final and self._tentative is not None):
                break
            self._rollback()
        t = self._tentative
        if t is None:
            self._buf = self._text[self._pos:]
        else:
            self._buf = self._text[t[0]:]
            t[0], t[1] = 0, self._pos - t[0]
        if final:
            self._end_of_output()

    # ------------------------------------------------------------------ helpers
    def _scan(self, final: bool):
        return self._scanners[self._in_reasoning][self._state].scan(self._text, self._pos, final=final,
                                                                         literal=self._tokens)

    def _mirror(self, piece: str) -> None:
        """Block text written inside the reasoning stays reasoning unless its calls are promoted."""
        if self._in_reasoning and not self.promote_reasoning_calls:
            self._emit_reasoning_markup(piece)

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

    def _note_call(self, code: str, message: str, raw: str | None = None) -> None:
        """An accepted variant on the open call: ``repaired`` and one diagnostic per code."""
        call = self._call
        if not any(d.code == code for d in call.diagnostics):
            call.diag(code, message, raw=raw)
        self._mark("repaired")

    def _variant(self, raw: str) -> None:
        """A marker spelled with a variant DSML token, inside a block."""
        t, code = self._tentative, self.grammar.variant_code
        if t is not None:
            if code not in t[3]:
                t[3] += (code,)
        elif self._call is not None:
            self._note_call(code, f"marker spelled {raw!r}", raw=raw)
        elif self._block_note != code:  # (a variant block was diagnosed when accepted)
            self._diag(code, f"marker spelled {raw!r}; accepted", raw=raw)

    def _gap(self, piece: str) -> None:
        """Text between tags: ASCII whitespace is layout, anything else is junk (kept from its first
        non-layout character, so U+3000 or U+00A0 between tags is never lost)."""
        if not piece:
            return
        self._structure(piece)
        if not self._junk:
            piece = piece.lstrip(_LAYOUT)
        if piece:
            self._junk.append(piece)

    def _flush_junk(self) -> None:
        """One diagnostic per run of junk, whatever the chunking."""
        if not self._junk:
            return
        junk, self._junk = "".join(self._junk), []
        if self._call is not None:
            if self._json_body(junk):
                return
            self._call.diag("junk_in_invoke", "text between parameters was ignored", raw=junk)
            self._mark("repaired")
        else:
            self._diag("junk_in_block", "text between invokes was ignored", raw=junk)

    def _unmatched(self, hit, final: bool, emit) -> bool:
        """No marker found: ``emit`` the safe text. At the end of output an unfinished marker is reported
        instead of emitted: inside the block any tag prefix; in free text ``<`` plus at least one more
        character (a lone ``<`` there is text). Returns False (wait for more text)."""
        text, pos, end = self._text, self._pos, hit.start
        if not final:  # the usual case: a delta of text, a possible marker prefix held back
            emit(text[pos:end])
            self._pos = end
            return False
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

    # ------------------------------------------------------------------ tentative variants (fail-closed)
    def _begin_tentative(self, hit, codes: tuple[str, ...]) -> None:
        self._tentative = [hit.end, hit.end, hit.marker, codes, self._state]
        self._in_reasoning = False
        self._block_had_call = False
        self._header_checked = 0

    def _rollback(self) -> None:
        """The variant's first invoke names no declared tool (or never came): its text is content."""
        anchor, _, marker, codes, state = self._tentative
        self._tentative = None
        self._junk = []
        self._block_note = ""
        self._diag(codes[-1], f"{marker!r} is not followed by an invoke of a declared tool; kept as content",
                   raw=marker)
        self._state = state
        (self._emit_after_block if state == _AFTER_BLOCK else self._emit_content)(marker)
        self._pos = anchor

    def _commit(self) -> tuple[str, ...]:
        """The variant's first invoke names a declared tool: accepted. Returns the variant codes."""
        marker, codes = self._tentative[2], self._tentative[3]
        self._tentative = None
        for code in codes:
            self._diag(code, f"accepted {marker!r} ({code}): the invoke names a declared tool", raw=marker)
        return codes

    # ------------------------------------------------------------------ outside the block
    def _reasoning_start(self, final: bool) -> bool:
        """The very start of reasoning the prompt opened: a repeated ``<think>`` (leading layout allowed) is
        dropped, ``duplicate_reasoning_open``."""
        text, pos = self._text, self._pos
        end = _LAYOUT_RUN.match(text, pos).end()
        self._emit_reasoning(text[pos:end])
        self._pos = end
        opener = self.grammar.think_open
        rest = text[end:end + len(opener)]
        if not final and len(rest) < len(opener) and opener.startswith(rest):
            return False
        if rest == opener and self._marker_at(text, end, opener):
            self._diag("duplicate_reasoning_open", "the prompt already opened the reasoning; the repeated opener "
                       "was dropped", raw=opener)
            self._pos = end + len(opener)
        self._state = _REASONING
        return True

    def _text_state(self, final: bool, emit) -> bool:
        hit = self._scan(final)
        if hit.marker is None:
            return self._unmatched(hit, final, emit)
        emit(self._text[self._pos:hit.start])
        self._pos = hit.end
        g, marker = self.grammar, hit.marker
        if marker == g.think_close:
            if self._state == _REASONING:
                self._state = _AFTER_THINK if g.after_think else _CONTENT
            else:
                self._diag("reasoning_close_in_content", "a reasoning closer in the content (no reasoning was "
                           "open); dropped", raw=marker)
            return True
        if marker in g.stop_tokens:
            self._diag("stop_token_in_output", "the end-of-turn token was left in the output; stripped",
                       severity="info", raw=marker)
            return True
        canon = g.canonical.get(marker, marker)
        if canon == marker and canon != g.invoke_open:
            self._open_block(marker)
            return True
        codes = (g.variant_code,) if canon != marker else ()
        if canon == g.invoke_open:
            self._begin_tentative(hit, codes + ("missing_invoke_block",))
            self._block_note = "missing_invoke_block"
            self._state = _INVOKE_HEADER
        else:
            self._begin_tentative(hit, codes)
            self._block_note = g.variant_code
            self._after_noted = False
            self._state = _BLOCK
        return True

    def _after_think(self, final: bool) -> bool:
        """Right after ``</think>``: the format's framing there (``after_think``) is dropped."""
        framing = self.grammar.after_think
        text, pos = self._text, self._pos
        head = text[pos:pos + len(framing)]
        if head == framing:
            self._pos = pos + len(framing)
        elif not final and framing.startswith(head):  # what has come so far may still be the framing
            return False
        self._state = _CONTENT
        return True

    def _reasoning(self, final: bool) -> bool:
        return self._text_state(final, self._emit_reasoning)

    def _content(self, final: bool) -> bool:
        if self._at_start:
            return self._opened_by_model(final)
        return self._text_state(final, self._emit_content)

    def _opened_by_model(self, final: bool) -> bool:
        """The very start of an output read as content: a ``<think>`` the model writes as the first thing opens
        reasoning (as :meth:`toolwire.Format.stream` says of every family); anything else is content."""
        text, pos = self._text, self._pos
        opener = self.grammar.think_open
        rest = text[pos:pos + len(opener)]
        if not final and len(rest) < len(opener) and opener.startswith(rest):
            return False  # maybe the opener: wait for more
        self._at_start = False
        if rest == opener and self._marker_at(text, pos, opener):
            self._pos = pos + len(opener)
            self._state = _REASONING
        return True

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
        self._block_note = ""
        if spelling in g.other_version_opens:
            self._block_note = "other_version_block"
            self._diag("other_version_block", f"block opened as {spelling!r} (another DSML version's block), "
                       f"expected {g.block_open!r}; accepted", raw=spelling)
        elif spelling != g.block_open:
            self._diag("noncanonical_marker", f"block opened as {spelling!r}, expected {g.block_open!r}",
                       raw=spelling)
        if spelling == marker and not g.separator_joins:
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
        if marker in g.block_close_aliases or (marker != g.block_close and self._block_note != "other_version_block"):
            self._diag("noncanonical_marker", f"block closed as {marker!r}, expected {g.block_close!r}", raw=marker)
        if not self._block_had_call:
            self._diag("empty_block", "the tool-call block holds no invoke", severity="info")
        self._state = _REASONING if self._in_reasoning else _AFTER_BLOCK
        self._in_reasoning = False
        self._block_note = ""

    def _reasoning_closed_in_block(self) -> None:
        """``</think>`` inside a block written in the reasoning: the reasoning (and the block) end there."""
        if self._call is not None:
            self._end_value(complete=False)
            self._call.diag("unclosed_invoke", "the reasoning ended before the invoke was closed")
            self._mark("repaired")
            self._finish_call(None)
        self._diag("unclosed_block", "the reasoning ended inside a tool-call block")
        self._in_reasoning = False
        self._block_note = ""
        self._state = _AFTER_THINK if self.grammar.after_think else _CONTENT

    # ------------------------------------------------------------------ block and invoke
    def _next_tag(self, final: bool) -> str | None:
        """Between tags: consume the gap up to the next marker and return it as written (None: wait for more
        text; "": a tentative variant was rolled back, go on). A variant spelling is noted."""
        hit = self._scan(final)
        if self._tentative is not None:
            gap = self._text[self._pos:hit.start]
            if gap.strip(_LAYOUT) or (hit.marker is None and final) or (
                    hit.marker is not None and self.grammar.canonical.get(hit.marker, hit.marker)
                    != self.grammar.invoke_open):
                self._rollback()
                return ""
            self._pos = hit.start
            if hit.marker is None:
                return None
        if hit.marker is None:
            return self._unmatched(hit, final, self._gap) or None
        self._gap(self._text[self._pos:hit.start])
        self._flush_junk()
        self._pos = hit.end
        if hit.marker in self.grammar.canonical:
            self._variant(hit.marker)
        return hit.marker

    def _block(self, final: bool) -> bool:
        g = self.grammar
        raw = self._next_tag(final)
        if not raw:
            return raw == ""
        marker = g.canonical.get(raw, raw)
        if marker == g.invoke_open:
            self._mirror(raw)
            self._state, self._header_checked = _INVOKE_HEADER, 0
        elif marker in g.closes:
            self._close_block(marker)
        elif marker == g.think_close:
            self._reasoning_closed_in_block()
        else:  # a block opening inside the block
            self._mirror(raw)
            self._diag("duplicate_marker", "the tool-call block was opened again inside itself", raw=raw)
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
        name, quote, _ = header.partition('"')
        cut = end is None and final and len(header) <= MAX_HEADER  # the output ended inside the tag
        codes: tuple[str, ...] = ()
        if self._tentative is not None:
            if not quote or self._names is None or name not in self._names:
                self._rollback()
                return True
            codes = self._commit()
        self._mirror(self._text[start:self._pos])
        if cut and not quote:
            self._diag("truncated_call_header", "the output ended inside an invoke's name; no call", raw=header)
            self._truncated = True
            self._state = _BLOCK
            return True
        self._block_had_call = True
        if not name:  # no tool name: no call; the invoke's text is kept in an empty_name diagnostic
            self._value = [self._text[start:self._pos]]
            self._state = _SKIP
            return True
        call = self._call = self._begin_call(name, source="reasoning" if self._in_reasoning else "content")
        self._state = _INVOKE
        for code in dict.fromkeys((*codes, self._block_note)):
            if code:
                self._note_call(code, _NOTES[code])
        if cut:  # the end of output marks the call truncated; text after the name is kept
            if header != name + '"':
                call.raw(header[len(name) + 1:])
                call.diag("malformed_tag", "the output ended inside the invoke tag", raw=header)
            return True
        if end is None:
            call.diag("malformed_tag", "the invoke tag does not end", raw=header)
            self._mark("rejected")
        elif end != ">" or header != name + '"':
            call.diag("malformed_tag", "the invoke tag is malformed; its name was kept",
                      raw=self._text[start:self._pos])  # the tag as written (with its ">")
            self._mark("repaired")
        return True

    def _skip_invoke(self, final: bool) -> bool:
        """The body of an invoke without a name, up to its ``</invoke>`` (kept) or the next block tag (not
        consumed): collected for the ``empty_name`` diagnostic."""
        hit = self._scan(final)
        text, pos = self._text, self._pos
        end = hit.start if hit.marker is not None or not final else len(text)
        self._mirror(text[pos:end])
        self._value.append(text[pos:end])
        self._pos = end
        if hit.marker is None:
            return False
        if self.grammar.canonical.get(hit.marker, hit.marker) == self.grammar.invoke_close:
            self._mirror(hit.marker)
            self._value.append(hit.marker)
            self._pos = hit.end
        self._end_skip()
        self._state = _BLOCK
        return True

    def _end_skip(self) -> None:
        raw, self._value = "".join(self._value), []
        self._diag("empty_name", "an invoke without a tool name is no call; its text is kept here", severity="error",
                   raw=raw)

    def _close_invoke(self) -> None:
        """The call ends; a blockless invoke returns to the content."""
        self._finish_call(None)
        if self._block_note == "missing_invoke_block":
            self._block_note = ""
            self._after_noted = False
            self._state = _AFTER_BLOCK
        else:
            self._state = _BLOCK

    def _invoke(self, final: bool) -> bool:
        g = self.grammar
        raw = self._next_tag(final)
        if raw is None:
            return False
        marker = g.canonical.get(raw, raw)
        if marker == g.param_open or (marker == g.bare_param_open and marker):
            self._structure(raw)
            self._state, self._header_checked = _PARAM_HEADER, 0
            self._mode = "bare" if marker != g.param_open else ""
        elif marker == g.invoke_close:
            self._mirror(raw)
            self._close_invoke()
        elif marker == g.think_close:
            self._reasoning_closed_in_block()
        else:  # a new invoke, or the block's end, while this invoke is open
            self._call.diag("unclosed_invoke", f"{raw!r} came before the invoke was closed")
            self._mark("repaired")
            self._finish_call(None)
            if marker == g.invoke_open:
                self._mirror(raw)
                self._state, self._header_checked = _INVOKE_HEADER, 0
            else:
                self._close_block(marker)
        return True

    def _finish_call(self, status: str | None) -> None:
        self._call.finish(status)
        self._call = None

    # ------------------------------------------------------------------ drift recoveries (issue 33)
    def _drift(self, code: str, message: str, raw: str | None) -> None:
        """A recovery taken on the open call: ``repaired``, the diagnostic names its class."""
        self._call.diag(code, f"{DRIFT_CODES[code].value}: {message}", raw=raw)
        self._mark("repaired")

    def _refuse(self, code: str, why: str, raw: str | None) -> None:
        """A recovery not taken: said at severity ``info`` on the open call; the text is kept as before."""
        diag = refused_diagnostic(code, why, raw)
        self._call.diag(diag.code, diag.message, severity="info", raw=raw)

    def _fits(self, arguments: Any) -> bool:
        return self._declared.arguments_fit(self._call.name, arguments)

    def _wrapper(self, key: str) -> bool:
        """Whether the parameter opening now may be a wrapper holding the call's arguments: the first parameter of
        a call of a declared tool that lists its parameters, named like a wrapper (:data:`WRAPPER_KEYS`) it does not
        list. Its value
        is held (not streamed) until it closes, when :meth:`_unwrap` decides."""
        known, call = self._declared, self._call
        if (known is None or key not in WRAPPER_KEYS or call.arguments or self._in_reasoning
                or not self.grammar.drift_recoveries):
            return False
        props = known.properties(call.name)  # a tool that lists no parameters fits any object: no reading
        return bool(props) and key not in props

    def _unwrap(self, key: str, raw: str) -> bool:
        """A wrapper parameter's value that is a JSON object of arguments fitting the tool: its entries are the
        call's arguments (``drift_wrapped_arguments``). False (the value is stored under ``key`` as written) when
        it is not."""
        limits = self.limits
        try:
            inner = loads(raw.strip(_LAYOUT), max_depth=limits.max_depth, max_bytes=limits.max_argument_bytes)
        except ValueError:
            inner = None
        name = self._call.name
        if isinstance(inner, dict) and inner and self._fits(inner):
            message = f"the arguments of {name!r} were written as one object under {key!r}, which the tool does not " \
                      "declare; read as its arguments"
        else:  # a tool that lists one parameter: the wrapper's value may be that parameter's (a bare scalar)
            props = self._declared.properties(name)
            value = raw if self._mode == "wrap:string" else inner
            only = next(iter(props)) if len(props) == 1 else None
            if only is None or value is None or isinstance(value, dict) or not self._fits({only: value}):
                self._refuse(WRAPPED_ARGUMENTS, f"the value of {key!r} is not a JSON object of arguments that fit "
                             f"{name!r}, nor a value of its only parameter", raw=raw)
                return False
            inner = {only: value}
            message = f"the value of {name!r}'s only parameter {only!r} was written under {key!r}, which the tool " \
                      "does not declare; read as that parameter"
        for k, v in inner.items():
            self._call.value(k, v)
        self._drift(WRAPPED_ARGUMENTS, message, raw=raw)
        return True

    def _json_body(self, junk: str) -> bool:
        """An invoke whose body is one JSON object of arguments instead of parameter tags (``drift_json_body``;
        an object under one wrapper key, ``drift_wrapped_arguments``): its arguments, when the call's tool is
        declared and they fit its schema. False (the text stays ``junk_in_invoke``) otherwise; the whole body is
        one run of junk, so this is decided at its end, at every chunking."""
        call, body = self._call, junk.strip(_LAYOUT)
        if (self._declared is None or call.arguments or call.past_limit or self._in_reasoning
                or not self.grammar.drift_recoveries or not (body.startswith("{") and body.endswith("}"))):
            return False
        limits = self.limits
        try:
            arguments = loads(body, max_depth=limits.max_depth, max_bytes=limits.max_argument_bytes)
        except ValueError:
            arguments = None
        code, message = JSON_BODY, f"the arguments of {call.name!r} were written as a JSON object"
        if isinstance(arguments, dict) and len(arguments) == 1 and not self._fits(arguments):
            (key, inner), = arguments.items()
            if (key in WRAPPER_KEYS and isinstance(inner, dict) and inner and self._declared.properties(call.name)
                    and self._fits(inner)):
                arguments, code = inner, WRAPPED_ARGUMENTS
                message += f" under {key!r}, which the tool does not declare"
        if not (isinstance(arguments, dict) and self._fits(arguments)):
            self._refuse(JSON_BODY, f"the body is not a JSON object of arguments that fit {call.name!r}", raw=junk)
            return False
        for key, value in arguments.items():
            call.value(key, value)
        self._drift(code, message + "; read as its arguments", raw=junk)
        return True

    # ------------------------------------------------------------------ parameters
    def _param_header(self, final: bool) -> bool:
        start = self._pos
        got = self._header(final)
        if got is None:
            return False
        header, end = got
        call = self._call
        self._state = _INVOKE
        if self._mode == "bare":  # <parameter name="KEY"…> without the DSML token: fail-closed
            self._mode = ""
            tag = self.grammar.bare_param_open + self._text[start:self._pos]
            key = header.split('"', 1)[0]
            known = self._declared
            why = ("no tools were declared" if known is None else "its key is not a parameter of the tool"
                   if key not in known.properties(call.name) else "the tag does not end with '>'" if end != ">"
                   else None)
            if why is not None or self._in_reasoning:
                if known is not None:
                    self._refuse(BARE_PARAMETER_TAG, why or "inside reasoning", raw=tag)
                self._junk.append(self.grammar.bare_param_open)  # the tag stays junk between parameters, as
                self._gap(self._text[start:self._pos])           # before (its opener's raw text is already kept)
                return True
            self._drift(BARE_PARAMETER_TAG, f"parameter {key!r} opened with {tag!r}, without the DSML token; read "
                        "as the parameter", raw=tag)
        self._structure(self._text[start:self._pos])
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
        if self._wrapper(self._key):  # held whole: "wrap:" + how the value is read when it is no wrapper
            self._mode = "wrap:" + ("string" if string == "true" else "json" if string == "false" else "guess")
            self._value = []
            if string not in ("true", "false"):
                self._mark("repaired")
        elif string == "true":
            self._mode = "string"
            call.begin_string(self._key)
            if not self._in_reasoning:
                self._string_find = self._scanners[0][_VALUE].find
        else:
            self._mode = "json" if string == "false" else "guess"
            self._value = []
            if self._mode == "guess":
                self._mark("repaired")
        self._state = _VALUE
        return True

    def _value_piece(self, piece: str) -> None:
        if piece:
            call = self._call
            if call is not None:  # _structure(piece), inlined: this runs once per delta of a value
                call.raw_parts.append(piece)
            if self._in_reasoning:
                self._mirror(piece)
            if self._mode == "string":
                call.string_piece(piece)
            else:
                self._value.append(piece)

    def _param_value(self, final: bool) -> bool:
        text, pos = self._text, self._pos
        scanner = self._scanners[self._in_reasoning][_VALUE]
        if not final and scanner.find(text, pos) is None:  # the usual delta: value text, no marker or prefix of one
            self._value_piece(text[pos:])
            self._pos = len(text)
            return False
        hit = scanner.scan(text, pos, final=final, literal=self._tokens)
        if hit.marker is None:
            return self._unmatched(hit, final, self._value_piece)
        self._value_piece(self._text[self._pos:hit.start])
        self._pos = hit.end
        g, raw = self.grammar, hit.marker
        if raw == g.think_close:
            self._reasoning_closed_in_block()
            return True
        self._structure(raw)
        marker = g.canonical.get(raw, raw)
        if marker != raw:
            self._variant(raw)
        key = self._key
        self._end_value(complete=True)
        if marker == g.param_close:
            self._state = _INVOKE
            return True
        self._note_call("implicit_parameter_close", f"parameter {key!r} was closed by the next tag {raw!r}", raw=raw)
        if marker == g.param_open:
            self._state, self._header_checked = _PARAM_HEADER, 0
        else:  # </invoke>
            self._close_invoke()
        return True

    def _end_value(self, *, complete: bool) -> None:
        """Store the open parameter's value (an unfinished JSON value goes to a diagnostic instead)."""
        call, key = self._call, self._key
        if key is None:
            return
        self._key = None
        self._string_find = None
        if self._mode == "string":
            value = call.end_string()
            namespace = self.grammar.namespace
            if complete and namespace in value:
                call.diag("markup_in_value", f"the value of {key!r} contains {namespace.strip('｜ ')} markup",
                          severity="info")
            return
        raw, self._value = "".join(self._value), []
        if not complete:
            call.diag("truncated_value", f"the value of {key!r} was cut off", raw=raw)
            return
        if self._mode.startswith("wrap:"):
            if self._unwrap(key, raw):
                return
            self._mode = self._mode[5:]
            if self._mode == "string":
                call.value(key, raw)
                if self.grammar.namespace in raw:
                    call.diag("markup_in_value", f"the value of {key!r} contains "
                              f"{self.grammar.namespace.strip('｜ ')} markup", severity="info")
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
    def _reasoning_unclosed(self) -> bool:
        """The output ended inside the reasoning, or inside a block written in it: issue 33's unclosed-reasoning
        calls."""
        return self._in_reasoning or self._state in (_REASONING, _REASONING_START)

    def _end_of_output(self) -> None:
        self._flush_junk()
        state = self._state
        if state in (_REASONING, _REASONING_START):
            self._diag("unclosed_reasoning", "the output ended inside the reasoning")
            self._truncated = True
        elif state not in (_CONTENT, _AFTER_BLOCK):
            if state == _SKIP:
                self._end_skip()
            if self._call is not None:
                self._end_value(complete=False)
                self._call.diag("truncated_call", "the output ended inside the invoke")
                self._finish_call("truncated")
            elif self._block_note != "missing_invoke_block":
                self._diag("unclosed_block", "the output ended inside the tool-call block")
            self._truncated = True


_NOTES = {
    "marker_spelling_variant": "the call's markers use a DSML token spelling seen in real output; accepted",
    "missing_call_wrapper": "the call's markup was written without its namespace token (a detokenizer dropped it); "
                            "accepted",
    "missing_invoke_block": "the invoke has no tool-call block around it; accepted (a declared tool)",
    "other_version_block": "the call is in another DSML version's block; accepted",
}

_STEPS = {
    _REASONING_START: DsmlStreamParser._reasoning_start,
    _REASONING: DsmlStreamParser._reasoning,
    _CONTENT: DsmlStreamParser._content,
    _AFTER_BLOCK: DsmlStreamParser._after_block,
    _BLOCK: DsmlStreamParser._block,
    _INVOKE_HEADER: DsmlStreamParser._invoke_header,
    _INVOKE: DsmlStreamParser._invoke,
    _PARAM_HEADER: DsmlStreamParser._param_header,
    _VALUE: DsmlStreamParser._param_value,
    _SKIP: DsmlStreamParser._skip_invoke,
    _AFTER_THINK: DsmlStreamParser._after_think,
}
