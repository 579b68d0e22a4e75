"""The stall rule: a detector that fires leads to on_stall, or ends the run; its counts save."""

from __future__ import annotations

from support.engine_parts import Recorded, loop

from little_loops.fsm.definition.graph.routing import StepOutcome
from little_loops.fsm.definition.model.typed import StallConfig, StateConfig
from little_loops.fsm.engine.records import ExecutorSnapshot
from little_loops.fsm.engine.rules.stalls import Stalls
from little_loops.fsm.facts.outcomes import Outcome

STATES = {"work": StateConfig(action="make", on_success="work"), "out": StateConfig(terminal=True)}


def test_too_many_visits_follow_on_stall() -> None:
    emitted = Recorded()
    rule = Stalls(loop(STATES, stall=StallConfig(max_visits=1, on_stall="out")), emitted)
    assert rule.entering("work", began=False) is None
    assert rule.entering("work", began=False) == StepOutcome("out", "stall", "stall: max_visits")
    assert emitted.names() == ["stall"]
    assert rule.stalled == {"detector": "max_visits", "state": "work", "limit": 1, "count": 2}


def test_the_same_result_without_on_stall_ends_the_run() -> None:
    rule = Stalls(loop(STATES, stall=StallConfig(same_result=2)), Recorded())
    assert rule.judged("work", "failure", None) is None
    ended = rule.judged("work", "failure", None)
    assert ended is not None
    assert ended.stop == Outcome.STALL


def test_its_slice_dumps_and_restores_its_counts() -> None:
    fsm = loop(STATES, stall=StallConfig(max_visits=5))
    rule = Stalls(fsm, Recorded())
    rule.entering("work", began=False)
    snap = ExecutorSnapshot(current_state="work", iteration=1, entered=False, **rule.dump())
    again = Stalls(fsm, Recorded())
    again.restore(snap)
    assert again.dump() == rule.dump()
    stopped = Stalls(fsm, Recorded())
    stopped.restore(
        ExecutorSnapshot(current_state="work", iteration=1, entered=True, **rule.dump())
    )
    assert stopped.watch.visits == {"work": 0}  # entered again on resume: not one more visit


def test_a_stall_recorded_before_a_crash_is_taken_on_resume_not_counted_again() -> None:
    """The `stall` event saves the stall that fired: a run resumed after it takes its route
    (without a second event), and leaving the state forgets it."""
    fsm = loop(STATES, stall=StallConfig(same_result=2, on_stall="out"))
    rule = Stalls(fsm, Recorded())
    assert rule.judged("work", "success", None) is None
    fired = rule.judged("work", "success", None)
    snap = ExecutorSnapshot(current_state="work", iteration=2, **rule.dump())
    emitted = Recorded()
    again = Stalls(fsm, emitted)
    again.restore(snap)
    assert again.replayed() == fired == StepOutcome("out", "stall", "stall: same_result")
    assert again.stalled == {"detector": "same_result", "state": "work", "limit": 2, "count": 2}
    assert emitted.names() == []
    again.left()
    assert again.replayed() is None
    assert "fired" not in again.dump()["stall_watch"]


def test_an_older_or_garbled_recorded_stall_is_not_replayed() -> None:
    fsm = loop(STATES, stall=StallConfig(same_result=2, on_stall="out"))
    for fired in (
        None,
        "x",
        {"detector": "nope", "state": "w", "limit": 1, "count": 1, "target": None},
        {"detector": "same_result"},
    ):
        rule = Stalls(fsm, Recorded())
        rule.restore(ExecutorSnapshot("work", 1, stall_watch={"fired": fired}))
        assert rule.replayed() is None
