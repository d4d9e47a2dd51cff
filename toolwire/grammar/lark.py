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

from .ir import Alt, CallWire, Chars, FreeText, Json, Lit, Seq, Star, Tag, Text, after, flatten, region_nodes

_REGEX_SPECIAL = set("\\.+*?()|[]{}^$/")


def regex_literal(text: str) -> str:
    """``text`` as a literal inside llguidance's ``/.../`` regex syntax."""
    out = []
    for ch in text:
        if ch in _REGEX_SPECIAL:
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)


def string_literal(text: str) -> str:
    """``text`` as a Lark string literal."""
    return json.dumps(text, ensure_ascii=False)


class _Writer:
    def __init__(self):
        self.rules: list[str] = []
        self._names: dict[str, str] = {}

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
            return string_literal(node.text) if node.text else ""
        if isinstance(node, Json):
            return self.rule("%json " + json.dumps(node.schema, ensure_ascii=False), "json")
        if isinstance(node, Tag) and not node.end and isinstance(node.content, (FreeText, Text)):  # to the end
            excludes = getattr(node.content, "excludes", ())
            value = self.terminal(f"/(?s:.*)/ & ~{_contains_any(excludes)}" if excludes else "/(?s:.*)/")
            return " ".join(p for p in (string_literal(node.begin) if node.begin else "", value) if p)
        if isinstance(node, Tag):
            if isinstance(node.content, (FreeText, Text)):
                body = f"/(?s:.*){regex_literal(node.end)}/"
                if isinstance(node.content, Text) and node.content.excludes:
                    body = f"{body} & ~{_contains_any(node.content.excludes)}"
                    terminal = self.terminal(body)
                    value = self.rule(terminal, "text", "[lazy]")
                else:
                    value = self.rule(body, "text", "[lazy]")
                return " ".join(p for p in (string_literal(node.begin) if node.begin else "", value) if p)
            parts = [string_literal(node.begin) if node.begin else "", self.node(node.content),
                     string_literal(node.end) if node.end else ""]
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


def grammar_text(wire: CallWire, mode: str, *, thinking: bool) -> str:
    """The Lark grammar for ``wire`` in ``mode``."""
    w = _Writer()
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
        body = f"/(?s:.*){regex_literal(close)}/"
        body = f"{body} & ~{_contains_any([b for b in banned if b != close])}"  # no opener again, no call
        lines.append(f"REASONING: {body}")
        reasoning = w.rule("REASONING", "reasoning", "[lazy]")
        # the prompt opened it, or the model may open it itself as the first thing it writes
        opener = string_literal(wire.reasoning[0])
        if wire.reasoning_lead:  # one lexeme each: llguidance's greedy lexer must not split the lead off
            opener = f"({string_literal(wire.reasoning_lead + wire.reasoning[0])} | {opener})"
        head.append(reasoning if thinking else f"({opener} {reasoning})?")
    if mode == "none" or not wire.calls:
        start = " ".join(head + ["TAIL"])
    else:
        regions_after_text, regions_first = [], []
        for trigger in triggers:
            others = [t for t in banned if t != trigger]
            if any(o in trigger for o in others):  # a banned marker inside the trigger: ban it before the trigger
                pre_body = f"(/(?s:.*)/ & ~{_contains_any(others)}) /{regex_literal(trigger)}/"
            else:
                pre_body = f"/(?s:.*){regex_literal(trigger)}/"
                if others:
                    pre_body = f"{pre_body} & ~{_contains_any(others)}"
            pre_terminal = f"PRE_{triggers.index(trigger)}"
            lines.append(f"{pre_terminal}: {pre_body}")
            pre = w.rule(pre_terminal, "pre", "[lazy]")
            rests = [w.node(after(node, trigger)) for node in region_nodes(wire, trigger)]
            if not rests:
                continue
            rest = w.rule(" | ".join(f"({r})" if r else '""' for r in rests), "region")
            regions_after_text.append(f"{pre} {rest}")
            regions_first.append(f"{string_literal(trigger)} {rest}")
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
