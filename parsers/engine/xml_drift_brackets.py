"""Drift recovery of the XML-bodied families (issue 33): a call whose tag words lost their angle brackets.

Models (or the front ends between them and a parser) sometimes write a call's tag words without their ``<``:
Qwen3-Coder style ``function=get_weather>`` / ``parameter=city>`` / ``/parameter>`` / ``/function>`` (with or
without ``tool_call>`` / ``/tool_call>`` around it), GLM style ``tool_call>get_weather`` / ``arg_key>city/arg_key>``
/ ``arg_value>Paris/arg_value>`` / ``/tool_call>``. Such text is read as the call (``drift_lost_brackets``, class
``missing_markers``) only when it is unambiguous given the declared tools: it starts at a line start (or the
answer's start) in content, every tag word is in place, the name is a declared tool, every key a declared
parameter of it, and the complete arguments fit its schema. Text input only: from token ids a call needs its
control-token opener, so there the words stay content.

**Streaming.** The text from the opener on is held back only while it can still become such a call, and released
as content the moment it cannot (the character that rules it out decides, so every chunking decides at the same
place); a call read whole is started, filled and finished at once. :class:`LostBracketReader` reads the held text
incrementally (each character once, whatever the chunking), and a call longer than
:data:`MAX_LOST_BRACKETS_CHARS` is not read as one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from .drift import DeclaredTools, Drift, register
from .schema_coerce import coerce

LOST_BRACKETS = "drift_lost_brackets"
"""A call whose tag words lost their angle brackets, written at a line start in content: read as the call when the
declared tools make it unambiguous (class ``missing_markers``)."""
register(Drift.MISSING_MARKERS, LOST_BRACKETS)

MAX_LOST_BRACKETS_CHARS = 65536
"""How much text a call without brackets may hold back: a longer one is not read as a call (a position, so the
decision is the same at every chunking)."""

_WHITESPACE = " \t\r\n"


@dataclass(frozen=True)
class LostBracketWords:
    """One family's tag words without their ``<``. Qwen style: ``call_open`` (``tool_call>``, optional before the
    call), ``function_open`` (``function=``), ``key_open`` (``parameter=``), ``key_close`` (``>``), ``value_close``
    (``/parameter>``), ``function_close``, ``call_close`` (optional after it), ``value_framing`` (``\\n``, dropped
    once at each edge of a value). GLM style (no ``function_open``): the name follows ``call_open``; ``key_open`` /
    ``key_close`` (``arg_key>`` / ``/arg_key>``), ``value_open`` / ``value_close`` (``arg_value>`` /
    ``/arg_value>``), ``call_close`` ends the call."""

    call_open: str
    call_close: str
    function_open: str = ""
    function_close: str = ""
    key_open: str = ""
    key_close: str = ""
    value_open: str = ""
    value_close: str = ""
    value_framing: str = ""

    @classmethod
    def qwen(cls, call_open: str, call_close: str, function_open: str, function_close: str, parameter_open: str,
             parameter_close: str, value_framing: str) -> "LostBracketWords":
        """The Qwen3-Coder-style words, from the family's markers (``<function=`` -> ``function=``)."""
        return cls(call_open[1:], call_close[1:], function_open[1:], function_close[1:], parameter_open[1:], ">",
                   "", parameter_close[1:], value_framing)

    @classmethod
    def glm(cls, call_open: str, call_close: str, key_open: str, key_close: str, value_open: str,
            value_close: str) -> "LostBracketWords":
        """The GLM-style words, from the family's markers (``<arg_key>`` -> ``arg_key>``)."""
        return cls(call_open[1:], call_close[1:], "", "", key_open[1:], key_close[1:], value_open[1:],
                   value_close[1:])

    @property
    def openers(self) -> tuple[str, ...]:
        """The words that may start such a call at a line start."""
        return tuple(w for w in (self.call_open, self.function_open) if w)


class Bracketless(NamedTuple):
    """What :meth:`LostBracketReader.read` says of the text held so far. ``kind``: ``"more"`` (it can still become
    a call: hold it), ``"text"`` (it cannot: release it; ``why`` is set when it had the call's shape but the
    declared tools refuse it, ``raw`` the text read up to that decision), or ``"call"`` (``name``, ``arguments``;
    the call is the held text's first ``end`` characters)."""

    kind: str
    end: int = 0
    name: str = ""
    arguments: dict | None = None
    why: str | None = None
    raw: str | None = None


MORE = Bracketless("more")
TEXT = Bracketless("text")


def _prefix_state(text: str, i: int, spellings: list[str], final: bool) -> tuple[str, int] | None | int:
    """``(spelling, index after it)`` for the first of ``spellings`` that ``text[i:]`` starts with; None while
    more text may complete one; else the index of the character that rules every one out."""
    for s in spellings:
        if text.startswith(s, i):
            return s, i + len(s)
    k = i
    while k < len(text) and any(s.startswith(text[i:k + 1]) for s in spellings):
        k += 1
    if k == len(text) and not final:
        return None
    return k


class LostBracketReader:
    """Reads held text that starts with one of ``words.openers`` as a call without brackets, incrementally: each
    :meth:`read` resumes where the last stopped. Every decision rests on the characters read so far only, so a
    stream decides at the same character as a one-shot parse."""

    def __init__(self, words: LostBracketWords, known: DeclaredTools, *, max_depth: int, max_bytes: int | None):
        self.words, self.known = words, known
        self.max_depth, self.max_bytes = max_depth, max_bytes
        self.text = ""
        self.i = 0               # where reading resumes
        self.phase = "open"
        self.name = ""
        self.key = ""
        self.arguments: dict[str, Any] = {}
        self.value_start = 0
        self.scan = 0            # where the search for the open value's closer resumes

    def room(self) -> int:
        """How many more characters :meth:`read` takes: the held text stops one past the bound, so the bound (a
        position) decides, whatever the chunking."""
        return MAX_LOST_BRACKETS_CHARS + 1 - len(self.text)

    def read(self, more: str, final: bool) -> Bracketless:
        """Take ``more`` held text (at most :meth:`room` characters; ``final``: nothing follows it) and say what
        the text held so far is."""
        self.text += more
        while True:
            verdict = getattr(self, "_" + self.phase)(final)
            if verdict is not None:
                if verdict is MORE and len(self.text) > MAX_LOST_BRACKETS_CHARS:
                    return TEXT  # still undecided one past the bound: not read as a call
                return verdict

    def _refuse(self, why: str, upto: int) -> Bracketless:
        return Bracketless("text", why=why, raw=self.text[:upto])

    def _skip_ws(self) -> bool:
        """Skip whitespace; False when the held text ends there."""
        text, i = self.text, self.i
        while i < len(text) and text[i] in _WHITESPACE:
            i += 1
        self.i = i
        return i < len(text)

    def _word(self, word: str, final: bool) -> bool | None:
        """``word`` at the cursor: consumed, True; may be once more text comes: None; cannot: False."""
        text, i = self.text, self.i
        if text.startswith(word, i):
            self.i = i + len(word)
            return True
        rest = text[i:i + len(word)]
        return None if not final and len(rest) < len(word) and word.startswith(rest) else False

    # ---- phases: each returns a verdict, or None after moving on to the next phase
    def _open(self, final: bool) -> Bracketless | None:
        w = self.words
        if not w.function_open:  # GLM: the name follows tool_call>
            self.i = len(w.call_open)
            self.phase = "name"
            return None
        if not self.text.startswith(w.call_open):
            self.i = len(w.function_open)
            self.phase = "name"
            return None
        self.i = max(self.i, len(w.call_open))
        if not self._skip_ws():
            return MORE if not final else TEXT
        found = self._word(w.function_open, final)
        if found is None:
            return MORE
        if not found:
            return TEXT  # tool_call> followed by something else: not this shape
        self.phase = "name"
        return None

    def _name(self, final: bool) -> Bracketless | None:
        w = self.words
        ends = (w.key_open, "\n", w.call_close) if not w.function_open else (">",)
        spellings = [name + end for name in self.known.names for end in ends]
        found = _prefix_state(self.text, self.i, spellings, final)
        if found is None:
            return MORE
        if isinstance(found, int):
            written = self.text[self.i:found + 1]
            if not written.strip(_WHITESPACE) or "<" in written:
                return TEXT
            return self._refuse(f"{written!r} does not start a declared tool name", found + 1)
        spelled, after = found
        end = next(e for e in ends if spelled.endswith(e))
        self.name = spelled[:-len(end)]
        self.i = after if end in (">", "\n") else after - len(end)  # a key or the closer is read again
        self.phase = "args"
        return None

    def _args(self, final: bool) -> Bracketless | None:
        w = self.words
        if not self._skip_ws():
            return MORE if not final else self._refuse("the call is not closed", len(self.text))
        closing = w.function_close or w.call_close
        found = self._word(closing, final)
        if found is None:
            return MORE
        if found:
            self.phase = "after" if w.function_open else "done"
            return None
        found = self._word(w.key_open, final)
        if found is None:
            return MORE
        if not found:
            return self._refuse("text that is neither an argument nor the call's end", self.i + 1)
        self.phase = "key"
        return None

    def _key(self, final: bool) -> Bracketless | None:
        w = self.words
        spellings = [key + w.key_close for key in self.known.properties(self.name)]
        found = _prefix_state(self.text, self.i, spellings, final)
        if found is None:
            return MORE
        if isinstance(found, int):
            return self._refuse(f"{self.text[self.i:found + 1]!r} does not start a declared parameter of "
                                f"{self.name!r}", found + 1)
        spelled, self.i = found
        self.key = spelled[:-len(w.key_close)]
        if self.key in self.arguments:
            return self._refuse(f"argument {self.key!r} given twice", self.i)
        self.phase = "value_open" if w.value_open else "value_begin"
        return None

    def _value_open(self, final: bool) -> Bracketless | None:
        if not self._skip_ws():
            return MORE if not final else self._refuse(f"argument {self.key!r} has no value", len(self.text))
        found = self._word(self.words.value_open, final)
        if found is None:
            return MORE
        if not found:
            return self._refuse(f"argument {self.key!r} has no value", self.i + 1)
        self.phase = "value_begin"
        return None

    def _value_begin(self, final: bool) -> Bracketless | None:
        self.value_start = self.scan = self.i
        self.phase = "value"
        return None

    def _value(self, final: bool) -> Bracketless | None:
        """The value runs to the first closer followed (after whitespace) by the next key or the call's end."""
        w = self.words
        text, close = self.text, w.value_close
        followers = (w.key_open, w.function_close or w.call_close)
        k = text.find(close, self.scan)
        while k >= 0:
            after = k + len(close)
            j = after
            while j < len(text) and text[j] in _WHITESPACE:
                j += 1
            if any(text.startswith(f, j) for f in followers):
                self._take_value(k)
                self.i = after
                self.phase = "args"
                return None
            rest = text[j:]
            if not final and (j == len(text) or any(f.startswith(rest) for f in followers)):
                self.scan = k  # undecided: look at this closer again with more text
                return MORE
            k = text.find(close, k + 1)
        if final:
            return self._refuse(f"argument {self.key!r} is not closed", len(text))
        self.scan = max(self.value_start, len(text) - len(close) + 1)
        return MORE

    def _take_value(self, close_at: int) -> None:
        value = self.text[self.value_start:close_at]
        framing = self.words.value_framing
        if framing:  # the template's framing: once after the key's word, once before the closing word
            value = value[len(framing):] if value.startswith(framing) else value
            value = value[:-len(framing)] if value.endswith(framing) else value
        prop = self.known.properties(self.name).get(self.key)
        self.arguments[self.key], _ = coerce(value, prop if isinstance(prop, dict) else None,
                                             self.known.schemas.get(self.name) or {}, max_depth=self.max_depth,
                                             max_bytes=self.max_bytes)

    def _after(self, final: bool) -> Bracketless | None:
        """Qwen style, after ``/function>``: an optional ``/tool_call>`` (after whitespace) belongs to the call."""
        end = self.i
        self._skip_ws()
        found = self._word(self.words.call_close, final)
        if found is None:
            self.i = end
            return MORE
        if not found:
            self.i = end
        self.phase = "done"
        return None

    def _done(self, final: bool) -> Bracketless | None:
        if not self.known.arguments_fit(self.name, self.arguments):
            return self._refuse(f"the arguments do not fit {self.name!r}", self.i)
        return Bracketless("call", end=self.i, name=self.name, arguments=self.arguments)


__all__ = ["LOST_BRACKETS", "MAX_LOST_BRACKETS_CHARS", "Bracketless", "LostBracketReader", "LostBracketWords"]
