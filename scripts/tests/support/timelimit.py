"""A per-example time limit for the reliability tests: a hang fails the test, not the suite."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType

from support.slowdown import scaled


class Hang(AssertionError):
    """An input took longer than its time limit."""


@contextlib.contextmanager
def time_limit(seconds: float, what: str) -> Iterator[None]:
    """Fail with Hang if the block runs longer than *seconds* on an idle machine (scaled to
    this one's slowdown; main thread only: SIGALRM)."""
    limit = scaled(seconds)

    def expire(_signum: int, _frame: FrameType | None) -> None:
        raise Hang(f"{what} took longer than {limit:.3g}s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
