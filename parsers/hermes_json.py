"""Stream parser for the Qwen/Hermes JSON family: ``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>``.

Used by ``qwen25``, ``qwen3``, ``qwen3_instruct_2507`` and ``qwen3_thinking_2507``; the subclasses only
say how reasoning starts (never, an optional leading ``<think>`` written by the model, or already opened
by the prompt).

How a call body is read:

* The body is scanned as JSON (:class:`~toolwire.parsers.engine.json_scan.JsonValueScanner`), so a
  ``</tool_call>`` or ``<tool_call>`` inside a JSON string is data. The body ends with its object;
  what follows up to ``</tool_call>`` must be blank.
* When the body opens the canonical way (``{"name": "NAME", "arguments":``), the call starts at once
  and its argument text streams raw as ``ArgumentsDelta`` fragments while it arrives (the
  :class:`~toolwire.parsers.engine.json_arguments.ArgumentsStream` rule: only up to the last strict-JSON safe point).
  Any other body (keys in another order, Python-style JSON, a code fence ...) is decoded when it ends.
* At the first character that cannot continue strict JSON the body is scanned for the next
  ``</tool_call>`` (or ``<tool_call>``, or ``</think>`` for a call inside reasoning) instead, and the
  whole body goes through the repair ladder (:func:`~toolwire.parsers.engine.json_repair.decode_arguments`).
* An output that ends inside a call gives a ``truncated`` candidate; an unknown tool name or a call
  written inside ``<think>`` is ``rejected`` with a diagnostic (``promote_reasoning_calls=True``
  accepts the latter).

Framing whitespace is not content: one ``\\n`` after ``<think>`` and before ``</think>``, the newlines
after ``</think>`` and the ``\\n`` before each ``<tool_call>``. An answer whose whole content is one JSON object
``{"name": <declared tool>, "arguments": {...}}``, or a JSON array of them, is read as ``repaired`` calls with
``missing_call_wrapper`` (only when every name is declared; ``bare_json_calls=False`` turns it off). A trailing
``<|im_end|>`` is stripped (``stop_token_in_output``). The accepted variants are listed in ``docs/variants.md``.

Drift (issue 33), with tools declared only: a body the format's reading cannot use goes through the readings of
:mod:`~toolwire.parsers.engine.drift_json` (``<function=NAME>`` bodies, Python calls, ``function=NAME`` keys,
``args`` / ``input`` keys, blank-padded names, a string left open), recovered only when the declared tools make
the call unambiguous; a ``{"name": ...`` object at a line start is held back until an orphan ``</tool_call>``
after it makes it a call (``missing_call_wrapper``) or it goes to the content as written. So is a JSON value written
inside ``<tools>`` … ``</tools>`` (the wrapper of the prompt's tool list, which Qwen2.5-Coder writes around its calls
instead of ``<tool_call>``; vLLM's ``qwen2_5_coder`` parser exists for it): one call object or an array of them,
each naming a declared tool with fitting arguments, is read as those calls (``missing_call_wrapper``); anything
else goes to the content as written.
"""

from __future__ import annotations

import json
from enum import IntEnum
from typing import Any, Sequence

import regex

from .engine.call_builder import CallBuilder
from .engine.drift import MISSING_CALL_WRAPPER, DeclaredTools, drift_diagnostic, refused_diagnostic
from .engine import drift_json
from .engine.stream import StreamParser
from .engine.json_arguments import (
    ArgumentsStream,
    call_object_bounds,
    diagnostic_severity,
    finish_call,
    stream_arguments,
)
from .engine.json_scan import JsonValueScanner
from .engine.json_repair import repair_ladder, LadderResult, call_object_arguments, element_texts
from .engine.lexer import MarkerScanner
from .engine.safe_json import loads, utf8_size
from .engine.stop_tokens import TrailingStopToken

from toolwire.families.hermes_json import MARKERS, QWEN25, QWEN3, QWEN3_INSTRUCT_2507, QWEN3_THINKING_2507

M = MARKERS


_CALL_OPENERS = (M["call_open"], "\n" + M["call_open"])
_THINK_CLOSERS = (M["think_close"], "\n" + M["think_close"])
_CONTENT_SCAN = MarkerScanner(_CALL_OPENERS)
_CONTENT_THINK_SCAN = MarkerScanner(_CALL_OPENERS + _THINK_CLOSERS)  # families with a reasoning block
_LINE_OBJECT = "\n{"  # with declared tools: a call object at a line start may be a call whose opener is missing
# with declared tools: Qwen2.5-Coder's calls inside the tool list's wrapper instead of <tool_call> (not markers of
# this family, which writes them only as prompt text: read by this drift reading alone)
_TOOLS_OPEN, _TOOLS_CLOSE = "<tools>", "</tools>"
_DRIFT_CONTENT_SCAN = MarkerScanner(_CALL_OPENERS + (_LINE_OBJECT, _TOOLS_OPEN))
_DRIFT_CONTENT_THINK_SCAN = MarkerScanner(_CALL_OPENERS + _THINK_CLOSERS + (_LINE_OBJECT, _TOOLS_OPEN))
_BRACE_RUN = regex.compile(r"\}{1,64}(?=[\x00-\x1f]|$)"  # closing braces that may end a string left open, or
                           r"|'[ \t]{0,8},[ \t]{0,8}\"(?=[^,}\]: \t\r\n\"]|$)")  # a closing ' then the next key
_ORPHAN_HEAD = regex.compile(r'\{[ \t\n\r]*"name"[ \t\n\r]*:')  # how such an object must open
_REASONING_SCAN = MarkerScanner(_CALL_OPENERS + _THINK_CLOSERS)
_BODY_END_SCAN = MarkerScanner((M["call_close"], M["call_open"]))
_REASONING_BODY_END_SCAN = MarkerScanner((M["call_close"], M["call_open"], M["think_close"]))
_THINK_CLOSE_SCAN = MarkerScanner((M["think_close"],))
_THINK_START = (M["think_open"] + "\n", M["think_open"])

# the canonical body opening; the match must end at the ':' so where it ends never depends on chunking
_HEAD = regex.compile(r'[ \t\n\r]*\{[ \t\n\r]*"name"[ \t\n\r]*:[ \t\n\r]*"((?:[^"\\\x00-\x1f]|\\.)*)"'
                      r'[ \t\n\r]*,[ \t\n\r]*"(arguments|parameters)"[ \t\n\r]*:')
_HEAD_LIMIT = 512  # longer openings are decoded when the body ends instead of streamed
_JSON_WS = " \t\n\r"

class HermesState(IntEnum):
    """Where a Hermes JSON stream parser is (the index of its step in ``_steps``)."""

    START = 0            # the very start: a <think> the model writes may open reasoning
    CONTENT = 1
    REASONING = 2
    CALL = 3             # inside <tool_call>...</tool_call>
    BARE = 4             # a bare JSON answer that may be calls without the wrapper
    REASONING_START = 5  # the start of reasoning the prompt opened
    ORPHAN = 6           # a call object at a line start, held until an orphan </tool_call> decides (issue 33)
    TOOLS = 7            # after <tools> in content: held until its JSON value and </tools> decide (issue 33)


_START, _CONTENT, _REASONING, _CALL, _BARE, _REASONING_START, _ORPHAN, _TOOLS = HermesState


class _CallBody:
    """One ``<tool_call>`` body while it streams in."""

    __slots__ = ("source", "parts", "scanner", "head", "call", "args", "args_offset", "args_key", "tail", "held_run")

    def __init__(self, source: str, max_depth: int):
        self.source = source
        self.parts: list[str] = []        # the body's JSON phase text
        self.scanner = JsonValueScanner(max_depth)
        self.head: str | None = ""        # opening text while it may still be canonical; None once decided
        self.call: CallBuilder | None = None
        self.args: ArgumentsStream | None = None
        self.args_offset = -1             # body position where the argument value starts (after blanks)
        self.args_key = ""                # "arguments" or "parameters" (an alias), as the opening wrote it
        self.tail: list[str] | None = None  # text after the JSON ended (or after a grammar error)
        self.held_run = ""                # "}}" ending a string value before a raw newline: not streamed (issue 33)

    def text(self) -> str:
        return "".join(self.parts) + "".join(self.tail or ())

    def larger_than(self, limit: int) -> bool:
        """Whether the UTF-8 size of :meth:`text` passes ``limit``, without joining it (nor encoding it while
        4 bytes a character stay within the limit)."""
        pieces = (*self.parts, *(self.tail or ()))
        chars = sum(map(len, pieces))
        if chars > limit or 4 * chars <= limit:
            return chars > limit
        return sum(map(utf8_size, pieces)) > limit

    def after_arguments(self) -> str | None:
        """The JSON-phase text after the streamed argument value (the call object's closing ``}`` and blanks),
        or None when the value has not ended."""
        args = self.args
        if args is None or not args.scanner.done:
            return None
        end = self.args_offset + args.scanner.end  # body position just past the value
        rest: list[str] = []
        pos = sum(map(len, self.parts))
        for part in reversed(self.parts):
            if pos <= end:
                break
            pos -= len(part)
            rest.append(part[max(0, end - pos):])
        return "".join(reversed(rest))


class HermesJsonParser(TrailingStopToken, StreamParser):
    """Qwen2.5 / Qwen3-Instruct-2507: no reasoning block; content and ``<tool_call>`` JSON calls.

    Start state (the convention of every family): ``thinking=True`` means the prompt opened ``<think>``, so
    the output starts as reasoning (a ``<think>`` the model writes again at its very start is dropped, with
    ``duplicate_reasoning_open``); ``thinking=False`` starts in content, where a ``<think>`` the model writes
    as the very first thing still opens reasoning (Qwen3) and a ``</think>`` is dropped from the content
    with ``reasoning_close_in_content``. Qwen2.5 and Qwen3-Instruct-2507 have no reasoning of their own
    (their prompts never open it): ``thinking=True`` still starts in reasoning, but in content mode their
    ``<think>`` tags are plain content."""

    has_reasoning = False        # the model writes <think> blocks of its own (Qwen3, Qwen3-Thinking-2507)
    think_tag_at_start = False   # the model may open <think> itself as the first thing it writes (Qwen3)

    def __init__(self, tools: Sequence[Any] | None = None, *, thinking: bool = False, bare_json_calls: bool = True,
                 **options: Any):
        super().__init__(tools, thinking=thinking, **options)
        self.bare_json_calls = bool(bare_json_calls)
        self._declared = DeclaredTools.of(tools)  # None: no tools declared, no drift recovery (issue 33)
        self._content_scan = _CONTENT_THINK_SCAN if self.has_reasoning or thinking else _CONTENT_SCAN
        if self._declared is not None:
            self._content_scan = (_DRIFT_CONTENT_THINK_SCAN if self._content_scan is _CONTENT_THINK_SCAN
                                  else _DRIFT_CONTENT_SCAN)
        self._orphan: list | None = None  # [scanner, held parts, their length] while a call object is held
        self._orphan_skip = False         # the held text went back to content: its "\n{" is content
        self._tools_block: list | None = None  # [scanner, held parts, their length] after <tools>
        self._mode = _REASONING_START if thinking else _START if self.think_tag_at_start else _CONTENT
        self._after_think = False        # drop the newlines that follow </think>
        self._bare_open = self.bare_json_calls  # a bare JSON answer is still possible
        self._bounds = call_object_bounds(self.limits)  # a body is a call object around the arguments
        self._bare: JsonValueScanner | None = None
        self._bare_parts: list[str] = []
        self._body: _CallBody | None = None
        self._return_mode = _CONTENT
        self._steps = (self._at_start, self._in_content, self._in_reasoning, self._in_call, self._in_bare,
                       self._at_reasoning_start, self._in_orphan, self._in_tools)

    # ---- the state machine: each step consumes what it can and says whether to go on
    def _advance(self, final: bool) -> None:
        held = self._hold_stop_token(final)
        steps = self._steps
        while steps[self._mode](final):
            pass
        self._buf += held

    def _at_reasoning_start(self, final: bool) -> bool:
        """Reasoning the prompt opened: a ``<think>`` written again at its very start is dropped."""
        buf = self._buf
        blank = len(buf) - len(buf.lstrip(_JSON_WS))
        opener = M["think_open"]
        rest = buf[blank:blank + len(opener)]
        if not final and (blank == len(buf) or (len(rest) < len(opener) and opener.startswith(rest))):
            sent = blank - (buf[blank - 1:blank] == "\n")  # (a last newline may start "\n</think>")
            if sent > 0:  # the blanks are reasoning whatever follows them: sent now, so a long run is read once
                self._emit_reasoning(buf[:sent])
                self._buf = buf[sent:]
            return False
        self._mode = _REASONING
        if rest == opener and self._marker_at(buf, blank, opener):
            end = blank + len(opener)
            if buf.startswith("\n", end) or (not final and end == len(buf)):
                if end == len(buf):  # wait for the character after it (the usual "\n" goes with it)
                    self._mode = _REASONING_START
                    return False
                end += 1
            self._emit_reasoning(buf[:blank])
            self._diag("duplicate_reasoning_open", "the prompt already opened the reasoning; the model wrote "
                       f"{opener!r} again at its start (dropped)", raw=buf[blank:end])
            self._buf = buf[end:]
        return True
    def _at_start(self, final: bool) -> bool:
        buf = self._buf
        for opener in _THINK_START:
            if self._marker_at(buf, 0, opener) and (len(buf) > len(opener) or final or opener != M["think_open"]):
                self._buf = buf[len(opener):]
                self._mode = _REASONING
                return True
        if not final and _THINK_START[0].startswith(buf):
            return False
        self._mode = _CONTENT
        return True

    def _in_content(self, final: bool) -> bool:
        buf = self._buf
        if self._after_think:
            buf = buf.lstrip("\n")
            self._buf = buf
            if not buf:
                return False
            self._after_think = False
        if self._bare_open:
            blank = len(buf) - len(buf.lstrip(_JSON_WS))
            if blank == len(buf) and not final:  # blanks only: kept aside, so each piece is looked at once
                if buf:
                    self._bare_parts.append(buf)
                    self._buf = ""
                return False
            if self._bare_parts:  # the blanks read before this piece (the bare answer's parts are still unused)
                buf = self._buf = "".join(self._bare_parts) + buf
                self._bare_parts = []
                blank = len(buf) - len(buf.lstrip(_JSON_WS))
            self._bare_open = False
            if buf[blank:blank + 1] in ("{", "["):
                self._mode = _BARE
                self._bare = JsonValueScanner(self._bounds["max_depth"] + 1)
                return True
        hit = self._content_scan.scan(buf, final=final, literal=self._tokens)
        # a call object at a line start may be a call whose <tool_call> the model left out (text input only: fed
        # ids, a call needs its control-token opener, so ids can never make a call of text a model quoted)
        while hit.marker == _LINE_OBJECT and (self._reading_ids() or not (self._orphan_skip and hit.start == 0)
                                              and _ORPHAN_HEAD.match(buf, hit.start + 1, min(len(buf), hit.start + 65),
                                                                     partial=True) is None):
            hit = self._content_scan.scan(buf, hit.end, final=final, literal=self._tokens)  # a plain "{": content
        if hit.marker == _LINE_OBJECT:
            skip, self._orphan_skip = self._orphan_skip and hit.start == 0, False
            if skip:  # held, then given back: content now
                self._emit_content(_LINE_OBJECT)
                self._buf = buf[hit.end:]
                return True
            self._emit_content(buf[:hit.start])
            self._buf = buf[hit.start:]
            self._orphan = [None, [], 0]
            self._mode = _ORPHAN
            return True
        self._orphan_skip = False
        self._emit_content(buf[:hit.start])
        if hit.marker is None:
            self._buf = buf[hit.start:]
            return False
        self._buf = buf[hit.end:]
        if hit.marker == _TOOLS_OPEN:  # maybe calls in the tool list's wrapper (text only, as missing_call_wrapper)
            if self._reading_ids():
                self._emit_content(hit.marker)
            else:
                self._tools_block = [None, [hit.marker], 0]
                self._mode = _TOOLS
            return True
        if hit.marker in _THINK_CLOSERS:  # no reasoning is open: the closer is not content
            self._diag("reasoning_close_in_content", f"{M['think_close']!r} with no reasoning open; the text "
                       "before it stays content", raw=hit.marker)
            self._after_think = True
            return True
        self._open_call("content", _CONTENT)
        return True

    def _in_reasoning(self, final: bool) -> bool:
        buf = self._buf
        hit = _REASONING_SCAN.scan(buf, final=final, literal=self._tokens)
        self._emit_reasoning(buf[:hit.start])
        if hit.marker is None:
            self._buf = buf[hit.start:]
            if final:
                self._diag("reasoning_not_closed", "the output ended inside the reasoning block (no </think>)",
                           severity="info")
            return False
        self._buf = buf[hit.end:]
        if hit.marker in _THINK_CLOSERS:
            self._mode = _CONTENT
            self._after_think = True
        else:
            self._open_call("reasoning", _REASONING)
        return True

    def _reasoning_unclosed(self) -> bool:
        """The output ended inside the reasoning (after a call in it, too): issue 33's unclosed-reasoning calls."""
        return self._mode in (_REASONING, _REASONING_START)

    # ---- calls
    def _open_call(self, source: str, return_mode: int) -> None:
        self._body = _CallBody(source, self._bounds["max_depth"])
        self._return_mode = return_mode
        self._mode = _CALL
        self._bare_open = False

    def _in_call(self, final: bool) -> bool:
        """A call body. With tools declared, a run of ``}`` inside a streamed string value is held back until the
        next character says what it is: a raw control character after it (the ``\\n`` before ``</tool_call>``)
        makes it the object's end with the string's quote missing (``drift_unclosed_string``), so it is not
        streamed as string text; anything else streams it as usual. So is ``', "`` inside a string: when the
        character after it is not one JSON allows after a string (``,`` ``}`` ``]`` ``:`` a blank or ``"``), the
        ``'`` may be the string's closing quote written wrong (``drift_wrong_quote``: ``"Paris', "days": 2``) and
        the run is not streamed as string text; otherwise it streams as usual."""
        body = self._body
        if (body.tail is not None or (body.args is None and body.head is None) or self._declared is None
                or body.source == "reasoning"):
            return self._in_call_body(final)
        buf = self._buf
        m = _run_at(buf, 0)
        if m is None:
            return self._in_call_body(final)
        if m.start():  # where the runs are in a string: found on a copy of the scanner, so the text goes on in one
            probe, at = _copy_scanner(body.scanner), 0  # piece (its events cut as before) unless one is
            while m is not None:
                if probe.feed(buf[at:m.start()]) >= 0 or not probe.strict:
                    return self._in_call_body(final)  # the JSON phase ends before this run
                if probe.in_string and probe._esc == 0:
                    break
                probe.feed(m.group())
                at = m.end()
                m = _run_at(buf, at)
            if m is None:
                return self._in_call_body(final)
            if m.start():  # the text before the run in a string, as usual; then the run is decided
                self._buf = buf[:m.start()]
                self._in_call_body(False)
                self._buf += buf[m.start():]
                return True
        scanner = body.scanner
        if not (scanner.strict and scanner.in_string and not scanner.done and scanner._esc == 0):
            self._buf = buf[:m.end()]  # not inside a string: the run is read as usual
            self._in_call_body(False)
            self._buf += buf[m.end():]
            return True
        if m.end() == len(buf):
            if not final:
                return False  # wait for the character after the run
            return self._in_call_body(final)
        body.held_run = m.group()  # a raw control character follows: the run goes to the tail, not streamed
        body.tail = []
        return True

    def _in_call_body(self, final: bool) -> bool:
        body = self._body
        buf = self._buf
        if body.tail is None:  # JSON phase
            scanner = body.scanner
            before = scanner.pos
            closer = None
            if body.source == "reasoning":  # the reasoning's close ends the call, even inside a JSON string
                closer = _THINK_CLOSE_SCAN.scan(buf, final=final, literal=self._tokens)
                end = scanner.feed(buf[:closer.start])
            else:  # (inside the arguments' long string values the usual step is a string run)
                end = -1 if scanner.string_run(buf) else scanner.feed(buf)
            upto = scanner.error_pos - before if not scanner.strict else end if end >= 0 else (
                len(buf) if closer is None else closer.start)
            self._body_text(body, buf[:upto])
            self._buf = buf = buf[upto:]
            if scanner.strict and end < 0:
                if closer is not None and closer.marker is not None:
                    self._end_call(truncated=False, unclosed=closer.marker)
                    return True
                if final:
                    self._end_call(truncated=True)
                    return True
                return False
            body.tail = []
        scan = _REASONING_BODY_END_SCAN if body.source == "reasoning" else _BODY_END_SCAN
        hit = scan.scan(buf, final=final, literal=self._tokens)
        if buf[:hit.start]:
            body.tail.append(buf[:hit.start])
        if hit.marker is None:
            self._buf = buf[hit.start:]
            if final:
                self._end_call(truncated=True)
                return True
            return False
        if hit.marker == M["call_close"]:
            self._buf = buf[hit.end:]
            self._end_call(truncated=False)
        else:  # a new <tool_call> or </think> before this call was closed: end it here
            self._buf = buf[hit.start:]
            self._end_call(truncated=False, unclosed=hit.marker)
        return True

    def _body_text(self, body: _CallBody, text: str) -> None:
        """Add JSON-phase body text: detect the canonical opening, then stream the argument text."""
        if not text:
            return
        body.parts.append(text)
        if body.args is not None:
            self._feed_arguments(body, text)
            return
        if body.head is None:
            return
        body.head += text
        m = _HEAD.match(body.head, partial=True)
        if m is not None and m.partial and len(body.head) <= _HEAD_LIMIT:
            return
        head, body.head = body.head, None
        if m is None or m.partial:
            return
        try:
            name = json.loads('"' + m.group(1) + '"')
        except ValueError:
            return
        if not name.strip():  # names no tool: not a call (see _end_call), the body is only kept
            return
        if self._drift_name(name):  # a drifted name a recovery may read: decided when the body ends
            return
        body.call = self._begin_call(name, source=body.source)
        body.args = stream_arguments(body.call)
        body.args_key = m.group(2)
        body.args_offset = m.end()
        self._feed_arguments(body, head[m.end():])

    @staticmethod
    def _feed_arguments(body: _CallBody, text: str) -> None:
        """Argument text to the stream; blanks before the value are left out (the stream's raw text then
        starts at the value, so it is the call's raw arguments without a copy)."""
        args = body.args
        if not args.scanner.pos:
            blank = len(text) - len(text.lstrip(_JSON_WS))
            body.args_offset += blank
            text = text[blank:]
            if not text:
                return
        args.feed(text)

    def _end_call(self, *, truncated: bool, unclosed: str | None = None) -> None:
        """Decode the finished (or cut-off) body and emit the candidate."""
        body, self._body = self._body, None
        self._mode = self._return_mode
        if truncated:
            self._truncated = True
        decoded = None if truncated or unclosed is not None else self._strict_body(body)
        canonical = decoded is not None  # then the whole body text is never needed (nor joined)
        text = ""
        if not canonical:
            text = body.text()
            decoded = repair_ladder(text, truncated, closed=not truncated and unclosed is None, **self._bounds)
        value = decoded.value
        name = value.get("name") if value is not None else None
        args, key, repairs = call_object_arguments(value)
        diags = list(decoded.diagnostics) + repairs
        if repairs and decoded.status == "proposed":
            decoded = decoded._replace(status="repaired")
        if unclosed is not None:
            diags.append(("call_not_closed", f"the call has no </tool_call>; it ends at {unclosed}"))
        call, stream = body.call, body.args
        if (call is None and not truncated and unclosed is None and self._declared is not None
                and not (isinstance(name, str) and name in self._names and isinstance(args, dict))
                and self._drift_call(body, text, value)):
            return
        if call is not None and value is None and not truncated and unclosed is None and self._declared is not None:
            if self._drift_streamed(body, text):
                return
        if body.held_run and body.args is not None:  # not recovered: the held run streams as the string text
            self._feed_arguments(body, body.held_run)
        if call is None and truncated and not isinstance(name, str):
            name = _complete_name(text)
            if name is None:  # the output ended before the name was complete: no call
                self._diag("truncated_call_header", "the output ended inside a <tool_call> before the call's "
                           "name was complete; no call is started", severity="error", raw=M["call_open"] + text)
                return
        if call is None and not isinstance(name, str):  # no readable name: no call, the text is kept
            self._diag("malformed_tool_call", "a <tool_call> body that is not a JSON object with a string \"name\"; "
                       "no call is started, the text is kept here", severity="error", raw=M["call_open"] + text)
            for code, message in diags:
                self._diag(code, message, severity=diagnostic_severity(code))
            return
        if call is None and not name.strip():  # names no tool: no call, the text is kept
            self._diag("not_a_tool_call", "a <tool_call> whose \"name\" is empty names no tool; no call is "
                       "started, the text is kept here", severity="error", raw=M["call_open"] + body.text())
            return
        if call is None:
            call = self._begin_call(name, source=body.source)
            stream = stream_arguments(call)
        _note_extra_keys(call, value, text, key)
        if not isinstance(name, str) or name != call.name:
            if value is not None or body.call is None:
                diags.append(("malformed_tool_call", "the <tool_call> body is not a JSON object with the "
                                                     "call's string \"name\""))
            args = None
        elif not isinstance(args, dict):
            diags.append(("arguments_not_object", "\"arguments\" is missing or not a JSON object"))
        if isinstance(args, dict):
            args_text = None
            if body.args is not None:  # align the repaired text with what was streamed
                args_text = body.args.raw if decoded.status == "proposed" else _value_text(
                    decoded.text, body.args_offset)
            closed = stream.close(decoded=LadderResult(args, decoded.status, [], args_text))
        else:
            status = decoded.status if decoded.status != "proposed" else "rejected"
            closed = stream.close(decoded=LadderResult(None, status, [], None))
        status = closed.status
        if body.args is None:
            raw = text.strip(_JSON_WS)   # not streamed: the whole body is the raw text
        elif canonical:  # the streamed value is the raw text (it starts and ends with its brackets)
            raw = closed.raw
        else:  # the argument value as written (found brace- and string-aware even when malformed)
            raw = _value_text(text, body.args_offset)
            if raw is None:  # not an object or array: the rest of the body without the outer brace
                raw = text[body.args_offset:].rstrip(_JSON_WS)
                raw = raw[:-1] if raw.endswith("}") else raw
            raw = raw.strip(_JSON_WS)
            if decoded.diagnostics:  # the body was not clean JSON: keep all of it
                call.diag("call_body", "the whole <tool_call> body, as written", severity="info", raw=text)
        finish_call(call, closed._replace(status=status, diagnostics=closed.diagnostics + diags, raw=raw))

    def _drift_name(self, name: str) -> bool:
        """Whether a canonical opening's ``name`` is not declared but a drift reading may make it one (blanks
        around it, ``function=NAME``): then the call is not streamed, the body is read when it ends."""
        tools = self._declared
        if tools is None or name in tools.names:
            return False
        if name.startswith("function="):
            name = name[len("function="):]
        return tools.resolve_name(name) is not None

    def _drift_call(self, body: _CallBody, text: str, value: Any) -> bool:
        """A closed body the format's reading cannot use: a drift reading of it (issue 33). Recovered: the call is
        emitted ``repaired`` with the recovery's diagnostic (raw = the body) and True is returned. Refused: an
        ``info`` diagnostic says why, and the body goes on the usual way (False)."""
        reading = drift_json.read_call_body(text, value, self._declared, max_depth=self._bounds["max_depth"],
                                            max_bytes=self._bounds["max_bytes"])
        if reading is None:
            return False
        raw = M["call_open"] + text
        if isinstance(reading, drift_json.Refused):
            self._diagnostics.append(refused_diagnostic(reading.code, reading.why, raw))
            return False
        call = self._begin_call(reading.name, source=body.source)
        call.diagnostics.append(drift_diagnostic(reading.code, reading.message, raw, call.index))
        closed = stream_arguments(call).close(decoded=LadderResult(reading.arguments, "repaired", [], None))
        finish_call(call, closed._replace(raw=text.strip(_JSON_WS)))
        return True

    def _drift_streamed(self, body: _CallBody, text: str) -> bool:
        """A streamed call whose body does not decode: a string left unclosed before the object's end, or a string
        quoted with the wrong quote. Recovered (True) when nothing sent reads otherwise (the unclosed string's
        closing braces were held back; the re-quoted arguments start with what was streamed) and the declared
        tools make the call unambiguous; else the refusal says why (False)."""
        reading = drift_json.read_call_body(text, None, self._declared, max_depth=self._bounds["max_depth"],
                                            max_bytes=self._bounds["max_bytes"])
        if reading is None:
            return False
        raw_body = M["call_open"] + text
        fixed = None
        if isinstance(reading, drift_json.Recovered) and reading.requoted_at is not None:
            # a wrong quote: recovered only when what was streamed is a prefix of the re-quoted arguments (the
            # opening quote written ', where the stream stopped; a closing ' came after string text already sent)
            at = reading.requoted_at
            fixed = text[:at] + '"' + text[at + 1:]
            args_text = _value_text(fixed, body.args_offset)
            if args_text is None or not args_text.startswith(body.args.sent.lstrip(_JSON_WS)):
                fixed = None
        elif isinstance(reading, drift_json.Recovered) and body.held_run:
            end = len(text.rstrip(_JSON_WS))
            fixed = text[:end - reading.closed_at] + '"' + text[end - reading.closed_at:]
        if isinstance(reading, drift_json.Refused) or fixed is None or reading.name != body.call.name:
            why = reading.why if isinstance(reading, drift_json.Refused) else (
                "the call's arguments were streamed as written before the output showed the quote "
                + ("written wrong" if reading.requoted_at is not None else "missing"))
            self._diagnostics.append(refused_diagnostic(reading.code, why, raw_body))
            return False
        call = body.call
        call.diagnostics.append(drift_diagnostic(reading.code, reading.message, raw_body, call.index))
        closed = body.args.close(decoded=LadderResult(reading.arguments, "repaired", [],
                                                      _value_text(fixed, body.args_offset)))
        raw = text[body.args_offset:].rstrip(_JSON_WS)
        finish_call(call, closed._replace(raw=raw[:-1] if raw.endswith("}") else raw))
        return True

    def _strict_body(self, body: _CallBody) -> LadderResult | None:
        """What the repair ladder would make of a closed body that is strict JSON of the canonical shape
        (``{"name": ..., "arguments": <streamed value>}`` and blanks), decoded from the streamed argument text
        alone, so the whole body is never joined: None for any other body (then the ladder decodes it)."""
        args = body.args
        if (args is None or body.args_key != "arguments" or not (args.scanner.done and args.scanner.strict and body.scanner.done
                                 and body.scanner.strict) or any(t.strip(_JSON_WS) for t in body.tail or ())):
            return None
        after = body.after_arguments()
        if after is None or after.strip(_JSON_WS) != "}" or body.larger_than(self._bounds["max_bytes"]):
            return None
        # the body's pieces are not needed in this case, nor the fragments once joined: let them go before
        # decoding (a long output is then held about twice: raw text and value)
        body.parts = []
        raw = args.compact(body.call.fragments)
        # the scanners checked the grammar and the nesting bound, so this is the value json.loads gives
        value = {"name": body.call.name, "arguments": loads(raw, max_depth=None)}
        return LadderResult(value, "proposed", [], None)

    # ---- a call object whose <tool_call> is missing (issue 33)
    def _in_orphan(self, final: bool) -> bool:
        """A JSON object at a line start in content, with tools declared: held while it may be a call whose
        ``<tool_call>`` the model left out, i.e. until its object ends and what follows (blanks, then an orphan
        ``</tool_call>``) decides. Recovered only when its name is declared and its arguments fit
        (``missing_call_wrapper``); otherwise the held text is content again, as it was."""
        held = self._orphan
        buf = self._buf
        if held[0] is None:  # the "\n{" marker is at the buffer's start: the object starts after the "\n"
            head = buf[1:1 + 64]
            m = _ORPHAN_HEAD.match(head, partial=True)
            if m is None:
                return self._orphan_back()
            if m.partial:
                if final or len(head) >= 64:
                    return self._orphan_back()
                return False
            held[0] = JsonValueScanner(self._bounds["max_depth"])
            held[1].append(buf[:1])
            self._buf = buf = buf[1:]
        step = self._held_value(held, final, self._orphan_back)
        if step is not None:
            return step
        buf = self._buf
        parts = held[1]
        blank = len(buf) - len(buf.lstrip(_JSON_WS))
        closer = M["call_close"]
        rest = buf[blank:blank + len(closer)]
        if not final and (blank == len(buf) or (len(rest) < len(closer) and closer.startswith(rest))):
            return False
        if rest != closer or not self._marker_at(buf, blank, closer):
            return self._orphan_back()
        text = "".join(parts[1:])
        raw = "".join(parts) + buf[:blank + len(closer)]
        try:
            value = loads(text, max_depth=self._bounds["max_depth"], max_bytes=self._bounds["max_bytes"])
        except ValueError:
            return self._orphan_back()
        args, _, _ = call_object_arguments(value)
        name = value.get("name") if isinstance(value, dict) else None
        if not isinstance(name, str) or set(value) - {"name", "arguments", "parameters"}:
            reading = drift_json.Refused(MISSING_CALL_WRAPPER, "the object is not a call object")
        else:
            reading = drift_json.settle(MISSING_CALL_WRAPPER, self._declared, name, args,
                                        f"a call object before an orphan {closer!r}, without {M['call_open']!r}; "
                                        "read as the call")
        if isinstance(reading, drift_json.Refused):
            self._diagnostics.append(refused_diagnostic(reading.code, reading.why, raw.lstrip("\n")))
            return self._orphan_back()
        self._orphan = None
        self._buf = buf[blank + len(closer):]
        self._mode = _CONTENT
        call = self._begin_call(reading.name, source="content")
        call.diagnostics.append(drift_diagnostic(reading.code, reading.message, raw.lstrip("\n"), call.index))
        closed = stream_arguments(call).close(decoded=LadderResult(reading.arguments, "repaired", [], None))
        finish_call(call, closed._replace(raw=_arguments_text(text)))
        return True

    def _held_value(self, held: list, final: bool, back) -> bool | None:
        """The buffer read into a held JSON value (``held``: its scanner, the held parts, their length): None once
        the value is complete (the buffer then holds what follows it); else the step's answer: False to wait for
        more, or ``back()`` when the text is not one JSON value within the limits."""
        scanner, parts, _ = held
        if scanner.done:
            return None
        buf = self._buf
        end = scanner.feed(buf)
        if not scanner.strict:
            return back()
        piece = buf if end < 0 else buf[:end]
        parts.append(piece)
        held[2] += len(piece)
        self._buf = buf[len(piece):]
        if not scanner.done:
            return back() if final or held[2] > self._bounds["max_bytes"] else False
        return None

    def _orphan_back(self) -> bool:
        """Not a call after all: the held text is content again (its ``\\n{`` read as content)."""
        parts = self._orphan[1]
        self._buf = "".join(parts) + self._buf
        self._orphan = None
        self._orphan_skip = not parts or parts[0] == "\n"  # (not after a bare answer: no "\n{" to skip)
        self._mode = _CONTENT
        return True

    # ---- calls written inside <tools> ... </tools> (issue 33)
    def _in_tools(self, final: bool) -> bool:
        """After ``<tools>`` in content, with tools declared: blanks, one JSON value, blanks, then ``</tools>`` (or
        the end of the output). Held until then; read as calls when the value is a call object or an array of
        them, each naming a declared tool with arguments that fit (``missing_call_wrapper``); otherwise the held
        text is content again, as it was."""
        held = self._tools_block
        buf = self._buf
        if held[0] is None:
            blank = len(buf) - len(buf.lstrip(_JSON_WS))
            if blank == len(buf):
                if final:
                    return self._tools_back()
                held[1].append(buf)
                self._buf = ""
                return False
            if buf[blank] not in "{[":
                return self._tools_back()
            held[0] = JsonValueScanner(self._bounds["max_depth"] + 1)
            held[1].append(buf[:blank])
            self._buf = buf = buf[blank:]
        step = self._held_value(held, final, self._tools_back)
        if step is not None:
            return step
        buf = self._buf
        parts = held[1]
        blank = len(buf) - len(buf.lstrip(_JSON_WS))
        rest = buf[blank:blank + len(_TOOLS_CLOSE)]
        if not final and (blank == len(buf) or (len(rest) < len(_TOOLS_CLOSE) and _TOOLS_CLOSE.startswith(rest))):
            return False
        closed = rest == _TOOLS_CLOSE
        if not closed and blank < len(buf):  # text after the value inside the wrapper: not this shape
            return self._tools_back()
        end = blank + len(_TOOLS_CLOSE) if closed else blank
        text = "".join(parts[1:]).lstrip(_JSON_WS)  # the value (the blanks before it were held with it)
        raw = "".join(parts) + buf[:end]
        readings = self._tools_readings(text)
        if isinstance(readings, drift_json.Refused):
            self._diagnostics.append(refused_diagnostic(readings.code, readings.why, raw))
            return self._tools_back()
        self._tools_block = None
        self._buf = buf[end:]
        self._mode = _CONTENT
        elements = [text] if text[:1] == "{" else element_texts(text)
        for reading, element in zip(readings, elements):
            call = self._begin_call(reading.name, source="content")
            call.diagnostics.append(drift_diagnostic(reading.code, reading.message, raw, call.index))
            closed_args = stream_arguments(call).close(decoded=LadderResult(reading.arguments, "repaired", [], None))
            finish_call(call, closed_args._replace(raw=_arguments_text(element)))
        return True

    def _tools_readings(self, text: str) -> list | drift_json.Refused:
        """The calls a JSON value written inside ``<tools>`` holds (recovered readings, in order), or the refusal."""
        try:
            value = loads(text, max_depth=self._bounds["max_depth"] + 1, max_bytes=self._bounds["max_bytes"])
        except ValueError:
            return drift_json.Refused(MISSING_CALL_WRAPPER, "the value inside <tools> is not JSON within the limits")
        values = value if isinstance(value, list) else [value]
        if not values:
            return drift_json.Refused(MISSING_CALL_WRAPPER, "the array inside <tools> is empty")
        readings = []
        for item in values:
            name = item.get("name") if isinstance(item, dict) else None
            args, _, _ = call_object_arguments(item)
            if not isinstance(name, str) or set(item) - {"name", "arguments", "parameters"}:
                return drift_json.Refused(MISSING_CALL_WRAPPER, "a value inside <tools> is not a call object")
            reading = drift_json.settle(MISSING_CALL_WRAPPER, self._declared, name, args,
                                        f"a call object inside {_TOOLS_OPEN}…{_TOOLS_CLOSE} (the tool list's "
                                        f"wrapper), without {M['call_open']!r}; read as the call")
            if isinstance(reading, drift_json.Refused):
                return reading
            readings.append(reading)
        return readings

    def _tools_back(self) -> bool:
        """Not calls after all: ``<tools>`` is content, and the text held after it is read again as content."""
        parts = self._tools_block[1]
        self._emit_content(parts[0])
        self._buf = "".join(parts[1:]) + self._buf
        self._tools_block = None
        self._mode = _CONTENT
        return True

    # ---- bare JSON answers (option)
    def _in_bare(self, final: bool) -> bool:
        scanner = self._bare
        buf = self._buf
        if not scanner.done:
            end = scanner.feed(buf)
            if not scanner.strict:
                return self._replay_bare()
            piece = buf if end < 0 else buf[:end]
            self._bare_parts.append(piece)
            self._buf = buf = buf[len(piece):]
            if not scanner.done:
                if final:
                    return self._replay_bare()
                return False
        if buf.strip(_JSON_WS):
            if self._declared is not None and scanner.strict and buf.lstrip(_JSON_WS)[:1] == "<":
                text = "".join(self._bare_parts)  # maybe a call object before an orphan </tool_call>
                blank = len(text) - len(text.lstrip(_JSON_WS))
                if text[blank:blank + 1] == "{":
                    self._orphan = [scanner, [text[:blank], text[blank:]], len(text)]
                    self._bare_parts, self._bare = [], None
                    self._mode = _ORPHAN
                    return True
            return self._replay_bare()
        if not final:
            return False
        text = "".join(self._bare_parts) + buf
        calls = self._bare_calls(text)
        if calls is None:
            return self._replay_bare()
        self._buf = ""
        wrapper = ("missing_call_wrapper", "the whole answer is " + (
            "a JSON array of call objects" if len(calls) > 1 or text.lstrip(_JSON_WS)[:1] == "[" else
            "one JSON call object") + " naming declared tools, without <tool_call>; read as tool calls")
        for (value, args, key, diags), raw in zip(calls, element_texts(text) if len(calls) > 1 or
                                                  text.lstrip(_JSON_WS)[:1] == "[" else [text.strip(_JSON_WS)]):
            call = self._begin_call(value["name"], source="content")
            closed = stream_arguments(call).close(decoded=LadderResult(args, "repaired", [], None))
            _note_extra_keys(call, value, raw, key)
            finish_call(call, closed._replace(diagnostics=[wrapper] + diags, raw=raw))
        self._mode = _CONTENT
        return False

    def _bare_calls(self, text: str) -> list | None:
        """The calls a bare JSON answer holds (an object, or an array of objects), each as ``(object,
        arguments, key, repairs)``; None unless every one names a declared tool with an object of arguments."""
        if text.lstrip(_JSON_WS)[:1] == "[":
            try:
                values = loads(text, max_depth=self._bounds["max_depth"] + 1, max_bytes=self._bounds["max_bytes"])
            except ValueError:
                return None
            ladder: list = []
            if not isinstance(values, list) or not values:
                return None
        else:
            decoded = repair_ladder(text, False, **self._bounds)
            values, ladder = [decoded.value], list(decoded.diagnostics)
        calls = []
        for value in values:
            name = value.get("name") if isinstance(value, dict) else None
            args, key, repairs = call_object_arguments(value)
            if not (isinstance(name, str) and self._names and name in self._names and isinstance(args, dict)):
                return None
            calls.append((value, args, key, ladder + repairs))
        return calls

    def _replay_bare(self) -> bool:
        """Not a bare call after all: parse the held text as ordinary content."""
        self._buf = "".join(self._bare_parts) + self._buf
        self._bare_parts = []
        self._bare = None
        self._mode = _CONTENT
        return True


def _note_extra_keys(call: CallBuilder, value: Any, body: str, key: str | None = "arguments") -> None:
    """Keys next to "name" and "arguments" are ignored; the diagnostic keeps the body they came in."""
    extra = sorted(set(value) - {"name", key or "arguments"}) if isinstance(value, dict) else []
    if extra:
        call.diag("extra_call_fields", f"ignored key(s) {extra} next to \"name\" and \"arguments\"",
                  raw=body)


_NAME_FIRST = regex.compile(r'[ \t\n\r]*\{[ \t\n\r]*"name"[ \t\n\r]*:[ \t\n\r]*"((?:[^"\\\x00-\x1f]|\\.)*)"')


def _complete_name(body: str) -> str | None:
    """The name of a cut-off body that opens ``{"name": "NAME"`` with NAME complete, else None."""
    m = _NAME_FIRST.match(body)
    if m is None:
        return None
    try:
        return json.loads('"' + m.group(1) + '"')
    except ValueError:
        return None


def _copy_scanner(scanner: JsonValueScanner) -> JsonValueScanner:
    """A scanner in the same state, to look ahead with."""
    copy = JsonValueScanner.__new__(JsonValueScanner)
    for slot in JsonValueScanner.__slots__:
        setattr(copy, slot, getattr(scanner, slot))
    copy._stack = list(scanner._stack)
    return copy


def _arguments_text(body: str) -> str:
    """The arguments value as written in a call object ``body`` that opens canonically, else the whole body."""
    m = _HEAD.match(body)
    if m is None:
        return body
    offset = m.end() + len(body[m.end():]) - len(body[m.end():].lstrip(_JSON_WS))
    return _value_text(body, offset) or body


def _run_at(buf: str, at: int):
    """The first run :data:`_BRACE_RUN` finds in ``buf`` from ``at``, or its beginning cut by the buffer's end (a
    partial match, decided when the text goes on); never an empty one."""
    m = _BRACE_RUN.search(buf, at, partial=True)
    return None if m is None or m.start() == m.end() else m


def _value_text(text: str | None, offset: int) -> str | None:
    """The JSON value starting at ``offset`` of ``text`` (None when it does not end there)."""
    if text is None:
        return None
    end = JsonValueScanner().feed(text[offset:])
    return text[offset:offset + end] if end >= 0 else None


class Qwen25Parser(HermesJsonParser):
    """Qwen2.5: no reasoning of its own."""

    family = QWEN25


class Qwen3Instruct2507Parser(HermesJsonParser):
    """Qwen3-Instruct-2507: no reasoning of its own."""

    family = QWEN3_INSTRUCT_2507


class Qwen3Parser(HermesJsonParser):
    """Qwen3: the model opens ``<think>`` itself when thinking (the very first thing it writes)."""

    family = QWEN3
    has_reasoning = True
    think_tag_at_start = True


class Qwen3ThinkingParser(Qwen3Parser):
    """Qwen3-Thinking-2507: the prompt already opened ``<think>\\n`` (its rendered prompt says so); pass
    ``prompt=`` or ``thinking=True`` to start in reasoning. ``thinking=False`` starts in content (output a
    reasoning parser already split), where a leading ``<think>`` still opens reasoning."""

    family = QWEN3_THINKING_2507
