"""Run a batch mapper over a file: JSON lines or Parquet in and out, on several worker processes, with a
progress bar on a terminal and a summary at the end (what ``toolwire parse --batch`` / ``render --batch`` run).

Rows are read and written in chunks (``chunk_rows``), so memory stays bounded by the chunk size times the
number of workers, whatever the file size; the output keeps the input's row order.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from toolwire.errors import InvalidOption, MissingExtra
from toolwire.progress import progress_bar

from .mappers import _Mapper


@dataclass
class Summary:
    """What a run did. ``statuses`` counts the rows' ``status`` column (parse runs)."""

    rows: int = 0
    seconds: float = 0.0
    errors: int = 0
    with_calls: int = 0
    statuses: dict[str, int] = field(default_factory=dict)

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0

    def add(self, columns: dict[str, list]) -> None:
        n = len(columns.get("error", ()))
        self.rows += n
        self.errors += sum(1 for e in columns.get("error", ()) if e is not None)
        self.with_calls += sum(1 for c in columns.get("num_tool_calls", ()) if c)
        for status in columns.get("status", ()):
            self.statuses[status] = self.statuses.get(status, 0) + 1

    def text(self) -> str:
        """One line, as the CLI prints it."""
        parts = [f"{self.rows} rows in {self.seconds:.2f} s ({self.rows_per_second:,.0f} rows/s)"]
        if self.statuses:
            parts.append(f"{self.with_calls} with calls")
            parts += [f"{self.statuses.get(s, 0)} {s}" for s in ("repaired", "rejected", "truncated")]
        parts.append(f"{self.errors} errors")
        return ", ".join(parts)


def _is_parquet(path: str) -> bool:
    return str(path).endswith((".parquet", ".pq"))


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise MissingExtra("Parquet files need pyarrow: pip install toolwire[batch]") from None
    return pyarrow


def read_chunks(path: str, chunk_rows: int) -> Iterator[dict[str, list]]:
    """The file's rows as column batches of at most ``chunk_rows`` rows (``-`` reads JSON lines from stdin)."""
    if _is_parquet(path):
        pq = _pyarrow().parquet
        for batch in pq.ParquetFile(path).iter_batches(batch_size=chunk_rows):
            yield batch.to_pydict()
        return
    stream = sys.stdin if path == "-" else open(path, encoding="utf-8")
    try:
        rows: list[dict] = []
        for number, line in enumerate(stream, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidOption(f"line {number} is not JSON ({exc.msg})", field=f"{path}:{number}") from None
            if not isinstance(row, dict):
                raise InvalidOption(f"line {number} is not a JSON object", field=f"{path}:{number}")
            rows.append(row)
            if len(rows) == chunk_rows:
                yield _to_columns(rows)
                rows = []
        if rows:
            yield _to_columns(rows)
    finally:
        if stream is not sys.stdin:
            stream.close()


def _to_columns(rows: list[dict]) -> dict[str, list]:
    names: dict[str, None] = {}
    for row in rows:
        names.update(dict.fromkeys(row))
    return {name: [row.get(name) for row in rows] for name in names}


class _Writer:
    def __init__(self, path: str, mapper: _Mapper):
        self.path, self.mapper = path, mapper
        self._parquet = None
        self._stream = None
        if not _is_parquet(path):
            self._stream = sys.stdout if path == "-" else open(path, "w", encoding="utf-8")

    def write(self, columns: dict[str, list]) -> None:
        if self._stream is not None:
            names = list(columns)
            n = len(columns[names[0]]) if names else 0
            for i in range(n):
                self._stream.write(json.dumps({k: columns[k][i] for k in names}, ensure_ascii=False) + "\n")
            return
        pa = _pyarrow()
        table = pa.Table.from_pydict(columns)
        result = self.mapper.result_schema()
        schema = pa.schema([f for f in table.schema if f.name not in result.names] + list(result))
        table = pa.Table.from_pydict(columns, schema=schema)
        if self._parquet is None:
            self._parquet = pa.parquet.ParquetWriter(self.path, schema)
        self._parquet.write_table(table)

    def close(self) -> None:
        if self._parquet is not None:
            self._parquet.close()
        if self._stream is not None and self._stream is not sys.stdout:
            self._stream.close()


def run_file(mapper: _Mapper, source: str, out: str, *, workers: int = 1, chunk_rows: int = 256,
             progress: bool | None = None) -> Summary:
    """Map every row of ``source`` into ``out`` (``.jsonl`` or ``.parquet``; ``-`` for stdin / stdout).

    ``workers`` > 1 runs chunks on that many processes (the mapper pickles as its configuration).
    ``progress``: draw a progress bar on stderr (default: when stderr is a terminal; needs ``tqdm``).
    """
    if workers < 1:
        raise InvalidOption(f"workers must be at least 1, got {workers}", field="workers")
    if source != "-" and not Path(source).is_file():
        raise InvalidOption(f"no such file: {source}", field="input")
    summary = Summary()
    start = time.perf_counter()
    bar = progress_bar(progress, "rows", lambda: _row_count(source))
    writer = _Writer(out, mapper)
    pool = None
    try:
        chunks = read_chunks(source, chunk_rows)
        if workers > 1:
            import multiprocessing

            pool = multiprocessing.get_context("fork" if os.name == "posix" else "spawn").Pool(workers)
            results = pool.imap(mapper, chunks)
        else:
            results = map(mapper, chunks)
        for columns in results:
            writer.write(columns)
            summary.add(columns)
            if bar is not None:
                bar.update(len(columns["error"]))
    finally:
        writer.close()
        if pool is not None:
            pool.terminate()
        if bar is not None:
            bar.close()
    summary.seconds = time.perf_counter() - start
    return summary


def _row_count(source: str) -> int | None:
    """The number of rows in ``source`` (for the progress bar); None for stdin."""
    if _is_parquet(source):
        return _pyarrow().parquet.ParquetFile(source).metadata.num_rows
    if source == "-":
        return None
    with open(source, "rb") as fh:
        return sum(1 for line in fh if line.strip())
