"""Classes of failure that peers' test cases and publicly reported model outputs showed in the XML-call parser
shared by Qwen3-Coder / Qwen3.5 / 3.6 / 3.8, Nemotron 3, Step 3.5 and Seed-OSS (docs/variants.md, "Drift
recovery"). Inputs are written here in this suite's own words and values; each case is checked one-shot and at
every chunking (1-character feeds, every two-piece split, random splits) with events consistent with the result.

* A damaged parameter closing tag (``</parameter`` with a short tail: ``2>``, ``/>``, ``_end>``, ``function>``,
  or nothing) followed by what a real closing tag is followed by: the value ends before it
  (``drift_parameter_close``), instead of keeping the tag as value text.
* A function or parameter name whose ``>`` is missing, so the name runs into the next line: a declared name up
  to the newline is read as the name (``drift_name_bracket``); a parameter element whose name holds a newline or
  ``<`` and is not declared is kept in a ``malformed_parameter_name`` diagnostic, never made an argument key.
"""

from __future__ import annotations

import json

import pytest

import toolwire
from toolwire.errors import UnrepresentableValue
from support import check_chunking

FORMATS = ["qwen3_coder", "qwen35", "qwen36", "qwen38", "nemotron3", "step35", "seed_oss"]

TOOLS = [{"type": "function", "function": {
    "name": "book_table", "description": "Reserve a restaurant table.",
    "parameters": {"type": "object", "properties": {
        "venue": {"type": "string"}, "guests": {"type": "integer"}, "remark": {"type": "string"}},
        "required": ["venue"]}}}]


class Wire:
    """One format's XML call pieces, from its family declaration (no marker written here)."""

    def __init__(self, name: str):
        fmt = toolwire.get_format(name)
        m = fmt.family.markers
        self.fmt = fmt
        self.call_open, self.call_close = m.CALL_OPEN, m.CALL_CLOSE
        self.fn_open, self.fn_close = m.FUNCTION_OPEN, m.FUNCTION_CLOSE
        self.p_open, self.p_close = m.PARAMETER_OPEN, m.PARAMETER_CLOSE
        self.framing = "" if name == "seed_oss" else "\n"  # Seed-OSS writes values with no newline framing

    def param(self, key: str, value: str, close: str | None = None) -> str:
        f = self.framing
        return f"{self.p_open}{key}>{f}{value}{f}{self.p_close if close is None else close}\n"

    def call(self, body: str, name: str = "book_table", head: str | None = None) -> str:
        head = f"{self.fn_open}{name}>\n" if head is None else head
        return f"{self.call_open}\n{head}{body}{self.fn_close}\n{self.call_close}"

    def damaged(self, tail: str) -> str:
        """The parameter closing tag with its ``>`` replaced by ``tail``."""
        return self.p_close[:-1] + tail


def parse(fmt, text):
    return check_chunking(fmt, text, TOOLS, thinking=False)


def calls(out):
    return [(c.name, c.arguments, c.status) for c in out.tool_calls]


def codes(call):
    return [d.code for d in call.diagnostics]


# ---------------------------------------------------------------- damaged parameter closing tag

TAILS = ["2>", "/>", "_end>", "function>", ""]


@pytest.mark.parametrize("tail", TAILS)
@pytest.mark.parametrize("name", FORMATS)
def test_damaged_closer_before_next_parameter(name, tail):
    w = Wire(name)
    bad = w.damaged(tail)
    out = parse(w.fmt, w.call(w.param("venue", "Harbour Grill", close=bad) + w.param("guests", "4")))
    assert calls(out) == [("book_table", {"venue": "Harbour Grill", "guests": 4}, "repaired")]
    call = out.tool_calls[0]
    assert codes(call) == ["drift_parameter_close"]
    assert call.diagnostics[0].raw == bad
    assert out.content == ""


@pytest.mark.parametrize("tail", TAILS)
@pytest.mark.parametrize("name", FORMATS)
def test_damaged_closer_before_function_close(name, tail):
    w = Wire(name)
    bad = w.damaged(tail)
    out = parse(w.fmt, w.call(w.param("guests", "2") + w.param("remark", "window seat, please", close=bad)))
    assert calls(out) == [("book_table", {"guests": 2, "remark": "window seat, please"}, "repaired")]
    assert codes(out.tool_calls[0]) == ["drift_parameter_close"]
    assert out.tool_calls[0].diagnostics[0].raw == bad


@pytest.mark.parametrize("name", FORMATS)
def test_damaged_closer_typed_value(name):
    """A non-string value ends at the damaged tag too, and is typed by the schema."""
    w = Wire(name)
    out = parse(w.fmt, w.call(w.param("guests", "6", close=w.damaged("9>")) + w.param("venue", "Quay")))
    assert calls(out) == [("book_table", {"guests": 6, "venue": "Quay"}, "repaired")]


@pytest.mark.parametrize("name", FORMATS)
def test_closer_like_text_inside_a_value_stays_text(name):
    """``</parameter`` followed by ordinary text is value text: nothing is cut."""
    w = Wire(name)
    value = f"see {w.damaged('s')} below and {w.damaged('_x>')} here\n{w.damaged('_x>')} and\n{w.damaged('')} too"
    out = parse(w.fmt, w.call(w.param("remark", value)))
    assert calls(out) == [("book_table", {"remark": value}, "proposed")]


@pytest.mark.parametrize("name", FORMATS)
def test_damaged_closer_at_end_of_output_is_kept(name):
    """Output cut right after a damaged tag: the value keeps it (nothing is guessed away), the call is truncated."""
    w = Wire(name)
    bad = w.damaged("3>")
    text = f"{w.call_open}\n{w.fn_open}book_table>\n{w.p_open}remark>{w.framing}late{w.framing}{bad}"
    out = parse(w.fmt, text)
    assert [(c.name, c.status) for c in out.tool_calls] == [("book_table", "truncated")]
    assert out.tool_calls[0].arguments["remark"].endswith(bad)
    assert "drift_parameter_close" not in codes(out.tool_calls[0])


@pytest.mark.parametrize("name", FORMATS)
def test_well_formed_closer_unchanged(name):
    w = Wire(name)
    out = parse(w.fmt, w.call(w.param("venue", "Harbour Grill") + w.param("guests", "4")))
    assert calls(out) == [("book_table", {"venue": "Harbour Grill", "guests": 4}, "proposed")]
    assert codes(out.tool_calls[0]) == []


# ---------------------------------------------------------------- a name whose ">" is missing

@pytest.mark.parametrize("name", FORMATS)
def test_function_name_without_bracket(name):
    w = Wire(name)
    head = f"{w.fn_open}book_table\n"
    out = parse(w.fmt, w.call(w.param("venue", "Pier 7") + w.param("guests", "3"), head=head))
    assert calls(out) == [("book_table", {"venue": "Pier 7", "guests": 3}, "repaired")]
    assert codes(out.tool_calls[0]) == ["drift_name_bracket"]
    assert out.tool_calls[0].diagnostics[0].raw == "book_table\n"


@pytest.mark.parametrize("name", FORMATS)
def test_function_name_without_bracket_arguments_checked(name):
    """A call started by this recovery is checked against its tool when it ends, as every call started by a
    drift recovery is: without its required argument it is rejected (its text stays in ``raw_arguments``)."""
    w = Wire(name)
    out = parse(w.fmt, w.call(w.param("guests", "2"), head=f"{w.fn_open}book_table\n"))
    assert calls(out) == [("book_table", {"guests": 2}, "rejected")]
    assert codes(out.tool_calls[0]) == ["drift_name_bracket", "drift_arguments_off_schema"]


@pytest.mark.parametrize("name", FORMATS)
def test_undeclared_function_name_without_bracket_is_not_recovered(name):
    """The name before the newline is not a declared tool: the candidate stays rejected, as before."""
    w = Wire(name)
    out = parse(w.fmt, w.call(w.param("venue", "Pier 7"), head=f"{w.fn_open}reserve_room\n"))
    assert [c.status for c in out.tool_calls] == ["rejected"]
    assert "drift_name_bracket" not in codes(out.tool_calls[0])


@pytest.mark.parametrize("name", FORMATS)
def test_parameter_name_without_bracket_declared(name):
    w = Wire(name)
    f = w.framing
    body = w.param("venue", "Pier 7") + f"{w.p_open}guests\n5{f}{w.p_close}\n"
    out = parse(w.fmt, w.call(body))
    assert calls(out) == [("book_table", {"venue": "Pier 7", "guests": 5}, "repaired")]
    assert codes(out.tool_calls[0]) == ["drift_name_bracket"]
    assert out.tool_calls[0].diagnostics[0].raw == "guests\n"


@pytest.mark.parametrize("element", ["\nall day\n", "remark: quiet corner\n", "remark=\n"])
@pytest.mark.parametrize("name", FORMATS)
def test_malformed_parameter_element_is_no_argument(name, element):
    """A parameter element whose name runs past a newline (its ``>`` missing) and is no declared parameter: its
    text is kept in a diagnostic, and the call's other arguments are unchanged."""
    w = Wire(name)
    bad = f"{w.p_open}{element}{w.p_close}\n"
    out = parse(w.fmt, w.call(w.param("venue", "Pier 7") + bad + w.param("guests", "2")))
    assert calls(out) == [("book_table", {"venue": "Pier 7", "guests": 2}, "repaired")]
    kept = [d.raw for d in out.tool_calls[0].diagnostics if d.code == "malformed_parameter_name"]
    assert kept and element in "".join(kept)


# ---------------------------------------------------------------- rendering: what the parser would cut is refused

def _turn(value: str) -> list[dict]:
    args = {"venue": "Pier 7", "remark": value}
    return [{"role": "user", "content": "a table"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c0", "type": "function", "function": {"name": "book_table", "arguments": json.dumps(args)}}]}]


@pytest.mark.parametrize("name", FORMATS)
def test_a_value_holding_a_damaged_closer_and_its_follower_is_refused(name):
    w = Wire(name)
    value = f"quiet\n{w.damaged('7>')}\n{w.fn_close} please"
    with pytest.raises(UnrepresentableValue) as info:
        w.fmt.render(_turn(value), TOOLS)
    assert info.value.field == "tool_calls[0].function.arguments.remark"


@pytest.mark.parametrize("name", FORMATS)
def test_a_value_ending_in_a_damaged_closer_renders_and_reads_back(name):
    """Rendered, such a value is followed by its own closing tag (no follower): it reads back exactly."""
    w = Wire(name)
    value = f"quiet corner {w.damaged('')}"
    text = w.fmt.render(_turn(value), TOOLS).text
    start = text.rindex(w.call_open)
    out = parse(w.fmt, text[start:text.index(w.call_close, start) + len(w.call_close)])
    assert calls(out) == [("book_table", {"venue": "Pier 7", "remark": value}, "proposed")]
