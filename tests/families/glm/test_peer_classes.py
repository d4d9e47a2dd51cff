"""GLM output shapes from peers' test suites and public reports (vLLM, SGLang, sigit) that toolwire got wrong,
written in this project's own words and values. Every case is checked one-shot and streamed
(``support.check_chunking``: 1-character feeds, every two-piece split, random splits)."""

from __future__ import annotations

import pytest

import support
import toolwire

TOOLS = [{"type": "function", "function": {"name": "run_query", "parameters": {"type": "object", "properties": {
    "sql": {"type": "string"}, "limit": {"type": "integer"}}}}},
         {"type": "function", "function": {"name": "open_page", "parameters": {"type": "object", "properties": {
             "url": {"type": "string"}}}}}]
NEWLINE = {"glm45": "\n", "glm46": "\n", "glm47": "", "glm53": ""}  # the framing after a name and between tags
FAMILIES = tuple(NEWLINE)


def output(family: str, body: str) -> str:
    return ("\n" if NEWLINE[family] else "") + body


@pytest.mark.parametrize("family", FAMILIES)
def test_a_second_call_opener_where_the_first_key_opener_belongs_is_read_as_that_key(family):
    """``<tool_call>NAME<tool_call>KEY</arg_key>``: the model wrote ``<tool_call>`` again where ``<arg_key>``
    belongs. With NAME declared and KEY one of its parameters, it is that call (``drift_glued_name``, repaired);
    before, the whole head became an undeclared name and the call was lost."""
    n = NEWLINE[family]
    text = output(family, f"Looking.{n}<tool_call>run_query<tool_call>sql</arg_key>{n}<arg_value>select 1</arg_value>"
                          f"{n}<arg_key>limit</arg_key>{n}<arg_value>5</arg_value>{n}</tool_call>")
    out = support.check_chunking(toolwire.get_format(family), text, TOOLS, thinking=False)
    (call,) = out.tool_calls
    assert (call.name, call.arguments, call.status) == ("run_query", {"sql": "select 1", "limit": 5}, "repaired")
    assert [d.code for d in call.diagnostics] == ["drift_glued_name"]
    assert out.content == "Looking."
    support.assert_nothing_lost(text, out, ["<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>",
                                            "<arg_value>", "</arg_value>"])


@pytest.mark.parametrize("head", ["run_query<tool_call>table", "search_db<tool_call>sql"])
def test_the_reopened_head_is_not_read_when_name_or_key_is_undeclared(head):
    text = f"<tool_call>{head}</arg_key><arg_value>x</arg_value></tool_call>"
    out = support.check_chunking(toolwire.get_format("glm47"), text, TOOLS, thinking=False)
    (call,) = out.tool_calls
    assert call.status == "rejected" and call.name != "run_query"
    assert [d.code for d in call.diagnostics] == ["unknown_tool"]
    (refused,) = out.diagnostics  # the refusal is said before any call starts: on the output
    assert (refused.code, refused.severity) == ("drift_glued_name", "info") and head in refused.raw


def test_the_reopened_head_without_declared_tools_stays_as_written():
    text = "<tool_call>run_query<tool_call>sql</arg_key><arg_value>x</arg_value></tool_call>"
    out = support.check_chunking(toolwire.get_format("glm47"), text, None, thinking=False)
    (call,) = out.tool_calls
    assert call.name.startswith("run_query<tool_call>sql") and "drift_glued_name" not in [d.code for d in
                                                                                       call.diagnostics]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("openers", [2, 3])
def test_a_key_opener_written_twice_does_not_end_up_inside_the_argument_name(family, openers):
    """``<arg_key><arg_key>url</arg_key>``: the extra opener is text between markers (``stray_text``, the call
    ``repaired``), as an extra ``</arg_key>`` after a key already is, when the key without it is a declared
    parameter; before, the argument was named ``<arg_key>url`` and the call stayed ``proposed``."""
    n = NEWLINE[family]
    text = output(family, f"<tool_call>open_page{n}{'<arg_key>' * openers}url</arg_key>{n}"
                          f"<arg_value>https://example.org/a</arg_value>{n}</tool_call>")
    out = support.check_chunking(toolwire.get_format(family), text, TOOLS, thinking=False)
    (call,) = out.tool_calls
    assert call.arguments == {"url": "https://example.org/a"} and call.status == "repaired"
    (stray,) = call.diagnostics
    assert (stray.code, stray.raw) == ("stray_text", "<arg_key>" * (openers - 1))


@pytest.mark.parametrize("tools", [None, [{"type": "function", "function": {"name": "open_page", "parameters": {
    "type": "object", "properties": {"<arg_key>url": {"type": "string"}}}}}]])
def test_a_doubled_key_opener_stays_in_the_name_when_no_declared_parameter_reads_it_otherwise(tools):
    """Without tools, or when the schema itself names the key with the opener, the key is the text as written
    (what the template would render for that key)."""
    text = "<tool_call>open_page<arg_key><arg_key>url</arg_key><arg_value>u</arg_value></tool_call>"
    out = support.check_chunking(toolwire.get_format("glm47"), text, tools, thinking=False)
    (call,) = out.tool_calls
    assert call.arguments == {"<arg_key>url": "u"} and "stray_text" not in [d.code for d in call.diagnostics]
