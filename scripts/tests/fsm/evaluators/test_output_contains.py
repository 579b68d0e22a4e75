"""The output_contains evaluator."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from support.gitrepo import loops_project
from support.llproc import ll_loop
from support.slowdown import scaled

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


# --- moved from test_qa_regressions.py ---


def test_a_catastrophic_regex_gives_error_within_its_time_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("little_loops.fsm.evaluators.output_contains.REGEX_TIME_LIMIT", 0.3)
    started = time.monotonic()
    result = evaluate_output_contains("a" * 40 + "!", "(a+)+b")
    assert time.monotonic() - started < scaled(2, at_most=30)  # not a backtracking without end
    assert result.verdict == "error"
    assert result.details["error"] == (
        "pattern took longer than 0.3s to match (a nested quantifier like (a+)+ backtracks "
        "without end); simplify the pattern"
    )


ERROR_PATTERN_LOOP = """\
name: plan
initial: plan
states:
  plan:
    action: echo "PLAN_AUTH_FAILURE_DETECTED"
    evaluate:
      type: output_contains
      pattern: PLAN_DONE
      error_patterns: [PLAN_AUTH_FAILURE_DETECTED]
    on_success: done
    on_failure: done
    on_error: login
  login:
    terminal: true
  done:
    terminal: true
"""


def test_an_error_pattern_turns_a_miss_into_an_error(tmp_path: Path) -> None:
    assert evaluate_output_contains("AUTH", "OK", error_patterns=["AUTH"]).verdict == "error"
    assert evaluate_output_contains("AUTH OK", "OK", error_patterns=["AUTH"]).verdict == "success"
    assert evaluate_output_contains("AUTH", "OK", True, ["AUTH"]).verdict == "success"
    root = loops_project(tmp_path, {".loops/plan.yaml": ERROR_PATTERN_LOOP})
    run = ll_loop(root, "run", "plan")
    assert "→ login" in run.stdout + run.stderr, run.stderr + run.stdout
