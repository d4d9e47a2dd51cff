"""A parse result as Arrow-friendly columns: one row per output, the same column types in every row.

Columns (all nullable only where said):

* ``content``, ``reasoning``: strings (null when the row failed);
* ``tool_calls``: a list of structs ``{index, id, name, arguments, raw_arguments, status, source,
  error_codes, diagnostic_codes}``; ``arguments`` is JSON text (the call's ``arguments_json()``), because
  argument shapes differ from call to call and Arrow needs one type per column;
* ``num_tool_calls``: int;
* ``status``: the row's outcome, the first that applies of ``error`` (the row could not be parsed),
  ``truncated`` (the output ended inside a call or a reasoning block: a validated call the output cut off is
  ``rejected`` with the error code ``truncated``, and the row is ``truncated`` all the same, with or without
  tools), ``rejected``, ``repaired`` (some call), ``called`` (every call clean), ``no_call``;
* ``finish_reason``: ``tool_calls`` / ``stop`` / ``length``, as the OpenAI adapter says;
* ``diagnostics``: a list of structs ``{code, severity, message, raw, call_index}``, the output's and every
  call's, in order (``raw`` and ``call_index`` nullable);
* ``error``: null, or ``"<code or exception type>: <message>"`` for a row that could not be parsed.
"""

from __future__ import annotations

from typing import Any

from toolwire.output import ParsedOutput

RESULT_COLUMNS = ("content", "reasoning", "tool_calls", "num_tool_calls", "status", "finish_reason",
                  "diagnostics", "error")

_STATUS_ORDER = ("rejected", "repaired")


def row_status(output: ParsedOutput) -> str:
    """The row's outcome word (see the module doc): the same word whether or not the calls were validated."""
    statuses = {c.status for c in output.tool_calls}
    if output.truncated or "truncated" in statuses or any(
            e.code == "truncated" for c in output.tool_calls for e in c.errors):
        return "truncated"
    for status in _STATUS_ORDER:
        if status in statuses:
            return status
    return "called" if statuses else "no_call"


def call_struct(call: Any) -> dict[str, Any]:
    return {
        "index": call.index, "id": call.id, "name": call.name, "arguments": call.arguments_json(),
        "raw_arguments": call.raw_arguments, "status": call.status, "source": call.source,
        "error_codes": [e.code for e in call.errors], "diagnostic_codes": [d.code for d in call.diagnostics],
    }


def diagnostic_struct(diag: Any, call_index: int | None = None) -> dict[str, Any]:
    index = diag.call_index if diag.call_index is not None else call_index
    return {"code": diag.code, "severity": diag.severity, "message": diag.message, "raw": diag.raw,
            "call_index": index}


def result_row(output: ParsedOutput) -> dict[str, Any]:
    """The result columns of one parsed (and maybe validated) output."""
    diagnostics = [diagnostic_struct(d) for d in output.diagnostics]
    for call in output.tool_calls:
        diagnostics.extend(diagnostic_struct(d, call.index) for d in call.diagnostics)
    return {
        "content": output.content, "reasoning": output.reasoning,
        "tool_calls": [call_struct(c) for c in output.tool_calls], "num_tool_calls": len(output.tool_calls),
        "status": row_status(output), "finish_reason": output.finish_reason(), "diagnostics": diagnostics,
        "error": None,
    }


def error_row(error: str) -> dict[str, Any]:
    """The result columns of a row that could not be parsed: nothing invented, the reason kept."""
    return {"content": None, "reasoning": None, "tool_calls": [], "num_tool_calls": 0, "status": "error",
            "finish_reason": None, "diagnostics": [], "error": error}


def describe(exc: BaseException) -> str:
    """``"<code>: <message>"`` for a toolwire error, ``"<ExceptionType>: <message>"`` otherwise."""
    return f"{getattr(exc, 'code', None) or type(exc).__name__}: {exc}"


def arrow_schema(extra: Any = None):
    """The pyarrow schema of the result columns (``extra``: fields to put first, e.g. the input's)."""
    import pyarrow as pa

    call = pa.struct([("index", pa.int64()), ("id", pa.string()), ("name", pa.string()),
                      ("arguments", pa.string()), ("raw_arguments", pa.string()), ("status", pa.string()),
                      ("source", pa.string()), ("error_codes", pa.list_(pa.string())),
                      ("diagnostic_codes", pa.list_(pa.string()))])
    diagnostic = pa.struct([("code", pa.string()), ("severity", pa.string()), ("message", pa.string()),
                            ("raw", pa.string()), ("call_index", pa.int64())])
    fields = [("content", pa.string()), ("reasoning", pa.string()), ("tool_calls", pa.list_(call)),
              ("num_tool_calls", pa.int64()), ("status", pa.string()), ("finish_reason", pa.string()),
              ("diagnostics", pa.list_(diagnostic)), ("error", pa.string())]
    return pa.schema(list(extra or []) + [pa.field(n, t) for n, t in fields])
