"""Typed tool results: what the dispatch core hands back, as the model will read it.

A :class:`ToolResult` is one envelope for the four outcomes of a call:

* ``success``: the tool ran; ``data`` is what it returned (``None`` with a ``note`` for an empty result: "no
  hits, and why", never an empty string standing for failure);
* ``failure``: a business failure (the tool ran and said no: do not retry, explain to the user);
* ``error``: a repairable error (the call was wrong or the tool was briefly unavailable: retryable, with
  structured details);
* ``unknown``: the outcome is not known (a timeout): the side effect may have happened, so the call must not
  be repeated before it is reconciled (checked with another tool).

:meth:`ToolResult.envelope` is the JSON object the model reads and :meth:`ToolResult.to_tool_message` the Chat
Completions tool message every renderer takes (``Format.render`` also takes a ToolResult directly). The
``artifact`` stays with the caller and never reaches the prompt. :meth:`ToolResult.from_mcp` converts an MCP
``CallToolResult`` (MCP specification 2025-11-25: text, image, audio, ``resource_link`` and embedded
``resource`` blocks, ``structuredContent``, ``isError``); images and audio travel as content parts the
family puts in its own media slot (docs/tool-results.md has the table).

Bounds: ``Limits.max_result_chars`` keeps the head and the tail of a long result around one deterministic
line, ``[truncated: N characters omitted; full result: REF]`` (:func:`bound_text`), and sets
``meta.truncated`` in the envelope.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

from .errors import InvalidToolResult, ToolwireError, UnrepresentableValue
from .request_values import check_json_value

ResultStatus = Literal["success", "failure", "error", "unknown"]
SideEffect = Literal["none", "reversible", "irreversible"]
MediaKind = Literal["image", "audio"]

MCP_SPEC_VERSION = "2025-11-25"
"""The MCP specification revision :meth:`ToolResult.from_mcp` follows (its ``CallToolResult``)."""

UNKNOWN_OUTCOME = "outcome_unknown"
"""``error.type`` of an unknown outcome."""

ENVELOPE_HEAD = '{"ok": '
"""How every envelope's JSON text starts (``json.dumps`` of :meth:`ToolResult.envelope`): what
:func:`read_envelope` looks for before parsing."""

_MEDIA_PART_TYPE = {"image": "image", "audio": "audio"}


class ResultError(BaseModel):
    """Why a result is not a success: ``type`` (a stable word: ``not_found``, ``permission_denied``,
    ``timeout`` ...), ``message`` for the model, ``retryable`` and structured ``details``."""

    model_config = ConfigDict(frozen=True)

    type: str
    message: Optional[str] = None
    retryable: bool = False
    details: Any = None


class ResultMeta(BaseModel):
    """Where a result comes from: the ``tool`` (and its ``version``), the ``call_id`` it answers, how long the
    call took, whether the text was ``truncated`` and the ``reference`` (a URI, a key) where the caller keeps the
    whole result, named in the truncation line."""

    model_config = ConfigDict(frozen=True)

    tool: Optional[str] = None
    version: Optional[str] = None
    call_id: Optional[str] = None
    duration_ms: Optional[Union[int, float]] = None
    truncated: bool = False
    reference: Optional[str] = None


class Media(BaseModel):
    """An image or audio clip a result carries (an MCP ``image`` / ``audio`` block): base64 ``data`` with its
    ``mime_type``; ``block`` is the index of the MCP content block it came from."""

    model_config = ConfigDict(frozen=True)

    kind: MediaKind
    mime_type: str
    data: str
    block: Optional[int] = None

    def part(self) -> dict[str, Any]:
        """The content part the renderers read: ``{"type": "image", "image": "data:<mime>;base64,<data>"}`` (or
        ``audio``), the shape chat templates take media in."""
        return {"type": self.kind, self.kind: f"data:{self.mime_type};base64,{self.data}"}


class ToolResult(BaseModel):
    """One call's outcome, typed (see the module doc). Build it with :meth:`success`, :meth:`failure`,
    :meth:`unknown`, :meth:`from_mcp` or :meth:`from_candidate`; they check every field and name the bad one
    in an :class:`~toolwire.errors.InvalidToolResult`.

    ``data`` (any JSON value), ``text`` (unstructured text, as an MCP result's text blocks), ``note`` (why the
    data is empty, or what to do), ``error``, ``meta``, ``evidence`` (any JSON the model may cite: sources,
    record ids), ``side_effect`` (``none``, ``reversible``, ``irreversible``: given explicitly, or, for an unknown
    outcome, taken from ``tool``), ``reconcile_with`` (the tools that check an unknown outcome), ``media`` (images
    and audio) reach the model; ``artifact`` (anything: the raw response, a file, a secret) never does."""

    model_config = ConfigDict(frozen=True)

    status: ResultStatus
    data: Any = None
    text: Optional[str] = None
    note: Optional[str] = None
    error: Optional[ResultError] = None
    meta: ResultMeta = Field(default_factory=ResultMeta)
    evidence: Any = None
    side_effect: Optional[SideEffect] = None
    reconcile_with: list[str] = Field(default_factory=list)
    media: list[Media] = Field(default_factory=list)
    artifact: Any = Field(default=None, repr=False)

    # ---- what the model reads
    @property
    def ok(self) -> bool:
        """True for a success."""
        return self.status == "success"

    def envelope(self) -> dict[str, Any]:
        """The JSON object the model reads: ``ok``, ``status``, ``meta``, then ``error``, ``note``,
        ``reconcile_with``, ``side_effect``, ``evidence``, ``text`` where set, and ``data`` last (a success always
        has it, ``null`` when empty). ``meta.truncated`` appears only when true. Never holds the artifact."""
        meta = {k: v for k, v in (("tool", self.meta.tool), ("version", self.meta.version),
                                  ("call_id", self.meta.call_id), ("duration_ms", self.meta.duration_ms))
                if v is not None}
        if self.meta.truncated:
            meta["truncated"] = True
        if self.meta.reference is not None:
            meta["reference"] = self.meta.reference
        out: dict[str, Any] = {"ok": self.ok, "status": self.status, "meta": meta}
        if self.error is not None:
            error: dict[str, Any] = {"type": self.error.type}
            if self.error.message is not None:
                error["message"] = self.error.message
            error["retryable"] = self.error.retryable
            if self.error.details is not None:
                error["details"] = self.error.details
            out["error"] = error
        for key in ("note", "side_effect", "evidence", "text"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
            if key == "note" and self.reconcile_with:
                out["reconcile_with"] = list(self.reconcile_with)
        if self.status == "success" or self.data is not None:
            out["data"] = self.data
        return out

    def envelope_text(self) -> str:
        """The envelope as JSON text (``json.dumps``, non-ASCII kept): the tool message's text."""
        return json.dumps(self.envelope(), ensure_ascii=False)

    def bounded(self, max_chars: int | None, reference: str | None = None) -> tuple["ToolResult", str]:
        """This result and its text within ``max_chars`` characters (plus the truncation line): unchanged when
        it fits or ``max_chars`` is None; otherwise ``meta.truncated`` set and the text cut by :func:`bound_text`
        around a line naming ``reference`` (default: ``meta.reference``)."""
        text = self.envelope_text()
        if max_chars is None or len(text) <= max_chars:
            return self, text
        reference = reference if reference is not None else self.meta.reference
        marked = self.model_copy(update={"meta": self.meta.model_copy(update={"truncated": True,
                                                                              "reference": reference})})
        return marked, bound_text(marked.envelope_text(), max_chars, reference)

    def to_tool_message(self, *, limits: Any = None, reference: str | None = None) -> dict[str, Any]:
        """The Chat Completions tool message: ``{"role": "tool", "tool_call_id", "content"}``. ``content`` is the
        envelope's JSON text, or, when the result carries media, a list: that text as a ``text`` part, then one
        ``image`` / ``audio`` part per medium (the family renders them in its media slot, or refuses them by
        name). ``limits`` (:class:`toolwire.Limits`) bounds the text by its ``max_result_chars``."""
        max_chars = getattr(limits, "max_result_chars", None) if limits is not None else None
        _, text = self.bounded(max_chars, reference)
        content: Any = text
        if self.media:
            content = [{"type": "text", "text": text}, *(m.part() for m in self.media)]
        return {"role": "tool", "tool_call_id": self.meta.call_id, "content": content}

    # ---- constructors
    @classmethod
    def success(cls, call: Any, data: Any = None, *, note: str | None = None, text: str | None = None,
                evidence: Any = None, artifact: Any = None, side_effect: str | None = None,
                duration_ms: float | None = None, version: str | None = None, reference: str | None = None,
                tool: Any = None, output_schema: Any = None) -> "ToolResult":
        """The tool ran and returned ``data`` (any JSON value; ``None`` with a ``note`` for an empty result).
        ``call`` is the call answered: a :class:`toolwire.ToolCallCandidate`, an OpenAI tool-call dict or a
        :class:`toolwire.ToolCall`. ``tool`` (a :class:`toolwire.ToolSpec` or an MCP tool definition) supplies
        the version, side effect and ``output_schema`` (which ``data`` is checked against when given)."""
        info = _call_info(call, tool, version)
        schema = output_schema if output_schema is not None else _tool_field(tool, "output_schema", "outputSchema")
        data = _json_value(data, "data")
        if schema is not None:
            _check_schema(data, schema, "data")
        return cls._build("success", info, data=data, note=_text(note, "note"), text=_text(text, "text"),
                          evidence=_json_value(evidence, "evidence"), artifact=artifact,
                          side_effect=_side_effect(side_effect, None), duration_ms=duration_ms, reference=reference)

    @classmethod
    def failure(cls, call: Any, error_type: str, message: str, *, retryable: bool = False, details: Any = None,
                evidence: Any = None, artifact: Any = None, side_effect: str | None = None,
                duration_ms: float | None = None, version: str | None = None, reference: str | None = None,
                tool: Any = None) -> "ToolResult":
        """The call did not succeed. ``retryable=False`` (default) is a business failure (status ``failure``: the
        tool said no; do not retry, explain); ``retryable=True`` is a repairable error (status ``error``: fix the
        call, or try again). ``error_type`` is a stable word, ``message`` tells the model what happened and what
        to do, ``details`` is any JSON (field errors ...)."""
        info = _call_info(call, tool, version)
        if not isinstance(error_type, str) or not error_type:
            raise InvalidToolResult(f"must be a non-empty string, got {error_type!r}", field="error.type")
        if not isinstance(retryable, bool):
            raise InvalidToolResult(f"must be true or false, got {retryable!r}", field="error.retryable")
        error = ResultError(type=error_type, message=_text(message, "error.message"), retryable=retryable,
                            details=_json_value(details, "error.details"))
        return cls._build("error" if retryable else "failure", info, error=error,
                          evidence=_json_value(evidence, "evidence"), artifact=artifact,
                          side_effect=_side_effect(side_effect, None), duration_ms=duration_ms, reference=reference)

    @classmethod
    def unknown(cls, call: Any, *, reason: str, reconcile_with: Any = None, side_effect: str | None = None,
                evidence: Any = None, artifact: Any = None, duration_ms: float | None = None,
                version: str | None = None, tool: Any = None) -> "ToolResult":
        """The outcome is not known (a timeout, a lost connection): the side effect may already have happened.
        The text tells the model so, not to repeat the call, and which tool(s) of ``reconcile_with`` (a name or
        a list) to check with first. ``plan()`` warns ``retry_after_unknown`` when a later step repeats the call
        without such a check."""
        info = _call_info(call, tool, version)
        reason = _text(reason, "reason")
        if not reason:
            raise InvalidToolResult("must say why the outcome is unknown (e.g. 'timed out after 30 s')",
                                    field="reason")
        names = [reconcile_with] if isinstance(reconcile_with, str) else list(reconcile_with or [])
        for n, name in enumerate(names):
            if not isinstance(name, str) or not name:
                raise InvalidToolResult(f"must be a tool name, got {name!r}", field=f"reconcile_with[{n}]")
        tool_name = info[1] or "this tool"
        check = (f"first check with {_or_list(names)} whether it took effect" if names else
                 "first find out whether it took effect (a tool that reads the state, or the user)")
        message = (f"The outcome of {tool_name} is unknown: {reason}. Its side effect may already have happened. "
                   f"Do not call {tool_name} again with these arguments; {check}.")
        error = ResultError(type=UNKNOWN_OUTCOME, message=message, retryable=False)
        return cls._build("unknown", info, error=error, reconcile_with=names, evidence=_json_value(evidence, "evidence"),
                          artifact=artifact, side_effect=_side_effect(side_effect, tool), duration_ms=duration_ms)

    @classmethod
    def from_candidate(cls, candidate: Any) -> "ToolResult":
        """The error result of a rejected (or truncated) candidate: ``error.type`` is its first error code,
        ``retryable`` true when every error is (status ``error``, else ``failure``), ``details`` every error.
        A candidate that was not validated is described from what the parser saw. (What
        ``ToolCallCandidate.to_error_result()`` returns, as an envelope.)"""
        errors = candidate.errors
        if not errors and candidate.status in ("rejected", "truncated"):
            from toolwire.dispatch.validation import parser_errors

            errors = parser_errors(candidate)
        if not errors:
            raise ToolwireError(f"call {candidate.index} ({candidate.name!r}) is {candidate.status} and has no error "
                                "to report")
        retryable = all(e.retryable for e in errors)
        error = ResultError(type=errors[0].code, retryable=retryable,
                            details=[e.model_dump(mode="json") for e in errors])
        info = (candidate.id, candidate.name, candidate.tool_version)
        return cls._build("error" if retryable else "failure", info, error=error)

    @classmethod
    def from_mcp(cls, result: Any, call: Any, *, tool: Any = None, output_schema: Any = None,
                 retryable: bool = False, duration_ms: float | None = None, version: str | None = None,
                 reference: str | None = None, artifact: Any = None) -> "ToolResult":
        """An MCP ``CallToolResult`` (the ``mcp`` SDK's object or its dict), MCP specification 2025-11-25:

        * ``text`` blocks are joined (one per line) into ``text``;
        * ``structuredContent`` is ``data`` (checked against the tool's ``outputSchema`` when ``tool`` or
          ``output_schema`` declares one); a text block that only repeats it as JSON is not repeated;
        * a ``resource_link`` becomes a line with its name, uri, type and description; an embedded text
          ``resource`` its uri and type, then its text; a blob resource a reference (uri, type, size), never the
          bytes;
        * ``image`` and ``audio`` blocks become :class:`Media` the family renders in its media slot (a line in the
          text, ``[image 1 (image/png) attached]``, stands where each block was);
        * ``isError: true`` is the failure envelope (``error.type`` ``tool_error``, the text as its message;
          ``retryable`` says whether repeating can help).

        A block of an unknown type, a missing field or structured content the schema refuses raises an
        :class:`~toolwire.errors.InvalidToolResult` naming it (``content[2].type``)."""
        data = _mcp_dict(result)
        blocks = data.get("content", [])
        if not isinstance(blocks, list):
            raise InvalidToolResult(f"must be a list of content blocks, got {type(blocks).__name__}", field="content")
        structured = data.get("structuredContent")
        if structured is not None:
            structured = _json_value(structured, "structuredContent")
            if not isinstance(structured, dict):
                raise InvalidToolResult(f"must be a JSON object, got {type(structured).__name__}",
                                        field="structuredContent")
        is_error = data.get("isError", False)
        if not isinstance(is_error, bool):
            raise InvalidToolResult(f"must be true or false, got {is_error!r}", field="isError")
        lines, media = _mcp_blocks(blocks, structured)
        text = "\n".join(lines) if lines else None
        info = _call_info(call, tool, version)
        if is_error:
            error = ResultError(type="tool_error", message=text or "the tool reported an error", retryable=retryable,
                                details=structured)
            return cls._build("error" if retryable else "failure", info, error=error, media=media,
                              duration_ms=duration_ms, reference=reference, artifact=artifact)
        schema = output_schema if output_schema is not None else _tool_field(tool, "output_schema", "outputSchema")
        if schema is not None:
            if structured is None:
                raise InvalidToolResult("is missing, but the tool declares an outputSchema (MCP: a server MUST then "
                                        "return structured content that conforms to it)", field="structuredContent")
            _check_schema(structured, schema, "structuredContent")
        return cls._build("success", info, data=structured, text=text, media=media, duration_ms=duration_ms,
                          reference=reference, artifact=artifact)

    @classmethod
    def _build(cls, status: str, info: tuple, *, duration_ms: Any = None, reference: Any = None,
               **fields: Any) -> "ToolResult":
        call_id, tool, version = info
        if duration_ms is not None and (isinstance(duration_ms, bool) or not isinstance(duration_ms, (int, float))
                                        or not math.isfinite(duration_ms) or duration_ms < 0):
            raise InvalidToolResult(f"must be a non-negative number of milliseconds, got {duration_ms!r}",
                                    field="meta.duration_ms")
        if reference is not None and not isinstance(reference, str):
            raise InvalidToolResult(f"must be a string (a URI or key), got {type(reference).__name__}",
                                    field="meta.reference")
        meta = ResultMeta(tool=tool, version=version, call_id=call_id, duration_ms=duration_ms, reference=reference)
        return cls.model_construct(status=status, meta=meta, **{
            "data": None, "text": None, "note": None, "error": None, "evidence": None, "side_effect": None,
            "reconcile_with": [], "media": [], "artifact": None, **fields})


# ---- reading envelopes back (the plan reads tool messages that came through a client as text)

def read_envelope(text: Any, *, limit: int = 1 << 16) -> dict[str, Any] | None:
    """The envelope a tool message's text holds, or None: text that starts as :data:`ENVELOPE_HEAD` and parses as
    a JSON object with ``ok`` and ``status``. Texts longer than ``limit`` characters are not parsed (None)."""
    if text.__class__ is not str or not text.startswith(ENVELOPE_HEAD) or len(text) > limit:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) and "status" in value and "ok" in value else None


def bound_text(text: str, max_chars: int, reference: str | None = None) -> str:
    """``text`` within ``max_chars`` characters plus one line: unchanged when it fits, otherwise its first and last
    characters (half of ``max_chars`` each, the head taking the odd one) around
    ``\\n[truncated: N characters omitted; full result: REF]\\n`` (without ``; full result`` when no ``reference``
    is given). The cut never splits a surrogate pair, nor a ``\\uXXXX\\uXXXX`` escape of one in JSON text: the
    omitted part grows by the half pair instead. Deterministic: the same text and limit give the same output."""
    if len(text) <= max_chars:
        return text
    head_end = max_chars - max_chars // 2
    tail_start = len(text) - max_chars // 2
    head_end = _safe_cut(text, head_end, backwards=True)
    tail_start = _safe_cut(text, tail_start, backwards=False)
    omitted = tail_start - head_end
    where = f"; full result: {reference}" if reference else ""
    return f"{text[:head_end]}\n[truncated: {omitted} characters omitted{where}]\n{text[tail_start:]}"


def truncation_line(omitted: int, reference: str | None = None) -> str:
    """The line :func:`bound_text` puts between head and tail (without its newlines)."""
    where = f"; full result: {reference}" if reference else ""
    return f"[truncated: {omitted} characters omitted{where}]"


def _high(ch: str) -> bool:
    return "\ud800" <= ch <= "\udbff"


def _safe_cut(text: str, at: int, *, backwards: bool) -> int:
    """``at`` moved (towards the omitted middle) off the inside of a surrogate pair or a JSON escape of one."""
    if 0 < at < len(text) and _high(text[at - 1]) and "\udc00" <= text[at] <= "\udfff":
        at += -1 if backwards else 1
    # a "\ud83d\ude00" escape pair: 12 characters; move the cut off its inside
    window_start = max(0, at - 11)
    for start in range(window_start, at):
        piece = text[start:start + 12]
        if (len(piece) == 12 and piece[:2] == "\\u" and piece[6:8] == "\\u" and _is_escape(piece[2:6], 0xD800, 0xDBFF)
                and _is_escape(piece[8:12], 0xDC00, 0xDFFF) and start < at < start + 12):
            return start if backwards else start + 12
    return at


def _is_escape(digits: str, low: int, high: int) -> bool:
    try:
        return low <= int(digits, 16) <= high
    except ValueError:
        return False


# ---- helpers

def _call_info(call: Any, tool: Any, version: Any) -> tuple[str, str, str | None]:
    """``(call id, tool name, version)`` of the call a result answers (a candidate, an OpenAI tool-call dict or a
    ToolCall), checked."""
    if call is None:
        raise InvalidToolResult("is required: the call this result answers (a ToolCallCandidate or an OpenAI "
                                "tool-call dict)", field="call")
    if isinstance(call, dict):
        function = call.get("function")
        name = function.get("name") if isinstance(function, dict) else call.get("name")
        call_id = call.get("id", call.get("call_id"))
    else:
        fields = getattr(call, "__dict__", {})
        function = fields.get("function")
        name = getattr(function, "name", None) if function is not None else fields.get("name")
        call_id = fields.get("id")
        if version is None:
            version = fields.get("tool_version")
    if not isinstance(call_id, str) or not call_id:
        raise InvalidToolResult(f"must be a non-empty string (the id the result answers), got {call_id!r}",
                                field="call.id")
    if not isinstance(name, str) or not name:
        raise InvalidToolResult(f"must be the tool's name, got {name!r}", field="call.function.name")
    if version is None:
        version = _tool_field(tool, "version", "version")
    if version is not None and not isinstance(version, str):
        raise InvalidToolResult(f"must be a string, got {type(version).__name__}", field="meta.version")
    return call_id, name, version


def _tool_field(tool: Any, attribute: str, key: str) -> Any:
    """A field of ``tool``: a ToolSpec (or any object with that attribute) or a tool definition dict."""
    if tool is None:
        return None
    if isinstance(tool, dict):
        return tool.get(key)
    return getattr(tool, attribute, None)


def _side_effect(side_effect: Any, tool: Any) -> str | None:
    if side_effect is None and tool is not None:
        if isinstance(tool, dict):  # an MCP definition: its annotations
            annotations = tool.get("annotations") or {}
            if isinstance(annotations, dict) and annotations:
                side_effect = ("none" if annotations.get("readOnlyHint") else
                               "irreversible" if annotations.get("destructiveHint", True) else "reversible")
        else:
            side_effect = getattr(tool, "side_effect", None)
    if side_effect is not None and side_effect not in ("none", "reversible", "irreversible"):
        raise InvalidToolResult(f"must be 'none', 'reversible' or 'irreversible', got {side_effect!r}",
                                field="side_effect")
    return side_effect


def _text(value: Any, field: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidToolResult(f"must be a string, got {type(value).__name__}", field=field)
    return _json_value(value, field)


def _json_value(value: Any, field: str) -> Any:
    """``value`` when it is a JSON value (checked as request values are, NaN and infinities refused too), else an
    :class:`InvalidToolResult` naming ``field`` and the path inside it."""
    if value is None:
        return None
    try:
        check_json_value(value, field=field)
    except UnrepresentableValue as exc:
        raise InvalidToolResult(exc.detail, field=exc.field) from None
    bad = _non_finite(value)
    if bad is not None:
        raise InvalidToolResult(f"holds {bad[1]!r}, which is not a JSON number", field=field + bad[0])
    return value


def _non_finite(value: Any) -> tuple[str, float] | None:
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return path, item
        elif isinstance(item, dict):
            stack.extend((v, f"{path}.{k}") for k, v in item.items())
        elif isinstance(item, (list, tuple)):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(item))
    return None


def _check_schema(value: Any, schema: Any, field: str) -> None:
    """Refuse ``value`` that the output schema refuses, naming the first place (``structuredContent.items[0]``)."""
    from toolwire.dispatch.result_schema import check_output_schema

    problems = check_output_schema(value, schema)
    if problems:
        pointer, message = problems[0]
        path = "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in pointer.split("/")[1:]) if pointer else ""
        raise InvalidToolResult(f"does not match the tool's output schema: {message}", field=field + path)


def _or_list(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _mcp_dict(result: Any) -> dict[str, Any]:
    """An MCP CallToolResult as its wire dict (the SDK's pydantic object dumped by alias)."""
    if isinstance(result, dict):
        return result
    dump = getattr(result, "model_dump", None)
    if callable(dump):
        data = dump(by_alias=True, mode="json", exclude_none=True)
        if isinstance(data, dict):
            return data
    raise InvalidToolResult(f"must be an MCP CallToolResult (the mcp SDK's object or its dict), got "
                            f"{type(result).__name__}", field="result")


def _mcp_blocks(blocks: list, structured: Any) -> tuple[list[str], list[Media]]:
    """The text lines and media of MCP content blocks (see :meth:`ToolResult.from_mcp`)."""
    lines: list[str] = []
    media: list[Media] = []
    for n, block in enumerate(blocks):
        where = f"content[{n}]"
        if not isinstance(block, dict):
            raise InvalidToolResult(f"must be a content block object, got {type(block).__name__}", field=where)
        kind = block.get("type")
        if kind == "text":
            text = _required_text(block, "text", where)
            if structured is not None and _repeats(text, structured):
                continue  # the serialized structuredContent MCP asks servers to repeat as text: shown once, as data
            lines.append(text)
        elif kind in _MEDIA_PART_TYPE:
            data = _required_text(block, "data", where)
            mime = _required_text(block, "mimeType", where)
            _check_base64(data, f"{where}.data")
            media.append(Media(kind=kind, mime_type=mime, data=data, block=n))
            lines.append(f"[{kind} {len(media)} ({mime}) attached]")
        elif kind == "resource_link":
            uri = _required_text(block, "uri", where)
            name = _required_text(block, "name", where)
            facts = [_optional_text(block, "mimeType", where), _size(block.get("size"), f"{where}.size")]
            facts = [f for f in facts if f]
            line = f"[resource link: {block.get('title') or name} <{uri}>" + (f" ({', '.join(facts)})" if facts else "")
            description = _optional_text(block, "description", where)
            lines.append(line + (f": {description}]" if description else "]"))
        elif kind == "resource":
            resource = block.get("resource")
            if not isinstance(resource, dict):
                raise InvalidToolResult("must be an object with uri and text or blob", field=f"{where}.resource")
            inner = f"{where}.resource"
            uri = _required_text(resource, "uri", inner)
            mime = _optional_text(resource, "mimeType", inner)
            if "text" in resource:
                text = _required_text(resource, "text", inner)
                lines.append(f"[resource <{uri}>" + (f" ({mime})" if mime else "") + "]\n" + text)
            elif "blob" in resource:
                blob = _required_text(resource, "blob", inner)
                size = _check_base64(blob, f"{inner}.blob")
                lines.append(f"[resource <{uri}> ({mime or 'binary'}, {size:,} bytes): binary content, not shown]")
            else:
                raise InvalidToolResult("must hold text or blob", field=inner)
        else:
            raise InvalidToolResult(f"is {kind!r}, not an MCP {MCP_SPEC_VERSION} content block type (text, image, "
                                    "audio, resource_link, resource)", field=f"{where}.type")
    return lines, media


def _required_text(block: dict, key: str, where: str) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        raise InvalidToolResult(f"must be a string, got {type(value).__name__}", field=f"{where}.{key}")
    return _json_value(value, f"{where}.{key}")


def _optional_text(block: dict, key: str, where: str) -> str | None:
    return _required_text(block, key, where) if block.get(key) is not None else None


def _size(value: Any, field: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidToolResult(f"must be a byte count, got {value!r}", field=field)
    return f"{value:,} bytes"


def _check_base64(data: str, field: str) -> int:
    """The decoded size of base64 ``data`` (without decoding it all), refusing text that is not base64."""
    try:
        base64.b64decode(data[:4096] + "=" * (-len(data[:4096]) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise InvalidToolResult("is not base64 data", field=field) from None
    stripped = data.rstrip("=")
    return len(stripped) * 3 // 4


def _repeats(text: str, structured: Any) -> bool:
    """Whether ``text`` is only the JSON of ``structured``."""
    if not text.lstrip().startswith("{"):
        return False
    try:
        return json.loads(text) == structured
    except (ValueError, RecursionError):
        return False


__all__ = ["ToolResult", "ResultError", "ResultMeta", "Media", "ResultStatus", "MCP_SPEC_VERSION", "UNKNOWN_OUTCOME",
           "ENVELOPE_HEAD", "bound_text", "truncation_line", "read_envelope"]
