"""Stream parser for Qwen3-Coder-style XML tool calls, shared by Qwen3-Coder / Qwen3.5 / Qwen3.6 and Seed-OSS.

Wire format (Qwen3-Coder; Seed-OSS wraps the same body in ``<seed:tool_call>`` and adds no ``\\n`` framing
inside values)::

    <tool_call>
    <function=NAME>
    <parameter=KEY>
    VALUE
    </parameter>
    </function>
    </tool_call>

One implementation, parametrized by an :class:`XmlGrammar` (markers plus framing), on the machinery all
XML-call parsers share (:mod:`toolwire.parsers.engine.xml_calls`: text and reasoning framing, the closing rule, value
streaming and typing). The rules, also written in ``docs/xml-values.md``:

* **Exact whitespace.** Only the framing the template adds is removed: ``grammar.value_framing`` (``\\n`` for
  Qwen) once after ``<parameter=KEY>`` and once before the closing tag. Everything else in a value is kept.
* **Closing tag inside a value.** A ``</parameter>`` closes the value only when it is followed, after optional
  whitespace, by ``<parameter=``, ``</function>``, the call's closing marker, or the end of the output
  (``XmlGrammar.closers``). Otherwise it is value text.
* **Unclosed parameters.** ``</function>`` (followed by the call's closing marker or the end) or the call's
  closing marker (followed by a new call or the end) also end an open value; so does the next
  ``<parameter=KEY>`` when ``KEY`` is a declared parameter of the tool. The value is kept and the call is
  ``repaired`` with an ``implicit_parameter_close`` diagnostic.
* **Missing wrapper** (``grammar.bare_functions``): ``<function=NAME>…</function>`` in content with no call
  marker around it is a call when ``NAME`` is a declared tool (``repaired``, ``missing_call_wrapper``);
  otherwise it is content.
* **Names** are matched exactly; a trailing newline in a function name is removed with a
  ``tool_name_repaired`` diagnostic (status ``repaired``). Unknown names give ``rejected`` candidates. A name
  is at most :data:`MAX_NAME_CHARS` long, so every state keeps only a bounded tail in the buffer.
* **Drift** (issue 33, docs/variants.md "Drift recovery"): with declared tools, a name followed by whitespace,
  ``<function NAME>``, ``<parameter name="KEY">``, a JSON object as the body, a Hermes JSON call or a Python call
  ``NAME(k=v)`` in the block, tag words without their angle brackets (``function=NAME>`` ... ``/function>``) at a
  line start, and the orphan ``</tool_call>`` of a call without its opener are recovered when unambiguous
  (:mod:`toolwire.parsers.engine.xml_drift`); otherwise the text stays where it was.
"""

from __future__ import annotations

from toolwire.families.qwen_xml import MARKERS, QWEN3_CODER, QWEN35, QWEN36

from .engine.xml_tool import MAX_NAME_CHARS, XmlGrammar, XmlToolParser

QWEN_GRAMMAR = XmlGrammar(QWEN35, value_framing="\n", reasoning_framing="\n", after_think_newlines=2,
                          bare_functions=True)
"""Qwen3-Coder / Qwen3.5 / Qwen3.6: ``\\n`` framing inside values, ``<think>\\n...\\n</think>\\n\\n``."""


class Qwen3CoderParser(XmlToolParser):
    """Qwen3-Coder: no reasoning channel; calls in content."""

    family = QWEN3_CODER
    grammar = QWEN_GRAMMAR
    reasoning_start = "never"


class Qwen35Parser(XmlToolParser):
    """Qwen3.5: with ``thinking=True`` the prompt opened ``<think>\\n``, so output starts in reasoning."""

    family = QWEN35
    grammar = QWEN_GRAMMAR
    reasoning_start = "thinking"


class Qwen36Parser(Qwen35Parser):
    """Qwen3.6: as Qwen3.5."""

    family = QWEN36


__all__ = ["MAX_NAME_CHARS", "QWEN_GRAMMAR", "Qwen3CoderParser", "Qwen35Parser", "Qwen36Parser",
           "XmlGrammar", "XmlToolParser"]
