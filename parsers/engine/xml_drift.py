"""Drift recoveries of the XML-bodied families (issue 33): their codes, and the checks they share.

Each recovery is one diagnostic code registered with its class in :data:`~.drift.DRIFT_CODES` (see
:mod:`.drift`); a parser takes it only when the declared tools make the reading unambiguous, and otherwise
leaves the text where it was with the same code at severity ``info`` (:func:`~.drift.refused_diagnostic`).
docs/variants.md ("Drift recovery (issue 33)") lists them per family, with how each streams.

A call whose tag words lost their angle brackets (``drift_lost_brackets``) is read in
:mod:`.xml_drift_brackets`; a Python call ``NAME(k=v)`` as a wrapper's whole body (``drift_python_call``) by
:func:`python_call`, with the JSON group's keyword-literal reader (:mod:`.drift_json`).

Every recovery here is decided before the stream sends anything it would change: the text it reads is held
back (a call head up to its ``>``, a body up to ``</function>``, whitespace up to a possible closer), so a
stream never takes back what it sent and every chunking gives the one-shot result.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from .drift import GLUED_NAME, MISSING_CALL_WRAPPER, NAME_WHITESPACE, PYTHON_CALL, DeclaredTools, Drift, register
from .drift_python import PYTHON_CALL_SHAPE, python_call_arguments
from .safe_json import loads

ORPHAN_CALL_CLOSER = "drift_orphan_call_closer"
"""The ``</tool_call>`` closing a call whose ``<tool_call>`` was missing: dropped, not left in the content."""
FUNCTION_SPACE = "drift_function_space"
"""``<function NAME>`` (a space for the ``=``) inside a call block."""
PARAMETER_ATTRIBUTE = "drift_parameter_attribute"
"""``<parameter name="KEY">`` (MiniMax's attribute style) inside a Qwen ``<function=NAME>`` call."""
JSON_BODY = "drift_json_body"
"""A ``<function=NAME>`` call whose body is one JSON object of arguments instead of ``<parameter=...>`` tags."""
JSON_CALL = "drift_json_call"
"""A call block holding a Hermes-style JSON call, ``{"name": ..., "arguments": {...}}`` (``args`` /
``parameters`` for ``arguments`` too), instead of ``<function=NAME>``: the Qwen3 JSON shape in Qwen3-Coder's
block."""
STRAY_CLOSER = "drift_stray_closer"
"""GLM: a closing tag glued to the name, ``<tool_call>NAME</arg_value></tool_call>`` (GLM 5.x no-argument calls,
a public report): the name without it."""

PARAMETER_CLOSE = "drift_parameter_close"
"""A damaged parameter closing tag: ``</parameter`` with a short tail in place of its ``>`` (``</parameter1>``,
``</parameter/>``, ``</parameter_function>``, or none), followed by what a closing tag is followed by (Qwen3.6,
sglang#27336): the value ends before it."""
NAME_BRACKET = "drift_name_bracket"
"""``<function=NAME`` / ``<parameter=KEY`` with its ``>`` missing, the name ended by a newline (vllm#39771): the
declared name before the newline."""

register(Drift.MISSING_MARKERS, ORPHAN_CALL_CLOSER)
register(Drift.DAMAGED_DELIMITERS, PARAMETER_CLOSE)
register(Drift.DAMAGED_NAME, NAME_BRACKET)
register(Drift.BORROWED_SHAPE, FUNCTION_SPACE, PARAMETER_ATTRIBUTE, JSON_BODY, JSON_CALL)
register(Drift.DAMAGED_NAME, STRAY_CLOSER)

NO_TOOLS = "no tools were declared"

STARTED_UNVERIFIED = frozenset((MISSING_CALL_WRAPPER, FUNCTION_SPACE, PARAMETER_ATTRIBUTE, NAME_WHITESPACE, GLUED_NAME,
                                STRAY_CLOSER, NAME_BRACKET))
"""Recoveries that start a call (or add an argument) before its arguments are complete: a streamed call must
start once its name is known, so these check the arguments when the call ends (:func:`off_schema`)."""
ARGUMENTS_OFF_SCHEMA = "drift_arguments_off_schema"
"""A call recovered from drift whose arguments, once complete, do not fit its tool's schema: ``rejected`` (the
call's text stays in its ``raw_arguments``). Not a recovery itself, so not in ``DRIFT_CODES``."""


def off_schema(tools: Iterable[Any] | None, name: str, arguments: Any) -> bool:
    """Whether a recovered call's complete arguments fail its declared tool's schema (see :func:`DeclaredTools.
    arguments_fit`)."""
    known = declared(tools)
    return known is not None and not known.arguments_fit(name, arguments)


def declared(tools: Iterable[Any] | None) -> DeclaredTools | None:
    """The declared tools as a recovery reads them (None: none declared, no recovery fires)."""
    return DeclaredTools.of(tools)


ARGUMENT_KEYS = ("arguments", "args", "parameters")
"""The keys a JSON call's arguments come under: the format's own, and the two borrowed spellings models write."""


def json_call(tools: Iterable[Any] | None, text: str, *, max_depth: int, max_bytes: int
              ) -> tuple[tuple[str, dict] | None, str | None]:
    """``((name, arguments), None)`` when ``text`` is one JSON object ``{"name": N, K: {...}}`` (``K`` one of
    :data:`ARGUMENT_KEYS`, the arguments an object or a JSON string of one) whose name is a declared tool and
    whose arguments fit its schema; ``(None, why not)`` when it is such an object but not recovered;
    ``(None, None)`` when ``text`` is no such object (the recovery does not apply)."""
    body = text.strip(" \t\r\n")
    if not (body.startswith("{") and body.endswith("}")):
        return None, None
    try:
        value = loads(body, max_depth=max_depth, max_bytes=max_bytes)
    except ValueError:
        return None, None
    keys = [k for k in ARGUMENT_KEYS if isinstance(value, dict) and k in value]
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or len(keys) > 1 \
            or set(value) - {"name", *keys}:
        return None, None
    arguments = value[keys[0]] if keys else {}
    if isinstance(arguments, str):
        try:
            arguments = loads(arguments, max_depth=max_depth, max_bytes=max_bytes)
        except ValueError:
            return None, "the arguments string is not JSON"
    known = declared(tools)
    if known is None:
        return None, NO_TOOLS
    name = value["name"]
    if name not in known.names:
        return None, f"{name!r} is not a declared tool"
    if not known.arguments_fit(name, arguments):
        return None, f"the arguments do not fit {name!r}"
    return (name, arguments), None


def python_call(tools: Iterable[Any] | None, text: str, *, max_depth: int, max_bytes: int | None
                ) -> tuple[tuple[str, dict] | None, str | None]:
    """``((name, arguments), None)`` when ``text`` is one Python call ``NAME(k=v, ...)`` (keyword arguments whose
    values are literals, never evaluated: :mod:`.drift_python`, the reader the JSON group uses too) of a declared tool whose
    arguments fit its schema; ``(None, why not)`` when it has that shape but is not recovered (positional or
    non-literal arguments, an undeclared name, arguments off the schema, no tools); ``(None, None)`` when ``text``
    is no Python call (the recovery does not apply)."""
    found = PYTHON_CALL_SHAPE.fullmatch(text.strip(" \t\r\n"))
    if found is None:
        return None, None
    known = declared(tools)
    if known is None:
        return None, NO_TOOLS
    arguments = python_call_arguments(found.group(2), max_depth=max_depth, max_bytes=max_bytes)
    if arguments is None:
        return None, "the call's arguments are not keyword literals"
    name = found.group(1)
    if name not in known.names:
        return None, f"{name!r} is not a declared tool"
    if not known.arguments_fit(name, arguments):
        return None, f"the arguments do not fit {name!r}"
    return (name, arguments), None


PYTHON_START = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,255}[ \t]*\(")
"""The start of a Python call ``NAME(``: a head that may go on to be one (GLM holds it to ``</tool_call>``)."""


def stray_closer_name(tools: Iterable[Any] | None, head: str, closers: Iterable[str]) -> tuple[str | None, str | None]:
    """``(declared name, None)`` when ``head`` is a declared name followed by one of ``closers`` (a closing tag
    glued to it: ``NAME</arg_value>``); ``(None, why not)`` when it has that shape but is not recovered;
    ``(None, None)`` when it has not."""
    for closer in closers:
        if head.endswith(closer) and len(head) > len(closer):
            name = head[:-len(closer)].rstrip()
            if not name or any(ch in "<>\n" for ch in name):
                return None, None
            known = declared(tools)
            if known is None:
                return None, NO_TOOLS
            return (name, None) if name in known.names else (None, f"{name!r} is not a declared tool")
    return None, None


def spaced(marker: str) -> str:
    """The opener ``marker`` (``<function=``) with a space for its final ``=`` (``<function ``)."""
    return marker[:-1] + " " if marker.endswith("=") else marker + " "


def attribute_opener(marker: str) -> str:
    """The attribute-style spelling of a ``<parameter=`` opener: ``<parameter name="``."""
    return marker.rstrip("=") + ' name="'


def whitespace_name(tools: Iterable[Any] | None, written: str) -> tuple[str | None, str | None]:
    """``(declared name, None)`` when ``written`` is a declared name followed by whitespace (and not itself
    declared); ``(None, why not)`` when it has such whitespace but is not recovered; ``(None, None)`` when the
    recovery does not apply (no trailing whitespace, or ``written`` is declared as written). Leading whitespace
    is not this drift (models write it after a damaged opener): such a name is matched exactly."""
    name = written.rstrip()
    if written == name or not name or name != name.lstrip():
        return None, None
    known = declared(tools)
    if known is None:
        return None, NO_TOOLS
    if written in known.names:
        return None, None
    return (name, None) if name in known.names else (None, f"{name!r} is not a declared tool")


__all__ = ["ARGUMENTS_OFF_SCHEMA", "ARGUMENT_KEYS", "FUNCTION_SPACE", "GLUED_NAME", "JSON_BODY", "JSON_CALL",
           "MISSING_CALL_WRAPPER", "NAME_BRACKET", "NAME_WHITESPACE", "NO_TOOLS", "ORPHAN_CALL_CLOSER",
           "PARAMETER_ATTRIBUTE", "PARAMETER_CLOSE",
           "PYTHON_CALL", "PYTHON_START", "STARTED_UNVERIFIED", "STRAY_CLOSER", "attribute_opener", "declared",
           "json_call", "off_schema", "python_call", "spaced", "stray_closer_name", "whitespace_name"]
