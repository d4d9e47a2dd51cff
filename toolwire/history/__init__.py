"""The history keeper: assistant turns that keep their reasoning, stay cache-stable and stay token-faithful.

* :class:`HistoryKeeper` (:mod:`toolwire.history.keeper`): records what each assistant turn emitted and
  restores reasoning a client dropped or renamed, where the family's context policy keeps it;
* stores (:mod:`toolwire.history.stores`): :class:`MemoryStore` (default), :class:`SQLiteStore`,
  :class:`RedisStore`; bounded in entries and bytes, with eviction and a time to live;
* cache stability (:mod:`toolwire.history.stability`): :func:`cache_report`, and the retention switches that
  keep a family's prefix (:mod:`toolwire.history.retention`: :func:`stable_options`);
* token-faithful turns (:mod:`toolwire.history.faithful`): :func:`splice_token_ids` splices the ids an
  assistant turn was sampled as (the ``token_ids`` extension field) into the prompt, or refuses with a
  :class:`TokenSpliceError`.

This package sits outside core: it imports core, ``context_policy``, ``training`` and ``dispatch``, and nothing in
those imports it (docs/history.md).
"""

from .faithful import TOKEN_IDS_FIELD, Splice, SplicedPrompt, TokenSpliceError, splice_token_ids
from .keeper import HistoryKeeper, Prepared, Restoration, RestoredTurn, SkippedTurn
from .policy import kept_by_render, render_plan
from .retention import RetentionSwitch, retention_switches, stable_options
from .stability import StabilityReport, cache_report, model_completion, model_completion_ids
from .stores import HistoryStore, MemoryStore, RedisStore, SQLiteStore, StoreStats
from .visible import context_fingerprints, turn_fingerprint

__all__ = ["HistoryKeeper", "Prepared", "Restoration", "RestoredTurn", "SkippedTurn", "HistoryStore", "MemoryStore",
           "SQLiteStore", "RedisStore", "StoreStats", "StabilityReport", "cache_report", "model_completion",
           "model_completion_ids",
           "RetentionSwitch", "retention_switches", "stable_options", "TOKEN_IDS_FIELD", "TokenSpliceError", "Splice",
           "SplicedPrompt", "splice_token_ids", "kept_by_render", "render_plan", "turn_fingerprint",
           "context_fingerprints"]
