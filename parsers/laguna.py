"""Stream parser for Poolside Laguna: GLM-4.7 calls (:class:`toolwire.parsers.glm.Glm47Parser`) and framing.

Laguna writes ``<think>R</think>`` then content then
``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>`` with no newlines anywhere, exactly
as GLM-4.7 does; with ``thinking=True`` the prompt opened ``<think>``, so the output starts inside reasoning, and
with thinking off the prompt wrote ``</think>``, so it starts in content. The turn ends with ``</assistant>``.
"""

from __future__ import annotations

from toolwire.families.laguna import LAGUNA

from .glm import Glm47Parser


class LagunaParser(Glm47Parser):
    """Laguna output: GLM-4.7's grammar; the turn ends with ``</assistant>`` (its declaration's stop token)."""

    family = LAGUNA


__all__ = ["LagunaParser"]
