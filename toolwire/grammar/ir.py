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


def ordered_members(members: "list[Node]", optional_flags: "list[bool]", separator: str) -> "Node":
    """``members`` in their order, each one whose flag is set optional, ``separator`` between two written ones
    (an object's properties in a fixed key order)."""
    def from_(i: int) -> "Node":
        rest: "Node" = Lit("")
        for j in range(len(members) - 1, i - 1, -1):
            part = Seq((Lit(separator), members[j], rest))
            rest = Alt((part, rest)) if optional_flags[j] else part
        return rest

    choices: "list[Node]" = []  # the first member written is some i (every earlier one optional), or none at all
    for i, may_skip in enumerate(optional_flags):
        choices.append(Seq((members[i], from_(i + 1))))
        if not may_skip:
            break
    else:
        choices.append(Lit(""))
    return choices[0] if len(choices) == 1 else Alt(tuple(choices))


def repeated(item: "Node", low: int = 0, high: int | None = None, separator: str = "") -> "Node":
    """``low`` to ``high`` (None: any number) ``item``, ``separator`` between two (a bounded list)."""
    if high == 0:
        return Lit("")
    more = Seq((Lit(separator), item))
    if high is None:
        tail: "Node" = Star(more)
    else:
        tail = Lit("")
        for _ in range(high - max(low, 1)):
            tail = optional(Seq((more, tail)))
    head = Seq((item, *(more,) * max(low - 1, 0), tail))
    return head if low else optional(head)


def json_node(schema: dict, path: str = "", excludes: tuple[str, ...] = ()) -> Json:
    """A :class:`Json` node with its stable key (``path``: where ``schema`` sits in the tool's parameters)."""
    import json

    return Json(schema, json.dumps(schema, sort_keys=True, ensure_ascii=False), path, tuple(excludes))


@dataclass(frozen=True)
class Text:
    """Free text that contains none of ``excludes`` (besides its tag's end); only as a :class:`Tag`'s content."""

    excludes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Chars:
    """``low`` to ``high`` (None: any number) characters of the class ``cls`` (regex class syntax, ASCII only:
    ``0-9``, ``a-zA-Z0-9``), e.g. a call index or a call id."""

    cls: str
    low: int = 1
    high: int | None = None

    def regex(self) -> str:
        """The class and count in regex syntax (also GBNF's)."""
        count = "+" if (self.low, self.high) == (1, None) else (
            f"{{{self.low}}}" if self.low == self.high else f"{{{self.low},{'' if self.high is None else self.high}}}")
        return f"[{self.cls}]{count}"


Node = Union[Lit, Json, FreeText, Text, Tag, Seq, Alt, Star, Chars]


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
    ``calls_first``: a call region only opens the output (after reasoning): Llama's calls are the whole reply,
    text before them makes them content. ``whole``: for a
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
    reserved: tuple[str, ...] = ()  # further markers free text never spells (a call marker outside its section)
    self_reasoning: bool = False  # the model may open a reasoning block itself, at the very start of its output
    last_region: bool = False  # a call region ends the output (DSML: text after the block is a diagnostic)
    reasoning_lead: str = ""  # framing the output may start with before such a self-opened block (GLM's "\n")
    calls_first: bool = False  # a call region only opens the output (Llama: text before a call makes it content)
    whole: "Node | None" = None  # the entire output as one node, for formats structured from their first
    # character (harmony's messages); the family builds it for the request's mode, the emitters write it as it
    # is (``triggers`` then only inform); a text Tag with an empty ``end`` runs to the end of the output
    key_order: str = "schema"  # the order arguments are written in: "schema" (properties order) or "sorted"
    family: str = ""
    notes: tuple[str, ...] = ()

    def banned(self) -> list[str]:
        """What free text (outside calls, and reasoning) never contains: the triggers, the reserved markers, the
        reasoning markers (a closer in content is dropped with a diagnostic, an opener at the start opens
        reasoning) and the stop tokens spelled as text."""
        return list(dict.fromkeys([*self.triggers, *self.reserved, *(self.reasoning or ()), *self.stop_tokens]))

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
        sep, end = wire.section.separator, wire.section.end
        if sep and end.startswith(sep):
            # the same language as begin (call sep)+ end-after-sep: each separator joins the call before it, so no
            # lexeme is a prefix of another (llguidance's greedy lexer would take DSML's "\n" for the start of
            # "\n</｜DSML｜tool_calls>" and refuse a second call)
            each = Seq((call, Lit(sep)))
            return [Seq((Lit(wire.section.begin), each, Star(each), Lit(end[len(sep):])))]
        return [Seq((Lit(wire.section.begin), call, Star(Seq((Lit(sep), call))), Lit(end)))]
    return [node for node in calls if starts_with(node, trigger)]
