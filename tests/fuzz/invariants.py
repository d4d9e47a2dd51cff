"""The one invariant checker of the fuzz suite: :func:`check` runs every invariant on one parser input and
raises :class:`Violation` (naming the invariant) at the first one broken.

Invariants (docs/fuzzing.md says which finding each one catches):

``no_exception``       parse, stream and id feeding never raise.
``nothing_lost``       every sentinel character (one that occurs in no marker, syntax piece or stop token of
                       any family: non-ASCII whitespace, control characters, CJK, emoji, ...) is in content +
                       reasoning + call names/ids/raw_arguments + diagnostics' raw at least as often as in the
                       input; every other character except framing whitespace at least as often as the input
                       holds it outside the format's consumable spellings (markers, syntax, stop tokens, each
                       occurrence counted as consumed whether or not the parser recognised it).
``nothing_invented``   content and reasoning are subsequences of the input.
``chunking``           parse() == one feed == 1-char feeds == random chunkings == every 2-way split (short
                       inputs) == feeds with empty deltas, compared on the whole ParsedOutput.
``events``             content/reasoning deltas concatenate to the result; call indices dense and in order;
                       a call is started once, then arguments, then finished once; ToolCallFinished
                       candidates equal the result's; argument fragments concatenate to JSON equal to the final
                       arguments (tests/support.assert_events_consistent).
``call_name_complete`` no ToolCallStarted with an empty name (a call starts once its name is complete).
``arguments_bytes``    the fragments concatenate to the very string ``to_openai_message()`` gives as
                       ``arguments``.
``truncated_status``   a call with a ``truncated*`` diagnostic is never ``proposed``; a ``truncated`` call sets
                       ``ParsedOutput.truncated``.
``reasoning_close_kept`` (inputs whose answer the strategy knows) a marker mentioned inside reasoning never
                       swallows the reasoning's close: the answer after it ends the content.
``ids_equal_text``     (families with a tokenizer) the output encoded to ids the way the tokenizer does it
                       (control tokens where it spells them; all ordinary when it spells none), fed one id at a
                       time, gives the text one-shot result (unless the text result repaired a call whose
                       wrapper marker is missing, ``missing_call_wrapper``, or read tag words without their
                       brackets, ``drift_lost_brackets``: text-only recoveries).
``ids_plain_markers``  (same) the output as ordinary tokens only: every control-token spelling of it is kept
                       as text (no marker written with ordinary tokens is consumed), and in a family whose calls
                       need a control token, no call is built.
``held_back``          (outputs longer than ``families.HELD_BACK_LIMIT``) fed in 64-character deltas, the parser
                       never holds more than that in its buffer: text streams on rather than waiting to be scanned
                       again at every delta (quadratic time, issue 33 N8), whatever runs of blanks it holds.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from fuzz import families
from support import assert_events_consistent, chunkings, full_state, kept_text, stream_parse

import toolwire
from toolwire.integrations.openai import to_openai_message


class Violation(AssertionError):
    """An invariant broken by one input: ``invariant`` names it, ``detail`` says how."""

    def __init__(self, invariant: str, detail: str):
        super().__init__(f"[{invariant}] {detail}")
        self.invariant = invariant
        self.detail = detail


# Families whose calls can be written without any control token (bare JSON, a wrapper-less <function=...>):
# with ordinary-token ids they may still build calls.
MARKERLESS_CALL_MODULES = {"hermes_json", "llama", "qwen_xml", "seed_oss", "llama4_pythonic"}
# A call accepted from text alone although its wrapper marker is missing: as ids, the same ordinary tokens may
# stay content ("no call from ordinary tokens"), so such outputs are exempt from ``ids_equal_text``.
TEXT_ONLY_VARIANT = "missing_call_wrapper"
TEXT_ONLY_VARIANTS = (TEXT_ONLY_VARIANT, "drift_lost_brackets")  # and tag words without brackets (issue 33)


def check(name: str, text: str, *, tools: Any = None, thinking: bool = False, seed: int = 0,
          split_limit: int = 48, random_splits: int = 3, ids: bool = True,
          answer: str | None = None) -> toolwire.ParsedOutput:
    """Every invariant for ``text`` parsed by format ``name``; returns the one-shot result.
    ``tools`` defaults to the golden tools; ``seed`` drives the random chunkings; ``answer`` (when the
    strategy knows it) is text the content must end with."""
    fmt = toolwire.get_format(name)
    tools = families.TOOLS if tools is None else tools
    ref = _run("parse", fmt.parse, text, tools, thinking=thinking)
    check_statuses(ref)
    check_nothing_lost(name, text, ref)
    check_nothing_invented(text, ref)
    if answer is not None and not ref.content.endswith(answer):
        raise Violation("reasoning_close_kept", f"the answer after the reasoning close is not the content's end: "
                                                f"reasoning {ref.reasoning!r:.120}, content {ref.content!r:.120}, "
                                                f"codes {ref.codes()}")
    want = full_state(ref)
    splits = [[text], ["", text, ""]] + chunkings(text, seed=seed, every_split_upto=split_limit,
                                                  random_splits=random_splits, max_len=(2, 5, 17))
    for chunks in splits:
        result, events = _run("stream", stream_parse, fmt, text, chunks, tools, thinking=thinking)
        if full_state(result) != want:
            raise Violation("chunking", f"feeding {_short(chunks)} differs from parse(): {diff(ref, result)}")
        check_events(result, events)
    if len(text) > families.HELD_BACK_LIMIT:
        check_held_back(fmt, text, tools, thinking)
    if ids:
        check_ids(name, text, ref, tools, thinking)
    return ref


def check_held_back(fmt, text: str, tools: Any, thinking: bool) -> None:
    parser = fmt.stream(tools, thinking=thinking)
    for at in range(0, len(text), 64):
        parser.feed(text[at:at + 64])
        if len(parser._buf) > families.HELD_BACK_LIMIT:
            raise Violation("held_back", f"{len(parser._buf)} characters held in the buffer after {at + 64} of "
                                         f"{len(text)} fed: {parser._buf[:60]!r}...")


def _run(label: str, fn, *args, **kw):
    try:
        return fn(*args, **kw)
    except Violation:
        raise
    except Exception as exc:  # noqa: BLE001 - parsers promise never to raise on model output
        raise Violation("no_exception", f"{label} raised {type(exc).__name__}: {exc}") from exc


def _short(chunks: list[str], limit: int = 8) -> str:
    return repr(chunks[:limit]) + (f" ... ({len(chunks)} pieces)" if len(chunks) > limit else "")


def diff(a: toolwire.ParsedOutput, b: toolwire.ParsedOutput) -> str:
    """The first field in which two results differ, both values shown."""
    da, db = a.model_dump(), b.model_dump()
    for key in da:
        if da[key] != db[key]:
            return f"{key}: {da[key]!r:.300} vs {db[key]!r:.300}"
    return "(equal)"


# ---------------------------------------------------------------- single-result invariants

def check_statuses(out: toolwire.ParsedOutput) -> None:
    for c in out.tool_calls:
        codes = [d.code for d in c.diagnostics] + [d.code for d in out.diagnostics if d.call_index == c.index]
        if c.status == "proposed" and any(code.startswith("truncated") for code in codes):
            raise Violation("truncated_status", f"call {c.index} ({c.name!r}) is proposed with {codes}")
        if c.status == "truncated" and not out.truncated:
            raise Violation("truncated_status", f"call {c.index} is truncated but the output is not")


def unaccounted(name: str, text: str) -> Counter:
    """How often each character of ``text`` must be kept: sentinels always; other characters (framing
    whitespace aside) as often as they occur beyond what the consumable spellings in ``text`` could hold."""
    need = Counter(ch for ch in text if ch not in families.FRAMING_WHITESPACE)
    allowance: Counter = Counter()
    sentinels = families.sentinels()
    for spelling in families.consumable(name):
        n = _count_overlapping(text, spelling)
        if n:
            for ch, k in Counter(spelling).items():
                if ch not in sentinels:
                    allowance[ch] += n * k
    return need - allowance


def _count_overlapping(text: str, sub: str) -> int:
    n, i = 0, text.find(sub)
    while i >= 0:
        n, i = n + 1, text.find(sub, i + 1)
    return n


def check_nothing_lost(name: str, text: str, out: toolwire.ParsedOutput) -> None:
    have = Counter(kept_text(out, names=True, ids=True, sep=""))
    for ch, n in sorted(unaccounted(name, text).items()):
        if have[ch] < n:
            kind = "sentinel" if ch in families.sentinels() else "character"
            raise Violation("nothing_lost", f"{kind} {ch!r}: the input holds {n} outside markers, the result "
                                            f"keeps {have[ch]} (content {out.content!r:.120}, codes {out.codes()})")


def _is_subsequence(small: str, big: str) -> bool:
    it = iter(big)
    return all(ch in it for ch in small)


def check_nothing_invented(text: str, out: toolwire.ParsedOutput) -> None:
    for field in ("content", "reasoning"):
        if not _is_subsequence(getattr(out, field), text):
            raise Violation("nothing_invented", f"{field} {getattr(out, field)!r:.200} is not a subsequence of the input")


# ---------------------------------------------------------------- events

def check_events(result: toolwire.ParsedOutput, events: list) -> None:
    try:
        assert_events_consistent(result, events)
    except AssertionError as exc:
        raise Violation("events", f"events disagree with the result: {exc}") from None
    except ValueError as exc:  # the fragments are not JSON
        raise Violation("events", f"argument fragments are not JSON: {exc}") from None
    started: dict[int, Any] = {}
    finished: dict[int, Any] = {}
    frags: dict[int, list[str]] = {}
    for e in events:
        if e.type == "tool_call_started":
            if e.index != len(started):
                raise Violation("events", f"call started with index {e.index}, expected {len(started)}")
            if not e.name:
                raise Violation("call_name_complete", f"call {e.index} started with an empty name")
            started[e.index] = e
        elif e.type == "arguments":
            if e.index in finished:
                raise Violation("events", f"arguments for call {e.index} after it finished")
            frags.setdefault(e.index, []).append(e.fragment)
        elif e.type == "tool_call_finished":
            if e.index not in started or e.index in finished:
                raise Violation("events", f"call {e.index} finished {'twice' if e.index in finished else 'unstarted'}")
            finished[e.index] = e.candidate
    for pos, c in enumerate(result.tool_calls):
        if c.index != pos:
            raise Violation("events", f"tool_calls[{pos}].index is {c.index}")
        if pos not in finished or finished[pos] != c:
            raise Violation("events", f"ToolCallFinished for call {pos} missing or unlike the result's candidate")
        s = started[pos]
        if (s.id, s.source) != (c.id, c.source):
            raise Violation("events", f"call {pos} started as {(s.id, s.source)}, final {(c.id, c.source)}")
    message = to_openai_message(result)
    listed = {call["id"]: call["function"]["arguments"] for call in message.get("tool_calls", [])}
    for c in result.tool_calls:
        if c.id in listed and "".join(frags.get(c.index, [])) != listed[c.id]:
            raise Violation("arguments_bytes", f"call {c.index}: streamed arguments {''.join(frags.get(c.index, []))!r:.200} "
                                      f"!= to_openai_message() arguments {listed[c.id]!r:.200}")


# ---------------------------------------------------------------- token ids

def tokenizer_for(name: str):
    """The tokenizer tests/tokens/test_token_input.py gives the family (real where ../shared has one), or None."""
    import pytest

    from tokens.test_token_input import FAMILIES, tokenizer

    if name not in FAMILIES:
        return None
    try:
        return tokenizer(name)
    except pytest.skip.Exception:
        return None


def check_ids(name: str, text: str, ref: toolwire.ParsedOutput, tools: Any, thinking: bool) -> None:
    from toolwire.tokenize import vocabulary

    tok = tokenizer_for(name)
    if tok is None:
        return
    vocab = vocabulary(tok)
    fmt = toolwire.get_format(name)
    plain = _run("encode", vocab.encode_plain, text)
    if _run("decode", _decode, vocab, plain) != text:
        return  # the tokenizer itself does not round-trip this text (normalisation): not the parser's doing
    out = _feed_ids(fmt, vocab.encode(text), tools, tok, thinking)
    if full_state(out) != full_state(ref) and not any(code in ref.codes() for code in TEXT_ONLY_VARIANTS):
        raise Violation("ids_equal_text", f"the output as ids (control tokens where it spells them), fed one id "
                                          f"at a time, differs from the text: {diff(ref, out)}")
    controls = [m.group() for m in vocab.find_controls(text)]
    if not controls:
        return
    out = _feed_ids(fmt, plain, tools, tok, thinking)
    have = kept_text(out, names=True, ids=True, sep="\x00")
    for spelling, n in Counter(controls).items():
        if have.count(spelling) < n:
            raise Violation("ids_plain_markers", f"{spelling!r} written with ordinary tokens was consumed as a "
                                                 f"marker ({have.count(spelling)} of {n} kept; calls "
                                                 f"{[(c.name, c.status) for c in out.tool_calls]})")
    if out.tool_calls and families.parser_module(name) not in MARKERLESS_CALL_MODULES:
        raise Violation("ids_plain_markers", f"calls built from ordinary tokens: "
                                             f"{[(c.name, c.status) for c in out.tool_calls]}")


def _decode(vocab, ids: list[int]) -> str:
    if vocab.token_bytes is not None:
        return b"".join(vocab.token_bytes(i) for i in ids).decode("utf-8", errors="replace")
    return vocab.decode_plain(ids)


def _feed_ids(fmt, ids: list[int], tools: Any, tok, thinking: bool) -> toolwire.ParsedOutput:
    def run():
        parser = fmt.stream(tools, tokenizer=tok, thinking=thinking)
        events = []
        for i in ids:
            events += parser.feed(ids=[i])
        events += parser.flush()
        return parser.finish(), events

    out, events = _run("feed(ids=...)", run)
    check_events(out, events)
    return out


def replay(record: dict) -> None:
    """Re-run a recorded finding (``{"format", "text", "thinking", "seed"?, "answer"?}``, a line of a findings
    file; docs/fuzzing.md shows how)."""
    check(record["format"], record["text"], thinking=record.get("thinking", False), seed=record.get("seed", 0),
          answer=record.get("answer"))

