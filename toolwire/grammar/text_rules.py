"""Free text that contains none of some marker strings, as grammar rules (for targets without negation).

The strings that do not contain any word of a set form a regular language; its automaton is the
Aho-Corasick automaton of the words with the match states removed. :func:`excluding_rules` writes that
automaton as GBNF rules, one per state (a state is the longest suffix of the text read so far that is a
proper prefix of a word), so a GBNF grammar expresses "any text except a closing marker" exactly.
"""

from __future__ import annotations

from typing import Callable, Sequence


def _char_class(chars: Sequence[str], negate: bool) -> str:
    def esc(ch: str) -> str:
        if ch in "]\\^-[":
            return "\\" + ch
        if ch == "\n":
            return "\\n"
        if ch == "\r":
            return "\\r"
        if ch == "\t":
            return "\\t"
        if ord(ch) < 0x20 or ord(ch) == 0x7F:
            return f"\\x{ord(ch):02X}"
        return ch
    return "[" + ("^" if negate else "") + "".join(esc(c) for c in sorted(set(chars))) + "]"


def excluding_rules(words: Sequence[str], name: str, literal: Callable[[str], str]) -> dict[str, str]:
    """GBNF rules whose rule ``name`` matches any text (possibly empty) containing none of ``words``.

    ``literal`` spells one character as a GBNF literal. Rule names are ``name`` (the start state) and
    ``name-N`` for the other states."""
    words = sorted({w for w in words if w})
    if not words:
        return {name: "[^\\x00]*"}
    prefixes = sorted({w[:i] for w in words for i in range(len(w))}, key=lambda p: (len(p), p))
    state_name = {p: (name if not p else f"{name}-{i}") for i, p in enumerate(prefixes)}
    alphabet = sorted({c for w in words for c in w})

    def step(state: str, ch: str) -> str | None:
        text = state + ch
        if any(text.endswith(w) for w in words):
            return None  # a word is complete: not allowed
        for start in range(len(text) + 1):
            if text[start:] in state_name:
                return text[start:]
        return ""

    rules: dict[str, str] = {}
    for state in prefixes:
        moves: dict[str, list[str]] = {}
        leaving = []  # characters that do not go back to the start state (continue a word, or complete one)
        for ch in alphabet:
            target = step(state, ch)
            if target != "":
                leaving.append(ch)
            if target:
                moves.setdefault(target, []).append(ch)
        to_start = _char_class(leaving, negate=True)
        branches = [f"{literal(chs[0]) if len(chs) == 1 else _char_class(chs, False)} {state_name[target]}"
                    for target, chs in sorted(moves.items(), key=lambda kv: (len(kv[0]), kv[0]))]
        if state:  # a non-start state: end here, go back to the start state, or continue a word
            rules[state_name[state]] = " | ".join(['""', f"{to_start} {name}"] + branches)
        else:  # the start state: a run of characters that begin no word, then maybe one that does
            tail = " | ".join(branches)
            rules[name] = f"{to_start}* ({tail})?" if tail else f"{to_start}*"
    return rules
