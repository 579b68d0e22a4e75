"""A user's regular expression run with a time limit: `(a+)+b` must not hang a run for hours."""

from __future__ import annotations

from collections.abc import Callable
from types import FrameType
from typing import TypeVar

# A regular expression may backtrack for hours ((a+)+b on "aaaa…!"); past this many seconds
# the match is abandoned (RegexTooSlow), so the loop's limits still hold.
REGEX_TIME_LIMIT = 10.0
SLOW_HINT = "a nested quantifier like (a+)+ backtracks without end"

T = TypeVar("T")


class RegexTooSlow(Exception):
    """A match took longer than its time limit and was abandoned."""


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise RegexTooSlow


def within(seconds: float, match: Callable[[], T]) -> T:
    """What *match* (a search of a user's pattern) returns, or RegexTooSlow past *seconds*.

    CPython's matcher checks for signals as it works, so a SIGALRM handler that raises
    stops it; that only works on the main thread, elsewhere the match is unbounded.
    """
    import signal  # here, not at the top: `ll-loop validate` reads no pattern
    import threading

    if threading.current_thread() is not threading.main_thread():
        return match()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return match()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
