"""Invoke blocks: one block of ``<invoke name="NAME">`` elements with named parameters.

* MiniMax-M2 (parser :class:`~toolwire.parsers.minimax.MiniMaxParser`, markers from its ``MARKERS``)::

      <minimax:tool_call>\\n<invoke name="NAME">\\n<parameter name="KEY">VALUE</parameter>\\n</invoke>\\n</minimax:tool_call>

* DSML, DeepSeek V3.2 / V4 / V4.1 (parser :class:`~toolwire.parsers.engine.dsml.DsmlStreamParser`, markers from
  each version's ``DsmlGrammar``)::

      <｜DSML｜tool_calls>\\n<｜DSML｜invoke name="NAME">\\n<｜DSML｜parameter name="KEY" string="true">VALUE</｜DSML｜parameter>\\n
      </｜DSML｜invoke>\\n</｜DSML｜tool_calls>

  ``string="true"`` for a string-typed parameter (free text), ``string="false"`` for any other type (JSON of
  the declared type, as the parser reads it).

* GCML, GigaChat 3.5 (the same engine and description, namespace ``｜GCML｜``): the ``\n\n`` before the block only
  joins it to text before it (a block that opens the answer has none), and an invoke without parameters is
  ``<｜GCML｜invoke name="NAME">\n</｜GCML｜invoke>``.

Values as in the XML group (:func:`~toolwire.grammar.families.xml_params.xml_value`, byte-exact: no framing),
free text spelling none of the markers that can end it. A JSON value's strings exclude only what cuts the
parser's reading of it: nothing for MiniMax; for DSML the parameter closer and opener and the invoke closer in
every spelling the parser reads, as the tail each set shares (``parameter>``, ``parameter name=``,
``invoke>``: a narrowing). Free text outside the block never spells an invoke
opener (the parser reads an invoke without its block as a repaired call) nor, for DSML, another version's or
an alias spelling of the block.
"""

from __future__ import annotations

from toolwire.parsers.minimax import MARKERS as MINIMAX

from ..ir import CallWire, Lit, Section, Seq
from . import describes, reasoning_markers
from .xml_params import LINE, NO_JSON_CUT, is_text_typed, parameters, xml_value

DSML_STRING_ATTRIBUTE = ' string="{}"'
"""DSML's parameter attribute (``string="true"`` / ``"false"``), after the name's closing quote."""


@describes("minimax")
def minimax(fmt, request, *, thinking: bool) -> CallWire:
    """``<minimax:tool_call>`` block of ``<invoke name="...">`` elements."""
    m = MINIMAX
    stops = (m["parameter_open"], m["invoke_close"], m["invoke_open"], m["block_close"])

    def element(key, sub, path):
        value = xml_value(sub, m["parameter_open"] + key + m["attr_close"], m["parameter_close"], stops, path,
                          json_excludes=NO_JSON_CUT)
        return Seq((value, Lit(LINE)))

    calls = tuple((tool.name, Seq((Lit(m["invoke_open"] + tool.name + m["attr_close"] + LINE),
                                   parameters(tool.schema, element), Lit(m["invoke_close"]))))
                  for tool in request.tools)
    section = Section(m["block_open"] + LINE, LINE + m["block_close"], LINE)
    return CallWire(fmt.name, (m["block_open"],), calls, section=section, reasoning=reasoning_markers(fmt),
                    stop_tokens=tuple(fmt.stop_tokens), reserved=(m["invoke_open"],), family="invoke_blocks")


@describes("dsml")
def dsml(fmt, request, *, thinking: bool) -> CallWire:
    """The DSML block of one DeepSeek version (V3.2 ``function_calls``, V4 ``tool_calls``, V4.1 ``calls``)."""
    return invoke_block_wire(fmt, request, empty_invoke=LINE + LINE)


@describes("gcml")
def gcml(fmt, request, *, thinking: bool) -> CallWire:
    """GigaChat 3.5's ``<｜GCML｜tool_calls>`` block (DSML's description in its namespace, its own layout)."""
    return invoke_block_wire(fmt, request, empty_invoke=LINE)


def invoke_block_wire(fmt, request, *, empty_invoke: str) -> CallWire:
    """A DSML-style block, from the parser's :class:`~toolwire.parsers.engine.dsml.DsmlGrammar` (markers, namespace
    variants, whether the separator only joins the block to text before it); ``empty_invoke``: the layout of an
    invoke without parameters between its tags."""
    g = fmt.parser_class.grammar
    stops = (g.param_open, g.invoke_close, g.invoke_open, g.block_close, g.block_open)
    # what ends the parser's reading of a JSON value: a parameter closer, opener (once a whole tag follows it) or
    # invoke closer, in any spelling it reads; a JSON string excludes the tail all spellings of each share (three
    # excludes, not twelve: xgrammar compiles each), the opener's without its quote (the string's own closing
    # quote can be it)
    json_cuts = tuple(_common_tail([c, *(v for v, canonical in g.spelling_variants if canonical == c)]).rstrip('"')
                      for c in (g.param_close, g.param_open, g.invoke_close))

    def element(key, sub, path):
        text = is_text_typed(sub)
        begin = g.param_open + key + '"' + DSML_STRING_ATTRIBUTE.format("true" if text else "false") + ">"
        value = xml_value(sub if text else _not_text(sub), begin, g.param_close, stops, path,
                          json_excludes=json_cuts)
        return Seq((value, Lit(LINE)))

    def invoke(tool):
        # DeepSeek's encoder joins the parameters with "\n" between "\n" and "\n": an invoke without parameters
        # has "\n\n"; GigaChat's template writes the closing "\n" only after parameters: "\n"
        empty = Lit(empty_invoke[len(LINE):]) if not tool.schema.get("properties") else Lit("")
        return Seq((Lit(g.invoke_open + tool.name + '">' + LINE), parameters(tool.schema, element), empty,
                    Lit(g.invoke_close)))

    calls = tuple((tool.name, invoke(tool)) for tool in request.tools)
    # the "\n\n" before the block belongs to it (the parser's rule), unless it only joins the block to text
    opener = g.block_open if g.separator_joins else g.separator + g.block_open
    section = Section(opener + LINE, LINE + g.block_close, LINE)
    reserved = (g.block_open, g.invoke_open, *g.block_open_aliases, *(o for o, _ in g.other_version_blocks),
                *(v for v, _ in g.spelling_variants))
    return CallWire(fmt.name, (opener,), calls, section=section, reasoning=(g.think_open, g.think_close),
                    stop_tokens=tuple(dict.fromkeys((*fmt.stop_tokens, *g.stop_tokens))), reserved=reserved,
                    family="invoke_blocks", last_region=True)


def _common_tail(spellings: list[str]) -> str:
    """The longest suffix all spellings share (``parameter>``: ``</｜DSML｜parameter>``, ``</|DSML|parameter>``)."""
    tail = spellings[0]
    while not all(s.endswith(tail) for s in spellings):
        tail = tail[1:]
    return tail


def _not_text(schema):
    """A ``string="false"`` value is JSON; ``xml_value`` would spell a boolean in Python too, which DSML's
    JSON reading does not take."""
    return dict(schema, **{"x-toolwire-json": True}) if isinstance(schema, dict) else schema
