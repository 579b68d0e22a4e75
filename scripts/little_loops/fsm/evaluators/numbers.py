"""Reading numbers from action output and comparing them, for the numeric evaluators."""

from __future__ import annotations

import math
import operator as op
from collections.abc import Callable
from typing import Any

from little_loops.fsm.definition.model import OPERATORS
from little_loops.fsm.engine.interpolation import to_text
from little_loops.fsm.evaluators.spec import shorten

COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "eq": op.eq,
    "ne": op.ne,
    "lt": op.lt,
    "le": op.le,
    "gt": op.gt,
    "ge": op.ge,
}


def parse_number(text: str) -> int | float:
    """A finite int or float written as *text* (surrounding whitespace allowed)."""
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        pass
    value = float(text)  # ValueError propagates
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def as_number(value: object, what: str) -> int | float:
    """*value* (a number or a numeric string) as a number; ValueError names *what*."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return parse_number(value)
        except ValueError:
            pass
    shown = shorten(value) if isinstance(value, str) else to_text(value) or "nothing"
    raise ValueError(f"{what} is not a number: {shown}")


def output_number(output: str, what: str = "output") -> int | float:
    """The number an action printed: its last non-empty line, which must be only a number.

    Taking the last line lets `cmd | grep -c x || echo 0` (which prints `0` twice) and
    commands that log before printing their measurement work, while `3 errors` is refused.
    """
    lines = [line for line in output.splitlines() if line.strip()]
    if not lines:
        raise ValueError(f"{what} is empty, expected a number")
    try:
        return parse_number(lines[-1])
    except ValueError:
        raise ValueError(f"{what} is not a number: {shorten(lines[-1])}") from None


def comparison(operator: str | None) -> Callable[[Any, Any], bool]:
    """The comparison *operator* names; ValueError lists the ones there are."""
    if operator not in COMPARE:
        raise ValueError(
            f"unknown operator {shorten(str(operator))} (expected one of {', '.join(OPERATORS)})"
        )
    return COMPARE[operator]
