"""Segment encoding: a rendered prompt's segments -> token ids in which request text never becomes a control id.

See :mod:`toolwire.tokenize` for the rule: only ``special`` segments yield control ids; all other text is
encoded as plain text, in runs between control tokens.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from ..errors import ToolwireError
from .vocabularies import vocabulary


class MarkerNotInVocabulary(ToolwireError, ValueError):
    """A ``special`` segment holds no control token of this tokenizer (the tokenizer does not match the format)."""

    code = "marker_not_in_vocabulary"

    def __init__(self, marker: str, tokenizer: str):
        self.marker = marker
        super().__init__(f"special segment {marker!r} is not a control token of {tokenizer}")


_TOKEN_SHAPED = re.compile(r"\s*(<[|｜][^<>\s]*[|｜]>|\[/?[A-Za-z_]+\]|</?[A-Za-z_][\w.-]*>)\s*\Z")

def encode_segments(segments: Iterable[Any], tokenizer: Any, *, strict: bool = True) -> list[int]:
    """Token ids of a rendered prompt's segments in which only ``special`` segments yield control ids.

    ``segments`` are ``(kind, text, message_index)`` items (:class:`toolwire.prompt.Segment`). Raises
    :class:`MarkerNotInVocabulary` when a special segment shaped like one control token is not a control
    token of ``tokenizer``; ``strict=False`` encodes such a segment as plain text instead. Each run's ids are
    remembered on the tokenizer's vocabulary (:meth:`~toolwire.tokenize.Vocabulary.encode_run`).
    """
    vocab = vocabulary(tokenizer)
    control = vocab.control
    encode_run = vocab.encode_run
    ids: list[int] = []
    run: list[str] = []  # the texts of the current run of plain text (between control tokens)
    for kind, text, _index in segments:
        if kind != "special":
            run.append(text)
            continue
        exact = control.get(text)
        if exact is None:  # a marker holding control tokens among plain text, or none
            pos = 0
            for m in vocab.find_controls(text):
                run.append(text[pos:m.start()])
                ids += encode_run(_joined(run))
                run = []
                ids.append(control[m.group()])
                pos = m.end()
            if pos == 0 and strict and _TOKEN_SHAPED.match(text):
                raise MarkerNotInVocabulary(text, vocab.kind)
            run.append(text[pos:])
            continue
        if run:
            ids += encode_run(_joined(run))
            run = []
        ids.append(exact)
    if run:
        ids += encode_run(_joined(run))
    return ids


def _joined(run: list[str]) -> str:
    """The run's texts as one text."""
    return run[0] if len(run) == 1 else "".join(run)


def control_token_count(segments: Iterable[Any], tokenizer: Any) -> int:
    """How many control ids :func:`encode_segments` emits for these segments (all from special segments)."""
    vocab = vocabulary(tokenizer)
    return sum(1 if seg[1] in vocab.control else sum(1 for _ in vocab.find_controls(seg[1]))
               for seg in segments if seg[0] == "special")
