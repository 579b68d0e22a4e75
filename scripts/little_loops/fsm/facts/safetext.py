"""Make any text safe to print on one terminal line: control characters shown escaped."""

from __future__ import annotations

import re

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


SHOWN_CHARS = 1000  # the most of an error `shown` prints: its start and its end (the hint)


def shown(text: object, limit: int = SHOWN_CHARS) -> str:
    """*text* on one line (`one_line`), its middle left out when longer than *limit*
    characters: an error is shown whole up to a size, and its end (often the hint) always."""
    s = one_line(text)
    if len(s) <= limit:
        return s
    head, tail = limit * 2 // 5, limit // 2
    return f"{s[:head]} … ({len(s) - head - tail} characters left out) … {s[-tail:]}"


# A colour or style code (SGR: `ESC [ 1;31 m`): the one escape sequence output may keep
# (compiled on first use, by `re`'s cache: nothing is compiled when this is imported).
_SGR = r"\x1b\[[0-9;:]*m"


def output_line(line: str, colors: bool) -> str:
    """One line of an action's output, safe to print on a terminal: its colour codes kept
    when *colors* (else dropped); any other control (a cursor move, a window title, a
    clipboard write, a bell, a carriage return inside the line) shown escaped, so what a run
    printed cannot act on the terminal of whoever reads it. Tabs and a CRLF's CR are kept
    and dropped, as a terminal would show them."""
    line = line.removesuffix("\r")
    if all(" " <= ch < "\x7f" or ch >= "\xa0" or ch == "\t" for ch in line):
        return line
    pieces = []
    at = 0
    for code in re.finditer(_SGR, line):
        pieces.append(_plain(line[at : code.start()]))
        pieces.append(code.group() if colors else "")
        at = code.end()
    pieces.append(_plain(line[at:]))
    return "".join(pieces)


def _plain(text: str) -> str:
    return "".join(ch if ch == "\t" else _escape(ch) for ch in text)
