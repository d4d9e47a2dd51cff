"""Shared test helpers, used by every family's tests (family-specific helpers stay in the family's module).

* golden vectors from ../shared: loading (:func:`golden`, :func:`golden_params`) and the checks every family
  runs on them (:func:`check_golden_render`, :func:`check_golden_parse_oneshot`,
  :func:`check_golden_parse_streamed`), and :func:`golden_tests`, the three tests built on them that a family's
  test module binds;
* chunking invariance: :func:`chunkings` (which splittings of an output to try) and :func:`check_chunking`
  (each splitting streams to the one-shot result, with consistent events);
* "nothing lost" accounting: :func:`kept_text`, :func:`lost_chars`, :func:`assert_nothing_lost`;
* the reference: a model's real chat template rendered by transformers (:func:`reference_render`,
  :func:`reference_renderer`), and the model output of an assistant turn (:func:`turn_output`);
* hypothesis strategies for strings and JSON values (:func:`text_of_every_kind`, :func:`json_values`);
* :func:`counting_scans`: how many characters the parsers' scanners look at (linear-time checks).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import random
from collections import Counter
from pathlib import Path
from typing import Callable, Iterable, Iterator

import pytest
from hypothesis import strategies as st

import toolwire
from toolwire.errors import ToolwireError

SHARED = Path(os.environ.get("TOOLWIRE_SHARED", Path(__file__).resolve().parents[2].parent / "shared"))
GOLDEN = SHARED / "golden"
REAL = SHARED / "real"


@functools.cache
def real_tokenizer(name: str):
    """The real tokenizer ``../shared/real/tokenizers/<name>`` (loaded once per test process)."""
    from toolwire.tokenize import load_tokenizer

    return load_tokenizer(str(REAL / "tokenizers" / name))


# ---------------------------------------------------------------- golden vectors

def require_shared() -> None:
    if not GOLDEN.is_dir():
        pytest.skip(f"../shared is absent (looked for {GOLDEN}); golden vectors cannot be checked here")


def golden(kind: str, family: str) -> list[dict]:
    """Rows of ../shared/golden/<kind>/<family>.jsonl (kind is 'render' or 'parse')."""
    path = GOLDEN / kind / f"{family}.jsonl"
    if not path.exists():
        return []
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def golden_params(kind: str, family: str):
    """pytest params for a family's vectors, one per row, id = the row's id. A placeholder that skips
    (with the reason) when ../shared is absent, so nothing is silently counted as a pass."""
    rows = golden(kind, family)
    if not rows:
        return [pytest.param(None, id=f"{family}-no-shared",
                             marks=pytest.mark.skip(reason=f"no golden vectors at {GOLDEN}/{kind}/{family}.jsonl"))]
    return [pytest.param(r, id=r["id"]) for r in rows]


def render_kwargs(options: dict) -> dict:
    """Golden ``options`` to ``Format.render`` keyword arguments."""
    return dict(options or {})


def golden_parse_kwargs(row: dict) -> dict:
    """Golden parse ``options`` to parse keyword arguments: ``thinking`` means "the prompt opened a reasoning
    block", so it is the row's ``prompt_opens_reasoning`` where the reference knows it (DSML rows, which lack
    it, open ``<think>`` exactly in thinking mode)."""
    opened = row.get("prompt_opens_reasoning", row["options"].get("thinking", False))
    return {"thinking": bool(opened)}


def check_golden_render(row: dict, *, special_markers: bool = True, error: type[Exception] = ToolwireError):
    """The row's request renders byte for byte to ``expected`` and its segments concatenate to the text;
    with ``special_markers``, only the family's own markers are special segments. A row with
    ``expected_error`` must be refused with ``error``. Returns the prompt, or the refusal."""
    require_shared()
    fmt = toolwire.get_format(row["family"])
    req = row["request"]
    if "expected_error" in row:
        with pytest.raises(error) as refusal:
            fmt.render(req["messages"], req.get("tools"), **render_kwargs(row["options"]))
        return refusal.value
    prompt = fmt.render(req["messages"], req.get("tools"), **render_kwargs(row["options"]))
    assert prompt.text == row["expected"]
    assert "".join(s.text for s in prompt.segments) == prompt.text
    if special_markers:
        assert set(prompt.special_markers()) <= set(fmt.markers.values())
    return prompt


def check_golden_parse_oneshot(row: dict, **kw) -> toolwire.ParsedOutput:
    """The row's output, parsed in one piece (``kw``, default :func:`golden_parse_kwargs`), gives
    ``expected``; every call is a clean ``proposed`` candidate from content, with no diagnostics anywhere."""
    require_shared()
    fmt = toolwire.get_format(row["family"])
    out = fmt.parse(row["model_output"], row["tools"], **(kw or golden_parse_kwargs(row)))
    assert summary(out) == row["expected"]
    assert all(c.status == "proposed" and c.source == "content" and not c.diagnostics for c in out.tool_calls), \
        out.codes()
    assert out.diagnostics == [] and not out.truncated
    return out


def check_golden_parse_streamed(row: dict, splits: Iterable[list[str]] | None = None, **kw) -> toolwire.ParsedOutput:
    """The row's output streamed in every one of ``splits`` gives the one-shot result, with consistent
    events, and that result is ``expected``. Default splits: 1-char feeds, then every two-piece split of an
    output up to 400 characters, or 60 random splittings (seeded by the row's id) of a longer one."""
    require_shared()
    fmt = toolwire.get_format(row["family"])
    text = row["model_output"]
    if splits is None:
        splits = chunkings(text, seed=row["id"], every_split_upto=400, random_splits=60, max_len=(3, 16, 64),
                           random_when_short=False)
    out = check_chunking(fmt, text, row["tools"], splits=splits, **(kw or golden_parse_kwargs(row)))
    assert summary(out) == row["expected"]
    return out


def golden_tests(families: Iterable[str], *, splits: Callable[[dict], Iterable[list[str]]] | None = None):
    """The golden tests of ``families``: (render, parse one-shot, parse streamed), each parametrized by row,
    for a test module to bind to its own names::

        test_golden_render, test_golden_parse_oneshot, test_golden_parse_streamed = golden_tests(["hy3"])

    ``splits(row)``: the splittings to stream a row in (default: :func:`check_golden_parse_streamed`'s)."""
    families = list(families)

    def rows(kind: str) -> list:
        return [p for family in families for p in golden_params(kind, family)]

    @pytest.mark.parametrize("row", rows("render"))
    def render(row):
        check_golden_render(row)

    @pytest.mark.parametrize("row", rows("parse"))
    def parse_oneshot(row):
        check_golden_parse_oneshot(row)

    @pytest.mark.parametrize("row", rows("parse"))
    def parse_streamed(row):
        check_golden_parse_streamed(row, None if splits is None else splits(row))

    return render, parse_oneshot, parse_streamed


DROPPED_REASONING_TRACE = {
    # Nemotron 3 cuts a history turn after its last </think> and trims before putting <think></think> in front,
    # so a dropped reasoning still leaves the "\n" that followed it (tests/families/nemotron/test_nemotron3.py shows it)
    "nemotron3": ("<think></think>\n", "<think></think>"),
}
"""Families whose template leaves a trace of a reasoning it does not render: (trace, what it is without it)."""


def without_dropped_reasoning_trace(family: str, text):
    """``text`` with the family's trace of dropped reasoning normalized (for plan-vs-original comparisons)."""
    if family in DROPPED_REASONING_TRACE and isinstance(text, str):
        return text.replace(*DROPPED_REASONING_TRACE[family])
    return text


# ---------------------------------------------------------------- results and streams

def summary(out: toolwire.ParsedOutput, *, include_reasoning_calls: bool = False) -> dict:
    """The comparable part of a ParsedOutput, in the golden ``expected`` shape."""
    calls = [c for c in out.tool_calls if include_reasoning_calls or c.source == "content"]
    return {
        "content": out.content,
        "reasoning": out.reasoning,
        "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in calls],
    }


def full_state(out: toolwire.ParsedOutput) -> dict:
    """Everything in a ParsedOutput, for chunking-invariance comparisons."""
    return out.model_dump()


def traced_parse(fmt, text: str, tools, **kw) -> tuple[toolwire.ParsedOutput, int]:
    """``fmt.parse(text, tools, **kw)`` and the peak of the memory it allocated (``tracemalloc``), in bytes."""
    import tracemalloc

    tracemalloc.start()
    try:
        out = fmt.parse(text, tools, **kw)
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def stream_parse(fmt, text: str, chunks: list[str] | None = None, tools=None, **kw):
    """Feed ``chunks`` (default: 1 character at a time), then finish. Returns (result, events)."""
    parser = fmt.stream(tools, **kw)
    events = []
    for piece in chunks if chunks is not None else list(text):
        events.extend(parser.feed(piece))
    events.extend(parser.flush())
    return parser.finish(), events


def random_chunks(text: str, rng: random.Random, max_len: int = 16) -> list[str]:
    out, i = [], 0
    while i < len(text):
        n = rng.randint(1, max_len)
        out.append(text[i:i + n])
        i += n
    return out


def every_split(text: str):
    """All two-piece splits of ``text`` (for short outputs)."""
    for i in range(len(text) + 1):
        yield [text[:i], text[i:]]


def assert_events_consistent(result: toolwire.ParsedOutput, events: list) -> None:
    """Stream events agree with the final result: content/reasoning deltas concatenate to the final
    fields, and each call's argument fragments concatenate to JSON of its final arguments."""
    content = "".join(e.text for e in events if e.type == "content")
    reasoning = "".join(e.text for e in events if e.type == "reasoning")
    assert content == result.content
    assert reasoning == result.reasoning
    frags: dict[int, list[str]] = {}
    started: dict[int, str] = {}
    for e in events:
        if e.type == "tool_call_started":
            assert e.index not in started, "a call was started twice"
            started[e.index] = e.name
        elif e.type == "arguments":
            assert e.index in started, "arguments before tool_call_started"
            frags.setdefault(e.index, []).append(e.fragment)
    assert sorted(started) == sorted(c.index for c in result.tool_calls)
    for c in result.tool_calls:
        assert started[c.index] == c.name
        assert json.loads("".join(frags.get(c.index, ["{}"]))) == c.arguments


# ---------------------------------------------------------------- chunking invariance

def chunkings(text: str, *, seed=0, every_split_upto: int = 300, random_splits: int = 8,
              max_len: int | tuple[int, ...] = (2, 7, 64), random_when_short: bool = True) -> list[list[str]]:
    """Splittings of ``text`` to stream it in: 1-char feeds; every two-piece split when ``text`` has at
    most ``every_split_upto`` characters; ``random_splits`` random splittings from ``random.Random(seed)``
    (pieces up to ``max_len`` long, or up to a length drawn from ``max_len`` per splitting when it is a
    tuple) - for every text, or with ``random_when_short=False`` only for texts too long to split every way."""
    short = len(text) <= every_split_upto
    out = [list(text)] + (list(every_split(text)) if short else [])
    if random_when_short or not short:
        rng = random.Random(seed)
        for _ in range(random_splits):
            out.append(random_chunks(text, rng, rng.choice(max_len) if isinstance(max_len, tuple) else max_len))
    return out


def check_chunking(fmt, text: str, tools=None, *, splits: Iterable[list[str]] | None = None, **kw):
    """Asserts that streaming ``text`` in each of ``splits`` (default: :func:`chunkings`) gives the one-shot
    result, with events consistent with it; returns the one-shot result. ``kw`` go to parse and stream."""
    ref = fmt.parse(text, tools, **kw)
    want = full_state(ref)
    for chunks in chunkings(text) if splits is None else splits:
        result, events = stream_parse(fmt, text, chunks, tools, **kw)
        assert full_state(result) == want, chunks
        assert_events_consistent(result, events)
    return ref


# ---------------------------------------------------------------- nothing lost

def kept_text(out, *, names: bool = False, ids: bool = False, sep: str = "\x00") -> str:
    """Everything a result keeps, joined by ``sep``: content, reasoning, each call's raw arguments (after its
    name and id, with ``names`` / ``ids``), and every diagnostic's raw text (output-level, then per call)."""
    parts = [out.content, out.reasoning]
    for c in out.tool_calls:
        parts += ([c.name] if names else []) + ([c.id] if ids else []) + [c.raw_arguments]
    parts += [d.raw or "" for d in out.diagnostics]
    parts += [d.raw or "" for c in out.tool_calls for d in c.diagnostics]
    return sep.join(parts)


def remove_markers(text: str, markers: Iterable[str], replacement: str = "") -> str:
    """``text`` with every marker replaced (longest marker first)."""
    for marker in sorted(markers, key=len, reverse=True):
        text = text.replace(marker, replacement)
    return text


def visible_chars(text: str, markers) -> Counter:
    """Non-whitespace characters of ``text`` once every marker in ``markers`` is removed."""
    return Counter(ch for ch in remove_markers(text, markers) if not ch.isspace())


def lost_chars(output: str, out, markers) -> Counter:
    """Non-whitespace characters of ``output`` (markers removed) that the result does not keep as often:
    its content, reasoning, call names, raw arguments and diagnostics' raw text (markers removed too)."""
    return visible_chars(output, markers) - visible_chars(kept_text(out, names=True, sep=""), markers)


def assert_nothing_lost(output: str, out, structure: Iterable[str]) -> None:
    """Every letter and digit of ``output`` outside the format's ``structure`` (its markers and own words,
    like R1's ``function``) is in content, reasoning, a call's raw text, name or id, or a diagnostic's raw
    text, as often as it occurs (counted per character: pieces of content around a call join up)."""
    text = remove_markers(output, structure, " ")
    have = Counter(ch for ch in kept_text(out, names=True, ids=True, sep="\n") if ch.isalnum())
    for ch, count in Counter(ch for ch in text if ch.isalnum()).items():
        assert have[ch] >= count, f"{ch!r} lost"


# ---------------------------------------------------------------- the reference and model output

def reference_render(template: str, messages: list, tools: list | None = None, *, decode_arguments: bool = True,
                     drop_none: bool = False, **variables) -> str:
    """The real chat template ../shared/real/templates/<template>.jinja rendered by transformers' own
    ``render_jinja_template`` (skips when either is absent). The messages go as JSON data; with
    ``decode_arguments`` a call's string ``arguments`` are decoded to objects (as serving stacks do), with
    ``drop_none`` top-level None-valued message keys are dropped (as ``apply_chat_template`` does)."""
    require_shared()
    path = REAL / "templates" / f"{template}.jinja"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    render_jinja_template = pytest.importorskip("transformers.utils.chat_template_utils").render_jinja_template
    msgs = json.loads(json.dumps(messages))
    if drop_none:
        msgs = [{k: v for k, v in m.items() if v is not None} for m in msgs]
    if decode_arguments:
        for m in msgs:
            for call in m.get("tool_calls") or []:
                if isinstance(call["function"].get("arguments"), str):
                    call["function"]["arguments"] = json.loads(call["function"]["arguments"])
    out, _ = render_jinja_template(conversations=[msgs], tools=tools, chat_template=path.read_text(encoding="utf-8"),
                                   **variables)
    return out[0]


def reference_renderer(template: str, **fixed) -> Callable[..., str]:
    """``reference(messages, tools, **kw)``: :func:`reference_render` of ``template`` with the ``fixed`` template
    variables, None-valued keys dropped and, unless ``kw`` says otherwise, the generation prompt."""

    def reference(messages: list, tools: list | None = None, **kw) -> str:
        kw.setdefault("add_generation_prompt", True)
        return reference_render(template, messages, tools, drop_none=True, **fixed, **kw)

    return reference


def turn_output(fmt, history: list, turn: dict, tools=None, *, stop: str = "", **options) -> str:
    """What the model generates for ``turn`` after ``history``: the render with the turn (no generation
    prompt) minus the render up to the generation prompt (asserted to be a prefix), minus ``stop`` (asserted)."""
    prompt = fmt.render(history, tools, **options).text
    full = fmt.render(history + [turn], tools, add_generation_prompt=False, **options).text
    assert full.startswith(prompt), "the generation prompt is not a prefix of the rendered turn"
    out = full[len(prompt):]
    assert out.endswith(stop), f"the turn does not end with {stop!r}"
    return out[:len(out) - len(stop)]


# ---------------------------------------------------------------- hypothesis strategies

def text_of_every_kind(markup: Iterable[str], *, max_size: int = 30, markup_pieces: int = 6, blank_min: int = 0,
                       max_codepoint: int = 0x1FAFF, non_ascii_size: int = 10) -> st.SearchStrategy[str]:
    """Strings of every kind: plain text, whitespace only, soup of the family's ``markup`` (markers and JSON
    syntax), non-ASCII."""
    return st.one_of(
        st.text(max_size=max_size),
        st.text(alphabet=st.sampled_from(" \t\n\r"), min_size=blank_min, max_size=6),
        st.lists(st.sampled_from(list(markup)), max_size=markup_pieces).map("".join),
        st.text(alphabet=st.characters(min_codepoint=0x80, max_codepoint=max_codepoint, exclude_categories=("Cs",)),
                max_size=non_ascii_size),
    )


def json_scalars(strings: st.SearchStrategy[str], *, int_bound: int = 2 ** 70) -> st.SearchStrategy:
    """null, booleans, ``strings``, integers within ``int_bound`` (beyond 64 bits: they must stay exact),
    finite floats."""
    return st.one_of(st.none(), st.booleans(), strings, st.integers(min_value=-int_bound, max_value=int_bound),
                     st.floats(allow_nan=False, allow_infinity=False))


def json_values(scalars: st.SearchStrategy, keys: st.SearchStrategy[str], *, max_size: int = 4,
                max_leaves: int = 12) -> st.SearchStrategy:
    """Any JSON value: ``scalars`` (e.g. :func:`json_scalars`) nested in lists and objects of up to
    ``max_size`` items, object keys drawn from ``keys``, at most ``max_leaves`` scalars in all."""
    return st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=max_size), st.dictionaries(keys, inner, max_size=max_size)), max_leaves=max_leaves)


# ---------------------------------------------------------------- linear time

def executed_lines(fn: Callable[[], object], *roots: str) -> int:
    """How many Python lines ``fn()`` executes in files under ``roots`` (module ``__file__`` paths or folders): a
    count of work that, unlike a timing, does not depend on how busy the machine is (C-level work, e.g.
    ``str.find`` over a buffer, is what :func:`counting_scans` and the bench/ flatness tables see)."""
    import sys

    prefixes = tuple(roots)
    wanted: dict[str, bool] = {}
    count = [0]

    def local(frame, event, arg):
        if event == "line":
            count[0] += 1
        return local

    def tracer(frame, event, arg):
        name = frame.f_code.co_filename
        if name not in wanted:
            wanted[name] = name.startswith(prefixes)
        return local if wanted[name] else None

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(previous)
    return count[0]


@contextlib.contextmanager
def counting_scans(*, json_scanner: bool = False) -> Iterator[list[int]]:
    """While open, counts the characters ``MarkerScanner.scan`` looks at (and, with ``json_scanner``, the
    characters fed to ``JsonValueScanner``) into the yielded one-element list."""
    from toolwire.parsers.engine import json_scan, lexer

    counts = [0]
    real_scan, real_feed = lexer.MarkerScanner.scan, json_scan.JsonValueScanner.feed

    def scan(self, text, pos=0, **kw):
        counts[0] += len(text) - pos
        return real_scan(self, text, pos, **kw)

    def feed(self, text):
        counts[0] += len(text)
        return real_feed(self, text)

    lexer.MarkerScanner.scan = scan
    if json_scanner:
        json_scan.JsonValueScanner.feed = feed
    try:
        yield counts
    finally:
        lexer.MarkerScanner.scan, json_scan.JsonValueScanner.feed = real_scan, real_feed
