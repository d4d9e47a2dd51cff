"""Key / value element pairs: GLM-4.5 / 4.6 / 4.7 and Laguna (parser :class:`~toolwire.parsers.glm.GlmParser`)::

    <tool_call>NAME\\n<arg_key>KEY</arg_key>\\n<arg_value>VALUE</arg_value>\\n</tool_call>

4.5 / 4.6 write a ``\\n`` after the name and after every element (``newline_after_name``), 4.7 and Laguna
none. The markers are the parser's ``MARKERS``; a value is typed as in the XML group
(:func:`~toolwire.grammar.families.xml_params.xml_value`), byte-exact (no value framing), and free text in it
spells none of ``</arg_value>``, ``<arg_key>``, ``</tool_call>`` (what can end it). 4.5 / 4.6
may start with a framing ``\\n`` and then open ``<think>`` themselves.

Hy3 (parser :class:`~toolwire.parsers.hy3.Hy3Parser`, its ``MARKERS``, every tag ``:opensource``) writes the
same pairs inside a ``<tool_calls:opensource>`` block, the name ended by ``<tool_sep:opensource>``.
"""

from __future__ import annotations

from toolwire.parsers.glm import MARKERS as GLM
from toolwire.parsers.hy3 import MARKERS as HY3

from ..ir import CallWire, Lit, Section, Seq
from . import describes, reasoning_markers
from .xml_params import NO_JSON_CUT, parameters, xml_value


@describes("glm")
def glm(fmt, request, *, thinking: bool) -> CallWire:
    """``<tool_call>NAME`` then ``<arg_key>K</arg_key><arg_value>V</arg_value>`` pairs, then ``</tool_call>``."""
    klass = fmt.parser_class
    line = "\n" if klass.newline_after_name else ""
    stops = (GLM["key_open"], GLM["call_close"])

    def element(key, sub, path):
        value = xml_value(sub, GLM["value_open"], GLM["value_close"], stops, path, json_excludes=NO_JSON_CUT)
        return Seq((Lit(GLM["key_open"] + key + GLM["key_close"] + line), value, Lit(line)))

    calls = tuple((tool.name, Seq((Lit(GLM["call_open"] + tool.name + line), parameters(tool.schema, element),
                                   Lit(GLM["call_close"]))))
                  for tool in request.tools)
    return CallWire(fmt.name, (GLM["call_open"],), calls, reasoning=reasoning_markers(fmt),
                    stop_tokens=tuple(dict.fromkeys((*fmt.stop_tokens, *klass.stop_tokens))), family="arg_pairs",
                    self_reasoning=klass.after_think > 0, reasoning_lead=line)


@describes("hy3")
def hy3(fmt, request, *, thinking: bool) -> CallWire:
    """Hy3: ``<tool_calls:opensource>\\n`` calls ``<tool_call:opensource>NAME<tool_sep:opensource>\\n`` pairs
    ``</tool_call:opensource>\\n`` ... ``</tool_calls:opensource>``."""
    m = HY3
    stops = (m["key_open"], m["call_close"], m["calls_close"])

    def element(key, sub, path):
        value = xml_value(sub, m["value_open"], m["value_close"], stops, path, json_excludes=NO_JSON_CUT)
        return Seq((Lit(m["key_open"] + key + m["key_close"] + "\n"), value, Lit("\n")))

    calls = tuple((tool.name, Seq((Lit(m["call_open"] + tool.name + m["sep"] + "\n"), parameters(tool.schema, element),
                                   Lit(m["call_close"]))))
                  for tool in request.tools)
    section = Section(m["calls_open"] + "\n", "\n" + m["calls_close"], "\n")
    return CallWire(fmt.name, (m["calls_open"],), calls, section=section, reasoning=reasoning_markers(fmt),
                    stop_tokens=tuple(fmt.stop_tokens), reserved=(m["call_open"],), family="arg_pairs")
