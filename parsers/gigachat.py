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
values byte-exact and streamed, ``string="false"`` values JSON, malformed input diagnosed, never raised). One
spelling variant is accepted, fail-closed (the first invoke must name a declared tool; ``missing_call_wrapper``):
the markup with ``｜GCML｜`` left out (``<tool_calls>``, ``<invoke name="…">``, ...), as a detokenizer that drops
special tokens leaves it (seen verbatim from GigaChat-3-Ultra, skales #256); text input only, since from token ids
markup needs its control id. Other spellings of ``｜GCML｜`` are
not: none has been seen in GigaChat's output (DeepSeek's DSML variants come from real output). ``</s>`` and ``<|message_sep|>`` left in free text are stripped (``stop_token_in_output``).
"""

from __future__ import annotations

from dataclasses import replace

from toolwire.families.gigachat import GCML, GIGACHAT35

from .engine.drift import MISSING_CALL_WRAPPER
from .engine.dsml import DsmlState, DsmlStreamParser, dsml_grammar

_WITH_BARE = replace(dsml_grammar(GIGACHAT35, namespace=GCML, variants=("",), after_think="\n\n", separator_joins=True),
                     variant_code=MISSING_CALL_WRAPPER, _cache={})
_CANONICAL = dsml_grammar(GIGACHAT35, namespace=GCML, variants=(), after_think="\n\n", separator_joins=True)
"""Inside markup opened with ``｜GCML｜`` only its own markers count, so a value may hold ``</parameter>`` and the
like as text; the namespace-less spelling is read only in markup that opened with it."""


class GigaChat35Parser(DsmlStreamParser):
    """GigaChat 3.5: ``<｜GCML｜tool_calls>`` blocks; ``\\n\\n`` joins reasoning, content and block."""

    family = GIGACHAT35
    grammar = _WITH_BARE

    def _use(self, grammar) -> None:
        if self._reading_ids():  # from token ids markup needs its ｜GCML｜ control id: a dropped token is text-only
            grammar = _CANONICAL
        self.grammar, self._scanners = grammar, grammar.scanners

    def _scan(self, final: bool):
        if self.grammar is _WITH_BARE and self._reading_ids():
            self._use(_CANONICAL)
        return super()._scan(final)

    def _open_block(self, marker: str) -> None:  # a block opened with the canonical spelling
        self._use(_CANONICAL)
        super()._open_block(marker)

    def _begin_tentative(self, hit, codes: tuple[str, ...]) -> None:
        if MISSING_CALL_WRAPPER not in codes:  # a canonical invoke without its block
            self._use(_CANONICAL)
        super()._begin_tentative(hit, codes)

    def _close_block(self, marker: str) -> None:
        super()._close_block(marker)
        self._use(_WITH_BARE)

    def _reasoning_closed_in_block(self) -> None:
        super()._reasoning_closed_in_block()
        self._use(_WITH_BARE)

    def _close_invoke(self) -> None:
        super()._close_invoke()
        if self._state != DsmlState.BLOCK:  # a blockless invoke ended: back in the text
            self._use(_WITH_BARE)

    def _rollback(self) -> None:
        super()._rollback()
        self._use(_WITH_BARE)
