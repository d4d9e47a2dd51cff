"""Evaluation through the wire format: a suite's prompts rendered exactly as the family was trained, the raw
outputs parsed by the family's parser, and every miss attributed to the model, the output or the parser.

* :mod:`toolwire.eval.suites`: BFCL v4 (from the ``bfcl-eval`` package's data), the built-in return-path items
  (histories ending in a tool result, with negative expectations) and toolwire's own JSON-lines suites, as
  :class:`Item` objects;
* :func:`prompts` / :func:`score` (:mod:`toolwire.eval.run`);
* :mod:`toolwire.eval.scoring`: call matching with acceptable-value lists, metrics, attribution;
* :mod:`toolwire.eval.report`: a terminal table and an HTML report with plots.
"""

from .run import Evaluation, prompts, score
from .scoring import ItemScore, Metrics, aggregate, score_output, value_matches
from .suites import BFCL_CATEGORIES, RETURN_PATH_CATEGORIES, Item, load_bfcl, load_jsonl, load_suite, return_path_items

__all__ = ["BFCL_CATEGORIES", "RETURN_PATH_CATEGORIES", "return_path_items", "Evaluation", "Item", "ItemScore", "Metrics", "aggregate", "load_bfcl", "load_jsonl",
           "load_suite", "prompts", "score", "score_output", "value_matches"]
