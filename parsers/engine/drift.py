"""Real-world drift: what a recovery may rely on, and how it is reported (issue 33).

Models write calls that drift from their template's format in a few classes (:class:`Drift`). A family parser
recovers such a call only when **the declared tools make it unambiguous**: the recovered name is declared, the
arguments fit its schema where one is declared, and no second reading fits. :class:`DeclaredTools` answers those
three questions; without declared tools there is nothing to check against and no recovery that needs them fires
(:meth:`DeclaredTools.of` returns None).

A recovered call has status ``repaired`` and a diagnostic whose code is the recovery (``DRIFT_CODES`` maps each
code to its class) and whose ``raw`` keeps the text the model wrote; :func:`drift_diagnostic` builds it. When a
recovery does not fire, the text stays where it was (content or reasoning) and the parser says why with the same
code at severity ``info`` (:func:`refused_diagnostic`). docs/variants.md lists every recovery per family.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Iterable, Mapping

from toolwire.output import Diagnostic

from .schema_coerce import json_type
from .tools import tool_names, tool_schemas


class Drift(str, Enum):
    """The classes of drift models really write (issue 33)."""

    MISSING_MARKERS = "missing_markers"
    """A wrapper opener or closer missing, angle brackets lost, special tokens stripped by a detokenizer, an orphan
    closer, a call left inside reasoning that never closed."""
    BORROWED_SHAPE = "borrowed_shape"
    """A neighbouring format's shape: ``<function=NAME>`` holding JSON, ``<parameter name="k">``, a
    ``"function=NAME"`` key, ``<function NAME>``, ``args`` / ``parameters`` for ``arguments``, a Python call."""
    DAMAGED_DELIMITERS = "damaged_delimiters"
    """A string delimiter inside a value that never closes, or a value quoted with the wrong quote."""
    DAMAGED_NAME = "damaged_name"
    """The name glued to the first argument key, trailing whitespace in a name, an id without its separators."""


DRIFT_CODES: dict[str, Drift] = {}
"""Every drift recovery's diagnostic code and its class. A family parser registers its codes with
:func:`register` at import; :func:`drift_diagnostic` refuses a code not registered."""


def register(drift: Drift, *codes: str) -> None:
    """Declare ``codes`` as recoveries of class ``drift`` (a code names one recovery, in one class)."""
    for code in codes:
        if DRIFT_CODES.setdefault(code, drift) is not drift:
            raise ValueError(f"drift code {code!r} is already a {DRIFT_CODES[code].value} recovery")


# the recoveries both family groups take (one code each, whichever parser reads it)
MISSING_CALL_WRAPPER = "missing_call_wrapper"
"""A call written without its wrapper's opener: a Hermes JSON call object before an orphan ``</tool_call>``,
``<function=NAME>`` in content with no ``<tool_call>`` (Qwen3-Coder and kin), MiniMax-M2's ``<invoke name=...>``
with no ``<minimax:tool_call>``, Gemma 4's ``call:NAME{...}`` without ``<|tool_call>``, GigaChat 3.5's markup with its
``｜GCML｜`` token dropped, Qwen2.5-Coder's calls inside ``<tools>``. Text only: from token ids
a call needs its opener's control id (so this code is the fuzz suites' one exemption from "ids parse as the
text")."""
PYTHON_CALL = "drift_python_call"
"""A Python call ``NAME(k="v", n=3)`` (keyword literals, never evaluated) as the body of a JSON or XML family's
call wrapper."""
NAME_WHITESPACE = "drift_name_whitespace"
"""A tool name written with whitespace around it (``"get_weather "``, ``<function=get_weather >``, GLM
``get_weather \n``)."""
GLUED_NAME = "drift_glued_name"
"""The name glued to the first argument key (``{"get_weathercity": ...}``, GLM ``<tool_call>get_weathercity</arg_key>``
with ``<arg_key>`` lost)."""

register(Drift.MISSING_MARKERS, MISSING_CALL_WRAPPER)
register(Drift.BORROWED_SHAPE, PYTHON_CALL)
register(Drift.DAMAGED_NAME, NAME_WHITESPACE, GLUED_NAME)


def drift_class(diagnostic: Diagnostic) -> Drift | None:
    """The drift class a diagnostic reports, or None when it is not a drift recovery."""
    return DRIFT_CODES.get(diagnostic.code)


def drift_diagnostic(code: str, message: str, raw: str | None, call_index: int | None = None) -> Diagnostic:
    """The diagnostic of a recovery taken: ``code`` (registered), the message prefixed with its class, ``raw`` the
    model's text as written."""
    drift = DRIFT_CODES[code]
    return Diagnostic(code=code, message=f"{drift.value}: {message}", raw=raw, call_index=call_index)


def refused_diagnostic(code: str, why: str, raw: str | None) -> Diagnostic:
    """The diagnostic of a recovery not taken (the text stays where it was): the recovery's code at severity
    ``info`` and why it did not fire (no tools declared, undeclared name, two readings, arguments off-schema)."""
    drift = DRIFT_CODES[code]
    return Diagnostic(code=code, message=f"{drift.value}: not recovered: {why}", severity="info", raw=raw)


@dataclass(frozen=True)
class DeclaredTools:
    """The declared tools as a recovery reads them: names and parameter schemas."""

    names: frozenset[str]
    schemas: Mapping[str, dict]

    @classmethod
    def of(cls, tools: Iterable[Any] | None) -> "DeclaredTools | None":
        """The request's tools, or None when none are declared (then no recovery that needs them fires)."""
        names = tool_names(tools)
        if not names:
            return None
        return cls(names, tool_schemas(tools))

    def resolve_name(self, written: str) -> str | None:
        """The declared name ``written`` stands for: itself, or itself without surrounding whitespace; None when
        neither is declared."""
        if written in self.names:
            return written
        stripped = written.strip()
        return stripped if stripped in self.names else None

    def split_glued(self, text: str) -> tuple[str, str] | None:
        """``(name, rest)`` when ``text`` is a declared name glued to the start of one of that tool's parameter
        names (``get_weathercity`` -> ``("get_weather", "city")``) and exactly one such reading exists."""
        readings = []
        for name in self.names:
            if len(text) > len(name) and text.startswith(name):
                rest = text[len(name):]
                if any(rest.startswith(key) for key in self.properties(name)):
                    readings.append((name, rest))
        return readings[0] if len(readings) == 1 else None

    def properties(self, name: str) -> dict[str, Any]:
        """The declared parameters of tool ``name`` (``{}`` when its schema names none)."""
        props = (self.schemas.get(name) or {}).get("properties")
        return props if isinstance(props, dict) else {}

    def arguments_fit(self, name: str, arguments: Any) -> bool:
        """True when ``arguments`` fit tool ``name``'s schema as far as a recovery needs: an object; every required
        parameter present; no undeclared key where the schema lists its parameters (or forbids others); each
        value of a JSON type its parameter's plain ``type`` allows. A tool without a schema fits any object."""
        if name not in self.names or not isinstance(arguments, dict):
            return False
        schema = self.schemas.get(name) or {}
        required = schema.get("required") or ()
        if any(key not in arguments for key in required if isinstance(key, str)):
            return False
        props = self.properties(name)
        if props or schema.get("additionalProperties") is False:
            if any(key not in props for key in arguments):
                return False
        for key, value in arguments.items():
            declared = props.get(key)
            if isinstance(declared, dict) and not _type_allows(declared.get("type"), value):
                return False
        return True

    def unique_fit(self, arguments: Any) -> str | None:
        """The one declared tool whose schema ``arguments`` fit, or None when none or several do (a call written
        without its name is recovered only when its arguments name the tool)."""
        fits = [name for name in self.names if self.properties(name) and self.arguments_fit(name, arguments)]
        return fits[0] if len(fits) == 1 else None


def _type_allows(declared: Any, value: Any) -> bool:
    """Whether a schema ``type`` (a name, a list of names, or absent) allows ``value``."""
    if declared is None:
        return True
    allowed = {declared} if isinstance(declared, str) else set(declared) if isinstance(declared, list) else None
    if allowed is None:
        return True
    kind = json_type(value)
    return kind in allowed or (kind == "integer" and "number" in allowed)


__all__ = ["DRIFT_CODES", "GLUED_NAME", "MISSING_CALL_WRAPPER", "NAME_WHITESPACE", "PYTHON_CALL", "DeclaredTools", "Drift", "drift_class", "drift_diagnostic", "refused_diagnostic",
           "register"]
