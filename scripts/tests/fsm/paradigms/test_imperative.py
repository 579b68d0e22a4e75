"""The imperative paradigm: steps in order, then the `until` check decides."""

from __future__ import annotations

from little_loops.fsm.paradigms.imperative import compile_imperative

SPEC = {"name": "n", "steps": ["a", "b"], "until": {"check": "c"}}


def test_steps_run_in_order_then_the_check() -> None:
    fsm = compile_imperative(SPEC)
    assert fsm.initial == "step_0"
    assert (fsm.states["step_0"].next, fsm.states["step_1"].next) == ("step_1", "check_done")
    check = fsm.states["check_done"]
    assert (check.action, check.on_success, check.on_failure) == ("c", "done", "step_0")


def test_passes_false_ends_the_loop_when_the_check_fails() -> None:
    fsm = compile_imperative({**SPEC, "until": {"check": "c", "passes": False}})
    check = fsm.states["check_done"]
    assert (check.on_success, check.on_failure) == ("step_0", "done")
