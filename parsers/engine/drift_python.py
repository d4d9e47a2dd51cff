"""The Python call a model writes where its format wants JSON or tags: ``get_weather(city="Paris", days=3)``
inside a call wrapper (issue 33, ``drift_python_call``, class ``borrowed_shape``). The JSON-bodied families
(:mod:`.drift_json`) and the XML-bodied ones (:mod:`.xml_drift`) read it with this one reader: keyword arguments
whose values are literals, read by the repair ladder as Python literals and never evaluated; anything else
(positional arguments, names, calls, operators) is no reading."""

from __future__ import annotations

import re

from .json_repair import repair_ladder

PYTHON_CALL_SHAPE = re.compile(r"([A-Za-z_][A-Za-z0-9_.\-]{0,255})[ \t]*\((.*)\)", re.S)
"""``NAME(...)`` as a whole text: group 1 the name, group 2 the argument text."""
_KEYWORD = re.compile(r"[ \t\r\n]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*=(?!=)")


def python_call_arguments(text: str, *, max_depth: int, max_bytes: int | None) -> dict | None:
    """``k="v", n=3`` to an object: each top-level ``key=`` becomes ``"key":``, the rest goes through the repair
    ladder (Python literals, single quotes); None unless that gives an object of keyword arguments."""
    out: list[str] = []
    depth, quote, i, expect_key = 0, "", 0, True
    while i < len(text):
        ch = text[i]
        if quote:
            out.append(ch)
            if ch == "\\" and i + 1 < len(text):
                out.append(text[i + 1])
                i += 1
            elif ch == quote:
                quote = ""
        elif expect_key and depth == 0:
            m = _KEYWORD.match(text, i)
            if m is None:
                if text[i:].strip(" \t\r\n") == "" and not out:
                    break
                return None
            out.append(f'"{m.group(1)}":')
            i = m.end()
            expect_key = False
            continue
        elif ch in "\"'":
            quote = ch
            out.append(ch)
        elif ch in "([{":
            depth += 1
            out.append("[" if ch == "(" else ch)
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                return None
            out.append("]" if ch == ")" else ch)
        elif ch == "," and depth == 0:
            out.append(ch)
            expect_key = True
        else:
            out.append(ch)
        i += 1
    if quote or depth:
        return None
    decoded = repair_ladder("{" + "".join(out) + "}", False, max_depth=max_depth, max_bytes=max_bytes, closed=True)
    return decoded.value if isinstance(decoded.value, dict) else None


__all__ = ["PYTHON_CALL_SHAPE", "python_call_arguments"]
