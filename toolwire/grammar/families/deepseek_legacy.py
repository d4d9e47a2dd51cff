"""DeepSeek V3.1 and R1 (the pre-DSML ``<｜tool▁calls▁begin｜>`` section; parsers
:class:`~toolwire.parsers.deepseek_legacy.DeepSeekV31Parser` / :class:`~.DeepSeekR1Parser`).

* ``deepseek_v31``: ``<｜tool▁calls▁begin｜>`` ( ``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGS<｜tool▁call▁end｜>`` )+
  ``<｜tool▁calls▁end｜>``, calls back to back;
* ``deepseek_r1``: the same section, each call ``<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME`` then the
  arguments in a fenced block (``R1_FENCE_OPEN`` ARGS ``R1_FENCE_CLOSE``) and ``<｜tool▁call▁end｜>``, calls
  separated by ``\\n`` (what the template writes).

Markers from the parsers' ``MARKERS`` and ``Grammar``; ARGS is JSON following the tool's schema.
"""

from __future__ import annotations

from toolwire.parsers.deepseek_legacy import (
    MARKERS, R1_FENCE_CLOSE, R1_FENCE_OPEN, DeepSeekR1Parser, DeepSeekV31Parser,
)

from ..ir import Lit
from . import describes
from .marker_json import marker_wire

R1_CALL_TYPE = "function"
"""The call type R1 writes before ``<｜tool▁sep｜>`` (the only one its parser reads as a plain call)."""
R1_SEPARATOR = "\n"
"""What the R1 template writes between two calls of one section."""


@describes(DeepSeekV31Parser)
def deepseek_v31(fmt, request, *, thinking: bool):
    """``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGS<｜tool▁call▁end｜>`` inside the calls section."""
    return marker_wire(fmt, request, Lit, family="deepseek_legacy", thinking=thinking)


@describes(DeepSeekR1Parser)
def deepseek_r1(fmt, request, *, thinking: bool):
    """``<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json\\nARGS\\n```<｜tool▁call▁end｜>``, ``\\n`` between calls.

    The parser's header ends at the fence's first line (``\\n```json``) and its trailer is the closing
    fence's backticks, so the body framing is the rest of the template's fences."""
    g = fmt.parser_class.grammar
    body = (R1_FENCE_OPEN[len(g.header_end):], R1_FENCE_CLOSE[:-len(g.trailer)])
    return marker_wire(fmt, request, lambda name: Lit(R1_CALL_TYPE + MARKERS["sep"] + name),
                       family="deepseek_legacy", thinking=thinking, separator=R1_SEPARATOR, body=body)
