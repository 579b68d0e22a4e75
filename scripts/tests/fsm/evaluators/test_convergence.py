"""The convergence evaluator."""

from __future__ import annotations

from typing import Any

import pytest

from little_loops.fsm.evaluators.convergence import evaluate_convergence


@pytest.mark.parametrize(
    ("output", "previous", "target", "tolerance", "direction", "verdict", "delta"),
    [
        ("5", "8", 0, 0, "minimize", "progress", -3),
        ("8", "8", 0, 0, "minimize", "stall", 0),
        ("9", "8", 0, 0, "minimize", "stall", 1),
        ("0", "3", 0, 0, "minimize", "target", -3),
        ("2", "3", 0, 2, "minimize", "target", -1),
        ("3", "4", 0, 2, "minimize", "progress", -1),
        ("-1", "3", 0, 0, "minimize", "target", -4),  # past the target counts
        ("85", "80", 90, 0, "maximize", "progress", 5),
        ("80", "85", 90, 0, "maximize", "stall", -5),
        ("85", "85", 90, 0, "maximize", "stall", 0),
        ("89.5", "80", 90, 0.5, "maximize", "target", 9.5),
        ("95", "80", 90, 0, "maximize", "target", 15),
        ("7", "9", None, 0, "minimize", "progress", -2),  # no target: only progress / stall
    ],
)
def test_convergence(
    output: str,
    previous: str,
    target: Any,
    tolerance: Any,
    direction: str,
    verdict: str,
    delta: float,
) -> None:
    result = evaluate_convergence(output, target, previous, tolerance, direction)
    assert result.verdict == verdict
    assert result.details["delta"] == delta
    assert result.details["direction"] == direction
    assert result.details["current"] == float(output)
    assert result.details["previous"] == float(previous)


@pytest.mark.parametrize(
    ("output", "target", "tolerance", "verdict"),
    [
        ("4", 0, 0, "progress"),
        ("0", 0, 0, "target"),
        ("1", 0, 1, "target"),
        ("4", 0, 3, "progress"),
    ],
)
def test_convergence_first_iteration(
    output: str, target: int, tolerance: int, verdict: str
) -> None:
    for previous in ("", None, "  \n"):
        result = evaluate_convergence(output, target, previous, tolerance)
        assert result.verdict == verdict
        assert result.details["previous"] is None
        assert result.details["delta"] is None


def test_convergence_details() -> None:
    assert evaluate_convergence("3\n", "0", "5", "1").details == {
        "current": 3,
        "previous": 5,
        "target": 0,
        "tolerance": 1,
        "delta": -2,
        "direction": "minimize",
    }


@pytest.mark.parametrize(
    ("output", "previous", "tolerance", "direction", "message"),
    [
        ("lots", "3", 0, "minimize", "output is not a number: 'lots'"),
        ("2", "Fixed the bug.", 0, "minimize", "previous value is not a number: 'Fixed the bug.'"),
        ("2", "3", -1, "minimize", "tolerance must not be negative: -1"),
        ("2", "3", "wide", "minimize", "tolerance is not a number: 'wide'"),
        ("2", "3", 0, "down", "unknown direction 'down' (expected one of minimize, maximize)"),
    ],
)
def test_convergence_errors(
    output: str, previous: str, tolerance: Any, direction: str, message: str
) -> None:
    result = evaluate_convergence(output, 0, previous, tolerance, direction)
    assert result.verdict == "error"
    assert result.details["error"] == message
