"""How a `${...}` value reads as text, and the modifiers a reference may end with.

`${x:default=TEXT}` gives TEXT when x is missing, `${x?}` gives "" when x is missing,
`${x:shell}` gives the value quoted as one shell word, `${x:OFFSET:LENGTH}` gives that slice
of its text (`${loop.started_at:0:19}`: the date and time without the fraction). A missing
value is one interpolation cannot find (a context key, a capture, a field, a variable).
Modifiers only change how a value found (or not found) is written; nothing is evaluated.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from little_loops.fsm.facts.errors import InterpolationError

DEFAULT = ":default="
OPTIONAL = "?"
SHELL = ":shell"
# The modifier part of the reference pattern (references.py); a default is text up to the `}`.
MODIFIER = (
    r"(?P<mod>"
    + re.escape(DEFAULT)
    + r"(?P<default>[^}\n]*)|"
    + re.escape(OPTIONAL)
    + r"|"
    + re.escape(SHELL)
    + r"|:(?P<offset>[0-9]+)(?::(?P<length>[0-9]+))?)?"
)


def to_text(value: Any) -> str:
    """How a resolved value reads inside a string."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, Mapping | list | tuple):
        import json  # only here: `validate` reads no values, and starts faster without it

        return json.dumps(value, default=str)
    return str(value)


def has_fallback(match: re.Match[str]) -> bool:
    """Whether the reference *match* gives a value when what it names is missing."""
    return match.group("default") is not None or match.group("mod") == OPTIONAL


def modified(match: re.Match[str], look: Callable[[], Any], *, quote: bool = True) -> Any:
    """The value of the reference *match*, *look* finding what it names, its modifier
    applied. With *quote* false, `:shell` leaves the value as it is (a shell action hands
    every value to bash as one word of data already)."""
    try:
        value = look()
    except InterpolationError:
        if match.group("default") is not None:
            return match.group("default")
        if match.group("mod") == OPTIONAL:
            return ""
        raise
    if match.group("offset") is not None:
        start = int(match.group("offset"))
        length = match.group("length")
        text = to_text(value)
        return text[start:] if length is None else text[start : start + int(length)]
    if match.group("mod") == SHELL and quote:
        import shlex

        return shlex.quote(to_text(value))
    return value
