"""CallWire -> GBNF (llama.cpp's grammar format) plus llama.cpp's lazy-grammar triggers.

GBNF has no negation and no lazy lexemes, but it is matched character by character with every alternative
alive, so "text that contains no trigger" is written exactly as the automaton of
:func:`~toolwire.grammar.text_rules.excluding_rules`, and so is a free string value that cannot contain its
closing marker. JSON bodies come from :class:`~toolwire.grammar.json_gbnf.JsonGbnf` (a subset of JSON Schema;
the rest is refused naming the schema field).

Two roots are written, for llama.cpp's two ways of applying a grammar:

* ``root``: the whole output (reasoning the prompt opened, text, calls) - what ``grammar`` with
  ``grammar_lazy=false`` constrains, used for ``required``, a named tool and ``none``;
* ``root`` of the lazy grammar (``tool_choice="auto"``): llama.cpp starts the grammar at the first
  trigger, so that root is "a call region, then text and further regions" and the triggers are sent as
  ``grammar_triggers`` (type 1, a word; after a reasoning block the prompt opened, type 3, a full-output
  pattern whose group 1 is the trigger, so a trigger inside reasoning does not start the grammar).
"""

from __future__ import annotations

import re

from .ir import Alt, CallWire, Chars, FreeText, Json, Lit, Seq, Star, Tag, Text, flatten, region_nodes
from .json_gbnf import JsonGbnf, gbnf_literal
from .text_rules import excluding_rules

TRIGGER_WORD = 1
TRIGGER_PATTERN_FULL = 3
"""llama.cpp's ``common_grammar_trigger_type`` values (TOKEN 0, WORD 1, PATTERN 2, PATTERN_FULL 3)."""


def spelled(text: str) -> str:
    """A marker literal one character at a time (``"<" "/" "p" ...``): the same language for llama.cpp, which
    matches characters, and for lexer-based GBNF readers (llguidance's), whose greedy lexer would otherwise
    take ``</x`` as the start of ``</parameter>`` and never back off to the single ``<`` of free text."""
    return " ".join(gbnf_literal(ch) for ch in text)


class _Writer:
    def __init__(self, fields: dict[str, str]):
        self.fields = fields
        self.rules: dict[str, str] = {}
        self.json = JsonGbnf(self.rules, prefix="arg-")
        self._excluding: dict[tuple, str] = {}
        self._named: dict[str, str] = {}

    def named(self, body: str, prefix: str) -> str:
        if body not in self._named:
            name = f"{prefix}-{len(self._named)}"
            self._named[body] = name
            self.rules[name] = body
        return self._named[body]

    def excluding(self, words) -> str:
        key = tuple(sorted(set(words)))
        if key not in self._excluding:
            name = f"text-{len(self._excluding)}"
            self._excluding[key] = name
            self.rules.update(excluding_rules(key, name, gbnf_literal))
        return self._excluding[key]

    def node(self, node, tool: str | None = None) -> str:
        if isinstance(node, Lit):
            return spelled(node.text)
        if isinstance(node, Json):
            return self.json.rule(node.schema, field=self.fields.get(tool, "parameters") + node.path, tool=tool)
        if isinstance(node, Tag):
            if isinstance(node.content, FreeText):
                inner = self.excluding([node.end])
            elif isinstance(node.content, Text):
                inner = self.excluding([node.end, *node.content.excludes])
            else:
                inner = self.node(node.content, tool)
            return " ".join(p for p in (self.node(Lit(node.begin)), inner, self.node(Lit(node.end))) if p)
        if isinstance(node, Seq):
            return " ".join(p for p in (self.node(i, tool) for i in flatten(node)) if p) or '""'
        if isinstance(node, Chars):
            return node.regex()
        if isinstance(node, Star):
            return "(" + (self.node(node.item, tool) or '""') + ")*"
        if isinstance(node, Alt):
            return "(" + " | ".join(self.node(i, tool) or '""' for i in node.items) + ")"
        raise TypeError(f"free text outside a tag cannot be emitted ({node!r})")


def grammar(wire: CallWire, mode: str, *, thinking: bool, fields: dict[str, str] | None = None
            ) -> tuple[str, bool, list]:
    """``(gbnf text, lazy, triggers)`` for ``wire`` in ``mode``: the llama.cpp server's ``grammar``,
    ``grammar_lazy`` and ``grammar_triggers`` fields. ``fields`` maps a tool name to the request field its
    schema came from (named in a refusal)."""
    w = _Writer(fields or {})
    if wire.whole is not None:
        root = w.node(wire.whole)
        return "root ::= " + root + "\n" + "".join(f"{name} ::= {body}\n" for name, body in w.rules.items()), False, []
    triggers = list(wire.triggers)
    free = w.excluding(wire.banned())  # no call starts, no end of turn spelled as text
    regions = []
    for trigger in triggers:
        for node in region_nodes(wire, trigger):
            regions.append(w.node(node, tool=_tool_of(wire, node)))
    reasoning = ""
    if wire.reasoning is not None and (thinking or wire.self_reasoning):
        reasoning = f"{w.excluding(wire.banned())} {spelled(wire.reasoning[1])}"
        if not thinking:  # the model may open it itself, as the first thing it writes
            lead = f"({spelled(wire.reasoning_lead)})? " if wire.reasoning_lead else ""
            reasoning = f"({lead}{spelled(wire.reasoning[0])} {reasoning})?"
    lazy = mode == "auto" and bool(regions)
    if mode == "none" or not regions:
        root = " ".join(p for p in (reasoning, free) if p)
    else:
        region = w.named(" | ".join(regions), "call")
        body = region if wire.last_region else f"{region} ({free} {region})* {free}"
        gap = "[ \\t\\r\\n]*" if reasoning else ""  # blank framing after the reasoning, before the first call
        root = body if lazy else " ".join(p for p in (reasoning, gap, body) if p)
        if wire.last_region and not lazy and mode == "auto":  # (never: auto is lazy) text, or text then the block
            root = " ".join(p for p in (reasoning, f"{free} ({region})?") if p)
    text = "root ::= " + root + "\n" + "".join(f"{name} ::= {body}\n" for name, body in w.rules.items())
    out_triggers = []
    if lazy:
        for trigger in triggers:
            if wire.calls_first:  # only a trigger that opens the output (after blanks) starts the grammar
                out_triggers.append({"type": TRIGGER_PATTERN_FULL,
                                     "value": f"[ \\t\\r\\n]*({re.escape(trigger)})[\\s\\S]*"})
            elif thinking and wire.reasoning is not None:
                close = re.escape(wire.reasoning[1])
                out_triggers.append({"type": TRIGGER_PATTERN_FULL,
                                     "value": f"[\\s\\S]*?{close}[\\s\\S]*?({re.escape(trigger)})[\\s\\S]*"})
            else:
                out_triggers.append({"type": TRIGGER_WORD, "value": trigger})
    return text, lazy, out_triggers


def _tool_of(wire: CallWire, node) -> str | None:
    for name, call in wire.calls:
        if call is node:
            return name
    return None
