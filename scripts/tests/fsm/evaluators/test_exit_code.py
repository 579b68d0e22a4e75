"""The exit_code evaluator."""

from __future__ import annotations

import pytest

from little_loops.fsm.evaluators.exit_code import evaluate_exit_code


@pytest.mark.parametrize(
    ("code", "verdict"),
    [(0, "success"), (1, "failure"), (2, "error"), (127, "error"), (-9, "error")],
)
def test_exit_code(code: int, verdict: str) -> None:
    result = evaluate_exit_code(code)
    assert result.verdict == verdict
    assert result.details["exit_code"] == code


def test_exit_code_error_says_which_code() -> None:
    assert evaluate_exit_code(2).details["error"] == "exit code 2"
