"""Llama 3.1 stream parser: ``{"name": ..., "parameters": {...}}`` calls and ``<|python_tag|>`` built-in calls.

Llama 3.1 has no tool-call markers: a reply that *is* a JSON object naming a tool is a call (optionally
after ``<|python_tag|>``; several calls may be joined by ``;``). So a reply whose first non-blank
character is ``{`` is held back only while its beginning can still be ``{"name": "...", "parameters": ``;
from there the arguments stream raw (:class:`~toolwire.parsers.engine.json_arguments.ArgumentsStream`). An object in
another shape (other key order, extra keys) is read whole and becomes a call when it names a tool and has
an object of ``parameters``/``arguments``; anything else is content, unchanged.

With tools declared, an object read whole that names a declared tool in a drifted shape (the name as the only
key, the arguments beside the name, the name glued to the first key) is a call when its arguments fit (issue 33,
:func:`~toolwire.parsers.engine.drift_json.read_bare_object`).

After ``<|python_tag|>`` a built-in call ``NAME.call(key="value", ...)`` is read at the end of the output;
other text there is ``code_interpreter`` code. Built-in tool names (``builtin_tools``) count as declared.

``<|python_tag|>`` is the vocabulary's own call opener, so it opens calls wherever the model writes it: after
content (``Some text. <|python_tag|>{...}``) and between calls (``{...}<|python_tag|>{...}``, the tag standing for
the ``;`` separator). It is framing there as at the start, never content (SGLang's Llama 3.2 tests pin both).
"""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

import regex

from .engine import drift_json
from .engine.drift import DeclaredTools, drift_diagnostic, refused_diagnostic
from .engine.stream import StreamParser
from .engine.json_repair import ARGUMENTS_JSON_STRING, decode_arguments, element_texts, json_string_object
from .engine.json_scan import JsonValueScanner
from .engine.json_arguments import call_object_bounds, diagnostic_severity, worse_status
from .engine.safe_json import loads
from .engine.stop_tokens import TrailingStopToken
from .engine.marker_json import StreamedCall

from toolwire.families.llama import LLAMA31, LLAMA32, MARKERS
PYTHON_TAG = MARKERS["python_tag"]

MAX_PREFIX_CHARS = 512
_PREFIX = regex.compile(r'\{[ \t\n\r]*"name"[ \t\n\r]*:[ \t\n\r]*"(?P<name>(?:[^"\\]|\\.)*)"[ \t\n\r]*,[ \t\n\r]*'
                        r'"(?P<key>parameters|arguments)"[ \t\n\r]*:[ \t\n\r]*(?=\{)')  # JSON blanks only
_CUT_NAME = re.compile(r'[ \t\n\r]*\{[ \t\n\r]*"name"[ \t\n\r]*:[ \t\n\r]*"(?P<name>(?:[^"\\]|\\.)*)')
_BUILTIN = re.compile(r"\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\.call\((?P<args>.*)\)\s*", re.S)
_BUILTIN_KEY = re.compile(r'\s*(?P<key>[A-Za-z_][A-Za-z0-9_]*)\s*=\s*"')
_BUILTIN_NEXT = re.compile(r'"\s*,\s*(?=[A-Za-z_][A-Za-z0-9_]*\s*=\s*")')
_BLANK = " \t\r\n"

_START, _PREFIX_STATE, _BODY, _TAIL, _WHOLE, _AFTER, _PYTHON, _CONTENT, _ARRAY = range(9)


def _json_name(escaped: str) -> str | None:
    """The name inside ``"..."`` as JSON reads it, or None (a raw control character, a bad escape)."""
    try:
        return json.loads(f'"{escaped}"')
    except ValueError:
        return None


def builtin_arguments(text: str) -> dict[str, str] | None:
    """``key="value", ...`` as the template writes it (values unescaped) to a dict, or None."""
    args: dict[str, str] = {}
    pos, body = 0, text.rstrip()
    if not body.strip():
        return args
    while True:
        m = _BUILTIN_KEY.match(body, pos)
        if m is None:
            return None
        nxt = _BUILTIN_NEXT.search(body, m.end())
        if nxt is None:
            if not body.endswith('"') or len(body) - 1 < m.end():
                return None
            args[m["key"]] = body[m.end():-1]
            return args
        args[m["key"]] = body[m.end():nxt.start()]
        pos = nxt.end()


class LlamaParser(TrailingStopToken, StreamParser):
    """Llama 3.1 output: content, or one or more JSON calls, or a ``<|python_tag|>`` call. Also read: a JSON
    array of call objects naming declared tools (``repaired``, ``json_array_calls``; any other array is
    content), and a stop token left at the end (stripped, ``stop_token_in_output``)."""

    render_options = frozenset({"builtin_tools"})
    python_tag: str | None = PYTHON_TAG
    """The built-in call tag (None: the vocabulary has none, and its spelling is text)."""

    def __init__(self, tools: Sequence[Any] | None = None, *, thinking: bool = False,
                 builtin_tools: Sequence[str] | None = None, **options: Any):
        super().__init__(tools, thinking=thinking, **options)
        if builtin_tools:
            self._names = (self._names or frozenset()) | frozenset(builtin_tools)
        self._bounds = call_object_bounds(self.limits)  # a call is an object around the parameters
        self._declared = DeclaredTools.of(tools)  # None: no tools declared, no drift recovery (issue 33)
        self._state = _START
        self._tagged = False                 # the current call came after <|python_tag|>
        self._pending = ""                   # blanks (and a ';') not yet known to be content or framing
        self._text: list[str] = []           # the outer object (prefix / whole) or the built-in call text
        self._outer: JsonValueScanner | None = None
        self._outer_behind = False           # the arguments went to their stream only (see _body)
        self._call: StreamedCall | None = None
        self._tail: list[str] = []
        self._steps = {_START: self._start, _PREFIX_STATE: self._prefix, _BODY: self._body, _TAIL: self._tail_text,
                       _WHOLE: self._whole, _AFTER: self._after, _PYTHON: self._python, _CONTENT: self._plain,
                       _ARRAY: self._array}

    def _advance(self, final: bool) -> None:
        held = self._hold_stop_token(final)
        buf, pos = self._buf, 0
        while True:
            new_pos = self._steps[self._state](buf, pos, final)
            if new_pos is None:
                break
            pos = new_pos
        self._buf = buf[pos:] + held
        if final:
            self._at_end()

    # ---- states
    def _start(self, buf: str, pos: int, final: bool) -> int | None:
        """Blanks, then ``{`` (a call), ``<|python_tag|>`` or anything else (content)."""
        i = pos
        while i < len(buf) and buf[i] in _BLANK:
            i += 1
        self._pending += buf[pos:i]
        tag = self.python_tag
        rest = buf[i:i + len(PYTHON_TAG)]
        if not rest:
            return None if i == pos else i
        if rest.startswith("{"):
            self._open_object()  # the blanks stay pending until we know whether this is a call
            return i
        if rest.startswith("[") and not self._tagged and self._call_count == 0:
            self._open_object()
            self._state = _ARRAY
            return i
        if tag is not None and self._marker_at(buf, i, tag):
            self._pending = ""
            self._tagged = True
            return i + len(tag)
        if tag is not None and len(rest) < len(tag) and tag.startswith(rest) and not final:
            return None if i == pos else i
        if self._tagged:
            self._pending = ""
            self._state = _PYTHON
            return i
        self._to_content()
        return i

    def _prefix(self, buf: str, pos: int, final: bool) -> int | None:
        """Hold the object's beginning while it can still be ``{"name": "...", "parameters": ``."""
        piece = buf[pos:]
        if not piece:
            return None
        self._text.append(piece)
        head = "".join(self._text)
        m = _PREFIX.match(head, partial=True)
        # (a prefix ending past the bound is read whole, as when it arrives a character at a time)
        name = _json_name(m["name"]) if m is not None and not m.partial and m.end() <= MAX_PREFIX_CHARS else None
        if name is not None:
            self._outer.feed(head[:m.end()])
            self._pending = ""
            call = self._begin_call(name)
            if m["key"] == "arguments":
                call.diag("arguments_key", "the call says 'arguments' where Llama writes 'parameters'",
                          severity="info")
            self._call = StreamedCall(call)
            self._outer_behind = True
            self._text = []
            self._state = _BODY
            return len(buf) - (len(head) - m.end())  # the body starts right after the prefix (in this piece)
        if m is None or not m.partial or len(head) > MAX_PREFIX_CHARS:  # (not partial: a name JSON cannot read,
                                                                        # or a prefix past the bound)
            self._state = _WHOLE
            self._text = []
            return self._whole_head(head, buf)
        return len(buf)

    def _whole_head(self, head: str, buf: str) -> int:
        """Start reading the object whole from its beginning ``head`` (which ends where ``buf`` ends)."""
        end = self._outer.feed(head)
        self._text.append(head if end < 0 else head[:end])
        if end < 0:
            return len(buf)
        return self._whole_done(buf, len(buf) - (len(head) - end))

    def _body(self, buf: str, pos: int, final: bool) -> int | None:
        """The arguments object, streamed raw. Only the arguments stream scans it while it is strict JSON: the
        outer scanner would read the same text at one level deeper and end in the state that ``{}`` gives it.
        Once the arguments are not strict JSON, the outer scanner reads all of their text (it then follows
        along), so that it finds the object's end in malformed text exactly as when it read every piece."""
        start = pos
        stream = self._call.stream
        if stream.scanner.pos == 0:  # blanks between the key and the value are framing
            while pos < len(buf) and buf[pos] in _BLANK:
                pos += 1
        piece = buf[pos:]
        if not piece:
            return None if pos == start else pos
        end = self._call.feed(piece)
        if not self._outer_behind:
            self._outer.feed(piece if end < 0 else piece[:end])
        elif not stream.scanner.strict:
            self._outer_behind = False
            self._outer.feed(stream.raw)
        elif end >= 0:
            self._outer_behind = False
            self._outer.feed("{}")
        if end < 0:
            return len(buf)
        self._call.close()
        self._call = None
        self._state = _TAIL
        return pos + end

    def _tail_text(self, buf: str, pos: int, final: bool) -> int | None:
        """After the arguments: the outer object's closing brace (anything else there is reported)."""
        piece = buf[pos:]
        if not piece:
            return None
        end = self._outer.feed(piece)
        used = piece if end < 0 else piece[:end]
        self._tail.append(used)
        if end < 0:
            return len(buf)
        tail, self._tail = "".join(self._tail), []
        if tail.strip(_BLANK) != "}":  # JSON blanks only: other whitespace (U+3000) is text, kept in the diagnostic
            self._diag("unexpected_text", "text after the call's parameters inside its object; kept here", raw=tail)
        self._state = _AFTER
        return pos + end

    def _whole(self, buf: str, pos: int, final: bool) -> int | None:
        """An object in another shape: read it whole, then decide whether it is a call."""
        piece = buf[pos:]
        if not piece:
            return None
        end = self._outer.feed(piece)
        self._text.append(piece if end < 0 else piece[:end])
        if end < 0:
            return len(buf)
        return self._whole_done(buf, pos + end)

    def _whole_done(self, buf: str, at: int) -> int:
        text, self._text = "".join(self._text), []
        if not self._emit_whole(text, truncated=False):
            self._to_content()
            self._emit_content(text)
            return at
        self._pending = ""
        self._state = _AFTER
        return at

    def _after(self, buf: str, pos: int, final: bool) -> int | None:
        """After a call: blanks, ``;`` and another call, ``<|python_tag|>`` and another call, or content."""
        i = pos
        while i < len(buf) and (buf[i] in _BLANK or (buf[i] == ";" and ";" not in self._pending)):
            i += 1
        self._pending += buf[pos:i]
        if i == len(buf):
            return None if i == pos else i
        if buf[i] == "{":
            self._open_object()
            return i
        tag = self.python_tag
        if tag is not None and self._marker_at(buf, i, tag):
            return self._tag_opens(i + len(tag))
        if tag is not None and not final and len(buf) - i < len(tag) and tag.startswith(buf[i:]):
            return None if i == pos else i  # maybe the tag: wait for the rest of it
        self._to_content()
        return i

    def _tag_opens(self, end: int) -> int:
        """``<|python_tag|>`` read (ending at ``end``): what follows is calls, as after the tag at the start."""
        self._pending = ""
        self._tagged = True
        self._state = _START
        return end

    def _array(self, buf: str, pos: int, final: bool) -> int | None:
        """A reply that opens with ``[``: a JSON array of calls only when every element is a call object
        naming a declared tool (else content, unchanged)."""
        piece = buf[pos:]
        if not piece:
            return None
        scanner = self._outer
        end = scanner.feed(piece)
        self._text.append(piece if end < 0 else piece[:end])
        if not scanner.strict:
            self._array_is_content()
            return len(buf) if end < 0 else pos + end
        if end < 0:
            return len(buf)
        text, self._text = "".join(self._text), []
        if not self._emit_array(text):
            self._to_content()
            self._emit_content(text)
            return pos + end
        self._pending = ""
        self._state = _AFTER
        return pos + end

    def _array_is_content(self) -> None:
        text, self._text = "".join(self._text), []
        self._to_content()
        self._emit_content(text)

    def _emit_array(self, text: str) -> bool:
        try:
            values = loads(text, max_depth=self._bounds["max_depth"] + 1,
                           max_bytes=self._bounds["max_bytes"] * max(1, self.limits.max_calls))
        except ValueError:
            return False
        if not isinstance(values, list) or not values or not self._names:
            return False
        calls = []
        for value in values:
            if not isinstance(value, dict) or value.get("name") not in self._names:
                return False
            key = "parameters" if "parameters" in value else "arguments" if "arguments" in value else None
            args = value.get(key) if key else None
            inner = json_string_object(args, max_depth=self.limits.max_depth)
            if not isinstance(inner if inner is not None else args, dict):
                return False
            calls.append((value["name"], inner if inner is not None else args, inner is not None))
        for (name, args, from_string), raw in zip(calls, element_texts(text)):
            call = self._begin_call(name)
            call.diag("json_array_calls", "the reply is a JSON array of call objects naming declared tools; "
                      "read as tool calls")
            if from_string:
                call.diag(*ARGUMENTS_JSON_STRING, severity="warning")
            for k, v in args.items():
                call.value(k, v)
            call.raw(raw)
            call.finish(worse_status(call.status, "repaired"))
        return True

    def _python(self, buf: str, pos: int, final: bool) -> int | None:
        """A built-in call's text, read whole at the end of the output."""
        if pos < len(buf):
            self._text.append(buf[pos:])
        return None if pos == len(buf) else len(buf)

    def _plain(self, buf: str, pos: int, final: bool) -> int | None:
        """Content, up to a ``<|python_tag|>``: the calls it opens (a possible start of it at the end of the buffer
        waits for the next piece)."""
        tag = self.python_tag
        if tag is None:
            self._emit_content(buf[pos:])
            return None if pos == len(buf) else len(buf)
        i = buf.find(tag, pos)
        while i >= 0 and not self._marker_at(buf, i, tag):  # spelled by ordinary token ids: text
            i = buf.find(tag, i + 1)
        if i >= 0:
            self._emit_content(buf[pos:i])
            return self._tag_opens(i + len(tag))
        end = len(buf)
        if not final:
            lt = buf.rfind("<", max(pos, len(buf) - len(tag) + 1))
            if lt >= 0 and tag.startswith(buf[lt:]):
                end = lt
        self._emit_content(buf[pos:end])
        return None if end == pos else end

    # ---- helpers
    def _open_object(self) -> None:
        self._outer = JsonValueScanner(self._bounds["max_depth"])
        self._text = []
        self._state = _PREFIX_STATE

    def _to_content(self) -> None:
        text, self._pending = self._pending, ""
        self._state = _CONTENT
        self._emit_content(text)

    def _emit_whole(self, text: str, *, truncated: bool) -> bool:
        """A complete (or truncated) object that is not in the streaming shape: a call, or False."""
        decoded = decode_arguments(text, truncated=truncated, **self._bounds)
        value = decoded.value
        if self._declared is not None and not truncated and self._drift_whole(value, text):
            return True
        if not isinstance(value, dict) or not isinstance(value.get("name"), str):
            return False
        key = "parameters" if "parameters" in value else "arguments" if "arguments" in value else None
        args = value.get(key) if key else None
        inner = json_string_object(args, max_depth=self.limits.max_depth)
        repairs = list(decoded.diagnostics)
        status = decoded.status
        if inner is not None:
            args = inner
            repairs.append(ARGUMENTS_JSON_STRING)
            status = worse_status(status, "repaired")
        if not isinstance(args, dict):
            return False
        call = self._begin_call(value["name"])
        for code, message in repairs:
            call.diag(code, message, severity=diagnostic_severity(code))
        extra = sorted(set(value) - {"name", key})
        if extra:
            call.diag("unexpected_keys", f"the call object also has {extra}; ignored", severity="warning")
        if key != "parameters":
            call.diag("arguments_key", "the call says 'arguments' where Llama writes 'parameters'", severity="info")
        for k, v in args.items():
            call.value(k, v)
        call.raw(text)
        call.finish(worse_status(call.status, status))
        return True

    def _drift_whole(self, value: Any, text: str) -> bool:
        """A whole object that names a declared tool in a drifted shape (issue 33): ``{"NAME": {...}}``,
        ``{"name": NAME, "k": v}`` or ``{"NAMEk": v}`` -- a call when its arguments fit (True); when they do not,
        an ``info`` diagnostic says so and the object stays content (False). An object naming no declared tool
        is not read (:func:`~toolwire.parsers.engine.drift_json.read_bare_object`)."""
        reading = drift_json.read_bare_object(value, self._declared)
        if reading is None:
            return False
        if isinstance(reading, drift_json.Refused):
            self._diagnostics.append(refused_diagnostic(reading.code, reading.why, text))
            return False
        call = self._begin_call(reading.name)
        call.diagnostics.append(drift_diagnostic(reading.code, reading.message, text, call.index))
        for k, v in reading.arguments.items():
            call.value(k, v)
        call.raw(text)
        call.finish("repaired")
        return True

    def _emit_cut_prefix(self, text: str) -> bool:
        """The output ended inside ``{"name": "...", ...`` before the arguments: with the name complete, a
        truncated call; inside the name, no call (``truncated_call_header``, the text kept). False when
        ``text`` is not such a beginning."""
        m = _CUT_NAME.match(text)
        if m is None:
            return False
        name = _json_name(m["name"]) if text.startswith('"', m.end()) else None
        if name is None:
            self._diag("truncated_call_header", "the output ended inside the call's name; no call is started "
                       "before its name is complete", severity="error", raw=self._pending + text)
            self._pending = ""
            return True
        call = self._begin_call(name)
        call.diag("truncated", "the output ended inside this call", severity="error")
        call.raw(text)
        call.finish("truncated")
        return True

    def _emit_builtin(self, text: str) -> None:
        m = _BUILTIN.fullmatch(text)
        args = builtin_arguments(m["args"]) if m else None
        if m and args is not None:
            call = self._begin_call(m["name"])
            for k, v in args.items():
                call.value(k, v)
        else:
            call = self._begin_call("code_interpreter")
            call.diag("python_code", "text after <|python_tag|> is not NAME.call(...): read as code_interpreter "
                      "code", severity="info")
            call.value("code", text)
        call.raw(text)
        call.finish()

    def _at_end(self) -> None:
        state = self._state
        if state == _PYTHON:
            self._emit_builtin("".join(self._text))
            self._text = []
        elif state == _ARRAY:
            self._array_is_content()
        elif state in (_PREFIX_STATE, _WHOLE):
            text, self._text = "".join(self._text), []
            if self._emit_whole(text, truncated=True) or (state == _PREFIX_STATE and self._emit_cut_prefix(text)):
                self._truncated = True
            else:
                self._emit_content(self._pending + text)
        elif state == _BODY:
            self._truncated = self._call.close_at_end() or self._truncated
            self._call = None
        elif state == _TAIL:
            tail, self._tail = "".join(self._tail), []
            self._diag("call_not_closed", "the output ended before the call object's closing brace",
                       severity="info", raw=tail or None)
            self._truncated = True
        elif state == _START and self._tagged:
            self._emit_builtin("")
        if state == _START and not self._tagged:
            self._emit_content(self._pending)  # a reply of blanks only
        self._pending = ""  # blanks after calls are framing


class Llama31Parser(LlamaParser):
    """Llama 3.1 / 3.3 output."""

    family = LLAMA31


class Llama32Parser(LlamaParser):
    """Llama 3.2 output (as Llama 3.1's)."""

    family = LLAMA32
