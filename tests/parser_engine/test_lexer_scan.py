"""MarkerScanner gives the answer of the ``regex`` module's partial matching (what it was built on before it
switched to one ``re`` search plus a held-back-tail check): the leftmost complete marker (longest at that
position) if there is one, else the leftmost tail that could still become a marker; the held-back check for
a marker that is a proper prefix of a longer one still applies. Checked on fixed cases worked out by hand
and on random marker sets and texts against ``regex``'s own answer."""

from __future__ import annotations

import random

import regex

from toolwire.parsers.engine.lexer import Hit, MarkerScanner


def oracle(markers, text, pos, final):
    """The previous implementation's answer, from ``regex`` partial matching."""
    ordered = sorted(set(markers), key=len, reverse=True)
    m = regex.compile("|".join(regex.escape(x) for x in ordered)).search(text, pos, partial=not final)
    if m is None:
        return Hit(len(text), None)
    if m.partial:
        return Hit(m.start(), None)
    if not final and any(b != m.group() and b.startswith(m.group()) for b in ordered):
        rest = text[m.start():]
        if any(len(b) > len(rest) and b.startswith(rest) for b in ordered):
            return Hit(m.start(), None)
    return Hit(m.start(), m.group())


def test_hand_worked_cases():
    s = MarkerScanner(["<|a|>", "<|ab|>", "\n\n<|a|>"])
    assert s.scan("xx<|a|>yy") == Hit(2, "<|a|>")
    assert s.scan("x\n\n<|a|>") == Hit(1, "\n\n<|a|>")      # longest at the leftmost position
    assert s.scan("x<|ab|><|a|>") == Hit(1, "<|ab|>")
    assert s.scan("hello <|") == Hit(6, None)              # a possible marker prefix is held back
    assert s.scan("hello <|", final=True) == Hit(8, None)   # not at the end of output
    assert s.scan("hello \n") == Hit(6, None)
    assert s.scan("hello <x") == Hit(8, None)              # '<x' starts no marker
    assert s.scan("a <| b <|a") == Hit(7, None)            # only the tail is held back
    assert s.scan("<|a|>", 1) == Hit(5, None)               # scanning starts at pos
    # a complete marker wins over an earlier tail that could still grow: "bc" at 3 over "<abc" at 1
    assert MarkerScanner(["<abc>", "bc"]).scan("x<abc") == Hit(3, "bc")
    # a marker that may still grow into a longer one is held back at the end, not at the end of output
    t = MarkerScanner(["<|tool", "<|tool_call|>"])
    assert t.scan("x<|tool") == Hit(1, None)
    assert t.scan("x<|tool", final=True) == Hit(1, "<|tool")
    assert t.scan("x<|tool_ca") == Hit(1, None)


def _random_cases(seed: int):
    """3,000 random marker sets, 6 random texts and start positions each: (markers, scanner, text, pos, rng)."""
    rng = random.Random(seed)
    alphabet = "ab<|>/\n ｜é"
    for _ in range(3000):
        markers = {"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))) for _ in range(rng.randint(1, 5))}
        scanner = MarkerScanner(markers)
        for _ in range(6):
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
            yield markers, scanner, text, rng.randint(0, len(text)), rng


def test_same_answer_as_regex_partial_matching():
    for markers, scanner, text, pos, rng in _random_cases(18):
        final = rng.random() < 0.3
        assert scanner.scan(text, pos, final=final) == oracle(markers, text, pos, final), (markers, text, pos, final)


def test_find_is_none_exactly_when_all_of_the_text_is_safe():
    """``find`` (the hot paths' one-search check) is None exactly when the scan would let the whole text through
    (no marker, no held-back prefix): the parsers skip the scan then, so any disagreement would change output."""
    for markers, scanner, text, pos, _ in _random_cases(1818):
        everything = oracle(markers, text, pos, False) == Hit(len(text), None)
        assert (scanner.find(text, pos) is None) == everything, (markers, text, pos)
        if scanner.find(text, pos) is None:
            assert oracle(markers, text, pos, True) == Hit(len(text), None)
