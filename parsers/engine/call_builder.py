"""Incremental call building: :class:`CallBuilder` writes one call's arguments as JSON fragments while they
arrive (``{"key": "``, the string's escaped pieces, ``"``, ``}``), so the fragments of one call always concatenate
to ``json.dumps(arguments, ensure_ascii=False)``; :class:`PastLimitCall` reads a call past ``Limits.max_calls``
without building it."""

from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import TYPE_CHECKING, Any

from toolwire.output import ArgumentsDelta, Diagnostic, ToolCallCandidate, ToolCallFinished, ToolCallStarted

from .safe_json import utf8_size

if TYPE_CHECKING:
    from .stream import StreamParser


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

    class Unfrozen(ArgumentsDelta.__mro__[1]):  # the event's base (its span slot): the same layout
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
        through :func:`~toolwire.parsers.engine.json_arguments.stream_arguments`). Not kept, these are measured one by one
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
        self.parser._call_finished(ToolCallFinished(self.index, cand))
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


__all__ = ["CallBuilder", "PastLimitCall", "json_dumps", "json_string_body"]
