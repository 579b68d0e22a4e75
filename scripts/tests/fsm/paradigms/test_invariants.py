"""The invariants paradigm: state names from constraint names, and `maintain`."""

from __future__ import annotations

import pytest

from little_loops.fsm.paradigms.invariants import compile_invariants, constraint_state_suffix


@pytest.mark.parametrize(
    ("name", "suffix"),
    [("tests-pass", "tests_pass"), ("Lint clean", "lint_clean"), ("--a--b--", "a_b")],
)
def test_constraint_state_suffix(name: str, suffix: str) -> None:
    assert constraint_state_suffix(name) == suffix


def test_invariants_without_maintain_has_no_on_maintain() -> None:
    spec = {"name": "x", "constraints": [{"name": "a", "check": "true", "fix": "true"}]}
    fsm = compile_invariants(spec)
    assert fsm.states["all_valid"].on_maintain is None
    assert fsm.maintain is False
