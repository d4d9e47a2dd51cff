"""Rendered prompts handed from an engine's renderer to the parser of the same request.

An engine renders a request in one place (vLLM: the renderer, :mod:`toolwire.integrations.vllm_render`) and
parses its output in another (the tool and reasoning parsers it builds per request), and the two meet only
through the prompt's token ids (vLLM calls ``set_prompt_token_ids`` on the parser). So the renderer keeps each
:class:`~toolwire.RenderedPrompt` here under its ids, and the parser looks it up by the same ids: its stream
then starts where the prompt leaves off (``Format.stream(prompt=...)``). Bounded (the last
:data:`CAPACITY` prompts of the process); a prompt not found (rendered elsewhere, or long gone) leaves the
parser to its other rules.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Sequence

from toolwire.prompt import RenderedPrompt

CAPACITY = 4096
_TAIL = 32  # ids kept per entry to tell two prompts with the same hash apart

_lock = threading.Lock()
_prompts: "OrderedDict[tuple[int, int], tuple[tuple[int, ...], RenderedPrompt]]" = OrderedDict()


def _key(ids: Sequence[int]) -> tuple[int, int]:
    return len(ids), hash(tuple(ids))


def remember(ids: Sequence[int], prompt: RenderedPrompt) -> None:
    """Keep ``prompt`` for the parser of the request whose prompt is ``ids``."""
    key = _key(ids)
    with _lock:
        _prompts[key] = (tuple(ids[-_TAIL:]), prompt)
        _prompts.move_to_end(key)
        while len(_prompts) > CAPACITY:
            _prompts.popitem(last=False)


def recall(ids: Sequence[int] | None, format_name: str | None = None) -> RenderedPrompt | None:
    """The prompt rendered to exactly ``ids`` (of ``format_name`` when given), or None."""
    if not ids:
        return None
    key = _key(ids)
    with _lock:
        hit = _prompts.get(key)
    if hit is None or hit[0] != tuple(ids[-_TAIL:]):
        return None
    prompt = hit[1]
    return prompt if format_name is None or prompt.format == format_name else None
