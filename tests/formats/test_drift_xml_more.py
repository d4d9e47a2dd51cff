"""Drift recovery in the XML-bodied families, the classes issue 33 left open (docs/variants.md "Drift recovery
(issue 33)", XML group): a Python call inside the family's call wrapper (``borrowed_shape``), and tag words whose
angle brackets were lost (``missing_markers``).

Same parametrisation as ``test_drift_xml.py`` (its :class:`Case` and checks): each case one-shot, streamed at
1-character feeds, every two-piece split and random chunks (the same result, events that never take back what
they sent), and as token ids where the family has a real tokenizer (Qwen3's). Each recovery has negative cases
where it must not fire: an undeclared name, positional or non-literal arguments, arguments off the schema, no
tools declared.

The reports behind the cases (described in our own words and values, never copied):
* models of the GLM family (and agents bridging them) writing a Python-style call ``NAME(k="v")`` where the format
  wants its key/value tags, the same shape the JSON group already reads inside Hermes' ``<tool_call>``;
* Qwen3-Coder-style and GLM output whose tag words lost their angle brackets (``function=NAME>``,
  ``tool_call>NAME``, ``/arg_value>``), seen where a chat front end or detokenizer mangles the markup.
"""

from __future__ import annotations

import random

import pytest

import toolwire
from formats.test_drift_xml import (BARE_FUNCTION, GLM_STYLE, QWEN_STYLE, REAL_TOKENIZER, TOOLS, Case, _check,
                                    _feed_ids, _qwen3_tokenizer, m)
from support import check_chunking, chunkings, full_state, kept_text, stream_parse
from toolwire.output import ContentDelta, ToolCallStarted
from toolwire.parsers.engine.drift import Drift

PY = 'get_weather(city="Paris", days=3)'
PARIS3 = {"city": "Paris", "days": 3}
PY_CODE = "drift_python_call"

# (why, the call, tools): a Python call the declared tools do not make one call
PY_REFUSED = (
    ("undeclared", 'rm_rf(path="/")', TOOLS),
    ("positional", 'get_weather("Paris")', TOOLS),
    ("non_literal", "get_weather(city=paris_name)", TOOLS),
    ("off_schema", "get_weather(days=3)", TOOLS),
    ("no_tools", PY, None),
)


def _python_cases() -> list[Case]:
    out: list[Case] = []
    add = out.append
    # ---- Qwen-style seven: the call as the whole <tool_call> body (the block held to </tool_call>)
    for f in QWEN_STYLE:
        k = m(f)
        block = f"{k.CALL_OPEN}\n{{}}\n{k.CALL_CLOSE}"
        sep = "" if f == "step35" else "\n" if f == "nemotron3" else "\n\n"  # the framing each template writes
        add(Case("python_call", f, Drift.BORROWED_SHAPE, PY_CODE, f"Checking.{sep}" + block.format(PY),
                 calls=(("get_weather", PARIS3, "repaired"),), content="Checking.", raw=f"\n{PY}\n"))
        add(Case("python_call_single_quotes", f, Drift.BORROWED_SHAPE, PY_CODE,
                 block.format("get_weather(city='Nice')"), calls=(("get_weather", {"city": "Nice"}, "repaired"),),
                 raw="\nget_weather(city='Nice')\n"))
        for why, call, tools in PY_REFUSED:  # as before: the block's text in its malformed_tool_call diagnostic
            add(Case(f"python_call_{why}", f, Drift.BORROWED_SHAPE, PY_CODE, block.format(call), recovered=False,
                     raw=f"\n{call}\n", tools=tools))
    # ---- GLM group: the call written where the name goes (4.5 / 4.6 with their newline framing)
    for f in GLM_STYLE:
        k = m(f)
        nl = "\n" if f in ("glm45", "glm46") else ""
        block = f"{nl}{k.CALL_OPEN}{{}}{nl}{k.CALL_CLOSE}"
        add(Case("python_call", f, Drift.BORROWED_SHAPE, PY_CODE, block.format(PY),
                 calls=(("get_weather", PARIS3, "repaired"),), raw=PY + nl))
        multi = 'get_weather(\n    city="Paris",\n    days=3\n)'  # one argument a line: held to </tool_call>
        add(Case("python_call_multiline", f, Drift.BORROWED_SHAPE, PY_CODE, block.format(multi),
                 calls=(("get_weather", PARIS3, "repaired"),), raw=multi + nl))
        for why, call, tools in PY_REFUSED:  # as before: the head read as a name (an unknown tool)
            add(Case(f"python_call_{why}", f, Drift.BORROWED_SHAPE, PY_CODE, block.format(call),
                     calls=((call, {}, "rejected" if tools else "proposed"),),
                     recovered=False, raw=call + nl, tools=tools))
    # ---- Hy3: the call where the name goes, before </tool_call:opensource>
    k = m("hy3")
    block = f"{k.CALLS_OPEN}\n{k.CALL_OPEN}{{}}{k.CALL_CLOSE}\n{k.CALLS_CLOSE}"
    add(Case("python_call", "hy3", Drift.BORROWED_SHAPE, PY_CODE, block.format(PY),
             calls=(("get_weather", PARIS3, "repaired"),), raw=PY))
    for why, call, tools in PY_REFUSED:  # as before: a call named as written (no <tool_sep:opensource>)
        add(Case(f"python_call_{why}", "hy3", Drift.BORROWED_SHAPE, PY_CODE, block.format(call),
                 calls=((call, {}, "rejected" if tools else "repaired"),), recovered=False, raw=call, tools=tools))
    # ---- MiniMax-M2: the call as the whole <minimax:tool_call> block
    k = m("minimax_m2")
    block = f"Ok.\n</think>\n\n{k.BLOCK_OPEN}\n{{}}\n{k.BLOCK_CLOSE}"
    add(Case("python_call", "minimax_m2", Drift.BORROWED_SHAPE, PY_CODE, block.format(PY),
             calls=(("get_weather", PARIS3, "repaired"),), raw=f"\n{PY}\n", options={"thinking": True}))
    for why, call, tools in PY_REFUSED:  # as before: the block's text in a stray_text diagnostic
        add(Case(f"python_call_{why}", "minimax_m2", Drift.BORROWED_SHAPE, PY_CODE, block.format(call),
                 recovered=False, raw=f"\n{call}\n", tools=tools, options={"thinking": True}))
    return out


LOST = "drift_lost_brackets"


def bare(marker: str) -> str:
    """A tag word as a model writes it when its angle bracket is lost: the marker without its ``<``
    (``<function=`` -> ``function=``, ``</function>`` -> ``/function>``)."""
    assert marker.startswith("<")
    return marker[1:]


def _lost_bracket_cases() -> list[Case]:
    out: list[Case] = []
    add = out.append
    # ---- Qwen-style (the six that read a bare <function= too): function=NAME> ... /function>, tool_call> optional
    for f in BARE_FUNCTION:
        k = m(f)
        fo, fc, po, pc = (bare(x) for x in (k.FUNCTION_OPEN, k.FUNCTION_CLOSE, k.PARAMETER_OPEN, k.PARAMETER_CLOSE))
        co, cc = bare(k.CALL_OPEN), bare(k.CALL_CLOSE)

        def param(key: str, value: str) -> str:
            return f"{po}{key}>\n{value}\n{pc}\n"

        call = f"{fo}get_weather>\n{param('city', 'Paris')}{param('days', '3')}{fc}"
        sep, prose = {"step35": ("\n", "Let me check.\n"), "nemotron3": ("\n", "Let me check.")}.get(
            f, ("\n\n", "Let me check."))
        add(Case("lost_brackets", f, Drift.MISSING_MARKERS, LOST, f"Let me check.{sep}{call}\n{cc}",
                 calls=(("get_weather", PARIS3, "repaired"),), content=prose, raw=f"{call}\n{cc}"))
        whole = f"{co}\n{call}\n{cc}"
        add(Case("lost_brackets_wrapper_too", f, Drift.MISSING_MARKERS, LOST, whole,
                 calls=(("get_weather", PARIS3, "repaired"),), raw=whole))
        add(Case("lost_brackets_no_closer", f, Drift.MISSING_MARKERS, LOST, call,
                 calls=(("get_weather", PARIS3, "repaired"),), raw=call))
        for why, text, raw, tools in (
                ("undeclared", f"{fo}rm_rf>\n{param('path', '/')}{fc}", f"{fo}r", TOOLS),
                ("undeclared_key", f"{fo}get_weather>\n{param('town', 'Paris')}{fc}", f"{fo}get_weather>\n{po}t",
                 TOOLS),
                ("off_schema", *[f"{fo}get_weather>\n{param('days', '3')}{fc}"] * 2, TOOLS),
                ("not_closed", *[f"{fo}get_weather>\n{param('city', 'Paris')}"] * 2, TOOLS),
                ("no_tools", call, None, None)):
            add(Case(f"lost_brackets_{why}", f, Drift.MISSING_MARKERS, LOST, text, content=text, recovered=False,
                     raw=raw, tools=tools))
    # ---- GLM group: tool_call>NAME, arg_key>K/arg_key>, arg_value>V/arg_value>, /tool_call>
    for f in GLM_STYLE:
        k = m(f)
        co, cc, ko, kc, vo, vc = (bare(x) for x in (k.CALL_OPEN, k.CALL_CLOSE, k.KEY_OPEN, k.KEY_CLOSE, k.VALUE_OPEN,
                                                    k.VALUE_CLOSE))
        nl = "\n" if f in ("glm45", "glm46") else ""

        def arg(key: str, value: str) -> str:
            return f"{ko}{key}{kc}{nl}{vo}{value}{vc}{nl}"

        call = f"{co}get_weather{nl}{arg('city', 'Paris')}{arg('days', '3')}{cc}"
        add(Case("lost_brackets", f, Drift.MISSING_MARKERS, LOST, f"Checking.\n{call}",
                 calls=(("get_weather", PARIS3, "repaired"),), content="Checking." + ("" if nl else "\n"), raw=call))
        flat = f"{co}get_weather{arg('city', 'Paris')}{cc}"  # no newline anywhere (4.7's own layout)
        add(Case("lost_brackets_flat", f, Drift.MISSING_MARKERS, LOST, flat,
                 calls=(("get_weather", {"city": "Paris"}, "repaired"),), raw=flat))
        for why, text, raw, tools in (
                ("undeclared", f"{co}rm_rf{nl}{arg('path', '/')}{cc}", f"{co}r", TOOLS),
                ("undeclared_key", f"{co}get_weather{nl}{arg('town', 'Paris')}{cc}",
                 f"{co}get_weather{nl}{ko}t", TOOLS),
                ("off_schema", *[f"{co}get_weather{nl}{arg('days', '3')}{cc}"] * 2, TOOLS),
                ("no_tools", call, None, None)):
            add(Case(f"lost_brackets_{why}", f, Drift.MISSING_MARKERS, LOST, text, content=text, recovered=False,
                     raw=raw, tools=tools))
    return out


CASES = _python_cases() + _lost_bracket_cases()


@pytest.mark.parametrize("case", CASES, ids=str)
def test_drift_case_one_shot_and_streamed(case: Case):
    """The case's result one-shot; the same full result (and consistent events) at 1-char feeds, every two-piece
    split and random chunkings; nothing the model wrote is lost."""
    fmt = toolwire.get_format(case.family)
    splits = chunkings(case.output, seed=str(case), random_splits=12, max_len=(2, 5, 17))
    out = check_chunking(fmt, case.output, case.tools, splits=splits, **case.options)
    _check(case, out)
    kept = kept_text(out, names=True, sep="")
    for word in ("Paris", "rm_rf", "paris_name", "Nice"):
        assert case.output.count(word) <= kept.count(word), word


@pytest.mark.parametrize("case", [c for c in CASES if c.recovered], ids=str)
def test_a_recovered_call_starts_only_once_it_was_read_whole(case: Case):
    """Held, then at once: no ``ToolCallStarted`` before the last character of the call's text (a Python call: its
    wrapper's closer) was read, and nothing of the call went out as content (1-character feeds)."""
    fmt = toolwire.get_format(case.family)
    parser = fmt.stream(case.tools, **case.options)
    last = case.output.rindex(case.raw) + len(case.raw) - 1
    if case.code == PY_CODE:
        k = m(case.family)
        marker = k.BLOCK_CLOSE if case.family == "minimax_m2" else k.CALL_CLOSE
        last = case.output.index(marker, last) + len(marker) - 1
    sent, started = "", None
    for i, ch in enumerate(case.output):
        events = parser.feed(ch)
        sent += "".join(e.text for e in events if isinstance(e, ContentDelta))
        if started is None and any(isinstance(e, ToolCallStarted) for e in events):
            started = i
    events = parser.flush()
    sent += "".join(e.text for e in events if isinstance(e, ContentDelta))
    assert started is None or started >= last, (started, last)
    assert "get_weather" not in sent and "Paris" not in sent


@pytest.mark.parametrize("case", [c for c in CASES if c.code == LOST and not c.recovered and c.tools], ids=str)
def test_a_refused_call_without_brackets_is_released_the_moment_it_cannot_be_one(case: Case):
    """Hold back only while the text can still become a call: at 1-character feeds, once the character that
    decides it (the end of ``raw``) was fed, every character so far has gone out as content."""
    parser = toolwire.get_format(case.family).stream(case.tools, **case.options)
    decided = len(case.raw)  # each negative case starts with the opener, so raw is a prefix of the output
    assert case.output.startswith(case.raw)
    sent = ""
    for i, ch in enumerate(case.output):
        sent += "".join(e.text for e in parser.feed(ch) if isinstance(e, ContentDelta))
        if i + 1 == decided and decided < len(case.output):
            assert case.output[:decided].startswith(sent) and len(sent) >= decided - 1, (sent, decided)


def test_tag_words_without_brackets_mid_line_are_text():
    """Only at a line start (or the answer's start): ``see function=get_weather>`` in a sentence, or after prose on
    the same line, is text, with nothing said."""
    for family in ("qwen3_coder", "glm47"):
        k = m(family)
        opener = bare(k.FUNCTION_OPEN) if family == "qwen3_coder" else bare(k.CALL_OPEN)
        text = f"I would write {opener}get_weather> here, or not."
        out = toolwire.get_format(family).parse(text, TOOLS)
        assert out.content == text and not out.tool_calls and LOST not in out.codes()


@pytest.mark.parametrize("family", ["qwen3_coder", "glm47"])
def test_tag_words_without_brackets_from_token_ids_are_text(family: str):
    """Text input only: fed ids (here Qwen3's tokenizer, whose ordinary tokens spell the words), a call needs its
    control-token opener, so the words stay content and nothing is recovered."""
    from toolwire.tokenize import vocabulary

    case = next(c for c in CASES if c.family == family and c.id == "lost_brackets")
    ids = vocabulary(_qwen3_tokenizer()).encode(case.output)
    out = _feed_ids(case, ids, [[i] for i in ids])
    assert out.tool_calls == [] and out.content == case.output and LOST not in out.codes()


def test_every_lost_brackets_family_has_recovered_and_refused_cases():
    """The docs table: per family, recovered cases and the refusals (undeclared name, undeclared key, off-schema,
    no tools)."""
    seen: dict[str, set[str]] = {}
    for case in CASES:
        if case.code == LOST:
            seen.setdefault(case.family, set()).add(case.id)
    for family, ids in seen.items():
        assert {"lost_brackets", "lost_brackets_undeclared", "lost_brackets_undeclared_key",
                "lost_brackets_off_schema", "lost_brackets_no_tools"} <= ids, family
    assert set(seen) == {*BARE_FUNCTION, *GLM_STYLE}


def test_every_python_call_family_has_recovered_and_refused_cases():
    """The docs table: per family, a recovered case and the five refusals (undeclared, positional, non-literal,
    off-schema, no tools)."""
    seen: dict[str, set[str]] = {}
    for case in CASES:
        if case.code == PY_CODE:
            seen.setdefault(case.family, set()).add(case.id)
    for family, ids in seen.items():
        assert {"python_call", *(f"python_call_{why}" for why, _, _ in PY_REFUSED)} <= ids, family
    assert set(seen) == {*QWEN_STYLE, *GLM_STYLE, "hy3", "minimax_m2"}


def test_a_python_call_is_never_evaluated():
    """An expression is not a literal: ``__import__('os')`` or ``1 + 2`` as a value refuses the reading, and the
    text stays where it went before (nothing runs; the parser only reads characters)."""
    for family in ("qwen3_coder", "glm47"):
        k = m(family)
        for call in ("get_weather(city=__import__('os').getcwd())", "get_weather(city='x', days=1 + 2)"):
            text = f"{k.CALL_OPEN}{call}{k.CALL_CLOSE}"
            out = toolwire.get_format(family).parse(text, TOOLS)
            assert not any(c.status in ("proposed", "repaired") for c in out.tool_calls)
            assert any(d.code == PY_CODE and d.severity == "info" for d in out.diagnostics)


@pytest.mark.parametrize("case", [c for c in CASES if c.family in REAL_TOKENIZER], ids=str)
def test_drift_case_as_token_ids(case: Case):
    """Encoded by Qwen3's tokenizer (``<tool_call>`` / ``</tool_call>`` control ids), fed whole, one id at a time and
    in random pieces: a Python call in a block the control ids opened parses as the text does; tag words without
    brackets are recovered from text only (fed ids, a call needs its control-token opener), so there they stay
    content, whole."""
    from toolwire.tokenize import vocabulary

    tok = _qwen3_tokenizer()
    ids = vocabulary(tok).encode(case.output)
    rng = random.Random(str(case))
    cuts = sorted(rng.sample(range(1, len(ids)), min(6, len(ids) - 1)))
    text = toolwire.get_format(case.family).parse(case.output, case.tools, **case.options)
    for pieces in ([ids], [[i] for i in ids], [ids[a:b] for a, b in zip([0, *cuts], [*cuts, len(ids)])]):
        out = _feed_ids(case, ids, pieces)
        if case.code == LOST:  # text input only: ordinary tokens spelling the words are content
            assert out.tool_calls == [] and out.content == case.output and LOST not in out.codes()
        else:
            assert full_state(out) == full_state(text)


def test_streamed_content_is_what_the_result_says():
    """A refused Python call never sends its text as content in a family that keeps it in a diagnostic, and a
    recovered one never does either (1-character feeds)."""
    for case in CASES:
        fmt = toolwire.get_format(case.family)
        out, events = stream_parse(fmt, case.output, list(case.output), case.tools, **case.options)
        assert "".join(e.text for e in events if isinstance(e, ContentDelta)) == out.content == case.content


# ---------------------------------------------------------------- properties (hypothesis)

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_PIECES = {
    "qwen3_coder": ["function=", "get_weather>", "rm_rf>", "parameter=", "city>", "days>", "town>", "\n", "Paris",
                    "3", "/parameter>", "/function>", "tool_call>", "/tool_call>", "<function=", "</parameter>",
                    'get_weather(city="Paris")', "x", " ", "\u3000"],
    "glm47": ["tool_call>", "get_weather", "rm_rf", "arg_key>", "city", "days", "/arg_key>", "arg_value>", "Paris",
              "3", "/arg_value>", "/tool_call>", "\n", "<tool_call>", "</tool_call>", 'get_weather(city="Paris")',
              "x", " ", "\u3000"],
}


_PIECES["glm45"] = _PIECES["glm47"]  # with 4.5's newline framing


@pytest.mark.parametrize("family", sorted(_PIECES))
def test_any_mix_of_the_drift_pieces_streams_as_it_parses_and_loses_nothing(family: str):
    """Random texts of bracket-less words, Python calls and bracketed tags (hypothesis): every chunking gives the
    one-shot result, no character is lost (U+3000 is a sentinel no marker holds), and every call recovered by these
    readings names a declared tool with arguments that fit its schema."""
    fmt = toolwire.get_format(family)

    @settings(max_examples=60, derandomize=True, database=None, deadline=None)
    @given(st.lists(st.sampled_from(_PIECES[family]), max_size=24), st.integers(0, 2 ** 16))
    def run(pieces, seed):
        text = "".join(pieces)
        splits = chunkings(text, seed=seed, every_split_upto=0, random_splits=3, max_len=(1, 3, 9)) \
            if text else [[""]]
        out = check_chunking(fmt, text, TOOLS, splits=splits)
        assert kept_text(out, names=True).count("\u3000") >= text.count("\u3000")
        for call in out.tool_calls:
            if any(d.code in (LOST, PY_CODE) and d.severity == "warning" for d in call.diagnostics):
                assert call.name == "get_weather" and call.status == "repaired"
                assert set(call.arguments) <= {"city", "days"} and "city" in call.arguments

    run()
