"""The output_contains evaluator."""

from __future__ import annotations

from typing import Any

import pytest

from little_loops.fsm.evaluators.output_contains import evaluate_output_contains


@pytest.mark.parametrize(
    ("output", "pattern", "negate", "verdict", "mode"),
    [
        ("===== All tests passed =====", "All tests passed", False, "success", "substring"),
        ("3 failed", "All tests passed", False, "failure", None),
        ("===== All tests passed =====", "All tests passed", True, "failure", "substring"),
        ("3 failed", "All tests passed", True, "success", None),
        ("ran 12 tests\nOK\n", r"^OK$", False, "success", "regex"),
        ("ran 12 tests\nNOT OK\n", r"^OK$", False, "failure", None),
        ("error: 42 found", r"error: \d+", False, "success", "regex"),
        # valid regex whose meaning differs from the text: the literal occurrence counts
        ("passed (3)", "passed (3)", False, "success", "substring"),
        # invalid regex: substring only
        ("value [unclosed", "[unclosed", False, "success", "substring"),
        ("nothing here", "[unclosed", False, "failure", None),
        ("nothing here", "[unclosed", True, "success", None),
    ],
)
def test_output_contains(output: str, pattern: str, negate: bool, verdict: str, mode: Any) -> None:
    result = evaluate_output_contains(output, pattern, negate)
    assert result.verdict == verdict
    assert result.details == {
        "matched": mode is not None,
        "pattern": pattern,
        "negate": negate,
        "mode": mode,
    }


def test_output_contains_empty_pattern_is_error() -> None:
    assert evaluate_output_contains("x", "").details["error"] == "pattern is empty"
