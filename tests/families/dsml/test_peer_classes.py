"""Classes of real DSML output that peers' tests and public reports showed toolwire reading wrong (inputs written
here, in this project's own words and values).

* An invoke whose body is one JSON object instead of parameter tags: its arguments were dropped (``{}``, the call
  ``repaired`` and usable) with the JSON in a ``junk_in_invoke`` diagnostic. Now ``drift_json_body`` when the
  tool is declared and the object fits it.
* The arguments written as one object under a wrapper parameter the tool does not declare (``arguments``,
  ``input``): the call carried ``{"arguments": {...}}``, usable, with no diagnostic. Now
  ``drift_wrapped_arguments`` under the same conditions.

* A parameter opened with ``<parameter name="KEY">`` (the DSML token lost, its closer intact; a public report of
  V4.1-Flash): the call was ``repaired`` and usable with ``{}``. Now ``drift_bare_parameter_tag`` when ``KEY`` is
  a parameter of the declared tool.

All are issue-33 drift recoveries: fail-closed (no declared tools, an undeclared tool, arguments off the schema
keep the previous reading, with an ``info`` note when tools were declared), stream and one-shot agree.
"""

from __future__ import annotations

import pytest

import toolwire
from support import check_chunking

FAMILIES = ("deepseek_v32", "deepseek_v4", "deepseek_v41")
BLOCKS = {"deepseek_v32": "function_calls", "deepseek_v4": "tool_calls", "deepseek_v41": "calls"}
NS = {"deepseek_v32": "｜DSML｜", "deepseek_v4": "｜DSML｜", "deepseek_v41": "｜DSML｜ "}

LAMP = {"type": "function", "function": {"name": "set_lamp", "parameters": {
    "type": "object", "properties": {"room": {"type": "string"}, "level": {"type": "integer"}},
    "required": ["room"]}}}
NOTE = {"type": "function", "function": {"name": "write_memo", "parameters": {
    "type": "object", "properties": {"body": {"type": "string"}}, "required": ["body"]}}}
INPUT_TOOL = {"type": "function", "function": {"name": "feed", "parameters": {
    "type": "object", "properties": {"input": {"type": "string"}}}}}
TOOLS = [LAMP, NOTE, INPUT_TOOL]


def block(family: str, *invokes: tuple[str, str]) -> str:
    ns, name = NS[family], BLOCKS[family]
    body = "".join(f'<{ns}invoke name="{tool}">\n{inner}</{ns}invoke>\n' for tool, inner in invokes)
    return f"Turning it on.\n\n<{ns}{name}>\n{body}</{ns}{name}>"


def param(family: str, key: str, string: str, value: str) -> str:
    ns = NS[family]
    return f'<{ns}parameter name="{key}" string="{string}">{value}</{ns}parameter>\n'


def calls(out):
    return [(c.name, c.arguments, c.status, [d.code for d in c.diagnostics]) for c in out.tool_calls]


# ---- an invoke whose body is a JSON object

@pytest.mark.parametrize("family", FAMILIES)
def test_a_json_object_body_is_the_calls_arguments(family):
    fmt = toolwire.get_format(family)
    text = block(family, ("set_lamp", '  {\n    "room": "attic",\n    "level": 3\n  }\n'),
                 ("write_memo", '{"body": "buy bulbs"}\n'))
    out = check_chunking(fmt, text, TOOLS)
    assert calls(out) == [("set_lamp", {"room": "attic", "level": 3}, "repaired", ["drift_json_body"]),
                          ("write_memo", {"body": "buy bulbs"}, "repaired", ["drift_json_body"])]
    assert out.tool_calls[0].diagnostics[0].raw.strip() == '{\n    "room": "attic",\n    "level": 3\n  }'
    assert out.content == "Turning it on."


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("body, tools, why", [
    ('{"room": "attic", "colour": "red"}\n', TOOLS, "an undeclared key"),
    ('{"level": 3}\n', TOOLS, "a required key missing"),
    ('{"room": 7}\n', TOOLS, "a wrong type"),
    ('{"room": attic}\n', TOOLS, "not JSON"),
    ('{"room": "attic"}\n', None, "no tools declared"),
], ids=lambda v: v if isinstance(v, str) and " " in v else None)
def test_a_json_body_that_does_not_fit_stays_junk(family, body, tools, why):
    """Fail-closed: the body stays ``junk_in_invoke`` as before (with an ``info`` note when tools were
    declared), the call keeps no guessed arguments."""
    fmt = toolwire.get_format(family)
    out = check_chunking(fmt, block(family, ("set_lamp", body)), tools)
    (call,) = out.tool_calls
    assert call.arguments == {}
    codes = {d.code: d.severity for d in call.diagnostics}
    assert codes["junk_in_invoke"] == "warning"
    assert codes.get("drift_json_body") == (None if tools is None else "info")


def test_a_json_body_of_an_undeclared_tool_is_not_read():
    fmt = toolwire.get_format("deepseek_v4")
    out = fmt.parse(block("deepseek_v4", ("open_door", '{"room": "attic"}\n')), TOOLS)
    (call,) = out.tool_calls
    assert (call.arguments, call.status) == ({}, "rejected")
    assert "junk_in_invoke" in [d.code for d in call.diagnostics]


# ---- the arguments under a wrapper parameter

@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("key, string, value", [
    ("arguments", "false", '{"room": "cellar", "level": 1}'),
    ("input", "true", '{"room": "cellar", "level": 1}'),
    ("arguments", "true", '\n{"room": "cellar", "level": 1}\n'),
])
def test_arguments_under_an_undeclared_wrapper_are_the_calls_arguments(family, key, string, value):
    fmt = toolwire.get_format(family)
    text = block(family, ("set_lamp", param(family, key, string, value)))
    out = check_chunking(fmt, text, TOOLS)
    assert calls(out) == [("set_lamp", {"room": "cellar", "level": 1}, "repaired", ["drift_wrapped_arguments"])]
    assert out.tool_calls[0].diagnostics[0].raw == value


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("string, value, kept", [("true", "dust the shelves", "dust the shelves"),
                                                 ("false", '"dust the shelves"', "dust the shelves")])
def test_a_bare_value_under_a_wrapper_is_the_only_parameter_of_its_tool(family, string, value, kept):
    """A tool that lists one parameter: the wrapper's value that fits it is that parameter's (a report shows
    ``{"arguments": "ls -la"}`` for a one-string tool)."""
    fmt = toolwire.get_format(family)
    out = check_chunking(fmt, block(family, ("write_memo", param(family, "arguments", string, value))), TOOLS)
    assert calls(out) == [("write_memo", {"body": kept}, "repaired", ["drift_wrapped_arguments"])]


@pytest.mark.parametrize("tool, value", [("write_memo", "7"), ("set_lamp", '"attic"')])
def test_a_bare_value_that_fits_no_only_parameter_stays_under_its_wrapper(tool, value):
    """A wrong type for the only parameter, or a tool with two: kept under the wrapper as written."""
    fmt = toolwire.get_format("deepseek_v4")
    out = check_chunking(fmt, block("deepseek_v4", (tool, param("deepseek_v4", "arguments", "false", value))), TOOLS)
    (call,) = out.tool_calls
    assert list(call.arguments) == ["arguments"]
    assert [d.severity for d in call.diagnostics if d.code == "drift_wrapped_arguments"] == ["info"]


@pytest.mark.parametrize("family", FAMILIES)
def test_a_json_body_under_a_wrapper_key_is_the_calls_arguments(family):
    fmt = toolwire.get_format(family)
    out = check_chunking(fmt, block(family, ("write_memo", '{"arguments": {"body": "dust shelves"}}\n')), TOOLS)
    assert calls(out) == [("write_memo", {"body": "dust shelves"}, "repaired", ["drift_wrapped_arguments"])]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("tool, key, string, value, tools, kept", [
    # the tool declares the key: an ordinary parameter
    ("feed", "input", "true", '{"room": "x"}', TOOLS, {"input": '{"room": "x"}'}),
    # arguments off the schema: kept under the key, as written
    ("set_lamp", "arguments", "false", '{"room": "cellar", "mood": "dim"}', TOOLS,
     {"arguments": {"room": "cellar", "mood": "dim"}}),
    ("set_lamp", "input", "true", "cellar", TOOLS, {"input": "cellar"}),
    ("set_lamp", "arguments", "false", "[1, 2]", TOOLS, {"arguments": [1, 2]}),
    # no tools declared: nothing to check against
    ("set_lamp", "arguments", "false", '{"room": "cellar"}', None, {"arguments": {"room": "cellar"}}),
])
def test_a_wrapper_that_does_not_hold_fitting_arguments_is_an_ordinary_parameter(family, tool, key, string, value,
                                                                                  tools, kept):
    fmt = toolwire.get_format(family)
    out = check_chunking(fmt, block(family, (tool, param(family, key, string, value))), tools)
    (call,) = out.tool_calls
    assert call.arguments == kept
    assert "drift_wrapped_arguments" not in [d.code for d in call.diagnostics if d.severity != "info"]


def test_a_wrapper_after_another_parameter_is_not_read_as_one():
    fmt = toolwire.get_format("deepseek_v32")
    inner = param("deepseek_v32", "room", "true", "hall") + param("deepseek_v32", "arguments", "false",
                                                                   '{"room": "cellar"}')
    out = check_chunking(fmt, block("deepseek_v32", ("set_lamp", inner)), TOOLS)
    assert out.tool_calls[0].arguments == {"room": "hall", "arguments": {"room": "cellar"}}


def test_a_long_string_wrapper_value_is_held_but_an_ordinary_string_value_still_streams():
    """A possible wrapper is held until it closes (its text may be no string); other string values stream."""
    fmt = toolwire.get_format("deepseek_v4")
    head = block("deepseek_v4", ("write_memo", param("deepseek_v4", "body", "true", "x"))).split("x</")[0]
    parser = fmt.stream(TOOLS)
    parser.feed(head)
    assert [e.fragment for e in parser.feed("dust the") if e.type == "arguments"] == ["dust the"]


def test_token_ids_give_the_text_result():
    """From the real DeepSeek-V4 tokenizer's ids (control ids for the DSML tags), fed one id, three ids and all
    at once, both recoveries give exactly the text parse."""
    from support import REAL, full_state, require_shared
    require_shared()
    pytest.importorskip("tokenizers")
    from toolwire.tokenize import load_tokenizer, vocabulary
    tokenizer = load_tokenizer(str(REAL / "tokenizers" / "DeepSeek-V4"))
    fmt = toolwire.get_format("deepseek_v4")
    for text in (block("deepseek_v4", ("set_lamp", '{"room": "attic", "level": 3}\n')),
                 block("deepseek_v4", ("set_lamp", param("deepseek_v4", "input", "true", '{"room": "cellar"}')))):
        ref = fmt.parse(text, TOOLS)
        assert ref.tool_calls[0].status == "repaired"
        ids = vocabulary(tokenizer).encode(text)
        for step in (1, 3, len(ids)):
            parser = fmt.stream(TOOLS, tokenizer=tokenizer)
            for i in range(0, len(ids), step):
                parser.feed(ids=ids[i:i + step])
            assert full_state(parser.finish()) == full_state(ref)


# ---- a parameter tag without the DSML token

@pytest.mark.parametrize("family", FAMILIES)
def test_a_parameter_tag_without_the_dsml_token_is_read_between_parameters(family):
    fmt = toolwire.get_format(family)
    ns = NS[family]
    inner = (f'<parameter name="room" string="true">porch</{ns}parameter>\n'
             + param(family, "level", "false", "2"))
    out = check_chunking(fmt, block(family, ("set_lamp", inner)), TOOLS)
    assert calls(out) == [("set_lamp", {"room": "porch", "level": 2}, "repaired", ["drift_bare_parameter_tag"])]
    assert out.tool_calls[0].diagnostics[0].raw == '<parameter name="room" string="true">'


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("key, tools", [("colour", TOOLS), ("room", None)])
def test_a_bare_parameter_tag_that_names_no_parameter_stays_junk(family, key, tools):
    fmt = toolwire.get_format(family)
    ns = NS[family]
    out = check_chunking(fmt, block(family, ("set_lamp", f'<parameter name="{key}">porch</{ns}parameter>\n')), tools)
    (call,) = out.tool_calls
    assert call.arguments == {}
    junk = [d.raw for d in call.diagnostics if d.code == "junk_in_invoke"]
    assert junk == [f'<parameter name="{key}">porch</{ns}parameter>\n']
    assert [d.severity for d in call.diagnostics if d.code == "drift_bare_parameter_tag"] == (
        [] if tools is None else ["info"])


def test_a_bare_parameter_tag_inside_a_value_is_value_text():
    """Only read between parameters: a string value that spells it keeps it, byte-exact."""
    fmt = toolwire.get_format("deepseek_v4")
    value = 'use <parameter name="room"> here'
    out = check_chunking(fmt, block("deepseek_v4", ("write_memo", param("deepseek_v4", "body", "true", value))), TOOLS)
    assert calls(out) == [("write_memo", {"body": value}, "proposed", [])]
