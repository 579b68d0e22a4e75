"""The seed path `little_loops.fsm.executor`: the executor and its runner by their old names."""

from __future__ import annotations

from little_loops.fsm.executor import (
    ActionResult,
    DefaultActionRunner,
    ExecutionResult,
    FSMExecutor,
)
from little_loops.fsm.schema import FSMLoop, StateConfig


def test_a_loop_runs_through_the_seed_path() -> None:
    fsm = FSMLoop(
        name="seed",
        initial="check",
        states={
            "check": StateConfig(action="test 1 -eq 1", on_success="done", on_failure="check"),
            "done": StateConfig(terminal=True),
        },
    )
    result = FSMExecutor(fsm, action_runner=DefaultActionRunner()).run()
    assert isinstance(result, ExecutionResult)
    assert (result.final_state, result.iterations, result.terminated_by) == ("done", 1, "terminal")


def test_an_action_result_has_the_seed_fields() -> None:
    result = ActionResult("out", "err", 3, 12)
    assert (result.output, result.stderr, result.exit_code, result.duration_ms) == (
        "out",
        "err",
        3,
        12,
    )
