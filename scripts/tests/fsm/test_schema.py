"""The seed path `little_loops.fsm.schema`: the loop model by its old names."""

from __future__ import annotations

from little_loops.fsm.schema import (
    ACTION_TYPES,
    EVALUATOR_TYPES,
    EvaluateConfig,
    FSMLoop,
    RouteConfig,
    StateConfig,
)


def test_a_loop_model_round_trips_through_the_seed_path() -> None:
    data = {
        "name": "fix",
        "initial": "check",
        "states": {
            "check": {
                "action": "pytest",
                "evaluate": {"type": "exit_code"},
                "route": {"success": "done", "failure": "check"},
            },
            "done": {"terminal": True},
        },
    }
    fsm = FSMLoop.from_dict(data)
    check = fsm.states["check"]
    assert isinstance(check, StateConfig)
    assert isinstance(check.evaluate, EvaluateConfig)
    assert isinstance(check.route, RouteConfig)
    assert check.route.routes == {"success": "done", "failure": "check"}
    assert FSMLoop.from_dict(fsm.to_dict()).to_dict() == fsm.to_dict()


def test_the_seed_tables() -> None:
    assert {"prompt", "slash_command", "shell"} <= set(ACTION_TYPES)
    assert "exit_code" in EVALUATOR_TYPES
