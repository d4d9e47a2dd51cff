"""DeepSeek's DSML parsers, V3.2 ``function_calls``, V4 ``tool_calls`` and V4.1 ``calls`` blocks: each a
declaration read by the DSML engine (:mod:`toolwire.parsers.engine.dsml`, where the grammar and its rules are
described)."""

from __future__ import annotations

from toolwire.families.dsml import DEEPSEEK_V4, DEEPSEEK_V32, DEEPSEEK_V41

from .engine.dsml import DSML, DsmlStreamParser, dsml_grammar

V4_BLOCK_ALIASES = (f"<{DSML}toolcalls>", f"<{DSML}tool>")
"""Block spellings seen in real V4 output; the parser accepts them with a diagnostic."""
V4_BLOCK_CLOSE_ALIASES = (f"</{DSML}toolcalls>", f"</{DSML}tool>")


class DeepSeekV32Parser(DsmlStreamParser):
    """DeepSeek-V3.2: ``<｜DSML｜function_calls>`` blocks."""

    family = DEEPSEEK_V32
    grammar = dsml_grammar(DEEPSEEK_V32)


class DeepSeekV4Parser(DsmlStreamParser):
    """DeepSeek-V4: ``<｜DSML｜tool_calls>`` blocks (and the block spellings seen in real V4 output)."""

    family = DEEPSEEK_V4
    grammar = dsml_grammar(DEEPSEEK_V4, block_aliases=V4_BLOCK_ALIASES, block_close_aliases=V4_BLOCK_CLOSE_ALIASES)


class DeepSeekV41Parser(DsmlStreamParser):
    """DeepSeek-V4.1: ``<｜DSML｜ calls>`` blocks."""

    family = DEEPSEEK_V41
    grammar = dsml_grammar(DEEPSEEK_V41)
