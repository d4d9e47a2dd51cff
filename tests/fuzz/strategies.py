"""Hypothesis strategies: marker soup for one format, built from its Format's ``markers`` table and its
family's syntax (:mod:`fuzz.families`).

:func:`parser_inputs` draws ``(text, thinking, seed)``: the output, whether the prompt opened reasoning,
and a seed for the random chunkings. Texts are one of

* soup: a run of pieces - the format's markers, prefixes of them, other families' markers, syntax pieces,
  stop tokens, reasoning markers, tool names, plain text (non-ASCII whitespace, raw control characters,
  digits, sentinels), any surrogate-free unicode;
* a well-formed output (a golden vector's, or a call to a golden tool with drawn arguments written by the
  format's renderer), edited (pieces inserted, spans deleted or doubled) and maybe cut at a random point;
* a marker inside reasoning followed by the reasoning close and an answer (issue 21:
  ``I might call <tool_call> later.\\n</think>\\n\\nFinal answer.``);
* a limit crossing (issue 33 N3-N5): markers of the format, then a run just under to just past one of the
  parsers' header / tag / head bounds, then maybe a marker or the reasoning close;
* a call left inside reasoning that never closed (issue 33, every family with a reasoning block): a rendered turn
  with reasoning and a call, its reasoning closer taken out, maybe more reasoning after the call, cut or edited;
* a drifted call (issue 33, JSON-bodied families): a rendered call with one drift edit (its opener or ``[ARGS]``
  left out, ``"arguments"`` renamed, a blank after the name, Kimi's id without separators, the JSON wrapped in
  ``<function=NAME>`` or replaced by a Python call, a string's closing quote dropped), then maybe edited and cut.

Edits include numbers outside the JSON grammar (``-01``, ``0x1F``: N1/N2), odd whitespace next to JSON
punctuation (N11) and runs of one character (blanks after a marker: N8), short or past the bounds.
"""

from __future__ import annotations

import json
import re

from hypothesis import strategies as st

from fuzz import families

import toolwire
from toolwire.errors import ToolwireError

ANY_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=6)
NOT_JSON_NUMBER = st.one_of(st.from_regex(r"-?0[0-9]{1,3}(\.[0-9]{1,2})?", fullmatch=True),  # a leading zero
                            st.sampled_from(families.NOT_JSON_NUMBERS))
PLAIN = st.text(st.sampled_from(families.PLAIN_ALPHABET), min_size=1, max_size=6)
DIGITS = st.from_regex(r"-?[0-9]{1,25}(\.[0-9]{1,4})?", fullmatch=True)
CONTROL = st.text(st.characters(max_codepoint=0x1F), min_size=1, max_size=3)


def reasoning_close(name: str) -> str:
    m = toolwire.get_format(name).markers
    return m.get("think_close") or ("<|end|>" if name == "gpt_oss" else "</think>")


def reasoning_open(name: str) -> str:
    m = toolwire.get_format(name).markers
    return m.get("think_open") or ("<|channel|>analysis<|message|>" if name == "gpt_oss" else "<think>")


def pieces(name: str) -> st.SearchStrategy[str]:
    own = families.markers(name)
    prefixes = sorted({m[:k] for m in own for k in range(1, len(m))})
    return st.one_of(
        st.sampled_from(own),
        st.sampled_from(prefixes),
        st.sampled_from(families.syntax(name)),
        st.sampled_from(families.other_markers(name) + tuple(families.STOP_TOKENS) + tuple(families.REASONING_MARKERS)),
        st.sampled_from(families.TOOL_NAMES),
        NOT_JSON_NUMBER,
        *([st.sampled_from(families.overlaps(name))] if families.overlaps(name) else []),
        PLAIN, DIGITS, CONTROL, ANY_TEXT,
        st.sampled_from(["\n", "\n\n", " ", "\t", "\r\n"]),
    )


def soup(name: str, max_pieces: int = 24) -> st.SearchStrategy[str]:
    return st.lists(pieces(name), max_size=max_pieces).map("".join)


def boundaries(name: str, text: str) -> list[int]:
    """Offsets where the format's structure changes: either side of each marker, and at ``"``, ``>``,
    ``=``, ``:`` and newlines - where a parser decides what comes next."""
    found = {0, len(text)}
    for marker in families.markers(name):
        at = text.find(marker)
        while at >= 0:
            found.update((at, at + len(marker)))
            at = text.find(marker, at + 1)
    found.update(i + d for i, ch in enumerate(text) if ch in '">=:\n{}[],' for d in (0, 1))
    return sorted(found)


ODD = st.text(st.sampled_from(families.ODD_WHITESPACE + "\x00\x1b中😀𝔘Ж"), min_size=1, max_size=3)
# a number written as a JSON value (after ":", "[" or ","), not digits inside a string
JSON_NUMBER = re.compile(r"(?:(?<=:)|(?<=: )|(?<=\[)|(?<=,)|(?<=, ))-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?(?![\w.])")
RUN_CHARS = [" ", "\n", "\t", "a", "\u3000", "x"]


def run_length() -> st.SearchStrategy[int]:
    """How long a run of one character is: short, or around one of the parsers' bounds, or past what a parser
    may hold back (:data:`fuzz.families.HELD_BACK_LIMIT`)."""
    return st.one_of(st.integers(1, 40), st.sampled_from(families.limits()).flatmap(
        lambda limit: st.integers(limit - 3, limit + 3)), st.just(families.HELD_BACK_LIMIT + 60))


@st.composite
def mutated(draw, name: str, text: str):
    """``text`` after one to three edits (mostly at structure boundaries): a piece or odd whitespace /
    sentinels inserted, a span deleted, a span doubled; then, half the time, cut at a random point (the
    output ended there), mostly after the last edit."""
    last = 0
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["insert", "insert", "odd", "odd", "delete", "double", "number", "run"]))
        at = draw(st.one_of(st.sampled_from(boundaries(name, text)), st.integers(0, len(text))))
        end = min(len(text), at + draw(st.integers(1, 12)))
        numbers = list(JSON_NUMBER.finditer(text)) if op == "number" else []
        if numbers:  # a number the renderer wrote, spelled outside the JSON grammar
            m = draw(st.sampled_from(numbers))
            piece = draw(NOT_JSON_NUMBER)
            text, last = text[:m.start()] + piece + text[m.end():], m.start() + len(piece)
        elif op in ("insert", "odd", "number", "run"):
            piece = draw(pieces(name) if op == "insert" else ODD if op == "odd" else
                         NOT_JSON_NUMBER if op == "number" else
                         st.builds(str.__mul__, st.sampled_from(RUN_CHARS), run_length()))
            text, last = text[:at] + piece + text[at:], at + len(piece)
        elif op == "delete":
            text, last = text[:at] + text[end:], at
        else:
            text, last = text[:end] + text[at:end] + text[end:], end
    if draw(st.booleans()):
        text = text[:draw(st.one_of(st.integers(min(last, len(text)), len(text)), st.integers(0, len(text))))]
    return text


@st.composite
def cut_seed(draw, name: str):
    """A well-formed output (golden or rendered), edited and maybe cut."""
    text, thinking = draw(st.sampled_from(families.seed_outputs(name)))
    return draw(mutated(name, text)), thinking


ARGUMENT_TEXT = st.text(st.sampled_from(families.PLAIN_ALPHABET + '"\\\n\t{}[]<>&'), max_size=8)


@st.composite
def rendered_call(draw, name: str):
    """A call to a golden tool with drawn arguments (odd whitespace, control characters, quotes, markup),
    written by the format's own renderer as history, then edited and maybe cut."""
    args = {"city": draw(ARGUMENT_TEXT)}
    if draw(st.booleans()):
        args["days"] = draw(st.integers(-3, 10 ** 20))
    call = {"id": "abcdefgh1", "type": "function", "function": {"name": "get_weather",
            "arguments": json.dumps(args, ensure_ascii=draw(st.booleans()))}}
    turn = {"role": "assistant", "content": draw(st.sampled_from(["", "Sure.", draw(PLAIN)])), "tool_calls": [call]}
    thinking = draw(st.booleans())
    if thinking:
        turn["reasoning_content"] = draw(st.sampled_from(["Need it.", draw(PLAIN)]))
    fmt = toolwire.get_format(name)
    history = [{"role": "user", "content": "Weather?"}]
    try:
        head = fmt.render(history, families.TOOLS, thinking=thinking)
        full = fmt.render(history + [turn], families.TOOLS, thinking=thinking, add_generation_prompt=False).text
    except ToolwireError:
        return draw(cut_seed(name))
    if not full.startswith(head.text):
        return draw(cut_seed(name))
    return draw(mutated(name, full[len(head.text):])), head.opens_reasoning


ANSWER = "Final answer."


@st.composite
def marker_in_reasoning(draw, name: str):
    """Reasoning that mentions a marker of the format, then the reasoning close and an answer, as
    ``(text, thinking, answer)``: ``answer`` is :data:`ANSWER` where the result is known - the prompt opened
    the reasoning, the format has a reasoning close, and nothing but the mention is markup - so the answer
    must end the content (issue 21: an unclosed call in reasoning never swallows the close), else None."""
    opened_by_prompt = draw(st.booleans())
    mention = draw(st.sampled_from(families.markers(name)))
    tail = draw(st.sampled_from([" later.", "", " get_weather", "soup"]))
    known = opened_by_prompt and tail != "soup" and "think_close" in toolwire.get_format(name).markers
    text = ("" if opened_by_prompt else reasoning_open(name)) + draw(PLAIN) + " I might call " + mention
    text += (draw(soup(name, 3)) if tail == "soup" else tail)
    text += draw(st.sampled_from(["\n", "", "\n\n"])) + reasoning_close(name)
    text += draw(st.sampled_from(["\n\n" + ANSWER, ANSWER] if known else ["\n\n" + ANSWER, "\n\n" + draw(soup(name, 6))]))
    return text, opened_by_prompt, ANSWER if known else None


@st.composite
def limit_crossing(draw, name: str):
    """``(text, thinking)``: one or two of the format's markers (after nothing, a reasoning opener or a little
    soup), then a run of one character just under to just past one of the parsers' bounds, then maybe a marker,
    the reasoning close and an answer, or soup (issue 33 N3-N5: where the character that crosses a bound lands
    must not depend on the chunking)."""
    own, openers = families.markers(name), families.openers(name)
    thinking = draw(st.booleans())
    text = draw(st.sampled_from(["", reasoning_open(name), draw(soup(name, 2))]))
    text += "".join(draw(st.lists(st.sampled_from(openers), min_size=1, max_size=2)))
    limit = draw(st.sampled_from(families.limits()))
    text += draw(st.sampled_from(RUN_CHARS[3:] + RUN_CHARS[:1])) * (limit + draw(st.integers(-3, 20)))
    close = reasoning_close(name) + "\n\n" + ANSWER
    text += draw(st.sampled_from([close, close, "", draw(st.sampled_from(own)), draw(soup(name, 3))] if thinking
                                 else ["", draw(st.sampled_from(own)), close, draw(soup(name, 3))]))
    return text, thinking


DRIFT_EDITS = {  # (old, new) replacements of a rendered call's text that make one drift shape (issue 33)
    "hermes_json": [("<tool_call>\n", ""), ('"arguments"', '"args"'), ('"arguments"', '"input"'),
                    ('"get_weather"', '"get_weather "'), ('"get_weather"', '"function=get_weather"'),
                    ('{"name": "get_weather", "arguments": ', "<function=get_weather>"),
                    ('"}}\n</tool_call>', '}}\n</tool_call>'),
                    ('{"name": "get_weather", "arguments": ', '{"get_weather": '),
                    ('{"name": "get_weather", "arguments": {', '{"name": "get_weather", '),
                    ('"get_weather", "arguments": {"', '"get_weather'), ('"}}', "'}}"),
                    ('{"city": "', '{"city": \'')],
    "kimi": [("functions.get_weather:0", "functionsget_weather0"),
             ("functions.get_weather:0", "functions_get_weather_0"), ("<|tool_call_begin|>", ""),
             ('{"city": "', '{"city": \''),
             (("<|tool_calls_section_begin|>", "\n"), ("<|tool_call_begin|>", ""), ("<|tool_call_argument_begin|>", ""),
              ("<|tool_call_end|>", ""), ("<|tool_calls_section_end|>", ""))],
    "mistral": [("[ARGS]", ""), ('"}', "}"), ('{"city": "', '{"city": \''),
                (("[TOOL_CALLS]", "\n"), ("[ARGS]", ""))],
    "llama": [('{"name": "get_weather", "parameters": ', '{"get_weather": '),
              ('{"name": "get_weather", "parameters": {', '{"name": "get_weather", '),
              ('{"name": "get_weather", "parameters": {"', '{"get_weather_')],
}  # an entry is one (old, new) edit, or a tuple of them made together (every special token stripped)
DRIFT_EDITS["hermes3"] = DRIFT_EDITS["granite"] = DRIFT_EDITS["hermes_json"]
DRIFT_EDITS["ministral"] = DRIFT_EDITS["mistral"]


@st.composite
def drift_call(draw, name: str):
    """``(text, thinking)``: a rendered call to a golden tool with one drift edit of its family (or a rendered call
    as it is, for a family with none), then maybe mutated."""
    text, thinking = draw(rendered_call(name))
    edits = [edit if isinstance(edit[0], tuple) else (edit,) for edit in DRIFT_EDITS.get(families.parser_module(name), [])]
    edits = [edit for edit in edits if all(old in text for old, _ in edit)]
    if edits:
        for old, new in draw(st.sampled_from(edits)):
            at = text.find(old)
            text = text[:at] + new + text[at + len(old):]
    return text, thinking


UNDECLARED_TOOL = {"type": "function", "function": {
    "name": "unknown_tool", "description": "Not declared to the parser.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}


@st.composite
def unclosed_reasoning_call(draw, name: str):
    """``(text, thinking)``: a call to a golden tool written by the format's renderer inside the reasoning, the
    reasoning closer taken out so the output ends inside the reasoning (issue 33, missing_markers: recovered when
    the call is complete, declared and fits), then maybe more reasoning after it, maybe cut or mutated."""
    close = families.reasoning_pair(name)[1]
    args = {"city": draw(ARGUMENT_TEXT)}
    if draw(st.booleans()):
        args["days"] = draw(st.integers(-3, 10 ** 20))
    calls = [{"id": "abcdefgh1", "type": "function", "function": {
        "name": draw(st.sampled_from(["get_weather", "get_weather", "search_papers", "unknown_tool"])),
        "arguments": json.dumps(args, ensure_ascii=draw(st.booleans()))}}]
    turn = {"role": "assistant", "content": "", "reasoning_content": draw(st.sampled_from(["Need it.", draw(PLAIN)])),
            "tool_calls": calls}
    fmt = toolwire.get_format(name)
    history = [{"role": "user", "content": "Weather?"}]
    tools = families.TOOLS + [UNDECLARED_TOOL]
    try:
        head = fmt.render(history, tools, thinking=True)
        full = fmt.render(history + [turn], tools, thinking=True, add_generation_prompt=False).text
    except ToolwireError:
        return draw(cut_seed(name))
    tail = full[len(head.text):] if full.startswith(head.text) else ""
    if not close or not tail:
        return draw(cut_seed(name))
    opened = head.opens_reasoning
    if close in tail:
        text = tail.replace(close, "", 1)
    else:  # the template writes no reasoning in history (Hermes 3, Qwen2.5): the call after reasoning the prompt opened
        text, opened = turn["reasoning_content"] + "\n" + tail, True
    text = draw(st.sampled_from([text, text.rstrip(), text.rstrip() + "\n", text.rstrip() + " more reasoning",
                                 text.rstrip() + close]))
    if draw(st.booleans()):
        text = draw(mutated(name, text))
    return text, opened


@st.composite
def parser_inputs(draw, name: str):
    """``(text, thinking, seed, answer)`` for format ``name``: ``seed`` drives the random chunkings,
    ``answer`` (or None) is text the content must end with."""
    kind = draw(st.sampled_from(["soup", "seed", "call", "call", "reasoning", "limit"]
                                + (["drift"] if families.parser_module(name) in DRIFT_EDITS else [])
                                + (["unclosed"] if families.reasoning_pair(name)[1] else [])))
    if kind == "reasoning":
        text, thinking, answer = draw(marker_in_reasoning(name))
        return text, thinking, draw(st.integers(0, 2 ** 16)), answer
    if kind == "limit":
        text, thinking = draw(limit_crossing(name))
    elif kind == "soup":
        text, thinking = draw(soup(name)), draw(st.booleans())
    elif kind == "seed":
        text, thinking = draw(cut_seed(name))
    elif kind == "drift":
        text, thinking = draw(drift_call(name))
    elif kind == "unclosed":
        text, thinking = draw(unclosed_reasoning_call(name))
    else:
        text, thinking = draw(rendered_call(name))
    return text, thinking, draw(st.integers(0, 2 ** 16)), None
