"""The XML-call engine of the Qwen3-Coder wire and its kin (Qwen3.5/3.6/3.8, Nemotron 3, Step 3.5, Seed-OSS):
``<tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n</function>\n</tool_call>``, its
markers and stop tokens read from a family's declaration and its framing given (:class:`XmlGrammar`), parsed by
:class:`XmlToolParser` on the shared XML machinery (:mod:`.xml_calls`). docs/xml-values.md has the value rules."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from toolwire.family import Family

from .drift import drift_diagnostic
from .lexer import MarkerScanner
from .safe_json import loads
from .schema_coerce import declared_parameter
from .xml_calls import WHITESPACE, Closer, XmlCallParser, closing_text, confirm
from .xml_drift import (FUNCTION_SPACE, JSON_BODY, JSON_CALL, MISSING_CALL_WRAPPER, NAME_BRACKET, NO_TOOLS,
                        ORPHAN_CALL_CLOSER, PARAMETER_ATTRIBUTE, PARAMETER_CLOSE, attribute_opener, declared,
                        json_call, spaced, whitespace_name)
from .xml_drift_brackets import LostBracketWords

MAX_NAME_CHARS = 256
"""A function or parameter name longer than this (no ``>`` yet) is malformed, not held back forever."""
MAX_DAMAGED_TAIL = 24
"""The longest tail a damaged parameter closing tag (``</parameter`` + tail) may have in place of its ``>``."""


class XmlGrammar:
    """Markers and framing of one Qwen-style XML-call family: the markers and stop tokens are its declaration's
    (``family``), the framing is given here. Scanners are built once per grammar."""

    def __init__(self, family: Family, *, value_framing: str, reasoning_framing: str, after_think_newlines: int,
                 before_call_newlines: int = 2, bare_functions: bool = False,
                 next_parameter: tuple[str, ...] | None = None):
        m = family.markers
        call_open, call_close = m.CALL_OPEN, m.CALL_CLOSE
        function_open, parameter_open = m.FUNCTION_OPEN, m.PARAMETER_OPEN
        function_close, parameter_close = m.FUNCTION_CLOSE, m.PARAMETER_CLOSE
        self.call_open, self.call_close = call_open, call_close
        self.think_open, self.think_close = m.THINK_OPEN, m.THINK_CLOSE
        self.function_open, self.function_close = function_open, function_close
        self.parameter_open, self.parameter_close = parameter_open, parameter_close
        self.value_framing = value_framing
        self.reasoning_framing = reasoning_framing
        self.after_think_newlines = after_think_newlines
        self.before_call_newlines = before_call_newlines
        self.stop_tokens = family.stop_tokens
        self.bare_functions = bare_functions
        # an open value's text that may start the next argument (when its key is a declared parameter)
        self.next_parameter = tuple(next_parameter) if next_parameter is not None else (parameter_open,)
        # drift (issue 33): ``<function NAME>`` in a call block, ``<parameter name="KEY">`` in a call body
        self.function_spaced = spaced(function_open)
        # drift (issue 33): the tag words without their angle brackets (only where a bare <function= is read too)
        self.lost_brackets = LostBracketWords.qwen(call_open, call_close, function_open, function_close,
                                                   parameter_open, parameter_close, value_framing) \
            if bare_functions else None
        self.parameter_attribute = attribute_opener(parameter_open)
        # drift (sglang#27336): the parameter closing tag with a short tail for its ">" (drift_parameter_close),
        # read where a closing tag is written: after the value framing (so ordinary text spelling it mid-line
        # costs nothing)
        self.damaged_close = parameter_close[:-1]
        self.damaged_marker = value_framing + self.damaged_close
        self.call_scan = MarkerScanner([function_open, call_close, self.function_spaced])
        self.body_scan = MarkerScanner([parameter_open, function_close, call_close, function_open,
                                        self.parameter_attribute])
        self.after_function_scan = MarkerScanner([call_close, function_open, call_open, *self.stop_tokens])
        # what ends a value, and what must follow it (or the end of the output) for it to end the value
        self.closers: dict[str, Closer] = {
            parameter_close: Closer(parameter_close, (parameter_open, function_close, call_close,
                                                      self.parameter_attribute)),
            function_close: Closer(function_close, (call_close,), ends_call=True),
            call_close: Closer(call_close, (call_open,), ends_call=True),
        }

    def unsafe_value(self, text: str) -> str | None:
        """The closing sequence that would end ``text`` early if it were rendered as a value, else None: a closing
        tag, or a damaged parameter closing tag (``drift_parameter_close``), with its follower."""
        return closing_text(text, self.closers) or self.damaged_closing(text)

    def damaged_closing(self, text: str) -> str | None:
        """The first damaged closing tag (``</parameter`` + tail after the value framing, as
        :meth:`XmlToolParser._damaged_close` reads one) in ``text`` that a follower of the parameter closing tag
        confirms, with the whitespace and the follower; else None."""
        followers = self.closers[self.parameter_close].followers
        marker, n = self.damaged_marker, len(text)
        start = text.find(marker)
        while start != -1:
            end = limit = start + len(marker)
            limit += MAX_DAMAGED_TAIL
            while end < n and end < limit and text[end] not in WHITESPACE and text[end] not in "<>":
                end += 1
            if end < n and text[end] == ">":
                end += 1
            if end < limit or text[end - 1:end] == ">":
                verdict, k = confirm(text, end, followers, final=False)
                if verdict:
                    return text[start:k] + next(f for f in followers if text.startswith(f, k))
            start = text.find(marker, start + 1)
        return None


class XmlToolParser(XmlCallParser):
    """Stream parser for one :class:`XmlGrammar`. Subclasses set ``grammar`` and ``reasoning_start``.

    ``reasoning_start`` says what the family's own prompt does: ``"never"`` (no reasoning channel),
    ``"thinking"`` (the prompt opens the reasoning block when thinking is on) or ``"marker"`` (the model opens
    it with ``grammar.think_open``). It is informational: every family starts in reasoning exactly when
    ``thinking=True`` (the prompt opened it), and recognises ``think_open`` at the very start otherwise
    (:class:`~toolwire.parsers.engine.xml_calls.XmlCallParser`).
    """

    grammar: ClassVar[XmlGrammar]
    reasoning_start: ClassVar[str] = "never"
    states = {"call": "_call_head", "func_name": "_func_name", "body": "_body", "param_name": "_param_name",
              "after_function": "_after_function", "between": "_between_calls", "bare_name": "_bare_name",
              "next_param": "_next_param", "spaced_name": "_spaced_name", "attribute_key": "_attribute_key",
              "after_bare": "_after_bare", "damaged_close": "_damaged_close"}
    stray_code = "unexpected_text"
    stray_message = "text outside the call structure was kept here, not in any argument"

    @classmethod
    def _compile(cls) -> None:
        """The shared machinery's tables, from the grammar (the engine class itself has none)."""
        g = getattr(cls, "grammar", None)
        if g is None:
            return
        bare = (g.function_open,) if g.bare_functions else ()
        cls.text_markers = {"content": (g.call_open, *bare),
                            "reasoning": tuple(m for m in (g.think_close, g.call_open) if m)}
        cls.framing = {("content", g.call_open): g.before_call_newlines,
                       ("content", g.function_open): g.before_call_newlines,
                       ("reasoning", g.think_close): len(g.reasoning_framing)}
        cls.undecided_markers = frozenset(bare)
        cls.after_think = g.after_think_newlines
        cls.after_think_open = len(g.reasoning_framing)
        cls.think_open, cls.think_close = g.think_open, g.think_close
        cls.value_closers = g.closers
        cls.next_value_markers = (*g.next_parameter, g.damaged_marker)
        cls.value_framing = g.value_framing
        cls.stop_tokens = g.stop_tokens
        cls.lost_brackets = g.lost_brackets
        super()._compile()

    def __init__(self, tools: Sequence[Any] | None = None, *, thinking: bool = False, **options: Any):
        super().__init__(tools, thinking=thinking, **options)

    # ------------------------------------------------------------------ helpers
    def _consume(self, end: int) -> str:
        """Consume ``buf[pos:end]``; inside a function body it also becomes the call's raw text."""
        text = self._buf[self._pos:end]
        self._pos = end
        self._raw(text)
        return text

    def _read_name(self, prefix: str = "", cut: bool = True) -> str | None:
        """A name ending at ``>``; None while incomplete. Too long: :class:`_Malformed`. Inside reasoning, a
        ``think_close`` (whose ``>`` ends the search) ends the reasoning instead: the structure read so far
        (``prefix`` and the name's start) goes to :meth:`_close_reasoning_in_call`."""
        buf, pos = self._buf, self._pos
        end = buf.find(">", pos, pos + MAX_NAME_CHARS + 1)
        if end < 0:
            if len(buf) - pos > MAX_NAME_CHARS:
                raise _Malformed
            return None
        if cut and self._mode == "reasoning":
            close = self.think_close
            start = end + 1 - len(close)
            if start >= pos and buf.startswith(close, start):
                self._parts.append(prefix + buf[pos:start])
                self._pos = end + 1
                self._close_reasoning_in_call(self._take())
        return buf[pos:end]

    # ------------------------------------------------------------------ between call blocks
    def _text_marker(self, marker: str) -> None:
        if self._lost_start is not None and marker not in (self.grammar.call_open, self.grammar.function_open):
            self._lost_opener(marker)
        elif marker == self.grammar.call_open:
            self._state = "call"  # a call block opened in content or reasoning (its source)
        else:
            self._state = "bare_name"  # <function= with no call marker (content only)

    def _after_lost_brackets(self) -> None:
        self._after_block()

    def _after_block(self) -> None:
        self._state = "text" if self._mode == "reasoning" else "between"
        self._gap = []

    def _unfinished_head(self, text: str) -> str | None:
        if self._state in ("call", "func_name", "spaced_name"):
            return self.grammar.call_open + text
        return None

    def _between_calls(self, final: bool) -> bool:
        """After a call block in content: whitespace up to the next call, a stop token or the end is framing."""
        buf, pos = self._buf, self._pos
        end = pos
        while end < len(buf) and buf[end] in WHITESPACE:
            end += 1
        self._gap.append(buf[pos:end])
        self._pos = end
        call_open = self.grammar.call_open
        if end == len(buf):
            if final:
                self._gap = []
                self._state = "text"
            return False
        if self._marker_at(buf, end, call_open):
            self._gap = []
            self._pos += len(call_open)
            self._state = "call"
            return True
        if self._can_become(call_open, final):
            return False
        bare = self.grammar.function_open if self.grammar.bare_functions else None
        if bare and buf.startswith(bare, end):  # another call without its wrapper: text reads it (and the gap)
            gap = "".join(self._gap)
            self._gap = []
            self._unread(gap)
            self._state = "text"
            return True
        if bare and self._can_become(bare, final):
            return False
        stop = self._stop_at(end, final)
        if stop is None:
            return False
        if not stop:
            self._emit_content("".join(self._gap))
        self._gap = []
        self._state = "text"
        return True

    def _bare_name(self, final: bool) -> bool:
        """``<function=`` in content with no call marker before it: a call only when the name is declared."""
        g = self.grammar
        try:
            name = self._read_name()
        except _Malformed:
            name = ""
        if name is None and not final:
            return False
        framing = "".join(self._gap)
        self._gap = []
        # from token ids a call needs its control-token marker: ordinary tokens spelling <function= are text
        if name and self._names is not None and name in self._names and not self._reading_ids():
            self._pos += len(name) + 1
            self._begin(name)
            self._drift(MISSING_CALL_WRAPPER, f"{g.function_open}{name}> came without {g.call_open} around it",
                        raw=g.function_open + name + ">")
            self._state = "body"
            return True
        if name and not any(ch in name for ch in "<\n") and not self._reading_ids():
            self._refuse(MISSING_CALL_WRAPPER, NO_TOOLS if self._names is None else f"{name!r} is not a declared "
                         "tool", raw=g.function_open + name + ">")
        self._emit_content(framing + g.function_open)
        self._state = "text"
        return True

    # ------------------------------------------------------------------ call block
    def _call_head(self, final: bool) -> bool:
        g = self.grammar
        marker = self._collect(g.call_scan, final)
        if marker is None:
            return False
        junk = self._take()
        if marker == g.function_open:
            self._parts = [junk]  # stray text, diagnosed once the name is read (or given back to the reasoning)
            self._state = "func_name"
        elif marker == g.function_spaced:
            self._parts = [junk]
            self._state = "spaced_name"
        else:
            if not junk.strip(WHITESPACE):
                self._diag("empty_tool_call", "a tool-call block without a function", severity="info")
            elif self._json_call(junk):
                return True
            elif self._python_call(junk):
                self._after_block()
                return True
            self._stray(junk, "malformed_tool_call")
            self._after_block()
        return True

    def _json_call(self, text: str) -> bool:
        """A call block holding a Hermes-style JSON call instead of ``<function=NAME>`` (``drift_json_call``):
        a call when its name is declared and its arguments fit; False (the block's text stays in its
        ``malformed_tool_call`` diagnostic) otherwise."""
        found, why = json_call(self.tools, text, max_depth=self.limits.max_depth,
                               max_bytes=self.limits.max_argument_bytes)
        if not self._whole_call(JSON_CALL, found, why, text,
                                f"the call was written as a JSON object in {self.grammar.call_open}"):
            return False
        self._after_block()
        return True

    def _func_name(self, final: bool) -> bool:
        g = self.grammar
        try:
            name = self._read_name(g.function_open)
        except _Malformed:
            self._stray(self._take())
            self._stray(g.function_open + self._consume(self._pos + MAX_NAME_CHARS), "malformed_function_name")
            self._state = "call"
            return True
        if name is None:
            return False
        self._stray(self._take())
        head = self._bracketless_head(name, self._names)
        if head is not None:  # <function=NAME with its ">" missing: the declared name up to the newline
            self._pos += len(head)  # the newline and what follows are the body
            self.call = self._begin_call(head, source=self._mode)
            self._drift(NAME_BRACKET, f"{g.function_open}{head} had no '>'; the name ends at the newline",
                        raw=head + "\n")
            self._state = "body"
            return True
        self._pos += len(name) + 1
        if not name.strip(WHITESPACE):  # no name: no call starts; the block's text is kept in a diagnostic
            self._diag("empty_tool_name", "a function tag without a name; no call was started",
                       raw=g.function_open + name + ">")
            self._state = "call"
            return True
        self._begin(name)
        self._state = "body"
        return True

    @staticmethod
    def _bracketless_head(name: str, known) -> str | None:
        """The name before the first newline of ``name`` (read up to a later ``>``) when that is a declared name
        (in ``known``) and something other than whitespace follows it: the name's ``>`` was missing
        (``drift_name_bracket``). None otherwise (a name followed by a bare newline is ``tool_name_repaired``)."""
        cut = name.find("\n")
        if cut <= 0 or known is None or not name[cut:].strip(WHITESPACE):
            return None
        head = name[:cut].rstrip("\r")
        return head if head in known else None

    def _begin(self, written: str) -> None:
        name = written.rstrip("\r\n")
        resolved, why = whitespace_name(self.tools, name)
        self.call = self._begin_call(resolved or name, source=self._mode)
        if name != written:
            self._repair("tool_name_repaired", f"a trailing newline after the function name {name!r} was removed")
        self._name_drift(name, resolved, why)

    def _spaced_name(self, final: bool) -> bool:
        """``<function NAME>`` (a space for the ``=``) in a call block: a call when ``NAME`` is a declared tool
        (``drift_function_space``); otherwise the text stays in the block's stray text, as before."""
        g = self.grammar
        try:
            name = self._read_name(g.function_spaced)
        except _Malformed:
            name = ""
        if name is None and not final:
            return False
        known = declared(self.tools) if name else None
        resolved = known.resolve_name(name) if known is not None else None
        if resolved is None:  # not a call: the marker and what follows are the block's text
            if name:
                self._refuse(FUNCTION_SPACE, NO_TOOLS if known is None else f"{name.strip()!r} is not a declared "
                             "tool", raw=g.function_spaced + name + ">")
            self._parts.append(g.function_spaced)
            self._state = "call"
            return True
        self._stray(self._take())
        self._pos += len(name) + 1
        self.call = self._begin_call(resolved, source=self._mode)
        self._drift(FUNCTION_SPACE, f"{g.function_spaced}{name}> was written for {g.function_open}{resolved}>",
                    raw=g.function_spaced + name + ">")
        self._state = "body"
        return True

    def _body(self, final: bool) -> bool:
        g = self.grammar
        marker = self._collect(g.body_scan, final)
        if marker is None and not final:
            return False
        text = self._take()
        self._raw(text)
        if not (marker in (g.function_close, g.call_close) and self._json_body(text)):
            self._stray(text)
        if marker is None:
            return False
        if marker == g.parameter_attribute:
            self._state = "attribute_key"
        elif marker == g.parameter_open:
            self._raw(marker)
            self._state = "param_name"
        elif marker == g.function_close:
            self._state = self._after_function_state()
            self._finish_call()
        elif marker == g.call_close:
            self._repair("unclosed_function", f"{g.function_close} is missing before {g.call_close}")
            self._finish_call()
            self._after_block()
        else:  # a new <function= before this one was closed
            self._repair("unclosed_function", f"{g.function_close} is missing before the next function")
            self._finish_call()
            self._state = "func_name"
        return True

    def _json_body(self, text: str) -> bool:
        """A call body that is one JSON object instead of parameter tags: its arguments, when the call's tool
        is declared and they fit its schema (``drift_json_body``). False (the text stays stray text) otherwise."""
        call, body = self.call, text.strip(WHITESPACE)
        if call is None or call.arguments or not (body.startswith("{") and body.endswith("}")):
            return False
        known = declared(self.tools)
        if known is None:
            self._refuse(JSON_BODY, NO_TOOLS, raw=text)
            return False
        try:
            arguments = loads(body, max_depth=self.limits.max_depth, max_bytes=self.limits.max_argument_bytes)
        except ValueError:
            arguments = None
        if not known.arguments_fit(call.name, arguments):
            self._refuse(JSON_BODY, f"the body is not a JSON object of arguments that fit {call.name!r}", raw=text)
            return False
        for key, value in arguments.items():
            call.value(key, value)
        self._drift(JSON_BODY, f"the arguments of {call.name!r} were written as a JSON object", raw=text)
        return True

    def _attribute_key(self, final: bool) -> bool:
        """``<parameter name="KEY">`` in a call body: an argument when ``KEY`` is a declared parameter of the
        call's tool (``drift_parameter_attribute``); otherwise the element stays stray text, as before."""
        g = self.grammar
        try:
            key = self._read_name(cut=False)
        except _Malformed:
            key = ""
        if key is None and not final:
            return False
        name = key[:-1] if key and key.endswith('"') else ""
        schema = self._schemas.get(self.call.name)
        if not name or any(ch in name for ch in '<>"\n') or not declared_parameter(schema, name):
            if key:
                self._refuse(PARAMETER_ATTRIBUTE, NO_TOOLS if self._names is None else
                             f"{name or key!r} is not a declared parameter of {self.call.name!r}",
                             raw=g.parameter_attribute + key + ">")
            self._parts.append(g.parameter_attribute)  # the element is the body's stray text
            self._state = "body"
            return True
        self._raw(g.parameter_attribute)
        self._consume(self._pos + len(key) + 1)
        self._drift(PARAMETER_ATTRIBUTE, f"{g.parameter_attribute}{key}> was written for {g.parameter_open}{name}>",
                    raw=g.parameter_attribute + key + ">")
        self._start_value(name)
        return True

    def _param_name(self, final: bool) -> bool:
        try:
            key = self._read_name()
        except _Malformed:
            self._stray(self._consume(self._pos + MAX_NAME_CHARS), "malformed_parameter_name")
            self._state = "body"
            return True
        if key is None:
            return False
        head, newline, rest = key.partition("\n")
        if "<" in key or rest.strip(WHITESPACE):  # a key never holds these: the element's ">" was missing
            head = head.rstrip("\r")
            if newline and head and "<" not in head and declared_parameter(self._schemas.get(self.call.name), head):
                # the declared key up to the newline; with no value framing the newline stood for the ">"
                self._consume(self._pos + len(head) + (0 if self.value_framing else 1))
                self._drift(NAME_BRACKET, f"{self.grammar.parameter_open}{head} had no '>'; the key ends at the "
                            "newline", raw=head + "\n")
                self._start_value(head)
                return True
            # no argument: the element's text is kept in a diagnostic, the call's other arguments go on
            self._stray(self.grammar.parameter_open + self._consume(self._pos + len(key) + 1),
                        "malformed_parameter_name")
            self._state = "body"
            return True
        self._consume(self._pos + len(key) + 1)
        self._start_value(key)
        return True

    def _after_function_state(self) -> str:
        """Where ``</function>`` leads: the call block's end, or content after a call written without it."""
        bare = any(d.code == MISSING_CALL_WRAPPER for d in self.call.diagnostics)
        return "after_bare" if bare else "after_function"

    def _after_bare(self, final: bool) -> bool:
        """After a call written without its opener: a ``</tool_call>`` next (after whitespace) is that call's
        orphan closer, dropped (``drift_orphan_call_closer``) rather than left in the content."""
        buf, pos = self._buf, self._pos
        end = pos
        while end < len(buf) and buf[end] in WHITESPACE:
            end += 1
        self._gap.append(buf[pos:end])
        self._pos = end
        close = self.grammar.call_close
        if end == len(buf) and not final:
            return False
        if self._marker_at(buf, end, close):
            self._pos = end + len(close)
            self._gap = []
            index = self._call_count - 1
            self._diagnostics.append(drift_diagnostic(
                ORPHAN_CALL_CLOSER, f"{close} closed call {index}, whose {self.grammar.call_open} was missing; "
                "dropped", raw=close, call_index=index))
        elif self._can_become(close, final):
            return False
        self._state = "between"
        return True

    def _value_closed(self, closer: Closer, gap: str) -> None:
        g = self.grammar
        if closer.tag == g.parameter_close:
            self._state = "body"
            return
        if closer.tag.startswith(g.damaged_close):  # read by _damaged_close
            self._drift(PARAMETER_CLOSE, f"{closer.tag!r} was written for {g.parameter_close}", raw=closer.tag)
            self._state = "body"
            return
        self._repair("implicit_parameter_close", f"parameter {self._key!r} was not closed with {g.parameter_close}"
                     f" before {closer.tag}")
        if closer.tag == g.call_close:
            self._repair("unclosed_function", f"{g.function_close} is missing before {g.call_close}")
            self._finish_call()
            self._after_block()
        else:
            self._state = self._after_function_state()
            self._finish_call()

    def _next_value(self, marker: str, newline: str) -> None:
        self._pending = (newline, Closer(marker, ()))
        self._state = "damaged_close" if marker == self.grammar.damaged_marker else "next_param"

    def _damaged_close(self, final: bool) -> bool:
        """``</parameter`` without its ``>`` after the value framing inside an open value: with a tail of at most
        :data:`MAX_DAMAGED_TAIL` characters (no whitespace, ``<`` or ``>``; then its ``>``, if any) it is a
        candidate closer, decided by what follows it as the real closing tag is (``drift_parameter_close``,
        :meth:`_value_closed`); otherwise it is value text."""
        lead, _ = self._pending  # a newline read as framing before the marker, whose own framing it holds
        g = self.grammar
        buf, pos = self._buf, self._pos
        n, limit = len(buf), self._pos + MAX_DAMAGED_TAIL
        end = pos
        while end < n and end < limit and buf[end] not in WHITESPACE and buf[end] not in "<>":
            end += 1
        if end == n and not final and end < limit:
            return False  # the tail may go on
        if end < n and buf[end] == ">":
            end += 1
        elif end == limit:  # too long for a damaged tag: value text (the tail is read again as value)
            self._value_piece(lead + g.damaged_marker)
            self._state = "value"
            return True
        self._value_piece(lead)
        closers = self._reasoning_closers if self._mode == "reasoning" else self.value_closers
        followers = closers[g.parameter_close].followers
        self._pending = (g.value_framing, Closer(g.damaged_close + buf[pos:end], followers))
        self._pos = end
        self._state = "closing"
        return True

    def _closing(self, final: bool) -> bool:
        """As the shared rule, except that a damaged closing tag at the very end of the output stays value text
        (an output cut inside a value keeps all of it: nothing is guessed away)."""
        newline, closer = self._pending
        g = self.grammar
        if final and closer.tag != g.parameter_close and closer.tag.startswith(g.damaged_close) \
                and not self._buf[self._pos:].strip(WHITESPACE):
            text = newline + closer.tag + "".join(self._gap) + self._buf[self._pos:]
            self._gap = []
            self._pos = len(self._buf)
            self._value_piece(text)
            self._state = "value"
            return True
        return super()._closing(final)

    def _next_param(self, final: bool) -> bool:
        """``<parameter=`` inside an open value: it closes the value when it names a declared parameter of the
        tool (``implicit_parameter_close``); otherwise it is value text."""
        newline, closer = self._pending
        try:
            key = self._read_name(cut=False)
        except _Malformed:
            key = ""
        if key is None and not final:
            return False
        call, g = self.call, self.grammar
        if key and not any(ch in key for ch in "<\n") and declared_parameter(self._schemas.get(call.name), key):
            self._close_value()
            self._repair("implicit_parameter_close", f"parameter {self._key!r} was not closed with "
                         f"{g.parameter_close} before the next {g.parameter_open}{key}>")
            self._raw(newline + closer.tag)
            self._state = "param_name"
            return True
        self._value_piece(newline + closer.tag)
        self._state = "value"
        return True

    def _after_function(self, final: bool) -> bool:
        g = self.grammar
        marker = self._between(g.after_function_scan, final)
        if marker is None:
            return False
        if marker == g.call_close:
            self._after_block()
        elif marker in self._stop_closers:  # the turn ended with the call block still open
            self._diag("unclosed_tool_call", f"{g.call_close} is missing before {marker}", severity="info")
            self._pending = ("", self._stop_closers[marker])
            self._state = "stop"
        elif marker == g.function_open:
            self._state = "func_name"
        else:
            self._diag("unclosed_tool_call", f"{g.call_close} is missing before the next {g.call_open}",
                       severity="info")
            self._state = "call"
        return True

    # ------------------------------------------------------------------ end of output
    def _at_end(self) -> None:
        state, g = self._state, self.grammar
        if state in ("call", "func_name"):
            rest = self._buf[self._pos:]
            self._pos = len(self._buf)
            text = g.call_open + self._take() + (g.function_open if state == "func_name" else "") + rest
            self._diag("truncated_call_header", "the output ended inside a tool call before its function name "
                       "was complete", severity="error", raw=text)
            self._truncated = True
        elif self.call is not None:
            if state == "param_name":
                self.call.diag("truncated_parameter", "the output ended inside a parameter name",
                               raw=g.parameter_open + self._consume(len(self._buf)))
            elif state in ("value", "closing"):
                self._close_value()
            self.call.diag("truncated_call", "the output ended before the call was complete", severity="error")
            self._finish_call("truncated")
            self._truncated = True
        elif state == "after_function":
            self._diag("unclosed_tool_call", f"the output ended before {g.call_close}", severity="info")
        self._state = "text"


class _Malformed(Exception):
    """A name ran past MAX_NAME_CHARS without its closing ``>``."""


__all__ = ["MAX_NAME_CHARS", "XmlGrammar", "XmlToolParser"]
