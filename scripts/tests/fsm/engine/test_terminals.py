"""Terminal states: a run ends in one as a success, or as a failure (`outcome: failure`, or
reached on the verdict `error`), with real bash actions."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from support.loops import ERROR_TO_TERMINAL

from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.definition.reading.loader import load_text
from little_loops.fsm.engine.executor import ExecutionResult, ExecutorSnapshot, FSMExecutor
from little_loops.fsm.engine.subloop import end_verdict
from little_loops.fsm.facts.outcomes import Outcome
from little_loops.fsm.runs.state import LoopState

WHY = "reached from state 'work' on the verdict error: exit code 2"


def _loop(text: str) -> FSMLoop:
    return FSMLoop.from_dict(load_text(textwrap.dedent(text), "t.yaml").data)


def _run(
    fsm: FSMLoop, cwd: Path, snapshot: ExecutorSnapshot | None = None
) -> tuple[ExecutionResult, list[dict[str, Any]]]:
    events: list[dict[str, Any]] = []
    with DefaultActionRunner(cwd=cwd) as runner:
        executor = FSMExecutor(fsm, events.append, runner)
        if snapshot is not None:
            executor.restore(snapshot)
        return executor.run(), events


def test_a_terminal_reached_on_the_verdict_error_is_a_failure_that_says_why(
    tmp_path: Path,
) -> None:
    result, events = _run(_loop(ERROR_TO_TERMINAL), tmp_path)
    assert (result.terminated_by, result.final_state, result.error) == (
        Outcome.TERMINAL_FAILURE,
        "stuck",
        WHY,
    )
    assert Outcome(result.terminated_by).exit_code == 7
    (end,) = [e for e in events if e["event"] == "loop_complete"]
    assert (end["terminated_by"], end["error"]) == ("terminal_failure", WHY)


def test_a_terminal_reached_on_success_is_a_success(tmp_path: Path) -> None:
    fsm = _loop(ERROR_TO_TERMINAL.replace("exit 2", "echo fine"))
    result, _ = _run(fsm, tmp_path)
    assert (result.terminated_by, result.final_state, result.error) == ("terminal", "done", None)


def test_only_the_last_transition_counts(tmp_path: Path) -> None:
    # The error went to a state that handled it; that state's success led to `done`.
    fsm = _loop(
        ERROR_TO_TERMINAL.replace("on_error: stuck", "on_error: cleanup").replace(
            "      stuck:\n",
            "      cleanup:\n        action: 'true'\n        on_success: done\n      stuck:\n",
        )
    )
    result, events = _run(fsm, tmp_path)
    routes = [(e["from"], e["to"], e["verdict"]) for e in events if e["event"] == "route"]
    assert routes == [("work", "cleanup", "error"), ("cleanup", "done", "success")]
    assert (result.terminated_by, result.final_state) == ("terminal", "done")


def test_an_outcome_failure_terminal_reached_normally_has_no_error(tmp_path: Path) -> None:
    fsm = _loop(
        ERROR_TO_TERMINAL.replace("exit 2", "exit 1")
        .replace("on_error: stuck", "on_failure: stuck")
        .replace(
            "      stuck:\n        terminal: true\n",
            "      stuck:\n        terminal: true\n        outcome: failure\n",
        )
    )
    result, _ = _run(fsm, tmp_path)
    assert (result.terminated_by, result.final_state, result.error) == (
        "terminal_failure",
        "stuck",
        None,
    )


def test_a_run_resumed_in_the_terminal_it_reached_on_error_still_fails(tmp_path: Path) -> None:
    # The state file keeps why the run came to `stuck`: through JSON and back, it resumes
    # there (not entered yet) and ends as the failure it was going to be.
    saved = ExecutorSnapshot(current_state="stuck", iteration=1, entered=False)
    saved.arrived_on_error = WHY
    text = json.dumps(LoopState.from_snapshot("gives-up", saved).to_dict())
    restored = LoopState.from_dict(json.loads(text)).snapshot()
    assert restored.arrived_on_error == WHY
    result, events = _run(_loop(ERROR_TO_TERMINAL), tmp_path, restored)
    assert (result.terminated_by, result.final_state, result.error) == (
        "terminal_failure",
        "stuck",
        WHY,
    )
    assert [e["event"] for e in events if e["event"] == "action_start"] == []  # `work` not again


def test_a_child_ending_in_a_terminal_it_reached_on_error_is_the_verdict_failure(
    tmp_path: Path,
) -> None:
    child = _loop(ERROR_TO_TERMINAL)
    result, _ = _run(child, tmp_path)
    assert end_verdict(child, result.terminated_by, result.final_state) == "failure"
    assert end_verdict(child, "terminal", "done") == "success"
    assert end_verdict(child, "max_iterations", "work") == "error"
