"""The coverage-guided (atheris / libFuzzer) entry point: bytes -> (format, text, thinking, chunking seed)
-> :func:`fuzz.invariants.check`.

    python tests/fuzz/atheris_target.py GROUP FAILURES.jsonl [libFuzzer flags, e.g. -max_total_time=20]

GROUP is ``JSON``, ``XML``, ``DSML+harmony`` or ``all``. A broken invariant is recorded (one JSON line:
format, invariant, detail, the input text and its repr, thinking, seed) and fuzzing goes on; the runner
(:mod:`fuzz.run_atheris`) fails when the file holds any line. Only the first input per (format, invariant,
raising line) is recorded, so the file stays small.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: support, fuzz, tokens.test_token_input

import atheris  # noqa: E402

with atheris.instrument_imports(include=["toolwire"]):
    import toolwire  # noqa: F401,E402

from fuzz import families, invariants  # noqa: E402

LITERAL = 0  # op code: a short literal unicode string follows


def piece_table(name: str) -> list[str]:
    """What one op byte can write for format ``name``."""
    plain = list(families.PLAIN_ALPHABET)
    return (list(families.markers(name)) + list(families.syntax(name)) + list(families.STOP_TOKENS)
            + list(families.REASONING_MARKERS) + list(families.TOOL_NAMES) + plain
            + ["\n", "\n\n", " ", "\t", "I might call ", " later.", "Final answer."])


class Target:
    def __init__(self, group: str, out: Path):
        self.names = [n for n in families.format_names() if group in ("all", families.group(n))]
        self.tables = {n: piece_table(n) for n in self.names}
        self.out = out
        self.seen: set[tuple] = set()
        for name in self.names:  # load seeds and tokenizers before the clock starts
            families.seed_outputs(name)
            invariants.tokenizer_for(name)

    def decode(self, data: bytes) -> tuple[str, str, bool, int]:
        fdp = atheris.FuzzedDataProvider(data)
        name = self.names[fdp.ConsumeIntInRange(0, len(self.names) - 1)]
        thinking = fdp.ConsumeBool()
        seed = fdp.ConsumeIntInRange(0, 2 ** 16)
        text = ""
        seeds = families.seed_outputs(name)
        if seeds and fdp.ConsumeBool():  # a well-formed output, cut
            whole, thinking = seeds[fdp.ConsumeIntInRange(0, len(seeds) - 1)]
            text = whole[:fdp.ConsumeIntInRange(0, len(whole))]
        table = self.tables[name]
        while fdp.remaining_bytes() and len(text) < 400:
            op = fdp.ConsumeIntInRange(0, len(table))
            text += fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(1, 8)) if op == LITERAL else table[op - 1]
        return name, text, thinking, seed

    def __call__(self, data: bytes) -> None:
        name, text, thinking, seed = self.decode(data)
        try:
            invariants.check(name, text, thinking=thinking, seed=seed, split_limit=32, random_splits=2)
        except invariants.Violation as v:
            key = (name, v.invariant, traceback.extract_tb(v.__traceback__)[-1].lineno)
            if key in self.seen:
                return
            self.seen.add(key)
            with self.out.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps({"format": name, "group": families.group(name), "invariant": v.invariant,
                                     "detail": v.detail[:600], "text": text, "repr": repr(text),
                                     "thinking": thinking, "seed": seed}, ensure_ascii=False) + "\n")


def main() -> None:
    group, out = sys.argv[1], Path(sys.argv[2])
    target = Target(group, out)
    atheris.Setup([sys.argv[0]] + sys.argv[3:], target)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
