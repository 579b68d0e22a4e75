"""The action state kind: an action runs, is judged and routed; a retry runs it again."""

from __future__ import annotations

from support.engine_parts import Exits, loop, parts

from little_loops.fsm.definition.model import RetryConfig, StateConfig
from little_loops.fsm.definition.routing import StepOutcome
from little_loops.fsm.engine.kinds.action import run_state
from little_loops.fsm.engine.records import ExecutorSnapshot
from little_loops.fsm.facts.outcomes import Outcome

DONE = StateConfig(terminal=True)


def test_an_action_that_exits_0_routes_on_success_and_is_recorded() -> None:
    fsm = loop({"work": StateConfig(action="make", on_success="done", capture="m"), "done": DONE})
    run, emitted = parts(fsm)
    outcome = run_state(run, "work", fsm.states["work"], None)
    assert outcome == StepOutcome("done", "success", "on_success")
    assert emitted.names() == ["action_start", "action_complete", "evaluate"]
    assert run.memory.captured["m"]["output"] == "out of make"
    assert run.memory.prev_result is not None
    assert run.memory.prev_result["verdict"] == "success"


def test_a_retried_failure_runs_again_after_its_wait_until_it_passes() -> None:
    retry = RetryConfig(on=["failure"], max_attempts=3, interval=0)
    work = StateConfig(action="flaky", on_success="done", on_failure="done", retry=retry)
    runner = Exits({"flaky": [1, 1, 0]})
    run, emitted = parts(loop({"work": work, "done": DONE}), runner)
    outcome = run_state(run, "work", work, None)
    assert outcome.target == "done"
    assert outcome.verdict == "success"
    assert runner.calls == ["flaky"] * 3
    assert emitted.names().count("retry_wait") == 2


def test_a_reference_that_cannot_be_filled_in_is_the_verdict_error() -> None:
    work = StateConfig(action="echo ${captured.nope.output}", on_success="done", on_error="done")
    run, emitted = parts(loop({"work": work, "done": DONE}))
    outcome = run_state(run, "work", work, None)
    assert (outcome.target, outcome.verdict) == ("done", "error")
    assert emitted.names() == ["evaluate"]


def test_a_stop_during_the_action_ends_the_run() -> None:
    work = StateConfig(action="make", on_success="done")
    run, _ = parts(loop({"work": work, "done": DONE}))
    run.stopping.request(Outcome.STOPPED)
    assert run_state(run, "work", work, None) == StepOutcome(stop=Outcome.STOPPED)
    assert run.memory.acted is None  # cut short: a resume runs it again


def test_a_verdict_is_recorded_with_its_action_and_replayed_on_resume() -> None:
    """The verdict is kept with the finished action before its `evaluate` event (a judge's
    cost writes that at once); a run resumed after it routes it without judging again."""
    fsm = loop(
        {
            "work": StateConfig(action="make", on_success="done", on_failure="x"),
            "done": DONE,
            "x": DONE,
        }
    )
    run, _ = parts(fsm)
    run_state(run, "work", fsm.states["work"], None)
    assert run.memory.acted is not None
    assert run.memory.acted["verdict"] == {"verdict": "success", "details": {"exit_code": 0}}
    saved = ExecutorSnapshot(
        "work",
        1,
        action_result={**run.memory.acted, "verdict": {"verdict": "failure", "details": {}}},
    )
    again, emitted = parts(fsm)
    again.memory.restore(saved)
    done = again.memory.resumed_action
    outcome = run_state(again, "work", fsm.states["work"], done)
    assert (outcome.target, outcome.verdict) == ("x", "failure")
    assert emitted.names() == []  # not judged again: its `evaluate` is in the log
    again.memory.restore(saved)
    again.memory.left()
    assert again.memory.take_verdict() is None
