"""The time-limit rule: the run's clock across resumes, and what is left of the loop's `timeout`."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.engine.limits import RunClock
from little_loops.fsm.engine.records import ExecutorSnapshot


class Limits:
    """The run's clock (its `max_iterations` is counted by the core's position)."""

    def __init__(self, timeout: float | None) -> None:
        self.clock = RunClock(timeout)

    def dump(self) -> dict[str, Any]:
        return {"elapsed_ms": self.clock.elapsed_ms()}

    def restore(self, snap: ExecutorSnapshot) -> None:
        self.clock.elapsed_before_ms = snap.elapsed_ms

    def bound(self, parent_remaining_s: float | None) -> None:
        """A sub-loop child's time: its own timeout (counting its time before a resume, as
        a run's does), within what is left of its parent's from now on."""
        before = self.clock.elapsed_before_ms
        remaining = parent_remaining_s
        bounds = [self.clock.timeout, None if remaining is None else remaining + before / 1000]
        limits = [float(x) for x in bounds if x is not None]
        # (a timeout of 0 would read as none: a deadline already passed is a millisecond)
        self.clock = RunClock(max(min(limits), 0.001) if limits else None, before)
