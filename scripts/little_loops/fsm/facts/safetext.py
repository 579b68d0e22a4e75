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
    if code > 0xFF:  # a bidi control (_BIDI)
        return f"\\u{code:04x}"
    return ch


# The bidirectional formatting characters (the marks LRM, RLM and ALM, the embeddings and
# overrides LRE..RLO, the isolates LRI..PDI): printed raw, they can make a name or a value
# echoed in a message show its characters in another order than they have ("Trojan Source").
_BIDI = r"\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# A control character: C0, DEL or C1, or a bidi one (compiled on first use, by `re`'s cache).
_CONTROL = r"[\x00-\x1f\x7f-\x9f" + _BIDI + "]"


def one_line(text: object) -> str:
    """*text* as a string with C0/C1 controls, DEL and the bidi controls escaped (`\\x1b`,
    `\\n`, `\\u202e`); all else kept."""
    s = str(text)
    if re.search(_CONTROL, s) is None:
        return s
    return re.sub(_CONTROL, lambda found: _escape(found.group()), s)


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
# A colour code, else one control but a tab: what `output_line` keeps, drops or escapes, in
# one pass of `re` (no Python loop per character: a 50 MB line costs little more than its size).
_OUTPUT_CONTROL = _SGR + r"|[\x00-\x08\x0a-\x1f\x7f-\x9f]"
_RESET = "\x1b[0m"


def output_line(line: str, colors: bool) -> str:
    """One line of an action's output, safe to print on a terminal: its colour codes kept
    when *colors* (else dropped); any other control (a cursor move, a window title, a
    clipboard write, a bell, a carriage return inside the line) shown escaped, so what a run
    printed cannot act on the terminal of whoever reads it. Tabs and a CRLF's CR are kept
    and dropped, as a terminal would show them. A line that kept a colour code ends with a
    reset, so a style it leaves on (hidden text, black on black) ends with it."""
    line = line.removesuffix("\r")
    if re.search(_OUTPUT_CONTROL, line) is None:
        return line
    shown = re.sub(_OUTPUT_CONTROL, lambda found: _shown(found.group(), colors), line)
    # Every escape character left is a colour code's: any other is now the text `\x1b`.
    return f"{shown}{_RESET}" if colors and "\x1b" in shown else shown


def _shown(code: str, colors: bool) -> str:
    return (code if colors else "") if code.startswith("\x1b[") else _escape(code)
