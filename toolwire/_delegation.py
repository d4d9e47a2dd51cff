"""Where the convenience methods of :mod:`toolwire.output` (``ToolCallCandidate.validate``, ``fingerprint``,
``to_error_result``; ``ParsedOutput.validate``, ``to_openai_message``, ``finish_reason``; ``toolwire.ToolResult``'s
schema check and candidate errors) find the functions they delegate to in ``toolwire.dispatch`` and
``toolwire.integrations.openai``.

Core never imports those packages (they import core): ``toolwire/__init__.py`` registers a binder here with
:func:`set_binder`, and the first delegated call runs it, so ``import toolwire`` imports neither package (nor
builds their pydantic models). This module imports nothing.
"""

from __future__ import annotations

from typing import Any, Callable

_DELEGATES: dict[str, Callable[..., Any]] = {}
_BINDER: list[Callable[[], None]] = []


def bind(**functions: Callable[..., Any]) -> None:
    """Bind the functions the convenience methods delegate to."""
    _DELEGATES.update(functions)


def set_binder(binder: Callable[[], None]) -> None:
    """Register what binds the delegates (called with no arguments, once, on the first delegated call)."""
    _BINDER[:] = [binder]


def delegate(name: str) -> Callable[..., Any]:
    """The function bound under ``name`` (running the registered binder first, if nothing is bound yet)."""
    if name not in _DELEGATES and _BINDER:
        _BINDER[0]()
    try:
        return _DELEGATES[name]
    except KeyError:
        raise RuntimeError(f"toolwire.output: {name} is not bound (import toolwire first)") from None
