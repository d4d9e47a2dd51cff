"""The two steps of an evaluation: render a suite's prompts for any engine, then score the raw outputs.

``prompts(fmt, items)`` renders each item as the family's exact prompt (with token ids when a tokenizer is
given), so any engine can generate from it; ``score(fmt, items, outputs)`` parses each raw output with the
family's parser and scores it (:mod:`toolwire.eval.scoring`). The prompt's ``opens_reasoning`` is where the
parse starts (``thinking``), exactly as ``Format.parse(prompt=...)`` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from toolwire.errors import ToolwireError
from toolwire.progress import progress_bar

from .scoring import ItemScore, Metrics, aggregate, score_output
from .suites import Item


def prompts(fmt: Any, items: Iterable[Item], *, tokenizer: Any = None, **options: Any) -> Iterable[dict]:
    """One record per item: ``{id, category, prompt, opens_reasoning, token_ids?, error}``; an item the
    format refuses (its template cannot render it) gets ``error`` and no prompt."""
    for item in items:
        record: dict[str, Any] = {"id": item.id, "category": item.category}
        try:
            prompt = fmt.render(item.messages, item.tools, **options)
        except ToolwireError as exc:
            record.update(prompt=None, opens_reasoning=None, error=f"{exc.code}: {exc}")
            yield record
            continue
        record.update(prompt=prompt.text, opens_reasoning=prompt.opens_reasoning, error=None)
        if tokenizer is not None:
            record["token_ids"] = prompt.token_ids(tokenizer)
        yield record


@dataclass
class Evaluation:
    """Scores per item, metrics per category and overall, and the items that could not be scored."""

    format: str
    scores: list[ItemScore]
    by_category: dict[str, Metrics]
    overall: Metrics
    unscored: dict[str, str]
    seconds: float = 0.0

    @property
    def items_per_second(self) -> float:
        return len(self.scores) / self.seconds if self.seconds else 0.0


def score(fmt: Any, items: Iterable[Item], outputs: dict[str, str], *, progress: bool | None = None,
          **options: Any) -> Evaluation:
    """Score ``outputs`` (item id -> raw model output text) against ``items``; an item without an output, or
    that the format cannot render, is listed in ``unscored`` with the reason. ``options`` are render options
    (``thinking`` ...), used to learn where each output starts."""
    import time

    items = list(items)
    start = time.perf_counter()
    bar = progress_bar(progress, "items", lambda: len(items))
    scores, unscored = [], {}
    for item in items:
        if bar is not None:
            bar.update(1)
        if item.id not in outputs:
            unscored[item.id] = "no output for this item"
            continue
        try:
            prompt = fmt.render(item.messages, item.tools, **options)
        except ToolwireError as exc:
            unscored[item.id] = f"{exc.code}: {exc}"
            continue
        parsed = fmt.parse(outputs[item.id], item.tools, prompt=prompt)
        scores.append(score_output(item, parsed))
    if bar is not None:
        bar.close()
    categories: dict[str, list[ItemScore]] = {}
    for s in scores:
        categories.setdefault(s.category, []).append(s)
    return Evaluation(fmt.name, scores, {c: aggregate(v) for c, v in categories.items()}, aggregate(scores),
                      unscored, time.perf_counter() - start)
