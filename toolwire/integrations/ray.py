"""Ray Data: parse or render a ``ray.data.Dataset`` with toolwire's batch mappers (``toolwire[ray]``).

>>> import ray, toolwire.integrations.ray as tw_ray                        # doctest: +SKIP
>>> ds = ray.data.read_json("outputs.jsonl")                              # doctest: +SKIP
>>> parsed = tw_ray.ray_parse(ds, BatchParser("qwen3", tools=tools))      # doctest: +SKIP
>>> parsed.write_parquet("parsed/")                                       # doctest: +SKIP

This is ``dataset.map_batches(mapper, batch_format="pyarrow")``: the mapper pickles as its configuration,
every Ray worker process loads the format, validators and tokenizer once, and the result columns keep one
Arrow type across blocks (explicit schema), so blocks with and without calls concatenate.
"""

from __future__ import annotations

from typing import Any

from toolwire.batch import BatchParser, BatchRenderer


def ray_parse(dataset: Any, parser: BatchParser, *, batch_size: int = 256, **map_batches: Any) -> Any:
    """``dataset`` with the parse result columns added (lazy, as every Ray Data transform).
    ``map_batches`` options (``concurrency``, ``num_cpus`` ...) pass through."""
    return dataset.map_batches(parser, batch_format="pyarrow", batch_size=batch_size, **map_batches)


def ray_render(dataset: Any, renderer: BatchRenderer, *, batch_size: int = 256, **map_batches: Any) -> Any:
    """``dataset`` with ``prompt``, ``opens_reasoning``, ``token_ids`` and ``error`` columns added."""
    return dataset.map_batches(renderer, batch_format="pyarrow", batch_size=batch_size, **map_batches)
