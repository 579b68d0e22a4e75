"""The guards after an action: their records, the red path, a stop, the failure route."""

from __future__ import annotations

from pathlib import Path

from support.engine_parts import loop, parts

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.definition.graph.routing import StepOutcome
from little_loops.fsm.definition.model.typed import StateConfig
from little_loops.fsm.engine.config import ExecutorConfig
from little_loops.fsm.engine.kinds import guards
from little_loops.fsm.engine.tamper import Report
from little_loops.fsm.facts.outcomes import Outcome

WORK = StateConfig(action="make", on_success="done", on_failure="done")
STATES = {"work": WORK, "done": StateConfig(terminal=True), "lost": StateConfig(terminal=True)}


def test_a_failed_action_is_recorded_as_skipped_and_routes_on() -> None:
    run, emitted = parts(loop(STATES))
    red = ActionResult("", "", 1, 1)
    assert guards.prepatched(run, "work", WORK, "fail", red) is None
    (record,) = run.fsm.context["_prepatch_check"]
    assert (record["verdict"], record["skipped_reason"]) == ("skipped", guards.RED_PATH)
    assert emitted.names() == []


def test_a_stop_during_the_check_ends_the_run(tmp_path: Path) -> None:
    run, _ = parts(loop(STATES), config=ExecutorConfig(cwd=tmp_path))
    run.stopping.request(Outcome.STOPPED)
    green = ActionResult("", "", 0, 1)
    assert guards.prepatched(run, "work", WORK, "fail", green) == StepOutcome(stop="stopped")
    assert guards.where(run) == tmp_path


def test_a_failed_guard_routes_to_the_failure_terminal_with_an_evaluate() -> None:
    states = {**STATES, "lost": StateConfig(terminal=True, outcome="failure")}
    run, emitted = parts(loop(states))
    report = Report("work", "fail", [{"path": "tests/t.py", "kind": "modified"}])
    assert guards.tampered(run, "work", WORK, report) == StepOutcome(
        "lost", "failure", "tamper_guard"
    )
    assert emitted.names() == ["evaluate"]
