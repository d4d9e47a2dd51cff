"""Marker-delimited calls with JSON argument bodies: the stream parser shared by Kimi K2, DeepSeek V3.1 / R1
and Mistral.

The three wire formats differ only in their markers and in how a call's header (the text between the
call's opening marker and its arguments) names the tool, so one state machine reads them all, driven by a
:class:`Grammar`::

    [<think>] reasoning [</think>] content  section_open ( call_open HEADER header_end JSON [call_close] )*
    section_close  content ...

A grammar without a section (Mistral) opens each call directly in the content and has no ``call_close``:
the JSON scanner alone finds where the arguments end. A call written without its section in a grammar that
has one is read too, with a ``call_outside_section`` diagnostic. Arguments stream as raw JSON text while they arrive
(:class:`~toolwire.parsers.engine.json_arguments.ArgumentsStream`); the string-aware scanner decides where the object
ends, so a marker spelled *inside* a JSON string is string content. A marker met while the JSON is already
malformed ends the body there. Every state scans only new text (the lexer holds back at most a marker
prefix), so streaming cost is linear in the output.

Nothing is lost: text between calls that the format does not expect is kept in a diagnostic's ``raw``; a
header that never reaches its end is kept the same way; an output that ends inside a call gives a
``truncated`` candidate.
"""

from __future__ import annotations

from typing import Callable, ClassVar, NamedTuple, Sequence

from toolwire.output import ToolCallCandidate

from .call_builder import CallBuilder, PastLimitCall
from .stream import StreamParser
from .json_scan import JsonValueScanner
from .json_repair import LadderResult, call_object_arguments, element_texts
from .json_arguments import finish_call, stream_arguments
from .lexer import MarkerScanner
from .safe_json import loads
from .stop_tokens import TrailingStopToken

MAX_HEADER_CHARS = 1024
"""A call header (tool name, id) longer than this is not a header: it is kept as a diagnostic."""



class Header(NamedTuple):
    """What a call header says: the tool name, the model's own call id (or None) and any problems, each
    ``(code, message, raw)`` where ``raw`` keeps header text that is neither name nor id. ``status`` is
    ``repaired`` when the header is an accepted variant spelling (the problem names it)."""

    name: str
    call_id: str | None = None
    problems: tuple[tuple[str, str, str | None], ...] = ()
    status: str | None = None


HEADER_BLANKS = " \t\r\n"
"""What is stripped around a header's name and id: ASCII blanks only. Other whitespace (U+3000, U+00A0,
``\\x0b``, ``\\x1c``-``\\x1f``) stays in the name, so it is kept (and a name holding it is not a declared tool)."""


class Grammar(NamedTuple):
    """One family's markers. ``None`` means the format has no such marker."""

    call_open: str
    header_end: str
    section_open: str | None = None
    section_close: str | None = None
    call_close: str | None = None
    think_open: str | None = None     # the model may open reasoning itself, at the very start
    think_close: str | None = None
    trailer: str = ""                 # text the format writes between the JSON and call_close (R1: ```)
    reasoning_open: str = "<think>"   # a repeat of the prompt's opener at the start of reasoning is dropped
    json_array_calls: bool = False    # call_open followed by a JSON array of call objects (Mistral before v11)
    bare_headers: bool = False        # inside a section, HEADER header_end without call_open is a call (Kimi)
    own_reasoning: bool = True        # False: the model has no reasoning of its own; think_close is content
                                      # unless thinking=True said the prompt opened reasoning (Kimi K2)


class NamelessCall(PastLimitCall):
    """A call whose header names no tool (``[TOOL_CALLS][ARGS]{...}``): read like a call, but no call is started
    (no call has an empty name); its text goes to a ``malformed_call`` diagnostic."""

    __slots__ = ()

    def keep(self, text: str) -> None:
        self.parser._diag("malformed_call", "a call header that names no tool; no call is started, its text is "
                          "kept here", severity="error", raw=text)


class StreamedCall:
    """One call whose arguments arrive as raw JSON: a :class:`CallBuilder` plus its
    :class:`~toolwire.parsers.engine.json_arguments.ArgumentsStream`."""

    __slots__ = ("call", "stream")

    def __init__(self, call: CallBuilder):
        self.call = call
        self.stream = stream_arguments(call)

    def feed(self, text: str) -> int:
        """Raw argument text; returns the index just past the JSON value's end in ``text``, or -1."""
        return self.stream.feed(text)

    def close(self, *, truncated: bool = False, closed: bool = False) -> ToolCallCandidate:
        """Decode through the repair ladder, complete the fragments and emit the candidate (``closed``: the
        call's close marker ended the arguments)."""
        if truncated:
            self.call.diag("truncated", "the output ended inside this call", severity="error")
        return finish_call(self.call, self.stream.close(truncated=truncated, closed=closed))

    def close_at_end(self) -> bool:
        """The output ended before the scanner saw the value end. Text that is complete JSON after a repair
        (a code fence, Python literals) is closed as such, text with an unescaped inner quote is rejected
        (a quote, not the end of the output, hid the value's end); anything else is truncated. Returns
        whether the call was truncated."""
        raw = self.stream.raw
        if raw.strip() and not self.stream.scanner.strict:
            ladder = self.stream.decode()
            if ladder.value is not None or any(code == "unescaped_quote" for code, _ in ladder.diagnostics):
                finish_call(self.call, self.stream.close(decoded=ladder))  # repaired, or rejected as malformed
                return False
        self.close(truncated=True)
        return True


# parser states
_START, _TEXT, _SECTION, _HEADER, _BODY, _AFTER_BODY, _BETWEEN, _REASONING_START, _ARRAY = range(9)


class JsonCallParser(TrailingStopToken, StreamParser):
    """Stream parser for a :class:`Grammar`. Subclasses set ``grammar`` and implement :meth:`parse_header`.

    Start state (every family's convention): with ``thinking=True`` the prompt opened the reasoning block,
    so output starts as reasoning (in a grammar that has ``think_close``), and a ``reasoning_open`` the model
    writes again at its very start is dropped (``duplicate_reasoning_open``). ``thinking=False`` starts in
    content: a ``think_open`` written as the very first thing still opens reasoning, and a ``think_close``
    met in content is dropped from it with ``reasoning_close_in_content``. Calls written inside reasoning are
    reported with ``source="reasoning"`` (rejected unless ``promote_reasoning_calls=True``). A trailing
    ``stop_tokens`` token is stripped (``stop_token_in_output``).
    """

    grammar: ClassVar[Grammar]
    _scanner_cache: ClassVar[dict] = {}

    def __init__(self, tools: Sequence | None = None, *, thinking: bool = False, **options):
        super().__init__(tools, thinking=thinking, **options)
        g = self.grammar
        self._in_reasoning = bool(thinking and g.think_close)
        self._content_key = "content" if g.own_reasoning or thinking else "content_plain"
        self._state = _REASONING_START if self._in_reasoning else _START if g.think_open else _TEXT
        self._outside = False             # the current call was opened without its section
        self._bare = False                # the current call's header came without call_open
        self._array: tuple[JsonValueScanner, list[str]] | None = None
        self._in_section = False
        self._source = "content"          # where the current section's calls come from
        self._header: list[str] = []
        self._header_len = 0
        self._junk: list[str] = []        # unexpected text inside a section, reported once
        self._pending_ws = ""             # whitespace after a section-less call, until we know what follows
        self._call: StreamedCall | None = None
        self._scanners = self._make_scanners(g)
        # a state's step reads ``buf`` from ``pos`` and returns where to go on (the state may have changed),
        # ``~end`` to stop after reading up to ``end`` (the rest is held back: a possible marker), or None
        # to stop at ``pos``; stopping at once saves a second scan of every delta
        self._steps: dict[int, Callable[[str, int, bool], int | None]] = {
            _START: self._start, _TEXT: self._text, _SECTION: self._section, _HEADER: self._header_text,
            _BODY: self._body, _AFTER_BODY: self._after_body, _BETWEEN: self._between,
            _REASONING_START: self._reasoning_start, _ARRAY: self._array_text,
        }

    # ---- subclass hooks
    def parse_header(self, header: str) -> Header:
        """Tool name and call id from the text between the call marker and the arguments."""
        raise NotImplementedError

    @classmethod
    def _make_scanners(cls, g: Grammar) -> dict[str, MarkerScanner]:
        cached = cls._scanner_cache.get(g)
        if cached is None:
            openers = [m for m in (g.section_open, g.call_open) if m]  # a call may also come without its section
            ends = [m for m in (g.call_close, g.section_close, g.call_open) if m]
            cached = {
                "content": MarkerScanner([m for m in (*openers, g.think_close) if m]),
                "content_plain": MarkerScanner(openers),
                "reasoning": MarkerScanner([m for m in (g.think_close, *openers) if m]),
                "section": MarkerScanner([m for m in (g.call_open, g.section_close,
                                                      g.header_end if g.bare_headers else None) if m]),
                "header": MarkerScanner([g.header_end] + ends),
                "body": MarkerScanner(ends),
                "between": MarkerScanner([g.call_open]),
            }
            # inside reasoning, the reasoning's close also ends an unclosed call (it is never swallowed)
            for key in ("section", "header", "body"):
                cached[key + "_r"] = MarkerScanner(list(cached[key].markers) + [g.think_close]) if g.think_close \
                    else cached[key]
            cls._scanner_cache[g] = cached
        return cached

    # ---- the state machine
    def _advance(self, final: bool) -> None:
        held = self._hold_stop_token(final)
        buf, pos = self._buf, 0
        step = self._steps
        while True:
            new_pos = step[self._state](buf, pos, final)
            if new_pos is None:
                break
            if new_pos < 0:  # ~p: read up to p, and what is left is a held-back possible marker: stop here
                pos = ~new_pos
                break
            pos = new_pos
        self._buf = buf[pos:] + held
        if final:
            self._at_end()

    def _reasoning_start(self, buf: str, pos: int, final: bool) -> int | None:
        """Reasoning the prompt opened: the opener written again at its very start (after blanks) is dropped."""
        opener = self.grammar.reasoning_open
        i = pos
        while i < len(buf) and buf[i] in HEADER_BLANKS:
            i += 1
        rest = buf[i:i + len(opener)]
        if not final and (i == len(buf) or (len(rest) < len(opener) and opener.startswith(rest))):
            # the blanks are reasoning whatever follows them: sent now, so a long run is read once
            self._emit_reasoning(buf[pos:i])
            return None if i == pos else i
        self._state = _TEXT
        if rest == opener and self._marker_at(buf, i, opener):
            self._emit_reasoning(buf[pos:i])
            self._diag("duplicate_reasoning_open", "the prompt already opened the reasoning; the model wrote "
                       f"{opener!r} again at its start (dropped)", raw=opener)
            return i + len(opener)
        return pos

    def _start(self, buf: str, pos: int, final: bool) -> int | None:
        """The model may open reasoning itself, as the very first thing it writes."""
        opener = self.grammar.think_open
        if self._marker_at(buf, pos, opener):
            self._in_reasoning = True
            self._state = _TEXT
            return pos + len(opener)
        head = buf[pos:pos + len(opener)]
        if len(head) < len(opener) and opener.startswith(head) and not final:
            return None
        self._state = _TEXT
        return pos

    def _text(self, buf: str, pos: int, final: bool) -> int | None:
        """Content or reasoning until the next call (section) opens, or reasoning closes."""
        g = self.grammar
        scanner = self._scanners["reasoning" if self._in_reasoning else self._content_key]
        hit = scanner.scan(buf, pos, final=final, literal=self._tokens)
        (self._emit_reasoning if self._in_reasoning else self._emit_content)(buf[pos:hit.start])
        if hit.marker is None:
            return ~hit.start
        if hit.marker == g.think_close:
            if not self._in_reasoning:  # no reasoning is open: the closer is not content
                self._diag("reasoning_close_in_content", f"{g.think_close!r} with no reasoning open; the text "
                           "before it stays content", raw=hit.marker)
            self._in_reasoning = False
            return hit.end
        self._source = "reasoning" if self._in_reasoning else "content"
        if hit.marker == g.section_open:
            self._in_section = True
            self._state = _SECTION
        else:
            self._outside = bool(g.section_open)  # a call without its section: a variant, said on the call
            self._open_header()
        return hit.end

    def _scan(self, kind: str, buf: str, pos: int, final: bool):
        """Scan with the ``kind`` scanner of a call's state (its reasoning variant for a call in reasoning)."""
        scanner = self._scanners[kind + "_r" if self._source == "reasoning" else kind]
        return scanner.scan(buf, pos, final=final, literal=self._tokens)

    def _section(self, buf: str, pos: int, final: bool) -> int | None:
        """Inside a tool-call section, between calls."""
        hit = self._scan("section", buf, pos, final)
        self._junk_text(buf[pos:hit.start])
        if hit.marker is None:
            return ~hit.start
        if hit.marker == self.grammar.header_end:
            return self._bare_header(hit)
        if hit.marker == self.grammar.think_close:  # reasoning closes inside its unclosed section
            self._flush_junk()
            self._diag("section_not_closed", f"the reasoning closed before {self.grammar.section_close!r}",
                       severity="info")
            self._close_section()
            return hit.start
        self._flush_junk()
        if hit.marker == self.grammar.call_open:
            self._open_header()
        else:
            self._close_section()
        return hit.end

    def _bare_header(self, hit) -> int:
        """``HEADER<header_end>`` in a section with no call marker before it (Kimi ``name:idx<|tool_call_argument_begin|>``):
        a call only when the header names a declared tool (fail-closed); otherwise the text stays unexpected."""
        header = "".join(self._junk)
        parsed = self.parse_header(header) if len(header) <= MAX_HEADER_CHARS else None
        if parsed is None or not parsed.name or self._names is None or parsed.name not in self._names:
            self._junk_text(hit.marker)
            return hit.end
        self._junk = []
        self._header, self._header_len = [header], len(header)
        self._bare = True
        self._begin()
        return hit.end

    def _header_text(self, buf: str, pos: int, final: bool) -> int | None:
        """The call header, up to ``header_end``; bounded, and kept as a diagnostic when malformed."""
        g = self.grammar
        hit = self._scan("header", buf, pos, final)
        piece = buf[pos:hit.start]
        if g.json_array_calls and ("".join(self._header) + piece).lstrip(HEADER_BLANKS)[:1] == "[":
            self._array = (JsonValueScanner(self.limits.max_depth + 2), [])  # an array of call objects
            head, self._header, self._header_len = "".join(self._header), [], 0
            self._state = _ARRAY
            if head:
                self._array[0].feed(head)
                self._array[1].append(head)
            return pos
        if piece:
            over = self._header_len + len(piece) - MAX_HEADER_CHARS
            if over > 0:  # the header ends with the character that crosses the limit, however the deltas cut it
                keep = len(piece) - over + 1
                self._header.append(piece[:keep])
                self._drop_header("call_header_too_long", f"a call header longer than {MAX_HEADER_CHARS} "
                                  "characters; the text is kept here")
                self._after_call()
                return pos + keep
            self._header.append(piece)
            self._header_len += len(piece)
        if hit.marker is None:
            return ~hit.start
        if hit.marker == g.header_end:
            self._begin()
            return hit.end
        self._drop_header("malformed_call", f"a call header ended by {hit.marker!r} before {g.header_end!r}")
        self._after_call()
        # a call_close ends the broken call; any other marker is read again in the state we returned to
        return hit.end if hit.marker == g.call_close else hit.start

    def _body(self, buf: str, pos: int, final: bool) -> int | None:
        """Raw JSON arguments; the scanner finds their end. Markers inside a JSON string are text."""
        call = self._call
        markers = self._scanners["body_r" if self._source == "reasoning" else "body"]  # self._scan, inlined
        if final or markers.find(buf, pos) is not None:
            start, marker = markers.scan(buf, pos, final=final, literal=self._tokens)
        else:  # the usual delta: argument text, no marker or prefix of one
            start, marker = len(buf), None
        end = call.stream.feed(buf[pos:start])
        if end >= 0:
            self._end_body(truncated=False)
            return pos + end
        if marker is None:
            return ~start
        scanner = call.stream.scanner
        if scanner.strict and scanner.in_string and marker != self.grammar.think_close:  # a marker in a string
            end = call.feed(marker)
            if end >= 0:
                self._end_body(truncated=False)
                return start + end
            return start + len(marker)
        self._end_body(truncated=False, closed=marker == self.grammar.call_close)  # the marker ends the body
        return start

    def _after_body(self, buf: str, pos: int, final: bool) -> int | None:
        """After the JSON value, up to ``call_close`` (only blanks and the format's trailer belong here)."""
        g = self.grammar
        hit = self._scan("body", buf, pos, final)
        self._junk_text(buf[pos:hit.start])
        if hit.marker is None:
            return ~hit.start
        self._flush_junk(allowed=g.trailer)
        if hit.marker == g.call_close:
            self._after_call()
            return hit.end
        self._diag("call_not_closed", f"a call was not closed with {g.call_close!r}", severity="info")
        self._after_call()
        return hit.start

    def _between(self, buf: str, pos: int, final: bool) -> int | None:
        """After a section-less call (Mistral): blanks, then another call or content."""
        i, n = pos, len(buf)
        while i < n and buf[i] in " \t\r\n":
            i += 1
        self._pending_ws += buf[pos:i]
        if i == n:
            return ~i
        hit = self._scanners["between"].scan(buf, i, final=final, literal=self._tokens)
        if hit.start == i and hit.marker is not None:
            self._pending_ws = ""
            self._open_header()
            return hit.end
        if hit.start == i and not final:
            return ~i  # a possible marker prefix: wait
        self._state = _TEXT  # anything else: back to content, blanks included
        text, self._pending_ws = self._pending_ws, ""
        (self._emit_reasoning if self._source == "reasoning" else self._emit_content)(text)
        return i

    # ---- transitions
    def _open_header(self) -> None:
        self._header, self._header_len = [], 0
        self._state = _HEADER

    def _begin(self) -> None:
        text = "".join(self._header)
        header = self.parse_header(text)
        self._header, self._header_len = [], 0
        if not header.name:  # a header naming no tool starts no call; its arguments are read and kept as text
            call = NamelessCall(self, self._call_count, "", self._source, None)
            call.raw_parts.append(self.grammar.call_open + text + self.grammar.header_end)
            self._call = StreamedCall(call)
            self._state = _BODY
            return
        call = self._begin_call(header.name, source=self._source, call_id=header.call_id)
        for code, message, raw in header.problems:
            call.diag(code, message, severity="warning", raw=raw)
        status = header.status
        if self._bare:
            self._bare = False
            call.diag("missing_call_begin", f"a call header without {self.grammar.call_open!r} before it; read "
                      "as a call because it names a declared tool")
            status = "repaired"
        if self._outside:
            self._outside = False
            call.diag("call_outside_section", f"a call without the {self.grammar.section_open!r} section "
                      "around it; read as a call (its call marker is the format's own)")
            status = "repaired"
        if status is not None and call.status == "proposed":
            call.status = status
        self._call = StreamedCall(call)
        self._state = _BODY

    # ---- a JSON array of call objects after call_open (Mistral before v11)
    def _array_text(self, buf: str, pos: int, final: bool) -> int | None:
        scanner, parts = self._array
        piece = buf[pos:]
        if not piece:
            return None
        end = scanner.feed(piece)
        parts.append(piece if end < 0 else piece[:end])
        if end < 0:
            return len(buf)
        self._array = None
        text = "".join(parts)
        if not (scanner.strict and self._array_calls(text)):
            self._diag("malformed_call", f"{self.grammar.call_open!r} followed by text that is not a JSON array "
                       "of call objects; kept here", severity="error", raw=self.grammar.call_open + text)
        self._state = _BETWEEN
        return pos + end

    def _array_calls(self, text: str) -> bool:
        """Emit the calls of a strict JSON array ``[{"name", "arguments", "id"?}, ...]``; False (nothing
        emitted) unless every element is a call object with a string name and an object of arguments."""
        try:
            values = loads(text, max_depth=self.limits.max_depth + 2,
                           max_bytes=self.limits.max_argument_bytes * max(1, self.limits.max_calls))
        except ValueError:
            return False
        if not isinstance(values, list) or not values:
            return False
        calls = []
        for value in values:
            args, key, repairs = call_object_arguments(value)
            if not (isinstance(value, dict) and isinstance(value.get("name"), str) and isinstance(args, dict)):
                return False
            calls.append((value, args, repairs))
        for (value, args, repairs), raw in zip(calls, element_texts(text)):
            call_id = value.get("id") if isinstance(value.get("id"), str) and value.get("id") else None
            call = self._begin_call(value["name"], source=self._source, call_id=call_id)
            call.diag("json_array_calls", f"calls written as a JSON array after {self.grammar.call_open!r} "
                      "(the format before its per-call markers)")
            extra = sorted(set(value) - {"name", key, "id"})
            diags = list(repairs)
            if extra:
                diags.append(("extra_call_fields", f"ignored key(s) {extra} next to \"name\" and \"arguments\""))
            stream = StreamedCall(call).stream
            closed = stream.close(decoded=LadderResult(args, "repaired", diags, None))
            finish_call(call, closed._replace(raw=raw))
        return True

    def _end_body(self, *, truncated: bool, closed: bool = False) -> None:
        self._call.close(truncated=truncated, closed=closed)
        self._call = None
        if self.grammar.call_close:
            self._state = _AFTER_BODY
        else:
            self._state = _BETWEEN

    def _after_call(self) -> None:
        """Where a call that did not happen returns to: its section, or the text it interrupted."""
        self._state = _SECTION if self._in_section else _TEXT

    def _close_section(self) -> None:
        self._in_section = False
        self._state = _TEXT

    def _drop_header(self, code: str, message: str) -> None:
        raw = self.grammar.call_open + "".join(self._header)
        self._diag(code, message, severity="error", raw=raw)
        self._header, self._header_len = [], 0

    def _junk_text(self, text: str) -> None:
        if text:
            self._junk.append(text)

    def _flush_junk(self, allowed: str = "") -> None:
        if not self._junk:
            return
        text = "".join(self._junk)
        self._junk = []
        rest = text.strip(HEADER_BLANKS)
        if allowed and rest.startswith(allowed):
            rest = rest[len(allowed):].strip(HEADER_BLANKS)
        if rest:
            self._diag("unexpected_text", "text the format does not allow between tool calls; kept here",
                       raw=text)

    def _reasoning_unclosed(self) -> bool:
        """The output ended inside the reasoning (after a call in it, too): issue 33's unclosed-reasoning calls."""
        return self._in_reasoning

    def _at_end(self) -> None:
        """End of output: close whatever is open, report what was left unfinished."""
        g = self.grammar
        state = self._state
        if state == _ARRAY:
            text = "".join(self._array[1])
            self._array = None
            self._diag("truncated_call_header", f"the output ended inside the JSON array of calls after "
                       f"{g.call_open!r}; kept here", severity="error", raw=g.call_open + text)
            self._truncated = True
        if state == _HEADER:  # the output ended inside a call header: no call (its name may be incomplete)
            self._drop_header("truncated_call_header", "the output ended inside a call header; no call is "
                              "started before its name is complete")
            self._truncated = True
        elif state == _BODY:
            self._truncated = self._call.close_at_end() or self._truncated
            self._call = None
        elif state == _BETWEEN and self._pending_ws:
            self._pending_ws = ""  # blanks after the last call: framing, not content
        self._flush_junk(allowed=g.trailer if state == _AFTER_BODY else "")
        if state == _AFTER_BODY and g.call_close:
            self._diag("call_not_closed", f"the output ended before {g.call_close!r}", severity="info")
        if self._in_section:
            self._diag("section_not_closed", f"the output ended before {g.section_close!r}", severity="info")
            self._truncated = True
        if self._in_reasoning:
            self._diag("reasoning_not_closed", f"the output ended inside the reasoning block (no {g.think_close!r})",
                       severity="info")
