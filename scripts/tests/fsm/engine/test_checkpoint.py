"""Checkpoints: a run restored after its action finished judges that action, never runs it again."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.actions.request import ActionRequest
from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.engine.executor import ActionResult, ExecutorSnapshot, FSMExecutor
from little_loops.fsm.engine.records import acted_record


class Counting:
    def __init__(self) -> None:
        self.actions: list[str] = []

    def run(self, request: ActionRequest) -> ActionResult:
        action = request.action
        self.actions.append(action)
        return ActionResult("ok", "", 0, 1)


def loop() -> FSMLoop:
    return FSMLoop(
        name="judge",
        initial="check",
        states={
            "check": StateConfig(action="check", capture="c", on_success="done", on_failure="fix"),
            "fix": StateConfig(action="fix", next="done"),
            "done": StateConfig(action="report", terminal=True),
        },
        max_iterations=3,
    )


def test_a_finished_action_is_judged_from_the_record() -> None:
    runner, seen = Counting(), list[dict[str, Any]]()
    executor = FSMExecutor(loop(), action_runner=runner, event_callback=seen.append)
    failed = acted_record(ActionResult("boom", "bad", 1, 5))
    executor.restore(
        ExecutorSnapshot(
            current_state="check",
            iteration=1,
            pass_states=["check"],
            entered=True,
            captured={"c": {"output": "boom"}},
            action_result=failed,
        )
    )
    result = executor.run()
    assert runner.actions == ["fix", "report"]  # check did not run again
    assert result.terminated_by == "terminal"
    assert result.iterations == 1  # still the same pass
    verdicts = [(e["state"], e["verdict"]) for e in seen if e["event"] == "evaluate"]
    assert verdicts == [("check", "failure")]
    assert [e["state"] for e in seen if e["event"] == "state_enter"] == ["fix", "done"]


def test_an_entered_state_without_a_finished_action_runs_again() -> None:
    runner = Counting()
    executor = FSMExecutor(loop(), action_runner=runner)
    executor.restore(
        ExecutorSnapshot(current_state="check", iteration=1, pass_states=["check"], entered=True)
    )
    result = executor.run()
    assert runner.actions == ["check", "report"]
    assert result.iterations == 1


def test_a_finished_terminal_action_is_not_run_again() -> None:
    runner = Counting()
    executor = FSMExecutor(loop(), action_runner=runner)
    executor.restore(
        ExecutorSnapshot(
            current_state="done",
            iteration=1,
            pass_states=["check"],
            entered=True,
            action_result=acted_record(ActionResult("", "", 0, 1)),
        )
    )
    assert executor.run().terminated_by == "terminal"
    assert runner.actions == []


def test_the_snapshot_records_the_finished_action_until_the_route() -> None:
    snaps: list[tuple[str, dict[str, Any] | None]] = []
    executor = FSMExecutor(loop(), action_runner=Counting())

    def watch(event: dict[str, Any]) -> None:
        snaps.append((event["event"], executor.snapshot().action_result))

    executor.event_callback = watch
    executor.run()
    kinds = {kind: acted for kind, acted in snaps if kind in ("action_complete", "route")}
    assert kinds["action_complete"] is not None
    assert kinds["action_complete"]["exit_code"] == 0
    assert kinds["route"] is None
