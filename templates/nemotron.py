"""NVIDIA Nemotron 3 (``NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja``): ChatML with Qwen3-Coder XML calls.

Reference: the model's own chat template as transformers renders it, ``arguments`` decoded to objects. Native
Python; what the template does, and so this renderer:

* **always a system turn** - ``<|im_start|>system\\n`` + the first system message's text (empty when there is
  none), then the tool list as XML (``<function><name>...``, ``<enum>`` and ``<required>`` as JSON) and the
  Qwen3.5 call instructions;
* **assistant turns** - reasoning goes into the content as ``<think>\\nR\\n</think>\\n`` (untrimmed; only a
  reasoning that is blank after trimming is left out), and content without any ``<think>``/``</think>`` gets an
  empty ``<think></think>`` in front; then content ``|trim`` and ``\\n`` before the calls. Values are written
  with Python's ``str`` (``True``, ``None``) except objects and arrays (JSON);
* **history reasoning** - an assistant turn before the last user message (``truncate_history_thinking``,
  default on) keeps only the text after its last ``</think>`` (or before a ``<think>`` that is never closed),
  behind an empty ``<think></think>``. Which turns are truncated is the context plan's decision
  (:mod:`toolwire.context_policy`), so a ``policy`` override moves the same switch;
* **generation prompt** - ``<think>\\n`` with thinking on (the template's default), ``<think></think>`` off.

Where the reference cannot or does not carry data, toolwire refuses (``UnsupportedByFormat`` naming the field):
content given as a list of parts (the template writes the list's Python repr, or fails on it in the system
message), a first system message without content (the template fails on it), and content ``None`` in a role the
template joins with ``+``. ``None`` content in user and tool turns renders as ``None``, as the template writes it.
The template's switch ``enable_thinking`` is accepted as an alias of ``thinking``.
"""

from __future__ import annotations

from typing import Any

from toolwire.errors import UnsupportedByFormat
from toolwire.format import Format, RenderOptions
from toolwire.models import Message, Tool
from toolwire.parsers.nemotron import MARKERS, NEMOTRON_GRAMMAR, NemotronParser
from toolwire.prompt import PromptBuilder, special_pattern

from .chatml import chatml_special_tokens
from .qwen_xml import _QWEN35_INSTRUCTIONS, _tool_turn, call_values, coder_tool_list, coder_value, write_call

G = NEMOTRON_GRAMMAR
M = MARKERS
SPECIAL_TOKENS = chatml_special_tokens(MARKERS)
"""Markers that are single control tokens in the Nemotron vocabulary (``<function=`` etc. are plain text)."""
_SPECIALS = special_pattern(SPECIAL_TOKENS)


class _Pieces:
    """Text assembled from provenance-tagged pieces, cut and trimmed as one string (the template's string
    operations), each piece keeping its kind."""

    def __init__(self, pieces: list[tuple[str, str]] | None = None):
        self.pieces = [p for p in (pieces or []) if p[1]]

    def add(self, kind: str, text: str) -> "_Pieces":
        if text:
            self.pieces.append((kind, text))
        return self

    @property
    def text(self) -> str:
        return "".join([t for _, t in self.pieces])

    def cut(self, start: int, end: int) -> "_Pieces":
        """The characters ``start:end`` of the joined text."""
        out, pos = [], 0
        for kind, piece in self.pieces:
            lo, hi = max(start - pos, 0), min(end - pos, len(piece))
            if lo < hi:
                out.append((kind, piece[lo:hi]))
            pos += len(piece)
        return _Pieces(out)

    def strip(self) -> "_Pieces":
        text = self.text
        stripped = text.strip()
        if len(stripped) == len(text):  # nothing to trim (most content): these very pieces
            return self
        lead = len(text) - len(text.lstrip())
        return self.cut(lead, lead + len(stripped))

    def write(self, out: PromptBuilder, index: int) -> None:
        for kind, piece in self.pieces:
            out.add(kind, piece, index)


def _string_content(message: Message, index: int, *, none: str | None) -> str:
    """A message's content as the template sees it: a list of parts is refused; ``None`` becomes ``none``
    (or is refused when ``none`` is None)."""
    content = message.content
    if isinstance(content, str):
        return content
    if content is None:
        if none is None:
            raise UnsupportedByFormat(f"the Nemotron 3 template cannot render a {message.role} message without "
                                      "content", message_index=index, field="content")
        return none
    raise UnsupportedByFormat("the Nemotron 3 template writes a list of content parts as its Python repr; send "
                              "the content as one string", message_index=index, field="content")


def _assistant_content(message: Message, index: int) -> _Pieces:
    """The template's ``content``: reasoning folded in as ``<think>\\nR\\n</think>\\n``, or an empty
    ``<think></think>`` before content that has no think tag of its own."""
    content = _string_content(message, index, none="")
    reasoning = message.reasoning_content
    if isinstance(reasoning, str) and reasoning.strip():
        return (_Pieces().add("special", M["think_open"]).add("template", "\n").add("content", reasoning)
                .add("template", "\n").add("special", M["think_close"]).add("template", "\n").add("content", content))
    if M["think_open"] not in content and M["think_close"] not in content:
        return _Pieces().add("special", M["think_open"]).add("special", M["think_close"]).add("content", content)
    return _Pieces().add("content", content)


def _empty_think(rest: _Pieces) -> _Pieces:
    return _Pieces([("special", M["think_open"]), ("special", M["think_close"]), *rest.pieces])


def _truncated(content: _Pieces, *, with_calls: bool) -> _Pieces:
    """A history turn before the last user message: only the answer after the reasoning."""
    text = content.text
    close, open_ = M["think_close"], M["think_open"]
    if with_calls:
        if close in text:
            content = content.cut(text.rindex(close) + len(close), len(text))
        elif open_ in text:
            content = content.cut(0, text.index(open_))
        return _empty_think(content.strip())
    if open_ in text and close in text:
        content = _empty_think(content.cut(text.rindex(close) + len(close), len(text)))
    return content.strip()


class Nemotron3(Format):
    """Nemotron 3 Nano (``NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja``)."""

    parser_class = NemotronParser

    def _render(self, messages: list[Message], tools: list[Tool], options: RenderOptions,
                out: PromptBuilder) -> bool:
        has_system = bool(messages) and messages[0].role == "system"
        loop = messages[1:] if has_system else messages
        offset = 1 if has_system else 0
        sys_index = 0 if has_system else None
        system = _string_content(messages[0], 0, none=None) if has_system else ""
        out.special(M["im_start"], sys_index).template("system\n", sys_index).content(system, sys_index)
        if tools:
            if system:
                out.template("\n\n", sys_index)
            out.template("# Tools\n\nYou have access to the following functions:\n\n<tools>", sys_index)
            coder_tool_list(out, tools, sys_index, enum_and_required=True)
            out.fixed(_QWEN35_INSTRUCTIONS, sys_index, _SPECIALS)
        out.special(M["im_end"], sys_index).template("\n", sys_index)
        for pos, message in enumerate(loop):
            index = pos + offset
            role = message.role
            if role == "assistant":
                self._assistant(out, message, index, options, tools)
            elif role in ("user", "system"):
                out.special(M["im_start"], index).template(role + "\n", index)
                out.content(_string_content(message, index, none="None"), index)
                out.special(M["im_end"], index).template("\n", index)
            elif role == "tool":
                _tool_turn(out, loop, pos, index, _string_content(message, index, none="None"), header="user\n",
                           open_=("", "\n"), close=("\n", "\n"))
            else:
                out.special(M["im_start"], index).template(role + "\n", index)
                out.content(_string_content(message, index, none=None), index)
                out.special(M["im_end"], index).template("\n", index)
        if options.add_generation_prompt:
            out.special(M["im_start"]).template("assistant\n")
            if options.thinking:
                out.special(M["think_open"]).template("\n")
            else:
                out.special(M["think_open"]).special(M["think_close"])
        return options.add_generation_prompt and options.thinking

    def _assistant(self, out: PromptBuilder, message: Message, index: int, options: RenderOptions,
                   tools: Any = None) -> None:
        calls = call_values(message, index, G, coder_value, tools)
        content = _assistant_content(message, index)
        whole = not self._truncates(index, options)
        out.special(M["im_start"], index).template("assistant\n", index)
        if not message.tool_calls:
            (content.strip() if whole else _truncated(content, with_calls=False)).write(out, index)
            out.special(M["im_end"], index).template("\n", index)
            return
        (content.strip() if whole else _truncated(content, with_calls=True)).write(out, index)
        out.template("\n", index)
        for name, args in calls:
            write_call(out, index, name, args, "\n", M["call_open"], M["call_close"])
            out.template("\n", index)
        out.special(M["im_end"], index).template("\n", index)

    @staticmethod
    def _truncates(index: int, options: RenderOptions) -> bool:
        """Whether this history turn is cut to its answer: the plan drops its reasoning."""
        return not options.keeps_reasoning(index)


FORMATS: dict[str, Format] = {f.name: f for f in (Nemotron3(),)}

__all__ = ["FORMATS", "MARKERS", "SPECIAL_TOKENS", "Nemotron3"]
