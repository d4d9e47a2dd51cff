"""Gemma 4: classes of failure that peers' test cases and reported outputs showed (each a call lost, misnamed or
polluted content), in our own words and values. Every case is checked one-shot and streamed in every split."""

from __future__ import annotations

import pytest

import toolwire
from toolwire.parsers.gemma import MARKERS
from support.family_checks import check_chunking

FMT = toolwire.get_format("gemma4")
Q, OPEN, CLOSE = MARKERS["quote"], MARKERS["call_open"], MARKERS["call_close"]


def tool(name: str, **props: str) -> dict:
    return {"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": {k: {"type": t} for k, t in props.items()}}}}


TOOLS = [tool("resize", width="number", height="number", label="string"), tool("tag", names="array", meta="object"),
         tool("shell", cmd="string")]


def only_call(out):
    assert len(out.tool_calls) == 1
    return out.tool_calls[0]


# ---- a stop token where <tool_call|> belongs ends the call; it is never content or argument text

@pytest.mark.parametrize("stop", [MARKERS["turn_close"], MARKERS["response_open"]])
@pytest.mark.parametrize("before", ["", "Resizing now. "])
def test_a_stop_token_closing_a_call_is_not_content(stop, before):
    text = f"{before}{OPEN}call:resize{{width:640,label:{Q}thumb{Q}}}{stop}"
    out = check_chunking(FMT, text, TOOLS)
    call = only_call(out)
    assert (call.name, call.arguments, call.status) == ("resize", {"width": 640, "label": "thumb"}, "repaired")
    assert call.raw_arguments == f"width:640,label:{Q}thumb{Q}}}"
    assert out.content == before  # as with <tool_call|>: the text before the call, nothing after it
    assert "stop_token_in_output" in out.codes() and "missing_call_close" in out.codes()
    assert "text_after_call_body" not in out.codes()


def test_a_stop_token_inside_a_string_stays_in_the_string():
    text = f"{OPEN}call:shell{{cmd:{Q}echo {MARKERS['turn_close']}{Q}}}{CLOSE}"
    call = only_call(check_chunking(FMT, text, TOOLS))
    assert call.arguments == {"cmd": "echo " + MARKERS["turn_close"]}


# ---- <|tool_call>:call:NAME{ : the stray colon and the call: prefix both go

def test_a_colon_before_the_call_prefix():
    text = f"{OPEN}:call:shell{{cmd:{Q}make check{Q}}}{CLOSE}"
    for tools in (TOOLS, None):
        call = only_call(check_chunking(FMT, text, tools))
        assert (call.name, call.arguments) == ("shell", {"cmd": "make check"})
        assert "call_prefix_variant" in [d.code for d in call.diagnostics]
        assert call.status == "repaired"


def test_a_declared_name_that_starts_with_call_is_kept():
    tools = [tool("call:ring", who="string")]
    call = only_call(check_chunking(FMT, f"{OPEN}:call:ring{{who:{Q}desk{Q}}}{CLOSE}", tools))
    assert call.name == "call:ring" and call.status == "repaired"


# ---- a trailing comma before } or ] is read past (repaired), not a rejected call

@pytest.mark.parametrize("body, want", [
    (f"names:[{Q}x{Q},{Q}y{Q},]", {"names": ["x", "y"]}),
    (f"names:[1, 2 , ],meta:{{k:true,}},", {"names": [1, 2], "meta": {"k": True}}),
    ("meta:{depth:{n:3,},}", {"meta": {"depth": {"n": 3}}}),
])
def test_trailing_commas(body, want):
    call = only_call(check_chunking(FMT, f"{OPEN}call:tag{{{body}}}{CLOSE}", TOOLS))
    assert (call.arguments, call.status) == (want, "repaired")
    assert [d.code for d in call.diagnostics] == ["trailing_comma"]


def test_a_lone_or_doubled_comma_is_still_malformed():
    for body in ("names:[,]", "names:[1,,]", "meta:{,}"):
        call = only_call(FMT.parse(f"{OPEN}call:tag{{{body}}}{CLOSE}", TOOLS))
        assert call.status == "rejected" and call.raw_arguments == body + "}"


# ---- 7. and .25 are numbers where the schema asks for one; a string parameter keeps the text as written

def test_numbers_without_a_digit_beside_the_point():
    call = only_call(check_chunking(FMT, f"{OPEN}call:resize{{width:7.,height:.25,label:3.}}{CLOSE}", TOOLS))
    assert call.arguments == {"width": 7.0, "height": 0.25, "label": "3."}
    assert type(call.arguments["width"]) is float
    codes = [d.code for d in call.diagnostics]
    assert "lax_number" in codes and call.status == "repaired"


def test_a_lone_point_is_no_number():
    call = only_call(FMT.parse(f"{OPEN}call:resize{{width:.}}{CLOSE}", TOOLS))
    assert call.status == "rejected"


# ---- blanks before a key's ':' are layout, not part of the argument's name

def test_blanks_around_the_colon():
    call = only_call(check_chunking(FMT, f"{OPEN}call:resize{{ width : 12 ,\n label\t:{Q}hero{Q} }}{CLOSE}", TOOLS))
    assert (call.arguments, call.status) == ({"width": 12, "label": "hero"}, "proposed")


# ---- key=value (Ollama #17882): '=' where ':' belongs

@pytest.mark.parametrize("value, code", [(f"{Q}banner.png{Q}", None), ("'banner.png'", "single_quoted_value"),
                                          ('"banner.png"', "json_string_value")])
def test_an_equals_sign_between_key_and_value(value, code):
    call = only_call(check_chunking(FMT, f"{OPEN}call:resize{{width=800,label={value}}}{CLOSE}", TOOLS))
    assert (call.arguments, call.status) == ({"width": 800, "label": "banner.png"}, "repaired")
    assert [d.code for d in call.diagnostics] == ["equals_separator"] + ([code] if code else [])


def test_an_equals_sign_inside_a_value_is_text():
    call = only_call(check_chunking(FMT, f"{OPEN}call:shell{{cmd:{Q}A=1 make{Q}}}{CLOSE}", TOOLS))
    assert (call.arguments, call.status) == ({"cmd": "A=1 make"}, "proposed")


# ---- no ',' between one argument's value and the next key (reported for Gemma calls in yzma #243)

@pytest.mark.parametrize("gap", ["", " ", "\n"])
def test_a_missing_comma_between_arguments(gap):
    text = f"{OPEN}call:resize{{label:{Q}icon{Q}{gap}width:32{gap}}}{CLOSE}"
    call = only_call(check_chunking(FMT, text, TOOLS))
    assert (call.arguments, call.status) == ({"label": "icon", "width": 32}, "repaired")
    assert [d.code for d in call.diagnostics] == ["missing_comma"]


def test_a_missing_comma_after_a_nested_value():
    call = only_call(check_chunking(FMT, f"{OPEN}call:tag{{meta:{{a:1}} names:[2]}}{CLOSE}", TOOLS))
    assert call.arguments == {"meta": {"a": 1}, "names": [2]}
    assert [d.code for d in call.diagnostics] == ["missing_comma"]


def test_text_after_a_value_that_is_no_key_is_still_malformed():
    call = only_call(FMT.parse(f"{OPEN}call:resize{{label:{Q}icon{Q} and more}}{CLOSE}", TOOLS))
    assert call.status == "rejected"


# ---- a repair made before a nested object or list is still reported (it was wiped when the reader went in)

@pytest.mark.parametrize("body, code", [
    ("label:'x',meta:{k:1}", "single_quoted_value"),
    ('label:"x",names:[1]', "json_string_value"),
    ("meta:{k:True},names:[1]", "python_literal"),
])
def test_a_repair_before_a_nested_value_is_kept(body, code):
    call = only_call(check_chunking(FMT, f"{OPEN}call:tag{{{body}}}{CLOSE}", TOOLS))
    assert call.status == "repaired"
    assert [d.code for d in call.diagnostics] == [code]


# ---- a bare call in plain <tool_call>…</tool_call> tags (the "fallback format" vLLM's Gemma 4 parser reads)

WRAP_OPEN, WRAP_CLOSE = "<tool_call>", "</tool_call>"


@pytest.mark.parametrize("prefix", ["", "call:"])
@pytest.mark.parametrize("closer", [WRAP_CLOSE, CLOSE, ""])
@pytest.mark.parametrize("before, after", [("", ""), ("On it. ", " Done.")])
def test_a_call_in_plain_tool_call_tags(prefix, closer, before, after):
    text = f"{before}{WRAP_OPEN}{prefix}shell{{cmd:{Q}uptime{Q}}}{closer}{after}"
    out = check_chunking(FMT, text, TOOLS)
    call = only_call(out)
    assert (call.name, call.arguments, call.status) == ("shell", {"cmd": "uptime"}, "repaired")
    assert out.content == before + after
    assert "tool_call" not in out.content


@pytest.mark.parametrize("text, tools", [
    (f"{WRAP_OPEN}reboot{{}}{WRAP_CLOSE}", TOOLS),              # no such tool
    (f"{WRAP_OPEN}shell{{cmd:{Q}uptime{Q}}}{WRAP_CLOSE}", None),  # no tools declared
    (f'{WRAP_OPEN}{{"name": "shell"}}{WRAP_CLOSE}', TOOLS),      # another family's JSON call
    (f"Wrap calls in {WRAP_OPEN} tags.", TOOLS),
])
def test_what_stays_content_in_plain_tags(text, tools):
    out = check_chunking(FMT, text, tools)
    assert out.tool_calls == [] and out.content == text
