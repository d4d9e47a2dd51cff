"""Batch parsers and renderers built from configuration only, in the shape the dataset engines call.

``BatchParser(...)(batch)`` and ``BatchRenderer(...)(batch)`` take a batch as a ``dict[str, list]`` (what
``datasets.Dataset.map(batched=True)`` passes; numpy arrays as Ray Data's ``batch_format="numpy"`` gives are
read as lists), a ``pyarrow.Table`` (Ray Data ``batch_format="pyarrow"``, Spark ``mapInArrow``) or a
``pandas.DataFrame`` (Ray ``"pandas"``, Spark ``mapInPandas``), and return the same kind, with every input
column kept and the result columns added (:mod:`toolwire.batch.columns`).

Both pickle as their configuration (format name, tools as plain definitions, options, limits, a tokenizer
*path*), so an engine can ship them to workers; the format, the compiled validators and the tokenizer are
loaded on first use, once per process. A row that cannot be handled (not text, a bad request) gets an
``error`` column and never stops the batch.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Iterable, Sequence

from toolwire.errors import InvalidOption
from toolwire.limits import Limits
from toolwire.registry import get_format

from .columns import RESULT_COLUMNS, arrow_schema, describe, error_row, result_row


@lru_cache(maxsize=8)
def _tokenizer(path: str) -> Any:
    """A tokenizer loaded once per process (offline, :func:`toolwire.tokenize.load_tokenizer`)."""
    from toolwire.tokenize import load_tokenizer

    return load_tokenizer(path)


def _limits(value: Any) -> Limits | None:
    if value is None or isinstance(value, Limits):
        return value
    if isinstance(value, dict):
        return Limits(**value)
    raise InvalidOption(f"limits must be a toolwire.Limits or a dict, got {type(value).__name__}", field="limits")


def _plain_tools(tools: Any) -> list | None:
    """Tools as JSON-compatible definitions (what pickles small and means the same in every process)."""
    if tools is None:
        return None
    if hasattr(tools, "specs"):  # a ToolSet
        return [spec.to_openai() for spec in tools.specs.values()]
    return json.loads(json.dumps([t if isinstance(t, dict) else t.model_dump(exclude_none=True) for t in tools]))


class _Mapper:
    """What both mappers share: the configuration, pickling as it, and the batch kinds they accept."""

    _config_keys: tuple[str, ...] = ()

    def __reduce__(self):
        return (_rebuild, (type(self), {k: getattr(self, k) for k in self._config_keys}))

    def __call__(self, batch: Any) -> Any:
        kind, columns = _columns(batch)
        n = len(next(iter(columns.values()))) if columns else 0
        rows = self.map_rows(columns, n)
        out = dict(columns)
        for name in self.result_columns():
            out[name] = [row[name] for row in rows]
        return _as_kind(kind, out, self, batch)

    def map_rows(self, columns: dict[str, list], n: int) -> list[dict[str, Any]]:  # pragma: no cover
        raise NotImplementedError

    def result_columns(self) -> Sequence[str]:  # pragma: no cover
        raise NotImplementedError

    def result_schema(self):  # pragma: no cover
        raise NotImplementedError

    @property
    def input_field(self) -> str:
        """The column every row must have (the file runner names the rows that lack it)."""
        raise NotImplementedError  # pragma: no cover

    def error_result(self, error: str) -> dict[str, Any]:
        """The result columns of a row that could not be handled, ``error`` saying why."""
        return {name: None for name in self.result_columns()} | {"error": error}


def _rebuild(cls, config):
    return cls(**config)


class BatchParser(_Mapper):
    """Parse a column of model outputs (text, or token ids with ``tokenizer``) into result columns.

    ``format``: a format name. ``tools``: tool definitions (OpenAI, Anthropic or MCP dicts); when given, every
    output is validated against them (``tool_choice``), so ``tool_calls[].status`` is ``validated`` or
    ``rejected`` with ``error_codes``. ``field``: the text column (default ``model_output``); ``ids_field``:
    a column of token-id lists, parsed through ``tokenizer`` (a local tokenizer folder, or ``mistral:v7``...).
    ``thinking``: the prompt opened a reasoning block (a ``thinking`` column, when present, overrides it per
    row); ``limits``: a :class:`toolwire.Limits` or its fields as a dict; ``options``: other parse options
    (``promote_reasoning_calls``, family options).
    """

    _config_keys = ("format", "tools", "field", "ids_field", "thinking", "tokenizer", "limits", "tool_choice",
                    "options")

    def __init__(self, format: str, tools: Iterable[Any] | None = None, *, field: str = "model_output",
                 ids_field: str | None = None, thinking: bool = False, tokenizer: str | None = None,
                 limits: Any = None, tool_choice: Any = "auto", options: dict[str, Any] | None = None):
        get_format(format)  # an unknown name fails here, before any engine ships the mapper
        if ids_field and not tokenizer:
            raise InvalidOption("ids_field needs tokenizer= (a local tokenizer folder)", field="tokenizer")
        if tokenizer is not None and not isinstance(tokenizer, str):
            raise InvalidOption("tokenizer must be a path (loaded once per worker process), not a tokenizer object",
                                field="tokenizer")
        self.format, self.tools, self.field, self.ids_field = format, _plain_tools(tools), field, ids_field
        self.thinking, self.tokenizer, self.tool_choice = bool(thinking), tokenizer, tool_choice
        self.limits = limits if limits is None or isinstance(limits, dict) else vars(_limits(limits)).copy()
        self.options = dict(options or {})
        if self.tools is not None:  # validation needs jsonschema (toolwire[schema]): say so before any row
            from toolwire.dispatch.validation import _jsonschema

            _jsonschema()
        if tokenizer is not None:
            _tokenizer(tokenizer)  # a missing extra or folder fails here; forked workers reuse this load

    def result_columns(self) -> Sequence[str]:
        return RESULT_COLUMNS

    def result_schema(self):
        return arrow_schema()

    @property
    def input_field(self) -> str:
        return self.ids_field or self.field

    def error_result(self, error: str) -> dict[str, Any]:
        return error_row(error)

    def map_rows(self, columns: dict[str, list], n: int) -> list[dict[str, Any]]:
        source = self.ids_field or self.field
        if source not in columns:
            raise InvalidOption(f"the batch has no column {source!r} (columns: {sorted(columns)})", field=source)
        values, per_row_thinking = columns[source], columns.get("thinking")
        return [self.parse_one(values[i], None if per_row_thinking is None else per_row_thinking[i])
                for i in range(n)]

    def parse_one(self, value: Any, thinking: Any = None) -> dict[str, Any]:
        """The result columns of one output (text, or a list of token ids with ``ids_field``)."""
        if value is None:
            return error_row(_not_text(self.input_field, None))
        try:
            fmt = get_format(self.format)
            options = dict(self.options)
            if self.limits is not None:
                options["limits"] = _limits(self.limits)
            opened = self.thinking if thinking is None else bool(thinking)
            if self.ids_field:
                parser = fmt.stream(self.tools, thinking=opened, tokenizer=_tokenizer(self.tokenizer), **options)
                parser.feed(ids=_ids(value))
                output = parser.finish()
            else:
                if not isinstance(value, str):
                    return error_row(_not_text(self.field, value))
                output = fmt.parse(value, self.tools, thinking=opened, **options)
            if self.tools is not None:
                checks = {"limits": options["limits"]} if "limits" in options else {}
                output = output.validate(self.tools, tool_choice=self.tool_choice, **checks)
            return result_row(output)
        except Exception as exc:  # noqa: BLE001 - one bad row never stops the batch; its reason is kept
            return error_row(describe(exc))


class BatchRenderer(_Mapper):
    """Render a column of conversations into prompts (and token ids with ``tokenizer``).

    ``messages_field``: a column of message lists (or their JSON text); ``tools_field``: a column of per-row
    tool lists (or JSON text), else ``tools`` for every row; ``options``: render options (``thinking``,
    ``reasoning_effort``, ``add_generation_prompt``, family switches). Result columns: ``prompt``,
    ``opens_reasoning``, ``token_ids`` (with a tokenizer, else null) and ``error``.
    """

    _config_keys = ("format", "tools", "messages_field", "tools_field", "tokenizer", "options")
    _columns = ("prompt", "opens_reasoning", "token_ids", "error")

    def __init__(self, format: str, tools: Iterable[Any] | None = None, *, messages_field: str = "messages",
                 tools_field: str | None = None, tokenizer: str | None = None, options: dict[str, Any] | None = None):
        get_format(format)
        if tokenizer is not None and not isinstance(tokenizer, str):
            raise InvalidOption("tokenizer must be a path (loaded once per worker process), not a tokenizer object",
                                field="tokenizer")
        self.format, self.tools, self.messages_field = format, _plain_tools(tools), messages_field
        self.tools_field, self.tokenizer, self.options = tools_field, tokenizer, dict(options or {})
        if tokenizer is not None:
            _tokenizer(tokenizer)  # a missing extra or folder fails here; forked workers reuse this load

    def result_columns(self) -> Sequence[str]:
        return self._columns

    def result_schema(self):
        import pyarrow as pa

        return pa.schema([("prompt", pa.string()), ("opens_reasoning", pa.bool_()),
                          ("token_ids", pa.list_(pa.int64())), ("error", pa.string())])

    @property
    def input_field(self) -> str:
        return self.messages_field

    def map_rows(self, columns: dict[str, list], n: int) -> list[dict[str, Any]]:
        if self.messages_field not in columns:
            raise InvalidOption(f"the batch has no column {self.messages_field!r} (columns: {sorted(columns)})",
                                field=self.messages_field)
        messages, tools = columns[self.messages_field], columns.get(self.tools_field) if self.tools_field else None
        return [self.render_one(messages[i], self.tools if tools is None else tools[i]) for i in range(n)]

    def render_one(self, messages: Any, tools: Any = None) -> dict[str, Any]:
        """The result columns of one conversation."""
        if messages is None:
            return self.error_result(_not_text(self.messages_field, None).replace(", not text", ""))
        try:
            prompt = get_format(self.format).render(_json_value(messages), _json_value(tools), **self.options)
            ids = prompt.token_ids(_tokenizer(self.tokenizer)) if self.tokenizer else None
            return {"prompt": prompt.text, "opens_reasoning": prompt.opens_reasoning, "token_ids": ids, "error": None}
        except Exception as exc:  # noqa: BLE001 - one bad row never stops the batch
            return {"prompt": None, "opens_reasoning": None, "token_ids": None, "error": describe(exc)}


# ---- batch kinds

def _columns(batch: Any) -> tuple[str, dict[str, list]]:
    if isinstance(batch, dict):
        return "dict", {k: list(v) if not isinstance(v, list) else v for k, v in batch.items()}
    module = type(batch).__module__
    if module.startswith("pyarrow"):
        return "arrow", batch.to_pydict()
    if module.startswith("pandas"):
        return "pandas", {k: batch[k].tolist() for k in batch.columns}
    if hasattr(batch, "keys") and hasattr(batch, "__getitem__"):  # datasets' LazyBatch and other mappings
        return "dict", {k: list(batch[k]) for k in batch.keys()}
    raise InvalidOption(f"a batch is a dict of columns, a pyarrow.Table or a pandas.DataFrame, not "
                        f"{type(batch).__name__}", field="batch")


def _as_kind(kind: str, columns: dict[str, list], mapper: _Mapper, original: Any) -> Any:
    if kind == "dict":
        return columns
    if kind == "arrow":
        import pyarrow as pa

        schema = pa.schema(list(original.schema) + list(mapper.result_schema()))
        return pa.Table.from_pydict(columns, schema=schema)
    import pandas as pd

    return pd.DataFrame(columns)


def _not_text(field: str, value: Any) -> str:
    """The error of a row whose text column holds no text: a null is named as missing, not as a type."""
    if value is None:
        return f"missing_field: the {field!r} value is missing (null)"
    return f"not_text: the {field!r} value is {type(value).__name__}, not text"


def _ids(value: Any) -> list[int]:
    if isinstance(value, str):
        raise TypeError("token ids must be a list of integers, not text")
    return [int(v) for v in value]


def _json_value(value: Any) -> Any:
    """A column value that may be JSON text (``messages`` written to a file) or already a list."""
    if isinstance(value, str):
        return json.loads(value)
    if value is not None and type(value).__module__.startswith("numpy"):
        return value.tolist()
    return value
