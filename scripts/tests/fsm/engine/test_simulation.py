"""What a simulation gives: its steps, how it ended, the exit code and the JSON of it."""

from __future__ import annotations

import json

import pytest

from little_loops.fsm.engine.simulation import (
    ERROR,
    MAX_ITERATIONS,
    MAX_STEPS,
    SCRIPT_EXHAUSTED,
    SIMULATION_EXIT_CODES,
    TERMINAL,
    TERMINAL_FAILURE,
    UNRESOLVED_TARGET,
    SimulatedStep,
    SimulationResult,
)
from little_loops.fsm.facts.outcomes import ExitCode, Outcome


def result(terminated_by: str, steps: list[SimulatedStep] | None = None) -> SimulationResult:
    walked = steps if steps is not None else [SimulatedStep("check", 1)]
    return SimulationResult(
        loop="fix",
        max_iterations=5,
        steps=walked,
        terminated_by=terminated_by,
        final_state=walked[-1].state if walked else "check",
        iterations=len(walked),
        message="ended",
    )


def test_the_executor_endings_are_its_own_outcomes() -> None:
    assert TERMINAL == Outcome.TERMINAL
    assert TERMINAL_FAILURE == Outcome.TERMINAL_FAILURE
    assert MAX_ITERATIONS == Outcome.MAX_ITERATIONS
    assert ERROR == Outcome.ERROR
    assert MAX_STEPS == Outcome.MAX_STEPS  # the loop's max_steps (or the walk's own bound)
    # The walk's own endings are none of the executor's.
    assert not {SCRIPT_EXHAUSTED, UNRESOLVED_TARGET} & {str(o) for o in Outcome}


@pytest.mark.parametrize(
    ("ending", "code"),
    [
        (TERMINAL, ExitCode.OK),
        (TERMINAL_FAILURE, ExitCode.TERMINAL_FAILURE),
        (ERROR, ExitCode.FAILED),
        (SCRIPT_EXHAUSTED, ExitCode.USAGE),
        (UNRESOLVED_TARGET, ExitCode.USAGE),
        (MAX_ITERATIONS, ExitCode.MAX_ITERATIONS),
        (MAX_STEPS, ExitCode.MAX_STEPS),
    ],
)
def test_each_ending_exits_as_the_run_would(ending: str, code: int) -> None:
    assert result(ending).exit_code == code


def test_every_ending_has_an_exit_code() -> None:
    endings = {TERMINAL, TERMINAL_FAILURE, ERROR, SCRIPT_EXHAUSTED}
    endings |= {UNRESOLVED_TARGET, MAX_ITERATIONS, MAX_STEPS}
    assert set(SIMULATION_EXIT_CODES) == endings


def test_an_unknown_ending_has_no_exit_code() -> None:
    with pytest.raises(KeyError):
        _ = result("no_such_ending").exit_code


def test_the_path_is_the_states_walked_in_order() -> None:
    steps = [SimulatedStep("check", 1), SimulatedStep("fix", 1), SimulatedStep("check", 2)]
    assert result(TERMINAL, steps).path == ["check", "fix", "check"]
    assert result(TERMINAL, []).path == []


def test_a_step_starts_empty() -> None:
    step = SimulatedStep("check", 3)
    assert (step.action, step.action_type, step.verdict, step.verdict_from, step.target) == (
        None,
        None,
        None,
        None,
        None,
    )
    assert (step.reason, step.notes, step.depth) == ("", [], 0)
    step.notes.append("a")
    assert SimulatedStep("other", 1).notes == []  # no list shared between steps


def test_to_dict_adds_the_exit_code_and_path_and_is_json() -> None:
    steps = [
        SimulatedStep("check", 1, "make test", "shell", "failure", "scripted", "fix"),
        SimulatedStep("fix", 1, "Fix it", "prompt", "success", "default", "done"),
    ]
    data = result(TERMINAL, steps).to_dict()
    assert data["exit_code"] == 0
    assert data["path"] == ["check", "fix"]
    assert data["terminated_by"] == "terminal"
    assert data["steps"][0] == {
        "state": "check",
        "iteration": 1,
        "action": "make test",
        "action_type": "shell",
        "verdict": "failure",
        "verdict_from": "scripted",
        "target": "fix",
        "reason": "",
        "notes": [],
    }
    assert json.loads(json.dumps(data)) == data


def test_only_a_sub_loop_step_says_how_deep_it_is() -> None:
    steps = [SimulatedStep("build", 1), SimulatedStep("build/check", 1, depth=1)]
    data = result(SCRIPT_EXHAUSTED, steps).to_dict()
    assert "depth" not in data["steps"][0]
    assert data["steps"][1]["depth"] == 1
    assert data["exit_code"] == ExitCode.USAGE
    # The result itself keeps the depth of every step.
    assert [step.depth for step in result(TERMINAL, steps).steps] == [0, 1]
