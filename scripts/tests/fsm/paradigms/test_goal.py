"""The goal paradigm: the derived name and the one- and two-tool templates."""

from __future__ import annotations

import pytest

from little_loops.fsm.paradigms.goal import compile_goal, goal_slug


@pytest.mark.parametrize(
    ("goal", "slug"),
    [
        ("No type errors in src/", "goal-no-type-errors"),
        ("All tests pass!", "goal-all-tests-pass"),
        ("Don't break the build", "goal-dont-break-build"),
        ("Make every single test in the api module green", "goal-make-every-single-test-api"),
        ("Zéro erreur", "goal-zero-erreur"),
        ("???", "goal"),
    ],
)
def test_goal_slug(goal: str, slug: str) -> None:
    assert goal_slug(goal) == slug


def test_explicit_name_wins_over_goal_slug() -> None:
    fsm = compile_goal({"goal": "No type errors", "tools": ["mypy ."], "name": "types"})
    assert fsm.name == "types"


def test_goal_with_one_tool_runs_it_only_in_evaluate() -> None:
    fsm = compile_goal({"goal": "clean", "tools": ["ruff check --fix ."]})
    assert fsm.states["evaluate"].action == "ruff check --fix ."
    assert fsm.states["fix"].action is None
    assert fsm.states["fix"].next == "evaluate"
