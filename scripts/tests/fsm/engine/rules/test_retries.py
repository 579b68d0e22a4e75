"""The retry rule: a matching result asks for a wait and another attempt, until exhausted."""

from __future__ import annotations

from support.engine_parts import Recorded, loop

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.definition.graph.routing import StepOutcome
from little_loops.fsm.definition.model.typed import RetryConfig, StateConfig
from little_loops.fsm.engine.limits import RunClock
from little_loops.fsm.engine.memory import Memory
from little_loops.fsm.engine.records import ExecutorSnapshot
from little_loops.fsm.engine.rules.retries import Retries
from little_loops.fsm.facts.outcomes import Outcome

WORK = StateConfig(
    action="make",
    on_success="done",
    on_failure="done",
    retry=RetryConfig(on=["failure"], max_attempts=2, interval=5),
    on_retry_exhausted="gave_up",
)
FSM = loop(
    {"work": WORK, "done": StateConfig(terminal=True), "gave_up": StateConfig(terminal=True)}
)
FAILED = StepOutcome("done", "failure", "on_failure")


def test_a_matching_failure_asks_for_a_wait_then_the_attempts_run_out() -> None:
    emitted = Recorded()
    retries, memory = Retries(FSM, emitted), Memory(acted={"output": "x"})
    again = retries.retry_or("work", WORK, FAILED, ActionResult("", "", 1, 1), memory)
    assert again == StepOutcome(again=True)
    assert memory.acted is None  # the action runs again: a resume must not judge it
    assert emitted.names() == ["retry_wait"]
    assert emitted.seen[0][1]["seconds"] == 5
    record = retries.attempts.record
    assert record is not None
    assert record.wait is not None
    exhausted = retries.retry_or("work", WORK, FAILED, None, memory)
    assert exhausted == StepOutcome("gave_up", "failure", "on_retry_exhausted")
    assert (
        retries.retry_or("work", WORK, StepOutcome("done", "success"), None, memory).target
        == "done"
    )


def test_its_slice_dumps_and_restores_the_attempt_and_its_wait() -> None:
    retries = Retries(FSM, Recorded())
    retries.retry_or("work", WORK, FAILED, None, Memory())
    snap = ExecutorSnapshot(current_state="work", iteration=1, **retries.dump())
    again = Retries(FSM, Recorded())
    again.restore(snap)
    assert again.dump() == retries.dump()


def test_a_stop_during_the_wait_ends_the_run_and_leaves_the_wait_pending() -> None:
    retries = Retries(FSM, Recorded())
    retries.retry_or("work", WORK, FAILED, None, Memory())
    slept: list[float] = []
    ended = retries.finish_wait("work", RunClock(None), slept.append, lambda: Outcome.STOPPED)
    assert ended == StepOutcome(stop=Outcome.STOPPED)
    assert slept
    assert 4.0 < slept[0] <= 5.0
    record = retries.attempts.record
    assert record is not None
    assert record.wait is not None
    assert retries.finish_wait("work", RunClock(None), slept.append, lambda: None) is None
    assert record.wait is None
