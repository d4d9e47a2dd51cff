"""Run a batch mapper over a file: JSON lines or Parquet in and out, on several worker processes, with a
progress bar on a terminal and a summary at the end (what ``toolwire parse --batch`` / ``render --batch`` run).

Rows are read and written in chunks (``chunk_rows``), so memory stays bounded by the chunk size times the
number of workers, whatever the file size; the output keeps the input's row order.

Nothing is lost, and nothing looks complete that is not:

* a line that cannot be read (not UTF-8, not JSON, not an object, without the mapper's field) becomes an
  error row at its place, whose ``error`` names the line and the problem; the run goes on;
* a problem with a whole file is a :class:`BatchFileError` with its own code (:data:`FILE_ERRORS`), raised
  before anything is written where it can be found before (a missing or binary input, an output suffix
  toolwire cannot write ...);
* the output is written to ``OUT.partial-<pid>`` beside it and renamed to ``OUT`` only when the last row is
  in: a run that fails or is interrupted (Ctrl-C) removes that file, so ``OUT`` is either complete or
  untouched (an earlier complete ``OUT`` stays as it was); only a process killed outright leaves the
  ``.partial-<pid>`` file behind, never a file under the final name. ``-`` (stdout) streams as it goes;
* Parquet wants one type per column: a passthrough column whose JSON values mix types (ints then a string)
  is written as text (strings as they are, other values as JSON) and said so in :attr:`Summary.notes`.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Iterator

from toolwire.errors import InvalidOption, MissingExtra, ToolwireError
from toolwire.progress import progress_bar

from .mappers import _Mapper

JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
"""Input names read as JSON lines (one object per line)."""
PARQUET_SUFFIXES = (".parquet", ".pq")
OUTPUT_SUFFIXES = (".jsonl", ".ndjson") + PARQUET_SUFFIXES
"""What ``run_file`` writes: JSON lines or Parquet, chosen by the output's suffix (``-`` is JSON lines on stdout)."""

FILE_ERRORS = {
    "file_not_found": "the input file does not exist",
    "not_a_file": "the input is a directory",
    "unreadable": "the input cannot be opened or read (permissions, I/O error)",
    "unsupported_input": "the input's suffix is neither JSON lines (.jsonl, .ndjson, .json) nor Parquet",
    "binary_input": "a JSON-lines input holds binary data (NUL bytes, a compressed or Parquet file)",
    "not_json_lines": "a JSON-lines input is one JSON document spread over lines (an array), not a row per line",
    "invalid_parquet": "a Parquet input cannot be read as Parquet",
    "missing_field": "a Parquet input has no column of the mapper's field",
    "unsupported_output": "the output's suffix is neither .jsonl / .ndjson nor .parquet / .pq",
    "out_is_input": "the output is the input file",
    "unwritable": "the output cannot be created or written (no such folder, permissions, disk full)",
    "parquet_write_failed": "a chunk's values could not be written with the Parquet schema",
}
"""The codes of :class:`BatchFileError` and what each means (``toolwire`` prints the code and exits 2)."""

_LINE_CODES = ("not_utf8", "invalid_json", "not_an_object", "missing_field")
"""The codes that start a bad line's ``error`` (``"<code>: line N ..."``)."""


class BatchFileError(ToolwireError):
    """A problem with a whole input or output file; ``code`` is one of :data:`FILE_ERRORS`, ``path`` the
    file. When it is raised, nothing is written under the output's final name."""

    def __init__(self, code: str, message: str, path: str | None = None):
        super().__init__(message)
        self.code = code
        self.path = path


@dataclass
class Summary:
    """What a run did. ``statuses`` counts the rows' ``status`` column (parse runs); ``notes`` says where the
    output differs from the input's shape (a mixed-type column written as text, an input column replaced by a
    result column of the same name)."""

    rows: int = 0
    seconds: float = 0.0
    errors: int = 0
    with_calls: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

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
        parts = [f"{self.rows} {_plural(self.rows, 'row')} in {self.seconds:.2f} s "
                 f"({self.rows_per_second:,.0f} rows/s)"]
        if self.statuses:
            parts.append(f"{self.with_calls} with calls")
            parts += [f"{self.statuses.get(s, 0)} {s}" for s in ("repaired", "rejected", "truncated")]
        parts.append(f"{self.errors} {_plural(self.errors, 'error')}")
        return ", ".join(parts)


def _plural(n: int, word: str) -> str:
    return word if n == 1 else word + "s"


# ---------------------------------------------------------------- reading

@dataclass
class Chunk:
    """Up to ``chunk_rows`` rows as columns. ``lines``: each row's line in a JSON-lines input (None for
    Parquet); ``problems``: row position -> why that line could not be used (``"<code>: line N ..."``);
    such a row's columns are null, except an object without the mapper's field, which keeps its own."""

    columns: dict[str, list]
    size: int
    lines: list[int] | None = None
    problems: dict[int, str] = field(default_factory=dict)


def _is_parquet(path: str) -> bool:
    return str(path).lower().endswith(PARQUET_SUFFIXES)


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise MissingExtra("Parquet files need pyarrow: pip install 'toolwire[batch]'") from None
    return pyarrow


def read_chunks(path: str, chunk_rows: int, *, field: str | None = None) -> Iterator[Chunk]:
    """The file's rows as :class:`Chunk` s of at most ``chunk_rows`` rows (``-`` reads JSON lines from stdin).

    A JSON-lines row that cannot be read is kept at its place with a problem (not UTF-8, not JSON, not an
    object, or, with ``field``, without that field), never dropped and never raised. A Parquet file that
    stops being readable midway raises :class:`BatchFileError` (``invalid_parquet``)."""
    if path != "-" and _is_parquet(path):
        pa = _pyarrow()
        try:
            for batch in pa.parquet.ParquetFile(path).iter_batches(batch_size=chunk_rows):
                yield Chunk(batch.to_pydict(), batch.num_rows)
        except (pa.ArrowException, OSError) as exc:
            raise BatchFileError("invalid_parquet", f"{path}: cannot be read as Parquet ({exc})", path) from None
        return
    stream = sys.stdin.buffer if path == "-" else open(path, "rb")
    try:
        rows: list[dict] = []
        lines: list[int] = []
        problems: dict[int, str] = {}
        for number, raw in enumerate(stream, 1):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]  # a UTF-8 byte-order mark
            if not raw.strip():
                continue
            row, problem = _read_line(raw, number, field)
            if problem is not None:
                problems[len(rows)] = problem
            rows.append(row)
            lines.append(number)
            if len(rows) == chunk_rows:
                yield Chunk(_to_columns(rows), len(rows), lines, problems)
                rows, lines, problems = [], [], {}
        if rows:
            yield Chunk(_to_columns(rows), len(rows), lines, problems)
    except OSError as exc:
        raise BatchFileError("unreadable", f"{path}: {exc.strerror or exc}", path) from None
    finally:
        if path != "-":
            stream.close()


def _read_line(raw: bytes, number: int, field: str | None) -> tuple[dict, str | None]:
    """``(row, None)`` for a good line, ``(row, "<code>: line N ...")`` for one that cannot be used (``row`` is
    ``{}`` unless the line is an object: then its columns are kept)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return {}, f"not_utf8: line {number} is not UTF-8 text (byte {exc.start + 1} of the line)"
    try:
        row = json.loads(text)
    except json.JSONDecodeError as exc:
        return {}, f"invalid_json: line {number} is not JSON ({exc.msg}, column {exc.colno})"
    except RecursionError:
        return {}, f"invalid_json: line {number} nests too deep to read"
    if not isinstance(row, dict):
        return {}, f"not_an_object: line {number} is {_kind(row)}, not a JSON object"
    if field is not None and field not in row:
        has = ", ".join(map(repr, list(row)[:8])) + (" ..." if len(row) > 8 else "") if row else "no fields"
        return row, f"missing_field: line {number} has no {field!r} field (it has {has})"
    return row, None


def _kind(value: Any) -> str:
    return {list: "a JSON array", str: "a JSON string", bool: "a JSON boolean", type(None): "null",
            int: "a JSON number", float: "a JSON number"}.get(type(value), type(value).__name__)


def _to_columns(rows: list[dict]) -> dict[str, list]:
    names: dict[str, None] = {}
    for row in rows:
        names.update(dict.fromkeys(row))
    return {name: [row.get(name) for row in rows] for name in names}


def _map_chunk(mapper: _Mapper, chunk: Chunk) -> dict[str, list]:
    """The mapper's output columns for one chunk, with an error row at the place of every unreadable line
    (run in the worker processes: it pickles as the mapper's configuration)."""
    results = mapper.result_columns()
    if not chunk.problems:
        if chunk.size == 0:
            return {**chunk.columns, **{name: [] for name in results}}
        return mapper(chunk.columns)
    good = [i for i in range(chunk.size) if i not in chunk.problems]
    out = {name: list(values) for name, values in chunk.columns.items()}
    for name in results:
        out[name] = [None] * chunk.size
    if good:
        mapped = mapper({name: [values[i] for i in good] for name, values in chunk.columns.items()})
        for name in results:
            column = out[name]
            for k, i in enumerate(good):
                column[i] = mapped[name][k]
    for i, problem in chunk.problems.items():
        row = mapper.error_result(problem)
        for name in results:
            out[name][i] = row[name]
    return out


# ---------------------------------------------------------------- checks before any row

def _check_source(source: str, field: str) -> None:
    """Every file-level problem of the input that can be found before reading a row."""
    if source == "-":
        peek = getattr(getattr(sys.stdin, "buffer", None), "peek", None)
        if peek is not None:  # what stdin starts with, without consuming it
            _check_text_head(peek(1 << 16)[:1 << 16], "stdin")
        return
    path = Path(source)
    if not path.exists():
        raise BatchFileError("file_not_found", f"no such file: {source}", source)
    if path.is_dir():
        raise BatchFileError("not_a_file", f"{source} is a directory, not a file", source)
    suffix = path.suffix.lower()
    if suffix not in JSONL_SUFFIXES + PARQUET_SUFFIXES:
        raise BatchFileError("unsupported_input", f"{source}: toolwire reads JSON lines ({', '.join(JSONL_SUFFIXES)})"
                                                  f" or Parquet ({', '.join(PARQUET_SUFFIXES)}), not "
                                                  f"{suffix or 'a file without a suffix'}", source)
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
    except OSError as exc:
        raise BatchFileError("unreadable", f"{source}: {exc.strerror or exc}", source) from None
    if _is_parquet(source):
        pa = _pyarrow()
        try:
            names = pa.parquet.ParquetFile(source).schema_arrow.names
        except (pa.ArrowException, OSError) as exc:
            raise BatchFileError("invalid_parquet", f"{source}: cannot be read as Parquet ({exc})", source) from None
        if field not in names:
            raise BatchFileError("missing_field", f"{source} has no column {field!r} (columns: "
                                                  f"{', '.join(names) or 'none'})", source)
        return
    _check_text_head(head, source)


_MAGIC = ((b"PAR1", "a Parquet file: name it .parquet"), (b"\x1f\x8b", "gzip-compressed: decompress it first"),
          (b"PK\x03\x04", "a zip archive"), (b"\x28\xb5\x2f\xfd", "zstd-compressed: decompress it first"),
          (b"BZh", "bzip2-compressed: decompress it first"), (b"\xfd7zXZ\x00", "xz-compressed: decompress it first"),
          (b"\xff\xfe", "UTF-16 text: toolwire reads UTF-8"), (b"\xfe\xff", "UTF-16 text: toolwire reads UTF-8"))


def _check_text_head(head: bytes, source: str) -> None:
    for magic, what in _MAGIC:
        if head.startswith(magic):
            raise BatchFileError("binary_input", f"{source} is not JSON lines: it is {what}", source)
    nul = head.find(b"\0")
    if nul >= 0:
        raise BatchFileError("binary_input", f"{source} is not JSON lines: it holds binary data (a NUL byte at "
                                             f"offset {nul})", source)
    first = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0].strip()
    if first[:1] == b"[" and not _parses(first):
        raise BatchFileError("not_json_lines", f"{source} starts a JSON array spread over lines; JSON lines hold one "
                                               "object per line (e.g. jq -c '.[]')", source)


def _parses(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def _check_output(out: str, source: str) -> None:
    if out == "-":
        return
    suffix = Path(out).suffix.lower()
    if suffix not in OUTPUT_SUFFIXES:
        raise BatchFileError("unsupported_output", f"--out {out}: toolwire writes JSON lines (.jsonl, .ndjson) or "
                                                   f"Parquet (.parquet, .pq), not {suffix or 'a file without a suffix'}",
                             out)
    if source != "-" and Path(out).resolve() == Path(source).resolve():
        raise BatchFileError("out_is_input", f"--out {out} is the input file; write somewhere else", out)
    if Path(out).is_dir():
        raise BatchFileError("unwritable", f"--out {out} is a directory", out)


# ---------------------------------------------------------------- Parquet types of JSON columns

def _scan_types(source: str, chunk_rows: int, result_names: set[str]) -> tuple[Any, dict[str, str]]:
    """One pass over a JSON-lines input: the Arrow type of each passthrough column, and the columns that
    cannot have one (mixed types, ints past int64, empty objects) with a note each; those are written as text."""
    pa = _pyarrow()
    types: dict[str, Any] = {}
    kinds: dict[str, set[str]] = {}
    text: dict[str, str] = {}
    for chunk in read_chunks(source, chunk_rows):
        for name, values in chunk.columns.items():
            if name in result_names:
                continue
            kinds.setdefault(name, set()).update(type(v).__name__ for v in values if v is not None)
            if name in text:
                continue
            try:
                found = pa.array(values).type
                if name in types:
                    found = pa.unify_schemas([pa.schema([(name, types[name])]), pa.schema([(name, found)])],
                                             promote_options="permissive").field(name).type
            except Exception:  # noqa: BLE001 - any value Arrow cannot type one way: the column goes as text
                text[name] = ""
                continue
            types[name] = found
    for name, found in list(types.items()):
        if not _writable(found):
            text[name] = ""
    notes = {}
    for name in text:
        types.pop(name, None)
        held = " and ".join(sorted(kinds.get(name, ()))) or "values"
        notes[name] = (f"column {name!r} holds {held} values that Parquet cannot keep in one typed column: "
                       "written as text (strings as they are, other values as JSON)")
    names = [n for n in kinds if n not in result_names]
    schema = pa.schema([(n, pa.string() if n in text else types.get(n, pa.null())) for n in names])
    return schema, notes


def _writable(arrow_type: Any) -> bool:
    """Whether Parquet can store ``arrow_type`` (it cannot store a struct without fields)."""
    import pyarrow as pa

    if pa.types.is_struct(arrow_type):
        return arrow_type.num_fields > 0 and all(_writable(arrow_type.field(i).type)
                                                 for i in range(arrow_type.num_fields))
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return _writable(arrow_type.value_type)
    return True


def _as_text(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=_json_default)


def _json_default(value: Any) -> Any:
    """JSON for the values a Parquet input can hold that JSON has no type for."""
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return "base64:" + base64.b64encode(data).decode("ascii")
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


# ---------------------------------------------------------------- writing

class _Output:
    """The output file, written under a temporary name and renamed when complete (see the module doc)."""

    def __init__(self, out: str, schema: Any = None, text_columns: frozenset[str] = frozenset()):
        self.out, self.schema, self.text_columns = out, schema, text_columns
        self.partial = None if out == "-" else Path(out).with_name(f"{Path(out).name}.partial-{os.getpid()}")
        self._stream = None
        self._parquet = None
        try:
            if self.schema is not None:
                pa = _pyarrow()
                self._parquet = pa.parquet.ParquetWriter(str(self.partial), self.schema)
            else:
                self._stream = sys.stdout if out == "-" else open(self.partial, "w", encoding="utf-8")
        except OSError as exc:
            raise BatchFileError("unwritable", f"cannot write {out}: {exc.strerror or exc}", out) from None

    def write(self, columns: dict[str, list], size: int) -> None:
        try:
            if self._stream is not None:
                names = list(columns)
                for i in range(size):
                    self._stream.write(json.dumps({k: columns[k][i] for k in names}, ensure_ascii=False,
                                                  default=_json_default) + "\n")
                return
            self._write_parquet(columns, size)
        except OSError as exc:
            raise BatchFileError("unwritable", f"cannot write {self.out}: {exc.strerror or exc}", self.out) from None

    def _write_parquet(self, columns: dict[str, list], size: int) -> None:
        pa = _pyarrow()
        data = {}
        for f in self.schema:
            values = columns.get(f.name)
            if values is None:
                values = [None] * size
            elif f.name in self.text_columns:
                values = [_as_text(v) for v in values]
            data[f.name] = values
        try:
            table = pa.Table.from_pydict(data, schema=self.schema)
        except (pa.ArrowException, OverflowError, TypeError, ValueError) as exc:
            raise BatchFileError("parquet_write_failed", f"{self.out}: a chunk does not fit the Parquet schema "
                                                         f"({exc}); nothing was written under this name (a .jsonl "
                                                         "output takes any value)", self.out) from None
        self._parquet.write_table(table)

    def commit(self) -> None:
        """Close the output and give it its final name."""
        try:
            self._close()
            if self.partial is not None:
                os.replace(self.partial, self.out)
        except OSError as exc:
            raise BatchFileError("unwritable", f"cannot write {self.out}: {exc.strerror or exc}", self.out) from None

    def abort(self) -> None:
        """Close and remove the temporary file: nothing appears under the final name."""
        try:
            self._close()
        except Exception:  # noqa: BLE001 - the run already failed; the file goes either way
            pass
        if self.partial is not None:
            try:
                self.partial.unlink()
            except OSError:
                pass

    def _close(self) -> None:
        if self._parquet is not None:
            parquet, self._parquet = self._parquet, None
            parquet.close()
        if self._stream is not None:
            stream, self._stream = self._stream, None
            if stream is sys.stdout:
                stream.flush()
            else:
                stream.close()


# ---------------------------------------------------------------- the run

def run_file(mapper: _Mapper, source: str, out: str, *, workers: int = 1, chunk_rows: int = 256,
             progress: bool | None = None) -> Summary:
    """Map every row of ``source`` into ``out`` (``.jsonl`` or ``.parquet``; ``-`` for stdin / stdout).

    ``workers`` > 1 runs chunks on that many processes (the mapper pickles as its configuration).
    ``progress``: draw a progress bar on stderr (default: when stderr is a terminal; needs ``tqdm``).
    File-level problems raise :class:`BatchFileError` (see the module doc for what is left on disk then).
    """
    if workers < 1:
        raise InvalidOption(f"workers must be at least 1, got {workers}", field="workers")
    if chunk_rows < 1:
        raise InvalidOption(f"chunk_rows must be at least 1, got {chunk_rows}", field="chunk_rows")
    field_name = mapper.input_field
    _check_output(out, source)
    _check_source(source, field_name)
    spooled = None
    if source == "-" and _is_parquet(out):  # the types scan reads the input twice: keep stdin in a file
        spooled = _spool_stdin()
        source = spooled
    try:
        return _run(mapper, source, out, field_name, workers, chunk_rows, progress)
    finally:
        if spooled is not None:
            os.unlink(spooled)


def _spool_stdin() -> str:
    """stdin copied to a temporary file (removed by :func:`run_file` when the run ends, however it ends)."""
    fd, name = tempfile.mkstemp(prefix="toolwire-stdin-", suffix=".jsonl")
    try:
        with os.fdopen(fd, "wb") as fh:
            shutil.copyfileobj(sys.stdin.buffer, fh)
        with open(name, "rb") as fh:
            _check_text_head(fh.read(1 << 16), "stdin")
    except BaseException:
        os.unlink(name)
        raise
    return name


def _run(mapper: _Mapper, source: str, out: str, field_name: str, workers: int, chunk_rows: int,
         progress: bool | None) -> Summary:
    summary = Summary()
    start = time.perf_counter()
    result_names = set(mapper.result_columns())
    schema, text_columns = None, frozenset()
    replaced: dict[str, None] = {}
    if _is_parquet(out):
        pa = _pyarrow()
        if _is_parquet(source):
            passthrough = pa.parquet.ParquetFile(source).schema_arrow
            replaced.update(dict.fromkeys(n for n in passthrough.names if n in result_names))
        else:
            passthrough, notes = _scan_types(source, chunk_rows, result_names)
            text_columns = frozenset(notes)
            summary.notes += list(notes.values())
        result = mapper.result_schema()
        schema = pa.schema([f for f in passthrough if f.name not in result_names] + list(result))
    output = _Output(out, schema, text_columns)
    bar = pool = None
    committed = False
    try:
        bar = progress_bar(progress, "rows", lambda: _row_count(source))
        chunks = _watch(read_chunks(source, chunk_rows, field=field_name), result_names, replaced)
        job = partial(_map_chunk, mapper)
        if workers > 1:
            import multiprocessing

            pool = multiprocessing.get_context("fork" if os.name == "posix" else "spawn").Pool(workers)
            results = pool.imap(job, chunks)
        else:
            results = map(job, chunks)
        for columns in results:
            size = len(columns["error"])
            output.write(columns, size)
            summary.add(columns)
            if bar is not None:
                bar.update(size)
        output.commit()
        committed = True
    finally:
        if not committed:
            output.abort()
        if pool is not None:
            pool.terminate()
        if bar is not None:
            bar.close()
    summary.notes += [f"input column {name!r} is replaced by the result column of that name" for name in replaced]
    summary.seconds = time.perf_counter() - start
    return summary


def _watch(chunks: Iterator[Chunk], result_names: set[str], replaced: dict[str, None]) -> Iterator[Chunk]:
    """``chunks`` as they are, noting input columns a result column will replace (in the main process)."""
    for chunk in chunks:
        replaced.update(dict.fromkeys(n for n in chunk.columns if n in result_names))
        yield chunk


def _row_count(source: str) -> int | None:
    """The number of rows in ``source`` (for the progress bar); None for stdin."""
    if _is_parquet(source):
        return _pyarrow().parquet.ParquetFile(source).metadata.num_rows
    if source == "-":
        return None
    with open(source, "rb") as fh:
        return sum(1 for line in fh if line.strip())


__all__ = ["BatchFileError", "Chunk", "FILE_ERRORS", "OUTPUT_SUFFIXES", "Summary", "read_chunks", "run_file"]
