"""The target-neutral description of a format's tool-call wire (what every grammar target is emitted from).

A family module (:mod:`toolwire.grammar.families`) turns its marker table into a :class:`CallWire`: the
markers that start a call region in content, how one call of each tool is spelled (a tree of the nodes
below), whether calls sit inside a section (``<|tool_calls_section_begin|> ... <|tool_calls_section_end|>``)
and how reasoning is delimited. The emitters (:mod:`toolwire.grammar.xgrammar`, :mod:`~toolwire.grammar.lark`,
:mod:`~toolwire.grammar.gbnf`) translate the same tree, so the three targets cannot drift from each other.

Nodes:

* :class:`Lit` - literal text (a marker, framing whitespace, a tool name already encoded);
* :class:`Json` - one JSON value matching a JSON Schema;
* :class:`Tag` - ``begin`` + content + ``end``; when the content is :data:`TEXT` it is free text that does
  not contain ``end`` (an XML string value, a reasoning block);
* :class:`Seq` / :class:`Alt` / :class:`Star` - sequence / choice / repetition; ``Alt(x, Lit(""))`` is an
  optional ``x``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


@dataclass(frozen=True)
class Lit:
    """Literal text."""

    text: str


@dataclass(frozen=True)
class Json:
    """A JSON value matching ``schema`` (a JSON Schema dict, already checked)."""

    schema: dict = field(hash=False, compare=False)
    key: str = ""  # a stable text of the schema (equality and hashing)
    path: str = ""  # where the schema sits in the tool's parameters (``.properties.days``), for error messages
    excludes: tuple[str, ...] = ()  # strings no JSON string inside may spell (xgrammar only: ``excludes``)


@dataclass(frozen=True)
class FreeText:
    """Free text; only as the content of a :class:`Tag`, which it cannot contain the end of."""


TEXT = FreeText()


@dataclass(frozen=True)
class Tag:
    """``begin`` + ``content`` + ``end``."""

    begin: str
    content: "Node"
    end: str


@dataclass(frozen=True)
class Seq:
    """The items one after the other."""

    items: tuple


@dataclass(frozen=True)
class Alt:
    """One of the items."""

    items: tuple


@dataclass(frozen=True)
class Star:
    """Zero or more ``item``."""

    item: "Node"




def optional(node: "Node") -> Alt:
    """``node`` or nothing."""
    return Alt((node, Lit("")))


def json_node(schema: dict, path: str = "", excludes: tuple[str, ...] = ()) -> Json:
    """A :class:`Json` node with its stable key (``path``: where ``schema`` sits in the tool's parameters)."""
    import json

    return Json(schema, json.dumps(schema, sort_keys=True, ensure_ascii=False), path, tuple(excludes))


@dataclass(frozen=True)
class Text:
    """Free text that contains none of ``excludes`` (besides its tag's end); only as a :class:`Tag`'s content."""

    excludes: tuple[str, ...] = ()


Node = Union[Lit, Json, FreeText, Text, Tag, Seq, Alt, Star]


@dataclass(frozen=True)
class Section:
    """Calls written inside one block: ``begin`` call (``separator`` call)* ``end``."""

    begin: str
    end: str
    separator: str = ""


@dataclass(frozen=True)
class CallWire:
    """How one format writes tool calls, for one set of tools.

    ``calls`` maps each tool name to the node of one complete call (starting with one of ``triggers``
    unless ``section`` is set, then starting right after the section's begin / a separator). Text outside
    calls is free but never contains a trigger (the parser would read a call there). ``reasoning`` is the
    (opener, closer) of the reasoning block, used when the output starts inside it. ``exactness`` lists
    where the grammar is narrower than the parser (what the parser also accepts, read as variants).
    ``text_excludes`` are further strings free text (outside calls, and reasoning) never contains: markers the
    parser reads wherever they appear (a call opener outside its section, a reasoning marker in content).
    ``calls_last``: the call region ends the output (the parser reads text after it as a problem: DSML's
    ``text_after_block``), so nothing follows it. ``calls_first``: a call region only opens the output (after
    reasoning): Llama's calls are the whole reply, text before them makes them content. ``whole``: for a
    format whose output is structured from its first character (harmony's messages), the node of the entire
    output for the request's mode, built by the family; the emitters write it as it is (``triggers`` then only
    inform). A :class:`Tag` whose ``end`` is empty and whose content is text runs to the end of the output.
    """

    format: str
    triggers: tuple[str, ...]
    calls: tuple[tuple[str, "Node"], ...]
    section: Section | None = None
    reasoning: tuple[str, str] | None = None
    stop_tokens: tuple[str, ...] = ()
    family: str = ""
    notes: tuple[str, ...] = ()
    text_excludes: tuple[str, ...] = ()
    calls_last: bool = False
    calls_first: bool = False
    whole: "Node | None" = None  # the whole output, when it is structured from its first character (below)
    key_order: str = "schema"  # the order arguments are written in: "schema" (properties order) or "sorted"

    def call_nodes(self) -> list["Node"]:
        """The call node of every tool, in tool order."""
        return [node for _, node in self.calls]


def flatten(node: "Node") -> list["Node"]:
    """A node as a flat item list (nested sequences opened, adjacent literals joined, empty ones dropped)."""
    out: list = []

    def add(item):
        if isinstance(item, Seq):
            for sub in item.items:
                add(sub)
        elif isinstance(item, Lit):
            if not item.text:
                return
            if out and isinstance(out[-1], Lit):
                out[-1] = Lit(out[-1].text + item.text)
            else:
                out.append(item)
        else:
            out.append(item)

    add(node)
    return out


def split_tag(node: "Node") -> tuple[str, list, str]:
    """``(begin, middle items, end)``: the literal text a call starts and ends with, and what lies between."""
    items = flatten(node)
    begin = items.pop(0).text if items and isinstance(items[0], Lit) else ""
    end = items.pop().text if items and isinstance(items[-1], Lit) else ""
    return begin, items, end


def starts_with(node: "Node", trigger: str) -> bool:
    """Whether ``node`` starts with the literal ``trigger``."""
    items = flatten(node)
    return bool(items) and isinstance(items[0], Lit) and items[0].text.startswith(trigger)


def after(node: "Node", trigger: str) -> "Node":
    """``node`` without its leading literal ``trigger``."""
    items = flatten(node)
    return Seq((Lit(items[0].text[len(trigger):]), *items[1:]))


def region_nodes(wire: CallWire, trigger: str) -> list:
    """What may follow ``trigger`` in content, as whole nodes starting with it: one per tool whose call starts
    with it, or the whole section (``begin call (separator call)* end``) when the format has one."""
    calls = wire.call_nodes()
    if wire.section is not None:
        if not wire.section.begin.startswith(trigger) or not calls:
            return []
        call = Alt(tuple(calls)) if len(calls) > 1 else calls[0]
        return [Seq((Lit(wire.section.begin), call, Star(Seq((Lit(wire.section.separator), call))),
                     Lit(wire.section.end)))]
    return [node for node in calls if starts_with(node, trigger)]
