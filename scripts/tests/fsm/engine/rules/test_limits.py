"""The time-limit rule: the clock across resumes, and a child's time within its parent's."""

from __future__ import annotations

from little_loops.fsm.engine.records import ExecutorSnapshot
from little_loops.fsm.engine.rules.limits import Limits


def test_its_slice_dumps_and_restores_the_time_spent_before() -> None:
    limits = Limits(60)
    limits.restore(ExecutorSnapshot(current_state="a", iteration=1, elapsed_ms=1500))
    assert limits.dump() == {"elapsed_ms": 1500}
    remaining = limits.clock.remaining_s()
    assert remaining is not None
    assert 58.4 < remaining <= 58.5


def test_a_child_ends_within_what_is_left_of_its_parents_time() -> None:
    child = Limits(100)
    child.restore(ExecutorSnapshot(current_state="a", iteration=1, elapsed_ms=2000))
    child.bound(10.0)
    assert child.clock.timeout == 12.0  # its own time before counts, as a run's does
    unbounded = Limits(None)
    unbounded.bound(None)
    assert unbounded.clock.timeout is None
    passed = Limits(None)
    passed.bound(-5.0)
    assert passed.clock.timeout == 0.001
