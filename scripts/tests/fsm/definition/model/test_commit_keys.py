"""Checkpoint keys: their rows and the loop's commit mode (definition/model/commit_keys.py)."""

from __future__ import annotations

import pytest

from little_loops.fsm.definition.model.commit_keys import COMMIT_MODE, STATE_KEYS


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("each_pass", None),
        (False, None),
        (True, "expected each_pass or false, got true (commit: true goes on a state)"),
        ("always", "expected each_pass or false, got 'always'"),
    ],
)
def test_the_loops_commit_mode(value: object, problem: str | None) -> None:
    assert COMMIT_MODE(value) == problem
    assert COMMIT_MODE.json == {"enum": ["each_pass", False]}


def test_the_keys_a_state_may_have() -> None:
    assert STATE_KEYS == ("commit", "rollback")
