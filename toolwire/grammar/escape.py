"""One escape routine for the grammar texts' quoted literals (llguidance's ``/.../`` regexes, GBNF strings)."""

from __future__ import annotations

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escaped(text: str, specials: str, *, upper_hex: bool = False) -> str:
    """``text`` with a backslash before each character of ``specials``, ``\\n`` / ``\\r`` / ``\\t`` named, and
    the other control characters (and DEL) as ``\\xNN`` (uppercase hex digits with ``upper_hex``)."""
    out = []
    for ch in text:
        if ch in specials:
            out.append("\\" + ch)
        elif ch in _NAMED:
            out.append(_NAMED[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02X}" if upper_hex else f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)
