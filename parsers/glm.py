"""Stream parsers for GLM-4.5 / 4.6 (:class:`GlmParser`), GLM-4.7 (:class:`Glm47Parser`) and GLM-5.3
(:class:`Glm53Parser`, GLM-4.7's output grammar).

Output grammar (what follows the generation prompt):

* 4.5 / 4.6: ``\\n`` framing, an optional ``<think>...</think>`` at the very start, ``\\n``, content, and
  calls each framed as ``\\n<tool_call>NAME\\n<arg_key>k</arg_key>\\n<arg_value>v</arg_value>\\n...</tool_call>``.
  The generation prompt never opens reasoning; the model writes ``<think>`` itself.
* 4.7: no framing at all. With thinking on the prompt already opened ``<think>``, so the output starts
  inside reasoning and ``</think>`` ends it.
* 5.3: as 4.7; its prompt always opens ``<think>``.

Only the framing newlines are removed; values are byte-exact. A value ends at ``</arg_value>`` followed by
``<arg_key>`` / ``</tool_call>`` / ``<tool_call>`` / the end of output; a value left unclosed ends at ``</tool_call>`` followed
by ``<tool_call>`` / the end (diagnosed repair). A newline ends the call name: framing in 4.5 / 4.6, a
diagnosed repair in 4.7. Names are matched exactly against the declared tools.

Drift (issue 33, docs/variants.md "Drift recovery"), with declared tools and only when unambiguous: a name with
whitespace after it, a closing tag glued to it, the name glued to the first key, a Python call
``NAME(k=v)`` as the whole block, and the tag words without their angle brackets (``tool_call>NAME`` ...
``/tool_call>``) at a line start of content.
"""

from __future__ import annotations

from .engine.lexer import MarkerScanner
from .engine.xml_calls import Closer, XmlCallParser
from .engine.xml_drift import (GLUED_NAME, NO_TOOLS, PYTHON_START, STRAY_CLOSER, declared,
                               stray_closer_name)
from .engine.xml_drift_brackets import LostBracketWords

from toolwire.families.glm import GLM45, GLM46, GLM47, GLM53, MARKERS
M = MARKERS

CALL_OPEN, CALL_CLOSE = M["call_open"], M["call_close"]
KEY_OPEN, KEY_CLOSE = M["key_open"], M["key_close"]
VALUE_OPEN, VALUE_CLOSE = M["value_open"], M["value_close"]

_HEAD = MarkerScanner(("\n", KEY_OPEN, CALL_CLOSE))
_GLUED_HEAD = MarkerScanner(("\n", KEY_OPEN, CALL_CLOSE, KEY_CLOSE))
"""A head's first scan in content: also ``</arg_key>``, which ends a name glued to the first key (drift)."""
_REASONING_HEAD = MarkerScanner((KEY_OPEN, CALL_CLOSE))
_PYTHON_REST = MarkerScanner((CALL_CLOSE, CALL_OPEN))
"""The rest of a head that starts as a Python call and met a newline: held to ``</tool_call>`` (drift)."""
_ARGS = MarkerScanner((KEY_OPEN, CALL_CLOSE, CALL_OPEN))
_KEY = MarkerScanner((KEY_CLOSE, VALUE_OPEN, CALL_CLOSE))
_AFTER_KEY = MarkerScanner((VALUE_OPEN, VALUE_CLOSE, KEY_OPEN, CALL_CLOSE, CALL_OPEN))



class GlmParser(XmlCallParser):
    """GLM-4.5 / 4.6 output: newline framing, the model opens ``<think>`` itself (only at the start)."""

    text_markers = {"content": (CALL_OPEN,), "reasoning": (M["think_close"], CALL_OPEN)}
    framing = {("content", CALL_OPEN): 1}
    after_think = 1
    value_closers = {
        VALUE_CLOSE: Closer(VALUE_CLOSE, (KEY_OPEN, CALL_CLOSE, CALL_OPEN)),
        CALL_CLOSE: Closer(CALL_CLOSE, (CALL_OPEN,), ends_call=True),
    }
    states = {"start": "_start", "head": "_head", "head_on": "_head", "args": "_args", "key": "_key_state",
              "after_key": "_after_key", "python_rest": "_python_rest"}
    newline_after_name = True
    lost_brackets = LostBracketWords.glm(CALL_OPEN, CALL_CLOSE, KEY_OPEN, KEY_CLOSE, VALUE_OPEN, VALUE_CLOSE)
    """``tool_call>NAME`` ... ``/tool_call>``: a call whose tag words lost their brackets (drift, issue 33)."""

    def __init__(self, tools=None, **options):
        super().__init__(tools, **options)
        self._begin()

    def _begin(self) -> None:
        """The output starts with a framing newline; a ``<think>`` right after it opens the reasoning block."""
        self._skip = 1

    # ---- text
    def _text_marker(self, marker: str) -> None:
        if marker != CALL_OPEN:  # tool_call> without its bracket (drift_lost_brackets)
            self._lost_opener(marker)
            return
        self._state = "head"
        self._parts = []

    # ---- calls
    def _unfinished_head(self, text: str) -> str | None:
        return CALL_OPEN + text if self._state in ("head", "head_on") else None

    def _head(self, final: bool) -> bool:
        """The name after ``<tool_call>``, up to a newline (or ``<arg_key>`` / ``</tool_call>``). Inside the
        reasoning the head must reach ``<arg_key>`` or ``</tool_call>`` first (a ``</think>`` before them makes
        it reasoning text: a mention, not a call), and the name is what comes before its first newline."""
        reasoning = self._mode == "reasoning"
        scanner = _REASONING_HEAD if reasoning else _GLUED_HEAD if self._state == "head" else _HEAD
        marker = self._collect(scanner, final, self._head_room())
        if self._head_too_long():
            self._not_a_call(self._take_overlong_head(marker))
            return True
        if marker is None:
            return False
        head = self._take()
        if marker == KEY_CLOSE:
            self._glued_head(head)
            return True
        if marker == CALL_CLOSE and self._python_call(head):  # NAME(k=v, ...) as the whole block (drift)
            self._state = "text"
            return True
        if marker == "\n" and not reasoning and self._names is not None and PYTHON_START.match(head):
            self._parts = [head, marker]  # may be a Python call going on past a newline: held to </tool_call>
            self._state = "python_rest"
            return True
        if reasoning:
            name, newline, rest = head.partition("\n")
            if newline:  # what follows the name is read again as the space between arguments
                self._unread(rest + marker)
                marker, head = newline, name
        if not head.strip():  # no tool name at all: text, never a call with an empty name
            self._not_a_call(head)
            self._unread(marker)
            return True
        name = None if reasoning else self._stray_closer(head)
        if name is not None:
            self._open_call(name)
            self._raw(head[len(name):])
            self._drift(STRAY_CLOSER, f"a closing tag glued to the tool name {name!r} was removed", raw=head)
        else:
            self._open_call(head)
        if marker == "\n":
            if not self.newline_after_name:
                self._repair("tool_name_newline", "a newline after the tool name was removed", raw="\n")
            self._state = "args"
        elif marker == KEY_OPEN:
            self._raw(marker)
            self._state = "key"
        else:
            self._end_call()
        return True

    def _python_rest(self, final: bool) -> bool:
        """A head that starts as a Python call ``NAME(`` went on past a newline: the block is held up to
        ``</tool_call>`` (within the head's bound) and read as one call (``drift_python_call``); otherwise the head
        is read as before, the rest given back to the space between arguments."""
        marker = self._collect(_PYTHON_REST, final, self._head_room())
        if marker is None and not final and not self._head_too_long():
            return False
        head, newline, *rest = self._parts
        self._parts = []
        rest_text = "".join(rest)
        if marker == CALL_CLOSE and self._python_call(head + newline + rest_text):
            self._state = "text"
            return True
        self._open_call(head)
        if not self.newline_after_name:
            self._repair("tool_name_newline", "a newline after the tool name was removed", raw="\n")
        self._unread(rest_text + (marker or ""))
        self._state = "args"
        return True

    def _stray_closer(self, head: str) -> str | None:
        """The declared name in ``NAME</arg_value>`` / ``NAME</arg_key>`` (a closer glued to it), or None."""
        name, why = stray_closer_name(self.tools, head, (VALUE_CLOSE, KEY_CLOSE))
        if why is not None:
            self._refuse(STRAY_CLOSER, why, raw=head)
        return name

    def _glued_head(self, head: str) -> None:
        """``<tool_call>NAMEKEY</arg_key>``: the name glued to the first key, its ``<arg_key>`` lost (GLM-4.5 /
        4.7 reports; also ``NAME KEY</arg_key>``). A call of ``NAME`` with argument ``KEY`` when exactly one
        declared tool's name and one of its parameters read the head (``drift_glued_name``); otherwise the head
        reads on as before."""
        known = declared(self.tools)
        glued = head and not any(ch in "<\n" for ch in head)
        split = None
        if CALL_OPEN in head and self._reopened_head(head, known):
            return
        if glued and known is not None and head not in known.names:
            words = head.split()
            if len(words) == 1:
                split = known.split_glued(head)
            elif len(words) == 2 and words[0] in known.names and words[1] in known.properties(words[0]):
                split = (words[0], words[1])  # a space where <arg_key> was: NAME KEY</arg_key>
        if split is None:
            if glued and (known is None or head not in known.names):
                self._refuse(GLUED_NAME, NO_TOOLS if known is None else f"{head!r} is not one declared tool name "
                             "glued to one of its parameters", raw=CALL_OPEN + head + KEY_CLOSE)
            self._parts = [head + KEY_CLOSE]
            self._state = "head_on"
            return
        name, key = split
        self._open_call(name)
        self._drift(GLUED_NAME, f"the tool name {name!r} was glued to its first argument {key!r} "
                    f"({KEY_OPEN} missing)", raw=head + KEY_CLOSE)
        self._key = key
        self._raw(key + KEY_CLOSE)
        self._state = "after_key"

    def _reopened_head(self, head: str, known) -> bool:
        """``<tool_call>NAME<tool_call>KEY</arg_key>``: a second ``<tool_call>`` where the first argument's
        ``<arg_key>`` belongs (sigit #94). A call of ``NAME`` with argument ``KEY`` when ``NAME`` is a declared tool
        and ``KEY`` one of its parameters (``drift_glued_name``, its ``<arg_key>`` lost); otherwise False and the
        head reads on as before (``unknown_tool``), with the refusal said when the head has that shape."""
        name, _, key = head.partition(CALL_OPEN)
        if not name or not key or any(ch in "<\n" for ch in name + key):
            return False
        if known is None or name not in known.names or key not in known.properties(name):
            self._refuse(GLUED_NAME, NO_TOOLS if known is None else f"{name!r} is not a declared tool with the "
                         f"parameter {key!r}", raw=CALL_OPEN + head + KEY_CLOSE)
            return False
        self._open_call(name)
        self._drift(GLUED_NAME, f"a second {CALL_OPEN} stood where the {KEY_OPEN} of {name!r}'s first argument "
                    f"{key!r} belongs", raw=head + KEY_CLOSE)
        self._key = key
        self._raw(CALL_OPEN + key + KEY_CLOSE)
        self._state = "after_key"
        return True

    def _doubled_key_open(self) -> None:
        """``<arg_key><arg_key>KEY</arg_key>``: the key's opener written twice (vLLM #54971). When the call's tool
        is declared, ``KEY`` is one of its parameters and the key as read is not, the extra openers are text
        between markers (``stray_text``, as an extra ``</arg_key>`` after a key is); otherwise the key stays as
        written."""
        key = self._key
        bare = key
        while bare.startswith(KEY_OPEN):
            bare = bare[len(KEY_OPEN):]
        known = declared(self.tools)
        if bare == key or known is None or self.call is None or self.call.name not in known.names:
            return
        props = known.properties(self.call.name)
        if key not in props and bare in props:
            self._key = bare
            self._stray(key[:len(key) - len(bare)])

    def _not_a_call(self, head: str) -> None:
        text = CALL_OPEN + head
        self._diag("not_a_tool_call", f"{CALL_OPEN} was not followed by a tool name; kept as text")
        self._emit(text)
        self._state = "text"

    def _end_call(self, status: str | None = None) -> None:
        self._finish_call(status)
        self._state = "text"

    def _next_call(self) -> None:
        self._repair("unclosed_call", f"a new {CALL_OPEN} started before {CALL_CLOSE}")
        self._end_call()
        self._text_marker(CALL_OPEN)

    def _args(self, final: bool) -> bool:
        marker = self._between(_ARGS, final)
        if marker is None:
            return False
        self._next_argument(marker)
        return True

    def _next_argument(self, marker: str) -> None:
        """After an argument: the next key, the end of the call, or a new call (this one left unclosed)."""
        if marker == KEY_OPEN:
            self._raw(marker)
            self._state = "key"
        elif marker == CALL_CLOSE:
            self._end_call()
        else:
            self._next_call()

    def _key_state(self, final: bool) -> bool:
        marker = self._read_key(_KEY, final)
        if marker is None:
            return False
        if self._key.startswith(KEY_OPEN):
            self._doubled_key_open()
        if marker == KEY_CLOSE:
            self._raw(marker)
            self._state = "after_key"
        elif marker == VALUE_OPEN:
            self._raw(marker)
            self._repair("unclosed_key", f"argument name {self._key!r} was not closed before {VALUE_OPEN}")
            self._start_value(self._key)
        else:
            self._missing_value()
            self._end_call()
        return True

    def _after_key(self, final: bool) -> bool:
        marker = self._collect(_AFTER_KEY, final)
        if marker == VALUE_CLOSE:
            self._missing_value_open()
            return True
        if marker is None and not final:
            return False
        text = self._take()
        self._raw(text)
        self._stray(text)
        if marker is None:
            return False
        if marker == VALUE_OPEN:
            self._raw(marker)
            self._start_value(self._key)
        else:
            self._missing_value()
            self._next_argument(marker)
        return True

    def _missing_value_open(self) -> None:
        """``</arg_value>`` after a key with no ``<arg_value>``: the text between is the value (its framing
        newline removed), closed by the usual rule (``missing_arg_value_open``)."""
        text = self._take()
        if self.newline_after_name and text.startswith("\n"):
            self._raw("\n")
            text = text[1:]
        self._repair("missing_arg_value_open", f"argument {self._key!r} has no {VALUE_OPEN} before its {VALUE_CLOSE}")
        self._start_value(self._key)
        if self._typed is None:
            self.call.begin_string(self._key)
        self._carry = ""
        self._value_piece(text)
        self._pending = ("", (self._reasoning_closers if self._mode == "reasoning" else self.value_closers)[VALUE_CLOSE])
        self._state = "closing"

    def _value_closed(self, closer: Closer, gap: str) -> None:
        if closer.ends_call:
            self._unclosed_value(closer)
            self._end_call()
            self._unread(gap)
        else:
            self._state = "args"


class Glm47Parser(GlmParser):
    """GLM-4.7 output: no framing; with thinking on, the output starts inside the reasoning block."""

    family = GLM47
    framing = {}
    after_think = 0
    newline_after_name = False

    def _begin(self) -> None:
        """No framing newline at the start."""


class Glm45Parser(GlmParser):
    """GLM-4.5 output."""

    family = GLM45


class Glm46Parser(GlmParser):
    """GLM-4.6 output (as GLM-4.5's)."""

    family = GLM46


class Glm53Parser(Glm47Parser):
    """GLM-5.3 output (as GLM-4.7's: no framing; the prompt always opens ``<think>``)."""

    family = GLM53
