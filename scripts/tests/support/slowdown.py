"""How much slower than an idle reference machine this one runs now: what test deadlines scale by.

A test that waits for a process or a file has a deadline only so that a hang fails the test
instead of the suite. On a loaded machine (CI, or several jobs on two cores) everything takes
longer, so each such deadline is written for an idle machine and multiplied by `factor()`:
the wall time of a small fixed workload (start Python, compute) over its time on an idle
machine. The load changes while the tests run, so it is measured again between tests once
the last measurement is `MAX_AGE_S` old (`refresh()`), and the factor is the larger of the
last two. `LL_TEST_SLOWDOWN=3` sets the factor instead. The process that starts pytest-xdist
workers hands its first measurement to them (`hand_over`, `take_over`): a session measures
once at its start, not once per process.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time

ENV = "LL_TEST_SLOWDOWN"
# The workload's wall time on an idle 2-core machine (its CPU time, which load does not change,
# measured beside a busy loop on each core: 0.14 s; it took as long there when idle).
REFERENCE_S = 0.14
MAX_AGE_S = 30.0
_ROUNDS = 8
# A measurement handed to the workers in their environment: "FACTOR WHEN" (time.monotonic(),
# one clock for every process of the machine).
HANDED = "LL_TEST_SLOWDOWN_HANDED"

_measured: list[float] = []  # every measurement of this process, oldest first
_measured_at = -math.inf


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


def given() -> float | None:
    """The factor `LL_TEST_SLOWDOWN` sets (at least 1), or None when it is not set."""
    text = os.environ.get(ENV, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{ENV}={text!r}: expected a number such as 2.5") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{ENV}={text!r}: expected a number above 0")
    return max(1.0, value)


def refresh(max_age: float = MAX_AGE_S) -> None:
    """Measure again if the last measurement is older than *max_age* seconds (call it between
    tests: a measurement takes from 0.15 s on an idle machine to a second or two)."""
    global _measured_at
    if given() is None and time.monotonic() - _measured_at > max_age:
        _measured.append(max(1.0, measure()))
        _measured_at = time.monotonic()


def hand_over() -> None:
    """Put the last measurement in the environment the processes started next inherit."""
    if _measured:
        os.environ[HANDED] = f"{_measured[-1]!r} {_measured_at!r}"


def take_over() -> None:
    """Start from the measurement handed over, if any, and take it out of the environment
    (the processes the tests start see the environment a user has)."""
    global _measured_at
    try:
        value, at = map(float, os.environ.pop(HANDED, "").split())
    except ValueError:
        return
    if not _measured and math.isfinite(value) and value >= 1 and at <= time.monotonic():
        _measured.append(value)
        _measured_at = at


def factor() -> float:
    """`LL_TEST_SLOWDOWN` if set, else the larger of the last two measurements; never below 1."""
    fixed = given()
    if fixed is not None:
        return fixed
    if not _measured:
        refresh()
    return max(_measured[-2:])


def measured() -> list[float]:
    """Every factor this process measured, oldest first."""
    return list(_measured)


def scaled(seconds: float, *, at_most: float = math.inf) -> float:
    """*seconds* on an idle machine, in this machine's seconds now.

    `at_most` keeps a bound that tells two behaviours apart (answered at once, not after the
    30 s retry wait) below the slower one, however loaded the machine is.
    """
    return min(seconds * factor(), at_most)
