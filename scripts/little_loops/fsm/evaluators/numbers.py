"""Reading numbers from action output and comparing them, for the numeric evaluators."""

from __future__ import annotations

import math
import operator as op
from collections.abc import Callable
from typing import Any

from little_loops.fsm.evaluators.config import OPERATORS
from little_loops.fsm.evaluators.spec import shorten
from little_loops.fsm.values.interpolation import to_text
from little_loops.fsm.values.value_checks import LARGEST_NUMBER, is_finite

COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "eq": op.eq,
    "ne": op.ne,
    "lt": op.lt,
    "le": op.le,
    "gt": op.gt,
    "ge": op.ge,
}


class TooLarge(ValueError):
    """A number past LARGEST_NUMBER: it could not be compared with a fraction or subtracted."""


def parse_number(text: str) -> int | float:
    """A finite int or float written as *text* (surrounding whitespace allowed).

    ValueError when *text* is no number, TooLarge (a ValueError) when it is one beyond
    LARGEST_NUMBER, such as 400 digits.
    """
    text = text.strip()
    value: int | float
    try:
        value = int(text)
    except ValueError:  # not a whole number, or more digits than Python converts
        value = float(text)  # ValueError propagates
        if math.isnan(value) or text.lstrip("+-").lower() in ("inf", "infinity"):
            raise ValueError(text) from None
    if not is_finite(value):
        raise TooLarge(text)
    return value


def _too_large(what: str, text: str) -> str:
    unsigned = text.lstrip("+-")
    shown = f"{len(unsigned)} digits" if unsigned.isdigit() else shorten(text, 24)
    return f"{what} is too large a number ({shown}; at most {LARGEST_NUMBER:.1e})"


def as_number(value: object, what: str) -> int | float:
    """*value* (a number or a numeric string) as a number; ValueError names *what*."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        if not is_finite(value):
            if isinstance(value, float):
                raise ValueError(f"{what} is not a finite number: {value}")
            raise ValueError(_too_large(what, str(value)))
        return value
    if isinstance(value, str):
        try:
            return parse_number(value)
        except TooLarge:
            raise ValueError(_too_large(what, value.strip())) from None
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
    except TooLarge:
        raise ValueError(_too_large(what, lines[-1].strip())) from None
    except ValueError:
        raise ValueError(f"{what} is not a number: {shorten(lines[-1])}") from None


def difference(a: int | float, b: int | float) -> int | float | None:
    """*a* - *b*, or None when that is past LARGEST_NUMBER (two numbers near it, apart)."""
    result = a - b
    return result if is_finite(result) else None


def number_text(value: object, sign: str = "") -> str:
    """A number as `:g` writes it (`3`, `0.25`, `1.5e+12`; *sign* `+` gives `+3`), and any
    other value (a number past LARGEST_NUMBER too) as text."""
    if isinstance(value, int | float) and not isinstance(value, bool) and is_finite(value):
        return f"{value:{sign}g}"
    return shorten(str(value), 24)


def comparison(operator: str | None) -> Callable[[Any, Any], bool]:
    """The comparison *operator* names; ValueError lists the ones there are."""
    if operator not in COMPARE:
        raise ValueError(
            f"unknown operator {shorten(str(operator))} (expected one of {', '.join(OPERATORS)})"
        )
    return COMPARE[operator]
