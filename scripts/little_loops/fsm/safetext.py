"""Make any text safe to print on one terminal line: control characters shown escaped."""

from __future__ import annotations

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if code < 0x20 or 0x7F <= code < 0xA0:  # C0, DEL, C1
        return f"\\x{code:02x}"
    return ch


def one_line(text: object) -> str:
    """*text* as a string with C0/C1 controls and DEL escaped (`\\x1b`, `\\n`); all else kept."""
    s = str(text)
    if all(" " <= ch < "\x7f" or ch >= "\xa0" for ch in s):
        return s
    return "".join(_escape(ch) for ch in s)
