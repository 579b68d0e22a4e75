"""How much slower than an idle reference machine this one runs now: what test deadlines scale by.

A test that waits for a process or a file has a deadline only so that a hang fails the test
instead of the suite. On a loaded machine (CI, or several jobs on two cores) everything takes
longer, so each such deadline is written for an idle machine and multiplied by `factor()`:
the wall time of a small fixed workload (start Python, compute) over its time on an idle
machine, measured once per test process. `LL_TEST_SLOWDOWN=3` sets the factor instead.
"""

from __future__ import annotations

import functools
import math
import os
import subprocess
import sys
import time

ENV = "LL_TEST_SLOWDOWN"
# The workload's wall time on an idle 2-core machine (its CPU time, which load does not change,
# measured beside a busy loop on each core: 0.14 s; it took as long there when idle).
REFERENCE_S = 0.14
_ROUNDS = 8


def _workload() -> None:
    """What most tests spend their time on: starting an interpreter, and Python code running."""
    for _ in range(_ROUNDS):
        subprocess.run([sys.executable, "-c", "pass"], check=True, stdin=subprocess.DEVNULL)
        sum(i * i for i in range(150_000))


def measure() -> float:
    """The wall time of the workload now, over its time on the idle reference machine."""
    started = time.perf_counter()
    _workload()
    return (time.perf_counter() - started) / REFERENCE_S


@functools.cache
def factor() -> float:
    """`LL_TEST_SLOWDOWN` if set, else the measured slowdown; never below 1."""
    given = os.environ.get(ENV, "").strip()
    if given:
        try:
            value = float(given)
        except ValueError:
            raise ValueError(f"{ENV}={given!r}: expected a number such as 2.5") from None
        if not math.isfinite(value) or value <= 0:
            raise ValueError(f"{ENV}={given!r}: expected a number above 0")
        return max(1.0, value)
    return max(1.0, measure())


def scaled(seconds: float, *, at_most: float = math.inf) -> float:
    """*seconds* on an idle machine, in this machine's seconds now.

    `at_most` keeps a bound that tells two behaviours apart (answered at once, not after the
    30 s retry wait) below the slower one, however loaded the machine is.
    """
    return min(seconds * factor(), at_most)
