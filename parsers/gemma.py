"""Gemma 4 stream parser: ``<|channel>thought\\n…<channel|>`` reasoning, content, and calls
``<|tool_call>call:NAME{key:value,…}<tool_call|>``.

Values are Gemma's object notation: strings between ``<|"|>`` quotes (anything inside, newlines and braces
included), numbers, ``true`` / ``false`` / ``null``, ``[…]`` lists and ``{…}`` objects with bare keys. The
prompt opens the reasoning only after tool results in thinking mode (``thinking=True`` then); otherwise the model
writes ``<|channel>thought\\n`` itself. Framing removed: ``thought\\n`` after ``<|channel>``, one ``\\n`` before
``<channel|>``, whitespace between calls. A call's body is read when it closes (``<tool_call|>`` outside a
string), so each delta is scanned once.

Accepted real-world variants (each call ``repaired``, with a diagnostic naming it; docs/variants.md):
``call_prefix_variant`` (``<|tool_call>:NAME{``, ``<|tool_call>NAME{``: vLLM #53431, or ``<|tool_call>:call:NAME{``), ``json_string_value``
(``"…"`` JSON strings instead of ``<|"|>``: llama.cpp #22786), ``single_quoted_value`` (``'…'``: Ollama #15315), ``unquoted_string_value`` (a bare value that is no number or literal, kept
as a string when the tool's schema says string, or the tool is not typed: Ollama #15374), ``python_literal``
(``True`` / ``False`` / ``None``), ``trailing_comma`` (``,`` before ``}`` or ``]``), ``lax_number`` (``108.``,
``.5`` where a bare value is not read as a string), ``equals_separator`` (``key=value``: Ollama #17882; only
when the body does not read as written), ``missing_comma`` (no ``,`` before the next ``key:``: yzma #243), ``missing_closing_brace`` and ``missing_call_close`` (also when a stop token
ends the call: the stop token is then read as one). Anything else in a body
rejects the call (``malformed_arguments``), its text kept in ``raw_arguments``.

Drift (issue 33): ``call:NAME{…}`` in content with no ``<|tool_call>`` (a detokenizer stripped the special
tokens, the ``<|"|>`` quotes too at times) is a call only when ``NAME`` is declared, its braces close and its
arguments fit the tool (``missing_call_wrapper``; text input only); its body is held until then, so a refused
one goes out as the content it was. An orphan ``<tool_call|>`` after it is dropped (``drift_orphan_call_closer``).
The same holds for ``NAME{…}`` / ``call:NAME{…}`` in plain ``<tool_call>…</tool_call>`` tags (vLLM's Gemma 4
"fallback format"), whose ``</tool_call>`` is dropped the same way.
"""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

from .engine.call_builder import CallBuilder
from .engine.tools import tool_schemas
from .engine.lexer import MarkerScanner
from .engine.safe_json import NUMBER as _NUMBER
from .engine.schema_coerce import is_string_schema, parameter_schema
from .engine.drift import drift_diagnostic, refused_diagnostic
from .engine.steps import BLANKS, StepParser
from .engine.xml_drift import MISSING_CALL_WRAPPER, ORPHAN_CALL_CLOSER, declared

from toolwire.families.gemma import GEMMA4, MARKERS
M = MARKERS
Q, CALL_OPEN, CALL_CLOSE = M["quote"], M["call_open"], M["call_close"]
CH_OPEN, CH_CLOSE = M["channel_open"], M["channel_close"]
STOPS = (*GEMMA4.stop_tokens, M["response_open"])
"""What generation stops at: the end of the turn, or (after calls) the tool response the server fills in."""
THOUGHT = "thought\n"
MAX_HEADER_CHARS = 256

BARE_CALL = "call:"
"""A call whose ``<|tool_call>`` a server's detokenizer stripped (or the model left out) starts with this in
content: ``call:NAME{…}`` (issue 33 drift, ``missing_call_wrapper``)."""
WRAPPER_OPEN, WRAPPER_CLOSE = "<tool_call>", "</tool_call>"
"""Not Gemma's markers: the plain tags some Gemma 4 outputs wrap a bare call in when the model falls back to
another template's habit (``<tool_call>NAME{…}</tool_call>``, with or without ``call:``; vLLM's Gemma 4 parser
reads this "fallback format"). Read fail-closed, as a bare ``call:NAME{…}`` is."""
_CONTENT = MarkerScanner((CALL_OPEN, CH_OPEN, CH_CLOSE, BARE_CALL, WRAPPER_OPEN) + STOPS)
_REASONING = MarkerScanner(("\n" + CH_CLOSE, CH_CLOSE, CALL_OPEN) + STOPS)
_HEADER = MarkerScanner(("{", CALL_CLOSE, CALL_OPEN))
_BODY = MarkerScanner((Q, CALL_CLOSE, CALL_OPEN) + STOPS)
"""A call body's structure: a stop token there (``<turn|>`` written where ``<tool_call|>`` belongs) ends the call
and is then read as the stop token it is."""
_IN_STRING = MarkerScanner((Q, CALL_CLOSE))
_KEY_AHEAD = re.compile(r"[ \t\r\n]*[A-Za-z_][A-Za-z0-9_]*[ \t\r\n]*:")
_KEY_NEXT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*[ \t\r\n]*[:=]")
"""A bare key and its separator: where one follows a value with no ``,`` between (``missing_comma``)."""
_LITERALS = {"true": True, "false": False, "null": None}
_LAX_NUMBER = re.compile(r"-?(?:[0-9]+\.|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
"""A number with no digit on one side of its point (``108.``, ``.5``): Python reads it, JSON does not."""
_PYTHON = {"True": True, "False": False, "None": None}
STRING = "\udfff"
"""Where a ``<|"|>`` string stood in a body's structure text (the strings are read apart, so a quote written
with ordinary tokens, or any other text, inside a string can never confuse the structure)."""

_BARE = MarkerScanner((Q, "{", "}"))
_BARE_IN_STRING = MarkerScanner((Q,))
_START, _TEXT, _OPENER, _HEAD, _BODY_S, _AFTER, _BARE_HEAD, _BARE_BODY, _BARE_AFTER, _WRAP_HEAD = range(10)


def read_body(text: str, strings: list[str], schema: dict, max_depth: int) -> tuple["_Body", dict, int]:
    """Read a complete body: as written (``key:value``), else, when that fails, also taking ``key=value``
    (``equals_separator``), so the lenient reading never changes a body that reads as written. Returns the reader
    (its ``repairs`` and unread ``strings``), the arguments and where they ended; raises what the first reading
    raised when neither reads."""
    reader = _Body(text, strings, schema, max_depth)
    try:
        args, end = reader.arguments()
        return reader, args, end
    except BodyError as exc:
        if "=" not in text:
            raise
        first = exc
    reader = _Body(text, strings, schema, max_depth, lenient=True)
    try:
        args, end = reader.arguments()
    except BodyError:
        raise first from None
    return reader, args, end


class BodyError(ValueError):
    """The call body is not Gemma object notation (even after the accepted repairs)."""


class TooDeep(ValueError):
    """The arguments nest deeper than ``Limits.max_depth``."""


class _Body:
    """A recursive-descent reader of one complete call body (the text after ``{``)."""

    def __init__(self, text: str, strings: list[str], schema: dict, max_depth: int = 64, lenient: bool = False):
        self.text, self.i, self.schema, self.lenient = text, 0, schema, lenient
        self.strings = iter(strings)
        self.depth, self.max_depth = 0, max_depth
        self.repairs: list[tuple[str, str]] = []
        self.last = len(text.rstrip(BLANKS)) - 1  # the body's last non-blank character

    def enter(self) -> None:
        self.depth += 1
        if self.depth > self.max_depth:
            raise TooDeep(f"the arguments nest deeper than {self.max_depth} levels (Limits.max_depth)")

    def repair(self, code: str, message: str) -> None:
        if all(c != code for c, _ in self.repairs):
            self.repairs.append((code, message))

    def ws(self) -> None:
        t, i = self.text, self.i
        while i < len(t) and t[i] in BLANKS:
            i += 1
        self.i = i

    def arguments(self) -> tuple[dict, int]:
        """The top-level object (its ``{`` already read); returns it and where it ended."""
        return self.obj(top=True), self.i

    def obj(self, top: bool = False) -> dict:
        self.enter()
        out: dict = {}
        t = self.text
        self.ws()
        if t.startswith("}", self.i):
            self.i += 1
            self.depth -= 1
            return out
        while True:
            self.ws()
            key = self.key()
            self.ws()
            if self.lenient and t.startswith("=", self.i):
                self.repair("equals_separator", "a key and its value were joined by '=' instead of ':'")
            elif not t.startswith(":", self.i):
                raise BodyError(f"expected ':' after key {key!r}")
            self.i += 1
            self.ws()
            prop = parameter_schema(self.schema, key) if top else None
            out[key] = self.value(string_typed=bool(top and prop is not None and is_string_schema(prop))
                                  or (top and not self.schema.get("properties")), top=top)
            self.ws()
            if self.i >= len(t):
                self.repair("missing_closing_brace", "the arguments object was not closed")
                return out
            c = t[self.i]
            if c == ",":
                self.i += 1
                if self.trailing_comma("}"):
                    self.depth -= 1
                    return out
                continue
            if c == "}":
                self.i += 1
                self.depth -= 1
                return out
            if _KEY_NEXT.match(t, self.i):  # the next key:value with no ',' before it
                self.repair("missing_comma", f"no ',' between the value of {key!r} and the next key")
                continue
            raise BodyError(f"unexpected {c!r} after the value of {key!r}")

    def trailing_comma(self, closer: str) -> bool:
        """After a ``,``: whether the container's ``closer`` follows at once (a trailing comma, read past)."""
        self.ws()
        if not self.text.startswith(closer, self.i):
            return False
        self.i += 1
        self.repair("trailing_comma", f"a ',' came right before the closing {closer!r}")
        return True

    def key(self) -> str:
        t = self.text
        if t.startswith(STRING, self.i):
            return self.gemma_string()
        if t.startswith('"', self.i):
            return self.json_string()
        j = self.i
        stops = ':=,{}[]' if self.lenient else ':,{}[]'
        while j < len(t) and t[j] not in stops and t[j] != STRING:
            j += 1
        if j == len(t) or t[j] not in ":=":
            raise BodyError("expected a key")
        key, self.i = t[self.i:j], j
        stripped = key.rstrip(BLANKS)  # blanks before the ':' are layout when the schema names the key without them
        if stripped != key and self.depth == 1 and parameter_schema(self.schema, key) is None \
                and parameter_schema(self.schema, stripped) is not None:
            return stripped
        return key

    def gemma_string(self) -> str:
        self.i += 1
        value = next(self.strings, None)
        if value is None:
            raise BodyError("a <|\"|> string was not closed")
        return value

    def json_string(self) -> str:
        try:
            value, end = json.JSONDecoder().raw_decode(self.text, self.i)
        except json.JSONDecodeError:
            raise BodyError("a double-quoted string was not valid JSON") from None
        self.i = end
        self.repair("json_string_value", 'a string was written in JSON quotes ("…") instead of <|"|>')
        return value

    def value(self, string_typed: bool = False, top: bool = False) -> Any:
        t = self.text
        if self.i >= len(t):
            raise BodyError("a value is missing")
        c = t[self.i]
        if c == STRING:
            return self.gemma_string()
        if c == '"':
            return self.json_string()
        if c == "'":
            end = t.find("'", self.i + 1)
            if end < 0:
                raise BodyError("a single-quoted string was not closed")
            value = t[self.i + 1:end]
            self.i = end + 1
            self.repair("single_quoted_value", "a string was written in single quotes instead of <|\"|>")
            return value
        if c == "{":
            self.i += 1
            return self.obj()
        if c == "[":
            self.i += 1
            return self.array()
        return self.bare(string_typed, top)

    def array(self) -> list:
        self.enter()
        out: list = []
        t = self.text
        self.ws()
        if t.startswith("]", self.i):
            self.i += 1
            self.depth -= 1
            return out
        while True:
            self.ws()
            out.append(self.value())
            self.ws()
            if self.i >= len(t):
                raise BodyError("a list was not closed")
            c = t[self.i]
            self.i += 1
            if c == "]":
                self.depth -= 1
                return out
            if c != ",":
                raise BodyError(f"unexpected {c!r} in a list")
            if self.trailing_comma("]"):
                self.depth -= 1
                return out

    def bare(self, string_typed: bool, top: bool) -> Any:
        t = self.text
        j = self.i
        stops = ",}]" if not (string_typed and top) else ",}"
        while j < len(t) and t[j] not in stops and t[j] != STRING:
            j += 1
        word = t[self.i:j].strip()
        m = _NUMBER.fullmatch(word)
        if m:
            self.i = j
            return float(word) if (m.group(1) or m.group(2)) else int(word)
        if word in _LITERALS:
            self.i = j
            return _LITERALS[word]
        if not string_typed and _LAX_NUMBER.fullmatch(word):
            self.i = j
            self.repair("lax_number", f"a number was written {word!r} (a digit missing beside its '.')")
            return float(word)
        if word in _PYTHON:
            self.i = j
            self.repair("python_literal", f"a Python literal {word!r} was written")
            return _PYTHON[word]
        if not word or not string_typed:
            raise BodyError(f"a bare value {word!r} is no number or literal")
        if string_typed and top:  # a raw value runs to the last ',' or '}' that ends the body's value
            j = self._raw_end(j)
            word = t[self.i:j].strip()
        self.i = j
        self.repair("unquoted_string_value", "a string value was written without quotes")
        return word

    def _raw_end(self, j: int) -> int:
        """A raw (unquoted) string value: it ends at a ``,`` followed by ``key:``, at the body's last ``}`` or
        at a ``<|"|>`` string."""
        t = self.text
        last = self.last
        k = j
        while k < len(t):
            c = t[k]
            if c == STRING:  # a raw value never spans a <|"|> string
                return k
            if c == "," and _KEY_AHEAD.match(t, k + 1):
                return k
            if c == "}" and k == last:
                return k
            k += 1
        return k


class GemmaParser(StepParser):
    """Gemma 4 output (see the module docstring)."""

    family = GEMMA4
    def __init__(self, tools: Sequence[Any] | None = None, *, thinking: bool = False, **options: Any):
        super().__init__(tools, thinking=thinking, **options)
        self._schemas = tool_schemas(tools)
        self._mode = "reasoning" if thinking else "content"
        self._state = _START
        self._fresh = True           # nothing read yet in the current reasoning block
        self._head: list[str] = []
        self._head_len = 0
        self._body: list[str] = []      # the body's structure text, each string replaced by STRING
        self._strings: list[str] = []   # the body's <|"|> strings, in order
        self._raw: list[str] = []       # the body as written
        self._in_string = False
        self._string_at = 0
        self._call: CallBuilder | None = None
        self._call_repairs: list[tuple[str, str]] = []
        self._gap = ""
        self._lead = BARE_CALL      # what a call without <|tool_call> was written after: call: or a wrapper

    def _start(self, buf: str, pos: int, final: bool) -> int | None:
        """The very start of reasoning the prompt opened: a repeated ``<|channel>thought`` is dropped."""
        if self._mode == "reasoning":
            i = self._skip_blanks(buf, pos)
            if not final and self._may_still_be(buf, i, CH_OPEN):
                keep = i - (buf[i - 1:i] == "\n") if i > pos else i  # (a last newline may start "\n<channel|>")
                if keep > pos:  # blanks: read once, kept aside (in the idle head list) until what follows decides
                    self._head.append(buf[pos:keep])
                    return keep
                return None
            lead, self._head = "".join(self._head), []
            if self._marker_at(buf, i, CH_OPEN):
                self._diag("duplicate_reasoning_open", "the model opened the reasoning the prompt had opened",
                           raw=CH_OPEN)
                self._state = _OPENER
                return i + len(CH_OPEN)
            self._emit_reasoning(lead)
        self._state = _TEXT
        return pos

    def _text(self, buf: str, pos: int, final: bool) -> int | None:
        reasoning = self._mode == "reasoning"
        hit = (_REASONING if reasoning else _CONTENT).scan(buf, pos, final=final, literal=self._tokens)
        emit = self._emit_reasoning if reasoning else self._emit_content
        emit(buf[pos:hit.start])
        marker = hit.marker
        if marker is None:
            return None if hit.start == pos else hit.start
        end = hit.end
        if marker in STOPS:
            return self._stop_token(buf, pos, hit, final, emit)
        if marker == CALL_OPEN:
            self._state, self._head, self._head_len = _HEAD, [], 0
            self._call_repairs = []
            return end
        if marker in (BARE_CALL, WRAPPER_OPEN):  # from token ids a call needs its control-token opener: text
            if self._reading_ids():
                self._emit_content(marker)
            else:
                self._lead = marker
                self._state = _BARE_HEAD if marker == BARE_CALL else _WRAP_HEAD
            return end
        if marker == CH_OPEN:  # content: the model opens its reasoning
            self._mode, self._state = "reasoning", _OPENER
            return end
        # a closer
        if reasoning:
            self._mode = "content"
        else:
            self._diag("reasoning_close_in_content", f"{CH_CLOSE} came with no reasoning open", raw=CH_CLOSE)
        return end

    def _opener(self, buf: str, pos: int, final: bool) -> int | None:
        """After ``<|channel>``: the channel name ``thought`` and its newline are framing."""
        rest = buf[pos:pos + len(THOUGHT)]
        if not final and self._may_still_be(buf, pos, THOUGHT):
            return None
        self._state = _TEXT
        if rest == THOUGHT:
            return pos + len(THOUGHT)
        if rest.startswith("thought") and not rest[7:8].isalnum():
            return pos + len("thought")
        return pos

    # ---- calls
    def _header(self, buf: str, pos: int, final: bool) -> int | None:
        hit = _HEADER.scan(buf, pos, final=final, literal=self._tokens)
        piece = buf[pos:hit.start]
        self._head.append(piece)
        self._head_len += len(piece)
        overflow = self._head_len - MAX_HEADER_CHARS
        if overflow > 0 or (hit.marker is not None and hit.marker != "{"):
            header = "".join(self._head)
            if overflow > 0:  # cut at the limit, wherever the deltas ended: the rest is read as text again
                header = header[:MAX_HEADER_CHARS]
            self._diag("malformed_call_header", "a <|tool_call> was not followed by call:NAME{; kept as text",
                       raw=CALL_OPEN + header)
            self._head = []
            self._state = _TEXT
            return hit.start - max(overflow, 0)
        if hit.marker is None:
            if final:
                self._diag("truncated_call_header", "the output ended inside a call header",
                           raw=CALL_OPEN + "".join(self._head))
                self._truncated = True
                self._head = []
                self._state = _TEXT
            return None if hit.start == pos else hit.start
        written = "".join(self._head)
        header = written.strip(BLANKS)
        self._head = []
        if header.startswith("call:"):
            name = header[5:]
        else:
            name = header[1:] if header.startswith(":") else header
            if name.lstrip(BLANKS).startswith(BARE_CALL) and not self._declares(name):
                name = name.lstrip(BLANKS)[len(BARE_CALL):]  # <|tool_call>:call:NAME{
            self._call_repairs.append(("call_prefix_variant", f"the call was written {CALL_OPEN}{header}{{ "
                                                              "instead of call:NAME{"))
        name = name.strip(BLANKS)
        if not name:
            self._diag("malformed_call_header", "a call without a name; kept as text", raw=CALL_OPEN + written + "{")
            self._state = _TEXT
            return hit.end
        source = "reasoning" if self._mode == "reasoning" else "content"
        self._call = self._begin_call(name, source=source)
        self._body, self._strings, self._raw, self._in_string = [], [], [], False
        self._state = _BODY_S
        return hit.end

    def _read_body(self, buf: str, pos: int, final: bool) -> int | None:
        scanner = _IN_STRING if self._in_string else _BODY
        hit = scanner.scan(buf, pos, final=final, literal=self._tokens)
        piece = buf[pos:hit.start]
        self._raw.append(piece)
        if self._in_string:
            self._strings.append(piece)
        else:  # the structure text: a lone surrogate here is no valid output, and must not pose as a string
            self._body.append(piece.replace(STRING, "\ufffd") if STRING in piece else piece)
        if hit.marker is None:
            if final:
                self._close_call(ended=None)
                self._state = _TEXT
            return None if hit.start == pos else hit.start
        if hit.marker == Q:
            self._raw.append(Q)
            if self._in_string:
                self._merge_string()
            else:
                self._body.append(STRING)
                self._string_at = len(self._strings)
            self._in_string = not self._in_string
            return hit.end
        if hit.marker == CALL_CLOSE:
            self._close_call(ended=CALL_CLOSE)
            # in content, whitespace before another call is framing; reasoning keeps its text as it is
            self._state, self._gap = (_AFTER if self._mode == "content" else _TEXT), ""
            return hit.end
        if hit.marker in STOPS:  # the turn ended where <tool_call|> belongs: the stop token is read as one
            self._close_call(ended=hit.marker)
            self._state = _TEXT
            return hit.start
        self._close_call(ended=CALL_OPEN)  # a new call before this one closed
        self._state, self._head, self._head_len = _HEAD, [], 0
        self._call_repairs = []
        return hit.end

    def _merge_string(self) -> None:
        """The pieces of the string just closed become one string."""
        value = "".join(self._strings[self._string_at:])
        del self._strings[self._string_at:]
        self._strings.append(value)

    def _after(self, buf: str, pos: int, final: bool) -> int | None:
        """Whitespace after a call is framing when another call follows, else content."""
        i = self._skip_blanks(buf, pos)
        self._gap += buf[pos:i]
        if self._marker_at(buf, i, CALL_OPEN):
            self._gap = ""
            self._state, self._head, self._head_len = _HEAD, [], 0
            self._call_repairs = []
            return i + len(CALL_OPEN)
        if not final and self._may_still_be(buf, i, CALL_OPEN):
            return None if i == pos else i
        if i == len(buf) and final:
            return None if i == pos else i
        self._emit_content(self._gap)
        self._gap = ""
        self._state = _TEXT
        return i

    def _close_call(self, ended: str | None) -> None:
        """Read the collected body and finish the call. ``ended``: the marker that ended it (None: the output)."""
        call = self._call
        self._call = None
        text, raw = "".join(self._body), "".join(self._raw)
        call.raw(raw)
        self._body, self._raw = [], []
        for code, message in self._call_repairs:
            self._repaired(call, code, message)
        unclosed = self._in_string  # the last string ran to the end of the call
        if self._in_string:
            self._in_string = False
            if ended is None:
                call.diag("truncated", "the output ended inside this call", severity="error")
                self._truncated = True
                self._partial(call, text, self._strings[:self._string_at])
                call.finish("truncated")
                return
            self._merge_string()
            self._repaired(call, "unclosed_string", f"a <|\"|> string was not closed before {ended}")
        try:
            reader, args, end = read_body(text, self._strings, self._schemas.get(call.name) or {}, self.limits.max_depth)
        except (TooDeep, RecursionError) as exc:
            call.reject_too_large(str(exc) if isinstance(exc, TooDeep) else "the arguments nest too deep to read")
            call.finish("rejected")
            return
        except BodyError as exc:
            if ended is None:
                call.diag("truncated", "the output ended inside this call", severity="error")
                self._truncated = True
                self._partial(call, text, self._strings)
                call.finish("truncated")
                return
            call.diag("malformed_arguments", f"the arguments are not Gemma object notation: {exc}",
                      severity="error", raw=raw)
            call.finish("rejected")
            return
        codes = [c for c, _ in reader.repairs]
        if ended is None and "missing_closing_brace" in codes:
            call.diag("truncated", "the output ended inside this call", severity="error")
            self._truncated = True
            for key, value in args.items():
                call.value(key, value)
            call.finish("truncated")
            return
        for code, message in reader.repairs:
            self._repaired(call, code, message)
        for key, value in args.items():
            call.value(key, value)
        trailing = self._rebuild(text[end:], reader.strings, unclosed)
        if ended != CALL_CLOSE:
            self._repaired(call, "missing_call_close", f"the call was not closed with {CALL_CLOSE}")
        call.finish()
        if trailing.strip():
            self._diag("text_after_call_body", "text between a call's closing brace and its end was kept as "
                       "content", raw=trailing, severity="warning")
            self._emit_content(trailing)

    @staticmethod
    def _rebuild(structure: str, strings: Any, unclosed: bool) -> str:
        """Body text as written, from its structure text and the strings not yet read (the last one left open
        when ``unclosed``)."""
        pending = list(strings)
        out, n = [], 0
        for ch in structure:
            if ch == STRING:
                value = pending[n] if n < len(pending) else ""
                n += 1
                out.append(Q + value + ("" if unclosed and n == len(pending) else Q))
            else:
                out.append(ch)
        return "".join(out)

    @staticmethod
    def _repaired(call: CallBuilder, code: str, message: str) -> None:
        call.diag(code, message + "; accepted", severity="warning")
        if call.status == "proposed":
            call.status = "repaired"

    @staticmethod
    def _partial(call: CallBuilder, text: str, strings: list[str]) -> None:
        """What a truncated body says so far, when it reads as a whole (else nothing: the raw text keeps it)."""
        reader = _Body(text, strings, {}, call.parser.limits.max_depth)
        try:
            args, _ = reader.arguments()
        except (BodyError, TooDeep, RecursionError):
            return
        for key, value in args.items():
            call.value(key, value)

    # ---- a call without <|tool_call> (issue 33 drift)
    def _declares(self, name: str) -> bool:
        """Whether ``name`` (as written, stripped) is a declared tool."""
        return self._names is not None and name.strip(BLANKS) in self._names

    def _wrap_head(self, buf: str, pos: int, final: bool) -> int | None:
        """After ``<tool_call>`` in content: blanks, then ``call:`` or not, then what :meth:`_bare_head` reads."""
        i = self._skip_blanks(buf, pos)
        if not final and (i == len(buf) or self._may_still_be(buf, i, BARE_CALL)):
            return None
        if i - pos > MAX_HEADER_CHARS:  # (blanks only: nothing else is held here)
            self._emit_content(self._lead)
            self._state = _TEXT
            return pos
        prefix = BARE_CALL if buf.startswith(BARE_CALL, i) else ""
        self._lead = WRAPPER_OPEN + buf[pos:i] + prefix
        self._state = _BARE_HEAD
        return i + len(prefix)

    def _bare_head(self, buf: str, pos: int, final: bool) -> int | None:
        """After ``call:`` in content: a name, then ``{``. Only a declared name starts a call (whose body is
        held until its braces close); anything else is content, as before."""
        i, n = pos, len(buf)
        while i < n and i - pos <= MAX_HEADER_CHARS and (buf[i].isalnum() or buf[i] in "_-."):
            i += 1
        if i == n and not final and i - pos <= MAX_HEADER_CHARS:
            return None
        name = buf[pos:i]
        if name and i < n and buf[i] == "{":
            if self._names is not None and name in self._names:
                self._head, self._head_len = [name], 1  # the name, and the braces' depth
                self._body, self._strings, self._raw, self._in_string = [], [], [], False
                self._state = _BARE_BODY
                return i + 1
            if self._names is not None:  # without declared tools nothing is said (docs/variants.md)
                self._diagnostics.append(refused_diagnostic(MISSING_CALL_WRAPPER, f"{name!r} is not a declared tool",
                                                            raw=self._lead + name + "{"))
        self._emit_content(self._lead)
        self._state = _TEXT
        return pos

    def _bare_body(self, buf: str, pos: int, final: bool) -> int | None:
        """The body of a call without ``<|tool_call>``, up to the ``}`` that closes its ``{`` (outside strings)."""
        hit = (_BARE_IN_STRING if self._in_string else _BARE).scan(buf, pos, final=final, literal=self._tokens)
        piece = buf[pos:hit.start]
        self._raw.append(piece)
        if self._in_string:
            self._strings.append(piece)
        else:
            self._body.append(piece.replace(STRING, "\ufffd") if STRING in piece else piece)
        marker = hit.marker
        if marker is None:
            if final:
                self._close_bare(complete=False)
            return None if hit.start == pos else hit.start
        self._raw.append(marker)
        if marker == Q:
            if self._in_string:
                self._merge_string()
            else:
                self._body.append(STRING)
                self._string_at = len(self._strings)
            self._in_string = not self._in_string
            return hit.end
        self._body.append(marker)
        self._head_len += 1 if marker == "{" else -1
        if self._head_len == 0:
            self._close_bare(complete=True)
        return hit.end

    def _close_bare(self, complete: bool) -> None:
        """A call without ``<|tool_call>`` ended (``complete``: its braces closed). It is a call when its body
        reads as Gemma object notation whose arguments fit the declared tool (``missing_call_wrapper``);
        otherwise its text is content, as it was before issue 33, with the code at ``info`` saying why."""
        name, text, raw, strings = self._head[0], "".join(self._body), "".join(self._raw), self._strings
        self._head, self._head_len, self._body, self._raw, self._strings = [], 0, [], [], []
        self._in_string = False
        lead = self._lead
        written = lead + name + "{" + raw
        args, why, reader = None, "the output ended before the call's braces closed", None
        if complete:
            try:
                reader, args, end = read_body(text, strings, self._schemas.get(name) or {}, self.limits.max_depth)
                why = f"the arguments do not fit {name!r}"
                if text[end:].strip(BLANKS) or not declared(self.tools).arguments_fit(name, args):
                    args = None
            except (BodyError, TooDeep, RecursionError):
                why = "the body is not Gemma object notation"
        if args is None:
            self._diagnostics.append(refused_diagnostic(MISSING_CALL_WRAPPER, why, raw=lead + name + "{"))
            self._emit_content(written)
            self._state = _TEXT
            return
        call = self._begin_call(name, source="content")
        call.raw(raw)
        for code, message in reader.repairs:
            self._repaired(call, code, message)
        drift = drift_diagnostic(MISSING_CALL_WRAPPER, f"{lead}{name}{{ came without {CALL_OPEN} before it",
                                 raw=lead + name + "{")
        call.diag(drift.code, drift.message, raw=drift.raw)
        call.status = "repaired" if call.status == "proposed" else call.status
        for key, value in args.items():
            call.value(key, value)
        call.finish()
        self._state, self._gap = _BARE_AFTER, ""

    def _bare_after(self, buf: str, pos: int, final: bool) -> int | None:
        """After a call without ``<|tool_call>``: its orphan ``<tool_call|>`` (or, after a ``<tool_call>``
        wrapper, ``</tool_call>``) is dropped (``drift_orphan_call_closer``); anything else is content again."""
        i = self._skip_blanks(buf, pos)
        self._gap += buf[pos:i]
        closers = (CALL_CLOSE, WRAPPER_CLOSE) if self._lead.startswith(WRAPPER_OPEN) else (CALL_CLOSE,)
        for closer in closers:
            if self._marker_at(buf, i, closer):
                index = self._call_count - 1
                self._diagnostics.append(drift_diagnostic(
                    ORPHAN_CALL_CLOSER, f"{closer} closed call {index}, whose {CALL_OPEN} was missing; dropped",
                    raw=closer, call_index=index))
                self._state, self._gap = _AFTER, ""
                return i + len(closer)
        if not final and any(self._may_still_be(buf, i, closer) for closer in closers):
            return None if i == pos else i
        self._emit_content(self._gap)
        self._gap = ""
        self._state = _TEXT
        return i

    def _at_end(self) -> None:
        if self._gap:
            self._emit_content(self._gap)
            self._gap = ""

    _STEPS = (_start, _text, _opener, _header, _read_body, _after, _bare_head, _bare_body, _bare_after, _wrap_head)
    """The step of each state (_START, _TEXT, _OPENER, _HEAD, _BODY_S, _AFTER, _BARE_HEAD, _BARE_BODY,
    _BARE_AFTER, _WRAP_HEAD): :mod:`toolwire.parsers.engine.steps`."""
