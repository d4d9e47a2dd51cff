"""Dataset-scale parsing and rendering: mappers built from configuration, for any batch engine.

>>> from toolwire.batch import BatchParser
>>> parse = BatchParser("qwen3", tools=[...], thinking=False)           # doctest: +SKIP
>>> dataset.map(parse, batched=True)                                    # HF datasets      # doctest: +SKIP
>>> ray_dataset.map_batches(parse, batch_format="pyarrow")              # Ray Data          # doctest: +SKIP

* :class:`BatchParser` / :class:`BatchRenderer` (:mod:`toolwire.batch.mappers`): ``__call__(batch)`` on a
  dict of columns, a ``pyarrow.Table`` or a ``pandas.DataFrame``; they pickle as their configuration and load
  the format, validators and tokenizer once per process;
* the result columns (:mod:`toolwire.batch.columns`), Arrow-friendly;
* :func:`run_file` (:mod:`toolwire.batch.files`): a JSON-lines or Parquet file in and out, on N processes,
  with a progress bar and a :class:`Summary`; a bad line becomes an error row, a bad file a
  :class:`BatchFileError` with its own code, and the output appears under its name only when complete;
* Ray Data: :func:`toolwire.integrations.ray.ray_parse` / ``ray_render``.
"""

from .columns import RESULT_COLUMNS, arrow_schema, row_status
from .files import BatchFileError, Chunk, Summary, read_chunks, run_file
from .mappers import BatchParser, BatchRenderer

__all__ = ["BatchFileError", "BatchParser", "BatchRenderer", "Chunk", "RESULT_COLUMNS", "Summary", "arrow_schema",
           "read_chunks", "row_status", "run_file"]
