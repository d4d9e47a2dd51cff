"""Stream parser for GigaChat 3.5 output: DSML-style calls in the ``｜GCML｜`` namespace, on the DSML engine.

The grammar, after the generation prompt (``<think>`` already open when ``reasoning`` is on)::

    [reasoning </think> "\\n\\n"] [content "\\n\\n"] [<｜GCML｜tool_calls>
        <｜GCML｜invoke name="NAME">
        <｜GCML｜parameter name="KEY" string="true|false">VALUE</｜GCML｜parameter> ...
        </｜GCML｜invoke> ...
    </｜GCML｜tool_calls>]

The template joins the parts of a turn (``<think>…</think>``, content, the call block) with ``\\n\\n``, so the
``\\n\\n`` after ``</think>`` is framing (dropped), and the one before the block belongs to the block, which needs
none when it opens the answer (nor glued to text, which is read without a note: the grammar lets a model write
any text before the block). Everything else is DeepSeek's DSML (:mod:`toolwire.parsers.dsml`: ``string="true"``
values byte-exact and streamed, ``string="false"`` values JSON, malformed input diagnosed, never raised). No
spelling variant of ``｜GCML｜`` is accepted: none has been seen in GigaChat's output (DeepSeek's DSML variants come
from real output). ``</s>`` and ``<|message_sep|>`` left in free text are stripped (``stop_token_in_output``).
"""

from __future__ import annotations

from toolwire.families.gigachat import GCML, GIGACHAT35

from .engine.dsml import DsmlStreamParser, dsml_grammar


class GigaChat35Parser(DsmlStreamParser):
    """GigaChat 3.5: ``<｜GCML｜tool_calls>`` blocks; ``\\n\\n`` joins reasoning, content and block."""

    family = GIGACHAT35
    grammar = dsml_grammar(GIGACHAT35, namespace=GCML, variants=(), after_think="\n\n", separator_joins=True)
