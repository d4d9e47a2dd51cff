"""Marker-delimited calls with a JSON arguments body (the parsers of :mod:`toolwire.parsers.marker_json`).

One call is ``call_open HEADER header_end ARGS [trailer] [call_close]``, read off the parser's own
:class:`~toolwire.parsers.marker_json.Grammar` (``fmt.parser_class.grammar``); the family modules
(:mod:`.deepseek_legacy`, :mod:`.kimi`, :mod:`.mistral`) supply only the header a tool's call is written with
and the framing their templates put around the JSON. With a section (``section_open`` ... ``section_close``)
the calls sit inside one block, written back to back (``separator`` between them).
"""

from __future__ import annotations

from toolwire.parsers.marker_json import Grammar

from ..ir import Alt, CallWire, Lit, Node, Section, Seq, Star, json_node
from . import reasoning_markers

DIGITS = tuple("0123456789")


def number() -> Node:
    """A decimal number without leading zeros (``0``, ``7``, ``12``): ``0 | [1-9][0-9]*``."""
    digit = Alt(tuple(Lit(d) for d in DIGITS))
    return Alt((Lit("0"), Seq((Alt(tuple(Lit(d) for d in DIGITS[1:])), Star(digit)))))


def chars(alphabet: str, count: int) -> Node:
    """Exactly ``count`` characters of ``alphabet``."""
    one = Alt(tuple(Lit(c) for c in alphabet))
    return Seq((one,) * count)


def marker_call(g: Grammar, header: Node, schema: dict, *, body: tuple[str, str] = ("", "")) -> Seq:
    """``call_open HEADER header_end body[0] ARGS body[1] trailer call_close`` (a missing marker is empty)."""
    return Seq((Lit(g.call_open), header, Lit(g.header_end + body[0]), json_node(schema),
                Lit(body[1] + g.trailer + (g.call_close or ""))))


def text_excludes(g: Grammar, *, thinking: bool) -> tuple[str, ...]:
    """The markers free text never spells: every call marker (the parser reads a call opener outside its
    section as a call), and the reasoning closer unless the model may open reasoning itself at the start
    (then a leading ``<think>...</think>`` is free text to the grammar; see docs/grammar.md)."""
    markers = [g.call_open, g.header_end, g.call_close, g.section_close]
    if g.think_close and (thinking or not g.think_open):
        markers.append(g.think_close)
    return tuple(dict.fromkeys(m for m in markers if m))


def marker_wire(fmt, request, header, *, family: str, thinking: bool, separator: str = "",
                body: tuple[str, str] = ("", ""), notes: tuple[str, ...] = ()) -> CallWire:
    """The :class:`CallWire` of a marker-JSON format: ``header(tool_name) -> Node`` spells a call's header.

    Without a section every call is its own region, triggered by ``call_open``; with one the section's
    opener is the trigger and the calls follow each other inside it."""
    g: Grammar = fmt.parser_class.grammar
    calls = tuple((tool.name, marker_call(g, header(tool.name), tool.schema, body=body)) for tool in request.tools)
    section = None
    trigger = g.call_open
    if g.section_open:
        section = Section(g.section_open, g.section_close, separator)
        trigger = g.section_open
    return CallWire(fmt.name, (trigger,), calls, section=section, reasoning=reasoning_markers(fmt),
                    stop_tokens=tuple(fmt.stop_tokens), family=family, notes=notes,
                    text_excludes=tuple(m for m in text_excludes(g, thinking=thinking) if m != trigger))
