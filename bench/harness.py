"""The harness every benchmark module (``bench/bench_*.py``) uses.

* **Streaming** (:func:`stream_table`): a model output whose one string value grows along :data:`SIZES` is fed
  in :data:`DELTA`-character deltas. Per size, "at N" is the CPU time per delta of :data:`TIMED_DELTAS`
  deltas fed once the value is already ~N characters long (the text before is fed untimed in one piece, the
  rest after; best of :data:`RUNS`), and "mean" the CPU time per delta over the whole stream from the first character
  (best of 3; toolwire only: for a quadratic parser it is a slower way to see the same growth). Every run's
  final arguments are checked; a peer that returns wrong ones is reported, not timed.
* **Calls** (:func:`per_call_us`): CPU time per call, median of 5 batches.
* **Peers** (:func:`sglang_parser`, :func:`vllm_parser`, :func:`optional_import`): a peer that does not import
  here is reported as missing; the heavy ones live in ``.bench-venv`` (``bench/setup_peers.sh``).
* **Output**: markdown tables (:func:`print_table`), the machine and versions (:func:`environment`), and a
  summary of toolwire against each peer (:func:`record`, :func:`summary_table`) that ``python -m bench``
  prints last.

Times are CPU time of this thread (``time.thread_time``): on a shared 2-core machine wall time mostly measures
waiting for a core. They are still noisy there (caches and frequency are shared): read ratios, not digits.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import platform
import statistics
import time
from importlib import metadata
from pathlib import Path
from typing import Any, Callable

import toolwire

SIZES = (1_000, 4_000, 16_000, 64_000)
"""The size ladder: characters of the growing value."""


def size_label(size: int) -> str:
    """``1k`` ... ``64k`` (thousands, or multiples of 1024 for a power-of-two ladder)."""
    return f"{size // 1024 if size % 1024 == 0 else size // 1000}k"
DELTA = 4
"""Characters per streamed delta."""
TIMED_DELTAS = 256
"""Deltas timed "at N"."""
RUNS = 5
"""Runs "at N" takes the best of (each a fresh parser): a 256-delta run lasts about a millisecond, and on a
shared machine one run in three is often slowed by another process (the first size of a table most)."""

clock = time.thread_time
"""CPU time of this thread (every peer runs in this thread too)."""

Feed = Callable[[str], None]
Finish = Callable[[], dict]
Make = Callable[[], tuple[Feed, Finish]]
"""A parser under test: ``make()`` returns a fresh ``feed(delta)`` and ``finish() -> final arguments``."""

MISSING = "n/a (peer missing)"
WRONG = "n/a (wrong arguments for this output)"


# ---------------------------------------------------------------- timing

def per_delta_at(make: Make, text: str, value_start: int, size: int, *, check: dict) -> float:
    """µs per delta for TIMED_DELTAS deltas once ~``size`` characters of the value (starting at
    ``value_start`` in ``text``) were fed; best of RUNS, after one untimed run (without it, the first size of a table
    was seen to read about 20 % slow: code and allocator still cold). Asserts ``finish()`` returns
    ``check``."""
    span = DELTA * TIMED_DELTAS
    start_at = max(0, min(value_start + size - span, len(text) - span))
    best = float("inf")
    for run in range(RUNS + 1):
        feed, finish = make()
        feed(text[:start_at])
        timed = [text[i:i + DELTA] for i in range(start_at, start_at + span, DELTA)]
        gc.collect()
        t0 = clock()
        for delta in timed:
            feed(delta)
        if run:
            best = min(best, (clock() - t0) / len(timed) * 1e6)
        feed(text[start_at + span:])
        assert finish() == check, "the parser returned wrong arguments"
    return best


def mean_per_delta(make: Make, text: str, *, check: dict) -> float:
    """µs per delta over the whole stream, fed in DELTA-character pieces (best of 3)."""
    deltas = [text[i:i + DELTA] for i in range(0, len(text), DELTA)]
    best = float("inf")
    for _ in range(3):
        feed, finish = make()
        gc.collect()
        t0 = clock()
        for delta in deltas:
            feed(delta)
        best = min(best, (clock() - t0) / len(deltas) * 1e6)
        assert finish() == check, "the parser returned wrong arguments"
    return best


def per_call_us(fn: Callable[[], Any], budget: float = 0.25) -> float:
    """Median µs of CPU time per call over 5 batches that together take about ``budget`` seconds."""
    fn()
    start = clock()
    fn()
    once = max(clock() - start, 1e-6)
    per_batch = max(1, int(budget / 5 / once))
    samples = []
    for _ in range(5):
        start = clock()
        for _ in range(per_batch):
            fn()
        samples.append((clock() - start) / per_batch)
    return statistics.median(samples) * 1e6


# ---------------------------------------------------------------- parsers under test and peers

def toolwire_parser(family: str, tools: list[dict]) -> Make:
    """toolwire's stream parser for ``family``; ``finish`` also checks that the streamed argument fragments
    decode to the final arguments."""
    fmt = toolwire.get_format(family)

    def make() -> tuple[Feed, Finish]:
        parser = fmt.stream(tools)
        frags: list[str] = []

        def feed(delta: str) -> None:
            frags.extend(e.fragment for e in parser.feed(delta) if e.type == "arguments")

        def finish() -> dict:
            out = parser.finish()
            assert json.loads("".join(frags)) == out.tool_calls[0].arguments
            return out.tool_calls[0].arguments

        return feed, finish

    return make


def optional_import(name: str):
    """The module, or None when it does not import in this interpreter (a missing peer)."""
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - any import failure means "peer missing"
        return None


def sglang_parser(detector: str, tools: list[dict]) -> Make | str:
    """SGLang's ``sglang.srt.function_call.<detector>`` ("module.Class") fed through
    ``parse_streaming_increment``, its calls' ``parameters`` joined and decoded at the end; or
    :data:`MISSING` when SGLang does not import here."""
    module_name, class_name = detector.split(".")
    module = optional_import(f"sglang.srt.function_call.{module_name}")
    protocol = optional_import("sglang.srt.entrypoints.openai.protocol")
    if module is None or protocol is None:
        return MISSING
    detector_class = getattr(module, class_name)
    sg_tools = [protocol.Tool.model_validate(t) for t in tools]

    def make() -> tuple[Feed, Finish]:
        parser = detector_class()
        args: list[str] = []

        def feed(delta: str) -> None:
            args.extend(c.parameters for c in parser.parse_streaming_increment(delta, sg_tools).calls if c.parameters)

        def finish() -> dict:
            return joined_arguments(args)

        return feed, finish

    return make


def joined_arguments(fragments: list[str]) -> dict:
    """The arguments a peer streamed, joined and read as JSON (``{}`` when they are not JSON, so the row
    reports the peer's arguments as wrong)."""
    try:
        return json.loads("".join(fragments))
    except ValueError:
        return {}


TOKENIZERS = Path(__file__).resolve().parents[2] / "shared" / "real" / "tokenizers"
"""The real tokenizers in ``../shared`` (vLLM's parsers look their markers up in a tokenizer's vocabulary)."""


def vllm_tokenizer(name: str, markers: tuple[str, ...] = ()):
    """A transformers tokenizer from ``../shared/real/tokenizers/<name>`` (offline), with ``markers`` added as
    special tokens: for a family whose own tokenizer is not there, its markers on another tokenizer are what
    vLLM's parser needs (it looks them up by id and reads the text)."""
    import gzip

    import tokenizers
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    folder = TOKENIZERS / name
    if (folder / "tokenizer.json.gz").exists():
        text = gzip.decompress((folder / "tokenizer.json.gz").read_bytes()).decode("utf-8")
        tokenizer = PreTrainedTokenizerFast(tokenizer_object=tokenizers.Tokenizer.from_str(text))
    else:
        tokenizer = AutoTokenizer.from_pretrained(str(folder))
    if markers:
        tokenizer.add_special_tokens({"additional_special_tokens": list(markers)})
    return tokenizer


def vllm_parser(tool_parser: str, tools: list[dict], tokenizer: str, markers: tuple[str, ...] = ()) -> Make | str:
    """vLLM's serving parser for ``--tool-call-parser tool_parser`` (no reasoning parser), composed by
    ``ParserManager.get_parser`` and fed through ``parse_delta`` as vLLM's ``ChatStreamProcessor`` drives it:
    each delta's text with its token ids (encoded once per distinct delta, outside the timed runs after the
    first); its calls' argument deltas joined and decoded at the end. :data:`MISSING` when vLLM does not
    import here or the tokenizer is not in ``../shared``."""
    if optional_import("vllm.parser") is None or not (TOKENIZERS / tokenizer).exists():
        return MISSING
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.parser import ParserManager

    tok = vllm_tokenizer(tokenizer, markers)
    parser_class = ParserManager.get_parser(tool_parser_name=tool_parser, reasoning_parser_name=None,
                                            enable_auto_tools=True)
    request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "q"}], tools=tools, stream=True)
    ids_of: dict[str, list[int]] = {}

    def make() -> tuple[Feed, Finish]:
        parser = parser_class(tok, request.tools, chat_template_kwargs={}, model_config=None)
        args: list[str] = []

        def take(message) -> None:
            if message is not None:
                args.extend(c.function.arguments for c in message.tool_calls or () if c.function and c.function.arguments)

        def feed(delta: str) -> None:
            ids = ids_of.get(delta)
            if ids is None:
                ids = ids_of[delta] = tok.encode(delta, add_special_tokens=False)
            take(parser.parse_delta(delta, ids, request, [], finished=False))

        def finish() -> dict:
            take(parser.parse_delta("", [], request, [], finished=True))
            return joined_arguments(args)

        return feed, finish

    return make


# ---------------------------------------------------------------- streaming tables

def stream_table(title: str, output: Callable[[int], tuple[str, dict, int]], family: str, tools: list[dict],
                 peers: dict[str, Make | str], *, sizes: tuple[int, ...] = SIZES,
                 speedup_targets: dict[str, float] | None = None, growth_limit: float = 2.0) -> list[dict]:
    """Measure toolwire's ``family`` parser and ``peers`` on ``output(size) -> (text, arguments, value_start)``
    for every size, print the table, the growth of toolwire's cost (at most ``growth_limit``) and each peer's ratio
    at the largest size (at least ``speedup_targets[peer]`` where given), record that size for the summary;
    returns the rows (``{"size", "toolwire", "mean", <peer>: µs or a reason}``)."""
    tw = toolwire_parser(family, tools)
    rows = []
    speedup_targets = speedup_targets or {}
    for size in sizes:
        text, args, start = output(size)
        row: dict[str, Any] = {"size": size, "toolwire": per_delta_at(tw, text, start, size, check=args),
                               "mean": mean_per_delta(tw, text, check=args)}
        for name, peer in peers.items():
            if not callable(peer):
                row[name] = peer
                continue
            try:
                row[name] = per_delta_at(peer, text, start, size, check=args)
            except Exception:  # noqa: BLE001 - a peer that fails on this output is reported, not timed
                row[name] = WRONG
        rows.append(row)

    print(f"\n{title}, {DELTA}-char deltas (CPU µs per delta)\n")
    header = ["size", "toolwire at N", "toolwire mean"]
    for name in peers:
        header += [f"{name} at N", f"{name} / toolwire"]
    table = []
    for row in rows:
        cells = [size_label(row['size']), f"{row['toolwire']:.1f}", f"{row['mean']:.1f}"]
        for name in peers:
            value = row[name]
            cells += [f"{value:,.1f}", f"{value / row['toolwire']:,.1f}x"] if isinstance(value, float) else [value, "-"]
        table.append(cells)
    print_table(header, table, align="r" * len(header))

    first, last = rows[0], rows[-1]
    growth = last["toolwire"] / first["toolwire"]
    print(f"\ntoolwire per-delta cost {size_label(last['size'])} / {size_label(first['size'])}: {growth:.2f}x "
          f"(limit {growth_limit:g}x: {'ok' if growth <= growth_limit else 'EXCEEDED'})")
    for name in peers:
        value = last[name]
        if isinstance(value, float):
            ratio = value / last["toolwire"]
            target = ""
            if name in speedup_targets:
                want = speedup_targets[name]
                target = f" (target {want:g}x: {'met' if ratio >= want else 'NOT MET'})"
            own = ""
            if isinstance(first[name], float):
                own = (f"; {name}'s own growth {size_label(last['size'])} / {size_label(first['size'])}: "
                       f"{value / first[name]:.1f}x")
            print(f"{name} / toolwire at {size_label(last['size'])}: {ratio:,.1f}x{target}{own}")
        else:
            print(f"{name}: {value}")
        record(title, f"{size_label(last['size'])}, µs/delta", f"{last['toolwire']:.1f}", name,
               f"{value:,.1f}" if isinstance(value, float) else value,
               f"{value / last['toolwire']:,.1f}x" if isinstance(value, float) else "-")
    return rows


# ---------------------------------------------------------------- output

def print_table(header: list[str], rows: list[list[str]], *, align: str = "") -> None:
    """A markdown table; ``align`` has one letter per column, ``l`` or ``r`` (default: left)."""
    align = align.ljust(len(header), "l")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---:" if a == "r" else "---" for a in align) + "|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")


_SUMMARY: list[tuple[str, ...]] = []


def record(benchmark: str, case: str, toolwire_result: str, peer: str, peer_result: str, ratio: str) -> None:
    """A row of the summary ``python -m bench`` prints last (ratio = peer / toolwire)."""
    _SUMMARY.append((benchmark, case, toolwire_result, peer, peer_result, ratio))


def summary_table() -> None:
    """Print the recorded rows (nothing when none were recorded)."""
    if _SUMMARY:
        print("\n## summary: toolwire against each peer (ratio = peer / toolwire; above 1, toolwire is faster)\n")
        print_table(["benchmark", "case", "toolwire", "peer", "peer result", "ratio"], [list(r) for r in _SUMMARY],
                    align="llrlrr")


PACKAGES = ("toolwire", "sglang", "vllm", "openai-harmony", "deepseek-recipe", "tml-renderers", "torch",
            "transformers", "tokenizers", "jinja2", "jsonschema")


def version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"


def environment() -> str:
    """The machine (CPU model, cores, load), OS, Python and the versions of toolwire and the peers."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        load = f", load average {os.getloadavg()[0]:.1f}"
    except (AttributeError, OSError):
        load = ""
    versions = ", ".join(f"{p} {version(p)}" for p in PACKAGES)
    return (f"machine: {cpu} ({os.cpu_count()} cores{load}); {platform.system()} {platform.release()}; "
            f"Python {platform.python_version()}\nversions: {versions}")
