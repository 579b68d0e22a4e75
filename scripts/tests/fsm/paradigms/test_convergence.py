"""The convergence paradigm: direction, tolerance and settings in the compiled FSM."""

from __future__ import annotations

from little_loops.fsm.paradigms.convergence import compile_convergence


def test_convergence_direction_and_settings_carry_over() -> None:
    fsm = compile_convergence(
        {
            "name": "coverage",
            "check": "cov.sh",
            "toward": 90,
            "using": "Add a test for the least covered module",
            "tolerance": 0.5,
            "direction": "maximize",
            "action_type": "prompt",
            "context": {"module": "api"},
            "scope": ["src/", "tests/"],
            "timeout": 600,
            "backoff": 1.5,
            "llm": {"enabled": False},
            "max_iterations": 7,
        }
    )
    assert fsm.context == {"metric_cmd": "cov.sh", "target": 90, "tolerance": 0.5, "module": "api"}
    evaluate = fsm.states["measure"].evaluate
    assert evaluate is not None
    assert evaluate.direction == "maximize"
    assert fsm.states["measure"].action_type == "prompt"
    assert fsm.states["apply"].action_type == "prompt"
    assert fsm.states["done"].action_type is None
    assert (fsm.scope, fsm.timeout, fsm.backoff, fsm.max_iterations) == (
        ["src/", "tests/"],
        600,
        1.5,
        7,
    )
    assert fsm.llm.enabled is False
    assert fsm.paradigm == "convergence"
