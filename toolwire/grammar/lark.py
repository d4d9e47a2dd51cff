"""CallWire -> llguidance Lark grammar (``%llguidance {}`` dialect, for ``llguidance.LLMatcher``).

llguidance lexes greedily, so free text before a call is a *lazy* lexeme that ends at the first trigger
(``pre[lazy]: /(?s:.*)<tool_call>/``: the shortest match, so it can never run past a trigger), and a free
string value is a lazy lexeme ending at its closing marker (``/(?s:.*)</parameter>/``: the value cannot
contain the closer). The text after the last call is the terminal "any text without a trigger", written with
llguidance's ``&`` / ``~`` regex operators. JSON bodies are inline ``%json {schema}`` rules.

Modes as in :mod:`toolwire.grammar.xgrammar`: ``required`` / named start with a call, ``none`` is the
trigger-free text.
"""

from __future__ import annotations

import json
from typing import Mapping

from .escape import escaped
from .ir import Alt, CallWire, Chars, FreeText, Json, Lit, Seq, Star, Tag, Text, after, flatten, region_nodes

_REGEX_SPECIAL = "\\.+*?()|[]{}^$/"


def regex_literal(text: str) -> str:
    """``text`` as a literal inside llguidance's ``/.../`` regex syntax."""
    return escaped(text, _REGEX_SPECIAL)


def string_literal(text: str) -> str:
    """``text`` as a Lark string literal."""
    return json.dumps(text, ensure_ascii=False)


def split_special(text: str, special: Mapping[str, int]) -> list[str | int]:
    """``text`` cut into byte pieces (str) and the ids of the special tokens it spells (int), left to right;
    where two special tokens start at the same place, the longer one."""
    pieces: list[str | int] = []
    at = 0
    while at < len(text):
        found = [(text.find(s, at), -len(s), s) for s in special if s and text.find(s, at) >= 0]
        if not found:
            break
        start, _, token = min(found)
        if start > at:
            pieces.append(text[at:start])
        pieces.append(special[token])
        at = start + len(token)
    if at < len(text):
        pieces.append(text[at:])
    return pieces


class _Writer:
    def __init__(self, special: Mapping[str, int]):
        self.rules: list[str] = []
        self._names: dict[str, str] = {}
        self.special = special

    def lit(self, text: str) -> str:
        """``text`` as grammar items: string literals, and ``<[id]>`` where it spells a special token."""
        return " ".join(f"<[{p}]>" if isinstance(p, int) else string_literal(p)
                        for p in split_special(text, self.special))

    def until(self, end: str, excludes, prefix: str) -> str:
        """Free text up to and including ``end``, spelling none of ``excludes``. Byte text is a lazy lexeme
        ending at ``end``; when ``end`` holds a special token, the text (with the bytes of ``end`` before that
        token) is a greedy terminal the token itself ends (llguidance ends a lexeme at a special token), and
        it spells ``end`` in bytes nowhere either."""
        pieces = split_special(end, self.special)
        first = next((i for i, p in enumerate(pieces) if isinstance(p, int)), None)
        if first is None:
            body = f"/(?s:.*){regex_literal(end)}/"
            if excludes:
                return self.rule(self.terminal(f"{body} & ~{_contains_any(excludes)}"), prefix, "[lazy]")
            return self.rule(body, prefix, "[lazy]")
        head = "".join(pieces[:first])
        body = f"/(?s:.*){regex_literal(head)}/ & ~{_contains_any([*excludes, end])}"
        return f"{self.terminal(body)} {self.lit(end[len(head):])}"

    def spells_special(self, text: str) -> bool:
        return any(isinstance(p, int) for p in split_special(text, self.special))

    def rule(self, body: str, prefix: str, options: str = "") -> str:
        key = prefix + options + body
        if key not in self._names:
            name = f"{prefix}_{len(self._names)}"
            self._names[key] = name
            self.rules.append(f"{name}{options}: {body}")
        return self._names[key]

    def terminal(self, body: str) -> str:
        """An uppercase terminal for ``body`` (the ``&`` / ``~`` operators only work in terminal definitions)."""
        key = "T" + body
        if key not in self._names:
            name = f"VALUE_{len(self._names)}"
            self._names[key] = name
            self.rules.append(f"{name}: {body}")
        return self._names[key]

    def node(self, node) -> str:
        if isinstance(node, Lit):
            return self.lit(node.text)
        if isinstance(node, Json):
            return self.rule("%json " + json.dumps(node.schema, ensure_ascii=False), "json")
        if isinstance(node, Tag) and not node.end and isinstance(node.content, (FreeText, Text)):  # to the end
            excludes = getattr(node.content, "excludes", ())
            value = self.terminal(f"/(?s:.*)/ & ~{_contains_any(excludes)}" if excludes else "/(?s:.*)/")
            return " ".join(p for p in (self.lit(node.begin), value) if p)
        if isinstance(node, Tag):
            if isinstance(node.content, (FreeText, Text)):
                value = self.until(node.end, getattr(node.content, "excludes", ()), "text")
                return " ".join(p for p in (self.lit(node.begin), value) if p)
            parts = [self.lit(node.begin), self.node(node.content), self.lit(node.end)]
            return " ".join(p for p in parts if p)
        if isinstance(node, Seq):
            parts = [self.node(i) for i in flatten(node)]
            return " ".join(p for p in parts if p) or '""'
        if isinstance(node, Chars):
            return f"/{node.regex()}/"
        if isinstance(node, Star):
            return "(" + (self.node(node.item) or '""') + ")*"
        if isinstance(node, Alt):
            rest = [i for i in node.items if i != Lit("")]
            inner = " | ".join(self.node(i) or '""' for i in rest)
            return f"({inner})?" if len(rest) < len(node.items) else f"({inner})"
        raise TypeError(f"free text outside a tag cannot be emitted ({node!r})")


def _gap(head: list, triggers: list) -> list[str]:
    """Blank framing between a reasoning block and a call that must come first, unless a trigger starts with
    blanks itself (DSML's ``\n\n``): llguidance's greedy lexer would give them to the gap and never to it."""
    if not head or any(t[:1].isspace() for t in triggers):
        return []
    return ["/[ \\t\\r\\n]*/"]


def _contains_any(words) -> str:
    return "/(?s:.*)(" + "|".join(regex_literal(w) for w in words) + ")(?s:.*)/"


def grammar_text(wire: CallWire, mode: str, *, thinking: bool, special_tokens: Mapping[str, int] | None = None
                 ) -> str:
    """The Lark grammar for ``wire`` in ``mode``. ``special_tokens`` (marker text -> token id): the markers that
    are one special token of the tokenizer the grammar runs with, written ``<[id]>`` (llguidance matches
    special tokens only by reference, never as text); without it every marker is byte text."""
    w = _Writer(dict(special_tokens or {}))
    if wire.whole is not None:
        start = w.node(wire.whole)
        return "\n".join(["%llguidance {}", "", f"start: {start}", *w.rules]) + "\n"
    triggers = list(wire.triggers)
    banned = wire.banned()  # free text never starts a call nor spells the end of turn
    lines = ["%llguidance {}", ""]
    tail = f"TAIL: /(?s:.*)/ & ~{_contains_any(banned)}" if banned else "TAIL: /(?s:.*)/"
    head = []
    if wire.reasoning is not None and (thinking or wire.self_reasoning):
        close = wire.reasoning[1]
        if w.spells_special(close):
            reasoning = w.until(close, [b for b in banned if b != close], "reasoning")
        else:
            body = f"/(?s:.*){regex_literal(close)}/"
            body = f"{body} & ~{_contains_any([b for b in banned if b != close])}"  # no opener again, no call
            lines.append(f"REASONING: {body}")
            reasoning = w.rule("REASONING", "reasoning", "[lazy]")
        # the prompt opened it, or the model may open it itself as the first thing it writes
        opener = w.lit(wire.reasoning[0])
        if wire.reasoning_lead:  # one lexeme each: llguidance's greedy lexer must not split the lead off
            opener = f"({w.lit(wire.reasoning_lead + wire.reasoning[0])} | {opener})"
        head.append(reasoning if thinking else f"({opener} {reasoning})?")
    if mode == "none" or not wire.calls:
        start = " ".join(head + ["TAIL"])
    else:
        regions_after_text, regions_first = [], []
        for trigger in triggers:
            others = [t for t in banned if t != trigger]
            if w.spells_special(trigger):  # the special token ends the text before it
                pre = w.until(trigger, others, "pre")
            elif any(o in trigger for o in others):  # a banned marker inside the trigger: ban it before the trigger
                pre_body = f"(/(?s:.*)/ & ~{_contains_any(others)}) /{regex_literal(trigger)}/"
            else:
                pre_body = f"/(?s:.*){regex_literal(trigger)}/"
                if others:
                    pre_body = f"{pre_body} & ~{_contains_any(others)}"
            if not w.spells_special(trigger):
                pre_terminal = f"PRE_{triggers.index(trigger)}"
                lines.append(f"{pre_terminal}: {pre_body}")
                pre = w.rule(pre_terminal, "pre", "[lazy]")
            rests = [w.node(after(node, trigger)) for node in region_nodes(wire, trigger)]
            if not rests:
                continue
            rest = w.rule(" | ".join(f"({r})" if r else '""' for r in rests), "region")
            regions_after_text.append(f"{pre} {rest}")
            regions_first.append(f"{w.lit(trigger)} {rest}")
        later = w.rule(" | ".join(regions_after_text), "call")
        if wire.calls_first and mode == "auto":  # a call region opens the output, or there is none
            first = w.rule(" | ".join(regions_first), "first_call")
            rest_of_output = "" if wire.last_region else f" {later}* TAIL"
            start = " ".join(head + [f"({first}{rest_of_output} | TAIL)"])
        elif wire.last_region:  # one region, and it ends the output
            start = " ".join(head + ([f"({later} | TAIL)"] if mode == "auto" else
                                     [*_gap(head, triggers),
                                      w.rule(" | ".join(regions_first), "first_call")]))
        elif mode == "auto":
            start = " ".join(head + [f"{later}*", "TAIL"])
        else:
            first = w.rule(" | ".join(regions_first), "first_call")
            gap = _gap(head, triggers)
            start = " ".join(head + gap + [first, f"{later}*", "TAIL"])
    lines.append(tail)
    lines.append(f"start: {start}")
    lines.extend(w.rules)
    return "\n".join(lines) + "\n"
