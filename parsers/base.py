"""The stream-parser base every family builds on: event bookkeeping and incremental call building.

A family parser subclasses :class:`StreamParser` and implements :meth:`StreamParser._advance`, which
consumes ``self._buf`` as far as it safely can (using :class:`~toolwire.parsers.lexer.MarkerScanner`)
and leaves only a held-back tail. ``parse(text)`` is exactly ``feed(text)`` then ``finish()``, so
one-shot and streamed results cannot differ.

:class:`CallBuilder` writes a call's arguments as JSON fragments while they arrive (``{"key": "``, the
string's escaped pieces, ``"``, ``}``), so the fragments of one call always concatenate to
``json.dumps(arguments, ensure_ascii=False)``.

**Token ids.** A parser made with ``tokenizer=`` also takes ``feed(ids=[...])``: the ids are decoded
(:class:`toolwire.tokenize.TokenDecoder`) into the same text buffer, and the spans written by control-token
ids are recorded. A marker holding a control-token spelling (``<tool_call>``, ``｜DSML｜`` inside
``<｜DSML｜invoke name="``) then counts only where those ids wrote it; the same text from ordinary tokens is
text. Families see this through the ``literal`` check they pass to every scan (``self._tokens``: None without
a tokenizer, so text parsing costs nothing more) and :meth:`StreamParser._marker_at`.
"""

from __future__ import annotations

import json
from enum import IntEnum
from json.encoder import encode_basestring
from operator import index as as_int
from typing import Any, ClassVar, Iterable, Sequence

from toolwire.errors import InvalidOption, StreamClosed
from toolwire.family import Family
from toolwire.limits import DEFAULT_LIMITS, Limits
from toolwire.output import (
    ArgumentsDelta, ContentDelta, Diagnostic, Event, ParsedOutput, ReasoningDelta, ToolCallCandidate,
    ToolCallFinished, ToolCallStarted,
)

from .safe_json import utf8_size


def _arguments_delta_maker():
    """``ArgumentsDelta(index, fragment)`` without the frozen dataclass's ``__init__`` (three
    ``object.__setattr__`` calls through a Python frame). One is made per delta of every streamed call: its slots
    are filled on an instance of a plain class with the same slots, which then becomes an ``ArgumentsDelta``
    (``__class__`` assignment, which CPython allows between classes of the same layout). About half the cost of
    filling the frozen instance's slots through their descriptors; the event is the same (equal, frozen, same
    repr). Checked at import against the class's fields and a probe event, so a new field cannot be left unset
    silently; the plain constructor is used when either check fails."""
    import dataclasses

    fields = tuple(f.name for f in dataclasses.fields(ArgumentsDelta))
    if fields != ("index", "fragment", "type"):  # pragma: no cover - guards a change of the event class
        return ArgumentsDelta
    kind = ArgumentsDelta.__dataclass_fields__["type"].default

    class Unfrozen:
        __slots__ = fields

    def arguments_delta(index: int, fragment: str) -> ArgumentsDelta:
        event = Unfrozen()
        event.index = index
        event.fragment = fragment
        event.type = kind
        event.__class__ = ArgumentsDelta
        return event

    try:
        probe = arguments_delta(0, "")
    except TypeError:  # pragma: no cover - an interpreter that refuses the reassignment
        return ArgumentsDelta
    if probe != ArgumentsDelta(0, ""):  # pragma: no cover - guards a change of the event class
        return ArgumentsDelta
    return arguments_delta


_arguments_delta = _arguments_delta_maker()


def json_dumps(value: Any) -> str:
    """JSON text as the arguments fragments use it: non-ASCII kept, ``", "`` and ``": "`` separators."""
    return json.dumps(value, ensure_ascii=False)


def json_string_body(text: str) -> str:
    """``text`` escaped as the inside of a JSON string (no surrounding quotes), exactly as ``json.dumps``
    with ``ensure_ascii=False`` writes it (the C encoder, without ``dumps``' per-call overhead)."""
    return encode_basestring(text)[1:-1]


def tool_names(tools: Iterable[Any] | None) -> frozenset[str] | None:
    """Declared tool names from OpenAI tool dicts, bare function dicts or models; None when no tools."""
    if tools is None:
        return None
    names = set()
    for tool in tools:
        if hasattr(tool, "function"):
            names.add(tool.function.name)
        elif hasattr(tool, "name") and not isinstance(tool, dict):
            names.add(tool.name)
        elif isinstance(tool, dict):
            fn = tool.get("function", tool)
            if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                names.add(fn["name"])
    return frozenset(names)


def tool_schemas(tools: Iterable[Any] | None) -> dict[str, dict]:
    """Parameter JSON schemas by tool name (empty dict for tools without one)."""
    out: dict[str, dict] = {}
    for tool in tools or ():
        if hasattr(tool, "function"):
            out[tool.function.name] = tool.function.parameters or {}
        elif isinstance(tool, dict):
            fn = tool.get("function", tool)
            if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                out[fn["name"]] = fn.get("parameters") or fn.get("input_schema") or fn.get("inputSchema") or {}
        elif hasattr(tool, "name"):
            out[tool.name] = getattr(tool, "input_schema", None) or {}
    return out


_RAW_AFTER_VALUE = 2
"""How many raw pieces (a closing tag) may follow a string value's pieces when :meth:`CallBuilder.end_string`
looks for them."""


class CallBuilder:
    """Builds one candidate while its text streams in, emitting ToolCallStarted / ArgumentsDelta events."""

    past_limit = False  # True for a PastLimitCall (no events, no candidate)

    __slots__ = ("parser", "index", "id", "name", "source", "arguments", "raw_parts", "diagnostics",
                 "status", "_key_count", "_string_key", "_string_parts", "_opened", "_size", "_chars", "_max_size",
                 "fragments", "_derived")

    def __init__(self, parser: "StreamParser", index: int, name: str, source: str, call_id: str | None):
        self.parser = parser
        self.index = index
        self.id = call_id or parser._call_id(index)
        self.name = name
        self.source = source
        self.arguments: dict[str, Any] = {}
        self.raw_parts: list[str] = []
        self.diagnostics: list[Diagnostic] = []
        self.status = "proposed"
        self._key_count = 0
        self._string_key: str | None = None
        self._string_parts: list[str] = []
        self._opened = False
        self._size = 0  # UTF-8 bytes of the arguments JSON emitted so far, once measured (see _measure; _emit measures each)
        self._chars: int | None = 0  # characters emitted while their bytes cannot pass the limit yet
        self._max_size = parser.limits.max_argument_bytes
        self.fragments: list[str] = []  # the ArgumentsDelta fragments kept for the candidate's arguments_text
        self._derived = True  # the fragments the builder wrote so far are json.dumps(arguments)'s: not kept (_emit)

    # -- events
    def start(self) -> None:
        self.parser._events.append(ToolCallStarted(self.index, self.id, self.name, self.source))

    def _fragment(self, text: str) -> None:
        self.fragments.append(text)
        self.parser._events.append(_arguments_delta(self.index, text))
        chars = self._chars
        if chars is not None and 4 * (chars + len(text)) <= self._max_size:
            self._chars = chars + len(text)  # (see _measure)
        else:
            self._measure(text)

    def _measure(self, text: str) -> None:
        """Add a fragment to the arguments' UTF-8 size; reject the call when the size passes the limit.

        A character takes at most 4 UTF-8 bytes: while 4 bytes a character cannot pass the limit, only
        characters are counted (``_chars``, in :meth:`_fragment`) and no fragment is encoded. The first time
        they could, what was sent so far (``fragments``, ``text`` included; compacting them keeps their text)
        is measured once, and from then on every fragment. So the call is rejected at the same fragment as
        when each one is measured."""
        if self._chars is not None:
            self._chars = None
            self._size = sum(map(utf8_size, self.fragments))
        elif self._size <= self._max_size:
            self._size += utf8_size(text)
        else:
            return
        if self._size > self._max_size:
            self._reject_size()

    def _reject_size(self) -> None:
        self.reject_too_large(f"the arguments exceed {self._max_size} bytes (Limits.max_argument_bytes)")

    def _emit(self, text: str) -> None:
        """A fragment the builder writes itself (a key, a value or its pieces, a brace), sent and counted as
        :meth:`_fragment` does. Such fragments join to ``json.dumps(arguments, ensure_ascii=False)``: the
        ``", "`` / ``": "`` separators, keys and values in the order they came, a string's pieces escaped as
        ``json.dumps`` escapes the whole. So they are not kept (a long value would be kept twice, once as the
        value and once as its JSON); the candidate's ``arguments_text`` is None and ``arguments_json()`` writes
        the same bytes. Only a repeated key breaks that (:meth:`_set`), and from there they are kept.

        A call's fragments come either all from here or all from :meth:`_fragment` (the JSON families' own text,
        through :func:`~toolwire.parsers.json_body.stream_arguments`). Not kept, these are measured one by one
        (``_size``: an ASCII fragment is its length, :func:`utf8_size` without its frame), not as :meth:`_measure`
        measures. :meth:`string_piece` repeats this body inline."""
        if not self._derived:
            self.fragments.append(text)
        self.parser._events.append(_arguments_delta(self.index, text))
        size = self._size
        if size <= self._max_size:
            self._size = size = size + (len(text) if text.isascii() else utf8_size(text))
            if size > self._max_size:
                self._reject_size()

    def _key(self, key: str) -> None:
        prefix = "{" if self._key_count == 0 else ", "
        self._key_count += 1
        self._emit(f"{prefix}{json_dumps(key)}: ")

    # -- arguments
    def raw(self, text: str) -> None:
        """Record text that belongs to the call's raw argument text."""
        if text:
            self.raw_parts.append(text)

    def begin_string(self, key: str) -> None:
        """Start a string value for ``key``; its pieces follow through :meth:`string_piece`."""
        self._key(key)
        self._emit('"')
        self._string_key = key
        self._string_parts = []

    def string_piece(self, text: str) -> None:
        """A piece of the open string value: kept for the value, and sent escaped as ``json.dumps`` escapes it
        (:func:`json_string_body`). This runs once per delta of a streamed value, so it does what :meth:`_emit`
        does inline rather than calling it (two frames fewer a delta)."""
        if text:
            self._string_parts.append(text)
            body = encode_basestring(text)[1:-1]
            if not self._derived:
                self.fragments.append(body)
            self.parser._events.append(_arguments_delta(self.index, body))
            size = self._size
            if size <= self._max_size:
                self._size = size = size + (len(body) if body.isascii() else utf8_size(body))
                if size > self._max_size:
                    self._reject_size()

    def end_string(self) -> str:
        """Close the open string value and store it. Returns the value. When the raw text ends with the value's
        pieces (the XML-style parsers record each in both; a closing tag may follow), they become the joined
        value there too, so a long value is kept once (the raw text joins to the same string)."""
        parts = self._string_parts
        value = "".join(parts)
        raw, n = self.raw_parts, len(parts)
        if n > 1:
            for end in range(len(raw), max(n, len(raw) - _RAW_AFTER_VALUE) - 1, -1):
                if raw[end - 1] is parts[-1]:
                    if all(a is b for a, b in zip(raw[end - n:end], parts)):
                        raw[end - n:end] = [value]
                    break
        self._emit('"')
        self._set(self._string_key, value)
        self._string_key = None
        self._string_parts = []
        return value

    @property
    def in_string(self) -> bool:
        return self._string_key is not None

    def value(self, key: str, value: Any) -> None:
        """A complete non-streamed value (number, object, array, boolean, null or short string)."""
        self._key(key)
        self._emit(json_dumps(value))
        self._set(key, value)

    def _set(self, key: str, value: Any) -> None:
        arguments = self.arguments
        if key in arguments:
            self.diag("duplicate_argument", f"argument {key!r} given twice; the last value is kept")
            if self._derived:  # the text sent holds both values, json.dumps(arguments) only the last: keep the text
                self._derived = False
                self.fragments = [f"{json_dumps(arguments)[:-1]}, {json_dumps(key)}: {json_dumps(value)}"]
        arguments[key] = value

    def diag(self, code: str, message: str, *, severity: str = "warning", raw: str | None = None) -> None:
        self.diagnostics.append(Diagnostic(code=code, message=message, severity=severity, raw=raw,
                                           call_index=self.index))

    def reject_too_large(self, message: str) -> None:
        """The call exceeds a limit (:class:`~toolwire.limits.Limits`): ``rejected``, with one ``too_large``
        diagnostic however many limits it exceeds."""
        self.status = "rejected"
        if not any(d.code == "too_large" for d in self.diagnostics):
            self.diag("too_large", message, severity="error")

    def finish(self, status: str | None = None) -> ToolCallCandidate:
        """Close the arguments object and emit ToolCallFinished. An open string is closed as is."""
        if self._string_key is not None:
            self.end_string()
        if status is not None and not (self.status == "rejected" and status == "proposed"):
            self.status = status
        self._emit("{}" if self._key_count == 0 else "}")
        arguments_text = None if self._derived else "".join(self.fragments)  # None: arguments_json() writes it
        self.fragments = []  # the pieces go before the raw text is joined (a long value: less memory)
        cand = ToolCallCandidate(
            index=self.index, id=self.id, name=self.name, arguments=self.arguments,
            raw_arguments="".join(self.raw_parts), status=self.status, source=self.source,
            diagnostics=self.diagnostics, arguments_text=arguments_text,
        )
        self.parser._events.append(ToolCallFinished(self.index, cand))
        self.parser._candidates.append(cand)
        return cand


class PastLimitCall(CallBuilder):
    """A call past ``Limits.max_calls``: it is read as usual (so the text after it is framed right), but it
    emits no events and builds no candidate. Its name, id and raw text go to the stream's one ``too_large``
    diagnostic, so memory stays bounded by the output's size (see :meth:`StreamParser._begin_call`)."""

    __slots__ = ()
    past_limit = True

    def start(self) -> None:
        pass

    def _fragment(self, text: str) -> None:
        pass

    _emit = _fragment

    def string_piece(self, text: str) -> None:
        """The piece is kept for the value (:meth:`end_string` joins it); nothing is sent or counted."""
        if text:
            self._string_parts.append(text)

    def diag(self, code: str, message: str, *, severity: str = "warning", raw: str | None = None) -> None:
        if raw:
            self.raw_parts.append(raw)

    def finish(self, status: str | None = None) -> None:  # type: ignore[override]
        self.keep("".join(self.raw_parts))

    def keep(self, text: str) -> None:
        """Where the call's text goes instead of a candidate (for this class: the ``too_large`` diagnostic)."""
        self.parser._keep_past_limit(text)


class Stage(IntEnum):
    """A stream's stage: reading text, reading token ids, flushed, finished."""

    TEXT = 0
    IDS = 1
    FLUSHED = 2
    FINISHED = 3


_TEXT, _IDS, _FLUSHED, _FINISHED = Stage

_FEED_CHUNK = 1 << 16
"""Longest piece of text one ``_advance`` step reads (see :meth:`StreamParser._feed_long`)."""


class TokenInput:
    """A stream's token-id input: the tokenizer, its :class:`~toolwire.tokenize.TokenDecoder` once ids arrive,
    and where control ids wrote text. Called as a scan's ``literal`` check (:meth:`MarkerScanner.scan`)."""

    __slots__ = ("tokenizer", "decoder", "fed", "held", "special")

    def __init__(self, tokenizer: Any):
        self.tokenizer = tokenizer
        self.decoder: Any = None
        self.fed = 0                          # characters decoded so far
        self.held = 0                         # of those, how many a stop-token hold took off the buffer's end
        self.special: dict[int, int] = {}     # start -> length of each piece a control id wrote

    def start(self) -> None:
        """The stream starts taking ids."""
        from toolwire.tokenize import TokenDecoder

        self.decoder = TokenDecoder(self.tokenizer)

    def text(self, pieces: list) -> str:
        """The text of decoded :class:`~toolwire.tokenize.TokenPiece` items, recording control pieces' spans."""
        fed, special = self.fed, self.special
        for text, is_special in pieces:
            if is_special:
                special[fed] = len(text)
            fed += len(text)
        self.fed = fed
        return "".join(p.text for p in pieces)

    def __call__(self, text: str, start: int, marker: str) -> bool:
        """Whether ``marker`` at ``text[start]`` holds a control-token spelling that no control id wrote there.
        ``text`` must end where the input decoded so far ends, less the :attr:`held` characters of a possible
        stop token taken off it (:class:`~toolwire.parsers.stop_tokens.TrailingStopToken`), as every parser's
        buffer does."""
        if self.decoder is None:
            return False
        at = self.fed - self.held - len(text) + start
        special = self.special
        return any(special.get(at + offset) != length for offset, length in self.decoder.vocab.control_spans(marker))


class StreamParser:
    """Base class of every family's stream parser. Subclasses implement :meth:`_advance`.

    Options every family accepts (a family ``__init__`` takes ``**options`` and passes them on):
    ``thinking``, ``promote_reasoning_calls`` (accept calls written inside the reasoning), ``limits``
    (:class:`~toolwire.limits.Limits`), ``tokenizer`` (for ``feed(ids=...)``: any tokenizer
    :mod:`toolwire.tokenize` accepts) and ``call_ids``: the id of a call whose format carries none, a prefix
    (``"call_"`` gives ``call_0``, ``call_1``...; the default) or a callable ``index -> str`` (for servers that
    need globally unique ids, e.g. ``lambda i: f"call_{uuid4().hex}"``). The model's own ids (Kimi's
    ``functions.NAME:IDX``, Mistral's 9-character ids) are kept.
    """

    family: ClassVar[Family | None] = None
    """The family this parser reads (its declaration, :class:`toolwire.Family`): set by each family's parser class;
    None on the shared engine classes."""
    render_options: ClassVar[frozenset[str]] = frozenset()
    """Render options of the family that this parser reads too (Llama 3.1's ``builtin_tools``: their calls count as
    declared): :meth:`toolwire.Format.stream` passes them on."""
    _past_limit: list[str] | None = None  # text of the calls past Limits.max_calls (set on the first one)

    # Few instance attributes here: CPython keeps attribute access fast only up to 30 per instance, and the
    # families add their own.
    def __init__(self, tools: Sequence[Any] | None = None, *, thinking: bool = False,
                 promote_reasoning_calls: bool = False, limits: Limits | None = None, tokenizer: Any = None,
                 call_ids: Any = "call_"):
        if not (isinstance(call_ids, str) or callable(call_ids)):
            raise InvalidOption(f"call_ids must be a prefix string or a callable index -> id, not "
                                f"{type(call_ids).__name__}", field="call_ids")
        self._call_ids = call_ids
        self.tools = tools
        self.limits = limits or DEFAULT_LIMITS
        self.thinking = thinking
        self.promote_reasoning_calls = promote_reasoning_calls
        self._tokens = TokenInput(tokenizer) if tokenizer is not None else None  # also the scans' ``literal``
        self._stage = _TEXT
        self._names = tool_names(tools)
        self._buf = ""
        self._events: list[Event] = []
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._candidates: list[ToolCallCandidate] = []
        self._diagnostics: list[Diagnostic] = []
        self._call_count = 0
        self._truncated = False

    def _call_id(self, index: int) -> str:
        """The id of call ``index`` when the model wrote none (see ``call_ids``)."""
        factory = self._call_ids
        if isinstance(factory, str):
            return f"{factory}{index}"
        made = factory(index)
        if not isinstance(made, str) or not made:
            raise InvalidOption(f"call_ids({index}) returned {made!r}; it must return a non-empty string",
                                field="call_ids")
        return made

    # ---- public API
    def feed(self, delta: str = "", ids: Iterable[int] | None = None) -> list[Event]:
        """Consume the next piece of output, as text or (with ``tokenizer=``) as token ids, ``feed(ids=...)``;
        returns the events it completes. A stream takes one kind of input: text fed to an id stream, or ids
        fed while text is held back, raise ``ValueError``."""
        # ``ids`` is not keyword-only: a keyword-only default costs every text feed a dict lookup
        if ids is None and self._stage == _TEXT:
            if len(delta) > _FEED_CHUNK:
                self._feed_long(delta)
            elif delta:
                self._buf += delta
                self._advance(False)
            events, self._events = self._events, []  # self._drain(), without its frame
            return events
        return self._feed_ids(delta, ids)

    def _feed_long(self, delta: str) -> None:
        """A very long delta (a whole output given to ``parse``) is read in :data:`_FEED_CHUNK` pieces: the
        result is the same at every chunking, and the buffer each step slices stays short, so one-shot
        parsing stays linear however many calls the output holds."""
        for start in range(0, len(delta), _FEED_CHUNK):
            self._buf += delta[start:start + _FEED_CHUNK]
            self._advance(final=False)

    def flush(self) -> list[Event]:
        """End of output: release what was held back and close what is open; returns those events.
        Call :meth:`finish` afterwards for the result (``finish`` flushes by itself when needed)."""
        if self._stage == _FINISHED:
            raise StreamClosed("flush() after finish()")
        if self._stage != _FLUSHED:
            if self._stage == _IDS:
                self._take_pieces(self._tokens.decoder.flush(), final=True)
            self._stage = _FLUSHED
            self._advance(final=True)
            if self._past_limit is not None:
                self._diag("too_large", f"{self._call_count - self.limits.max_calls} tool call(s) past "
                           f"Limits.max_calls={self.limits.max_calls}: not built as candidates; their text is kept "
                           "here", severity="error", raw="".join(self._past_limit))
        return self._drain()

    def finish(self) -> ParsedOutput:
        """End of output: flush, then return the result. The flush's events are discarded; use
        :meth:`flush` first to stream them."""
        self.flush()
        self._stage = _FINISHED
        return ParsedOutput(
            content="".join(self._content), reasoning="".join(self._reasoning),
            tool_calls=sorted(self._candidates, key=lambda c: c.index),
            diagnostics=self._diagnostics, truncated=self._truncated,
        )

    def _keep_past_limit(self, text: str) -> None:
        """A call past ``Limits.max_calls`` ended: keep its text (name, id, raw) for the ``too_large`` diagnostic."""
        if self._past_limit is None:
            self._past_limit = []
        self._past_limit.append(text)

    # ---- token ids
    def _feed_ids(self, delta: str, ids: Iterable[int] | None) -> list[Event]:
        """:meth:`feed` past the text fast path: ids, or a feed the stream's stage refuses."""
        if self._stage >= _FLUSHED:
            raise StreamClosed("feed() after flush() or finish()")
        if ids is None:  # text, while the stream is fed ids
            if delta:
                raise ValueError("this stream is being fed token ids; feed(ids=...) only")
            return self._drain()
        if delta:
            raise ValueError("pass text or ids, not both")
        tokens = self._tokens
        if tokens is None:
            raise ValueError("feeding token ids needs stream(..., tokenizer=<the model's tokenizer>)")
        if self._stage == _TEXT:
            if self._buf:
                raise ValueError("this stream is being fed text; feed(text) only")
            tokens.start()
            self._stage = _IDS
        decoder = tokens.decoder
        known = decoder.vocab.known
        run: list[int] = []
        for tid in ids:
            try:
                number = as_int(tid)
            except TypeError:
                number = -1
            if known(number):
                run.append(number)
                continue
            self._take_pieces(decoder.feed(run), final=False)
            run = []
            self._diag("invalid_token_id", f"token id {tid!r} is not in the vocabulary", raw=str(tid))
        self._take_pieces(decoder.feed(run), final=False)
        return self._drain()

    def _take_pieces(self, pieces: list, final: bool) -> None:
        """Decoded :class:`~toolwire.tokenize.TokenPiece` items join the buffer (their control spans recorded),
        parsed right away unless ``final`` (then the flush parses them)."""
        if pieces:
            self._buf += self._tokens.text(pieces)
            if not final:
                self._advance(final=False)

    def _reading_ids(self) -> bool:
        """Whether this stream is fed token ids."""
        return self._tokens is not None and self._tokens.decoder is not None

    def _marker_at(self, text: str, pos: int, marker: str) -> bool:
        """Whether ``marker`` starts at ``text[pos]`` (written with its control ids, when fed ids)."""
        return text.startswith(marker, pos) and (self._tokens is None or not self._tokens(text, pos, marker))

    # ---- for subclasses
    def _advance(self, final: bool) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _drain(self) -> list[Event]:
        events, self._events = self._events, []
        return events

    def _emit_content(self, text: str) -> None:
        if text:
            self._content.append(text)
            self._events.append(ContentDelta(text))

    def _emit_reasoning(self, text: str) -> None:
        if text:
            self._reasoning.append(text)
            self._events.append(ReasoningDelta(text))

    def _diag(self, code: str, message: str, *, severity: str = "warning", raw: str | None = None) -> None:
        self._diagnostics.append(Diagnostic(code=code, message=message, severity=severity, raw=raw))

    def _begin_call(self, name: str, *, source: str = "content", call_id: str | None = None) -> CallBuilder:
        """Open a candidate; checks the name against the declared tools. Past ``limits.max_calls`` the call is a
        :class:`PastLimitCall`: no events, no candidate; its text ends up in one ``too_large`` diagnostic."""
        if self._call_count >= self.limits.max_calls:
            call = PastLimitCall(self, self._call_count, name, source, call_id)
            self._call_count += 1
            call.raw_parts.append(name + (f" {call_id}" if call_id else "") + "\n")
            return call
        call = CallBuilder(self, self._call_count, name, source, call_id)
        self._call_count += 1
        if self._names is not None and name not in self._names:
            call.status = "rejected"
            call.diag("unknown_tool", f"tool {name!r} is not among the declared tools", severity="error")
        elif not name.strip() and not any(d.code == "empty_tool_name" for d in call.diagnostics):
            call.status = "rejected"  # a call without a tool name is never proposed, tools declared or not
            call.diag("empty_tool_name", "the call names no tool", severity="error")
        if source == "reasoning" and not self.promote_reasoning_calls:
            call.status = "rejected"
            call.diag("call_in_reasoning", "a tool call was written inside the reasoning block; it is reported, "
                      "not promoted (pass promote_reasoning_calls=True to accept it)")
        call.start()
        return call
