"""gpt-oss (harmony) streaming fed token ids: per-id cost while one call's string argument grows to 1k..64k
characters.

The output continues the generation prompt ``<|start|>assistant``:
``<|channel|>commentary to=functions.search <|constrain|>json<|message|>{"q": "<N chars>", "limit": 3}<|call|>``
(``bench_qwen``'s plain arguments), encoded with o200k_harmony (``../shared/real/tokenizers/o200k_base``, built
offline by ``toolwire.templates.harmony.load_o200k_harmony``) and fed one token id per step: "at N" is the CPU
µs per id of :data:`bench.harness.TIMED_DELTAS` ids fed once the value is already ~N characters long (the ids
before are fed untimed in one call, the rest after; best of :data:`bench.harness.RUNS`), "mean" the µs per id
over the whole output.
Peer, when importable (``.bench-venv``, see ``bench/setup_peers.sh``): openai-harmony's ``StreamableParser``
(Rust; ``process(id)`` then ``last_content_delta``, what a server streams), its vocabulary read from the same
local file through ``TIKTOKEN_ENCODINGS_BASE`` (nothing is downloaded). Both runs' final arguments are checked.
Targets: toolwire's 64k cost at most 2x its 1k cost; at least 0.5x openai-harmony's speed.

A second table times reasoning and content the same way: ``<|channel|>analysis<|message|><N chars><|end|>``
``<|start|>assistant<|channel|>final<|message|><N chars><|return|>``, "at N" once the final message holds ~N
characters; openai-harmony's deltas are sorted by ``current_channel`` (what a server does with them).
"""

from __future__ import annotations

import gc
import json
import os
from typing import Callable

import toolwire
from bench import harness
from bench.bench_qwen import TOOLS, arguments

O200K = harness.TOKENIZERS / "o200k_base"
HEAD = "<|channel|>commentary to=functions.search <|constrain|>json<|message|>"
TAIL = "<|call|>"
REASONING_HEAD = "<|channel|>analysis<|message|>"
FINAL_HEAD = "<|end|><|start|>assistant<|channel|>final<|message|>"
FINAL_TAIL = "<|return|>"

IdMake = Callable[[], tuple[Callable[[int], None], Callable[[], dict]]]


def encoding():
    """The o200k_harmony tiktoken encoding, from the local file."""
    from toolwire.templates.harmony import load_o200k_harmony

    return load_o200k_harmony(O200K)


def output(enc, size: int) -> tuple[list[int], dict, int]:
    """The ids of the output whose string argument is ``size`` characters long, its arguments, and the index of
    the id at which ~``size`` characters of the value were written."""
    args = arguments(size)
    head = enc.encode(HEAD + '{"q": "', allowed_special="all")
    ids = enc.encode(HEAD + json.dumps(args, ensure_ascii=False) + TAIL, allowed_special="all")
    value_ids = enc.encode(args["q"][:size], allowed_special="all")
    return ids, args, len(head) + len(value_ids)


def messages_output(enc, size: int) -> tuple[list[int], tuple[str, str], int]:
    """The ids of an analysis message and a final message of ``size`` characters each, (reasoning, content),
    and the index of the id at which ~``size`` characters of the final message were written."""
    text = arguments(size)["q"]
    ids = enc.encode(REASONING_HEAD + text + FINAL_HEAD + text + FINAL_TAIL, allowed_special="all")
    head = enc.encode(REASONING_HEAD + text + FINAL_HEAD, allowed_special="all")
    return ids, (text, text), len(head) + len(enc.encode_ordinary(text))


def per_id_at(make: IdMake, ids: list[int], at: int, *, check: dict) -> float:
    """µs per id for TIMED_DELTAS ids ending at ``ids[at]``; best of RUNS. Asserts ``finish()`` returns ``check``."""
    span = harness.TIMED_DELTAS
    start = max(0, min(at - span, len(ids) - span))
    best = float("inf")
    for _ in range(harness.RUNS):
        feed, feed_many, finish = make()
        feed_many(ids[:start])
        timed = ids[start:start + span]
        gc.collect()
        t0 = harness.clock()
        for tid in timed:
            feed(tid)
        best = min(best, (harness.clock() - t0) / len(timed) * 1e6)
        feed_many(ids[start + span:])
        assert finish() == check, "the parser returned wrong arguments"
    return best


def mean_per_id(make: IdMake, ids: list[int], *, check: dict) -> float:
    """µs per id over the whole output, one id per step (best of 3)."""
    best = float("inf")
    for _ in range(3):
        feed, _many, finish = make()
        gc.collect()
        t0 = harness.clock()
        for tid in ids:
            feed(tid)
        best = min(best, (harness.clock() - t0) / len(ids) * 1e6)
        assert finish() == check, "the parser returned wrong arguments"
    return best


def toolwire_parser(enc) -> IdMake:
    """toolwire's gpt_oss stream parser fed ``feed(ids=[id])``; its argument fragments must decode to the result."""
    fmt = toolwire.get_format("gpt_oss")

    def make():
        parser = fmt.stream(TOOLS, encoding=enc)
        frags: list[str] = []

        def feed_many(ids: list[int]) -> None:
            frags.extend(e.fragment for e in parser.feed(ids=ids) if e.type == "arguments")

        def feed(tid: int) -> None:
            frags.extend(e.fragment for e in parser.feed(ids=(tid,)) if e.type == "arguments")

        def finish() -> dict:
            out = parser.finish()
            assert json.loads("".join(frags)) == out.tool_calls[0].arguments
            return out.tool_calls[0].arguments

        return feed, feed_many, finish

    return make


def toolwire_messages(enc) -> IdMake:
    """toolwire's gpt_oss stream parser fed ``feed(ids=[id])``; ``finish()`` gives (reasoning, content) and
    checks the deltas spell them."""
    fmt = toolwire.get_format("gpt_oss")

    def make():
        parser = fmt.stream(TOOLS, encoding=enc)
        reasoning: list[str] = []
        content: list[str] = []

        def feed(tid: int) -> None:
            for event in parser.feed(ids=(tid,)):
                (reasoning if event.type == "reasoning" else content).append(event.text)

        def feed_many(ids: list[int]) -> None:
            for event in parser.feed(ids=ids):
                (reasoning if event.type == "reasoning" else content).append(event.text)

        def finish() -> tuple[str, str]:
            out = parser.finish()
            assert ("".join(reasoning), "".join(content)) == (out.reasoning, out.content)
            return out.reasoning, out.content

        return feed, feed_many, finish

    return make


def _harmony_encoding():
    """openai_harmony and its gpt-oss encoding read from the local vocabulary, or (None, None)."""
    os.environ.setdefault("TIKTOKEN_ENCODINGS_BASE", str(O200K))  # the local vocabulary file, never a download
    oh = harness.optional_import("openai_harmony")
    if oh is None or not O200K.exists():
        return None, None
    return oh, oh.load_harmony_encoding(oh.HarmonyEncodingName.HARMONY_GPT_OSS)


def harmony_messages() -> IdMake | str:
    """openai-harmony's ``StreamableParser``: ``process(id)``, each ``last_content_delta`` kept by
    ``current_channel``; ``finish()`` gives (reasoning, content); or :data:`harness.MISSING`."""
    oh, enc = _harmony_encoding()
    if oh is None:
        return harness.MISSING

    def make():
        parser = oh.StreamableParser(enc, role=oh.Role.ASSISTANT)
        reasoning: list[str] = []
        content: list[str] = []

        def feed(tid: int) -> None:
            parser.process(tid)
            delta = parser.last_content_delta
            if delta:
                (reasoning if parser.current_channel == "analysis" else content).append(delta)

        def feed_many(ids: list[int]) -> None:
            for tid in ids:
                feed(tid)

        def finish() -> tuple[str, str]:
            parser.process_eos()
            texts = {m.channel: m.content[0].text for m in parser.messages}
            assert ("".join(reasoning), "".join(content)) == (texts["analysis"], texts["final"])
            return texts["analysis"], texts["final"]

        return feed, feed_many, finish

    return make


def harmony_parser() -> IdMake | str:
    """openai-harmony's ``StreamableParser`` for the assistant role: ``process(id)``, the call's content deltas
    joined; or :data:`harness.MISSING`."""
    oh, enc = _harmony_encoding()
    if oh is None:
        return harness.MISSING

    def make():
        parser = oh.StreamableParser(enc, role=oh.Role.ASSISTANT)
        deltas: list[str] = []

        def feed(tid: int) -> None:
            parser.process(tid)
            delta = parser.last_content_delta
            if delta and parser.current_recipient:
                deltas.append(delta)

        def feed_many(ids: list[int]) -> None:
            for tid in ids:
                feed(tid)

        def finish() -> dict:
            parser.process_eos()
            calls = [m for m in parser.messages if m.recipient == "functions.search"]
            assert len(calls) == 1 and "".join(deltas) == calls[0].content[0].text
            return json.loads(calls[0].content[0].text)

        return feed, feed_many, finish

    return make


def id_table(title: str, benchmark: str, shape, tw: IdMake, peer: IdMake | str, enc) -> None:
    """Time toolwire and the peer on ``shape(enc, size)`` outputs at every size; print the table and record the
    1k and 64k rows under ``benchmark``."""
    peer_name = "openai-harmony StreamableParser"
    rows = []
    for size in harness.SIZES:
        ids, check, at = shape(enc, size)
        row = {"size": size, "toolwire": per_id_at(tw, ids, at, check=check), "mean": mean_per_id(tw, ids, check=check)}
        if callable(peer):
            try:
                row["peer"] = per_id_at(peer, ids, at, check=check)
            except Exception:  # noqa: BLE001 - a peer that fails on this output is reported, not timed
                row["peer"] = harness.WRONG
        else:
            row["peer"] = peer
        rows.append(row)
    print(f"\n{title}, one token id per step (CPU µs per id)\n")
    table = []
    for row in rows:
        value = row["peer"]
        cells = [harness.size_label(row["size"]), f"{row['toolwire']:.1f}", f"{row['mean']:.1f}"]
        cells += [f"{value:,.1f}", f"{value / row['toolwire']:,.2f}x"] if isinstance(value, float) else [value, "-"]
        table.append(cells)
    harness.print_table(["size", "toolwire at N", "toolwire mean", f"{peer_name} at N", "peer / toolwire"], table,
                        align="rrrrr")
    first, last = rows[0], rows[-1]
    print(f"\ntoolwire per-id cost 64k / 1k: {last['toolwire'] / first['toolwire']:.2f}x (limit 2x)")
    for row in (first, last):
        value = row["peer"]
        harness.record(benchmark, f"{harness.size_label(row['size'])}, µs/id",
                       f"{row['toolwire']:.1f}", peer_name, f"{value:,.1f}" if isinstance(value, float) else value,
                       f"{value / row['toolwire']:,.2f}x" if isinstance(value, float) else "-")


def main() -> None:
    """Print both tables and record their 1k and 64k rows."""
    if not O200K.exists() or harness.optional_import("tiktoken") is None:
        print("\ngpt_oss per token id: n/a (o200k_base or tiktoken missing)")
        return
    enc = encoding()
    id_table("gpt_oss, one call's string argument", "gpt_oss stream per token id", output, toolwire_parser(enc),
             harmony_parser(), enc)
    id_table("gpt_oss, an analysis message then a final message", "gpt_oss reasoning + content per token id",
             messages_output, toolwire_messages(enc), harmony_messages(), enc)


if __name__ == "__main__":
    print(harness.environment())
    main()
