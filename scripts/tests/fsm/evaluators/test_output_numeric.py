"""The output_numeric evaluator."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.gitrepo import loops_project
from support.llproc import ll_loop

from little_loops.fsm.evaluators.output_numeric import evaluate_output_numeric, keyed_number


@pytest.mark.parametrize(
    ("operator", "output", "verdict"),
    [
        ("eq", "5", "success"),
        ("eq", "6", "failure"),
        ("ne", "6", "success"),
        ("ne", "5", "failure"),
        ("lt", "4", "success"),
        ("lt", "5", "failure"),
        ("le", "5", "success"),
        ("le", "6", "failure"),
        ("gt", "6", "success"),
        ("gt", "5", "failure"),
        ("ge", "5", "success"),
        ("ge", "4.5", "failure"),
    ],
)
def test_output_numeric_operators(operator: str, output: str, verdict: str) -> None:
    result = evaluate_output_numeric(output, operator, 5)
    assert result.verdict == verdict
    assert result.details == {"value": float(output), "target": 5, "operator": operator}


def test_output_numeric_reads_last_line_and_keeps_ints() -> None:
    # `grep -c x || echo 0` prints 0 twice; a log line before the number is fine too.
    result = evaluate_output_numeric("checking...\n  0\n0\n\n", "eq", "0")
    assert result.verdict == "success"
    assert result.details["value"] == 0
    assert isinstance(result.details["value"], int)
    assert evaluate_output_numeric(" -2.5e1 \n", "lt", -20).verdict == "success"


@pytest.mark.parametrize(
    ("output", "message"),
    [
        ("3 errors", "output is not a number: '3 errors'"),
        ("", "output is empty, expected a number"),
        ("  \n \n", "output is empty, expected a number"),
        ("nan", "output is not a number: 'nan'"),
        ("x" * 100, f"output is not a number: '{'x' * 57}...'"),
    ],
)
def test_output_numeric_parse_error(output: str, message: str) -> None:
    result = evaluate_output_numeric(output, "eq", 0)
    assert result.verdict == "error"
    assert result.details == {"value": None, "target": 0, "operator": "eq", "error": message}


def test_output_numeric_bad_target_and_operator() -> None:
    assert evaluate_output_numeric("1", "eq", "many").details["error"] == (
        "target is not a number: 'many'"
    )
    assert evaluate_output_numeric("1", "eq", "7").verdict == "failure"
    assert evaluate_output_numeric("1", "equals", 1).details["error"] == (
        "unknown operator 'equals' (expected one of eq, ne, lt, le, gt, ge)"
    )


KEYED_LOOP = """\
name: gate
initial: measure
states:
  measure:
    action: echo "ran=12 pass_rate = 0.75 skipped=1"
    evaluate:
      type: output_numeric
      key: pass_rate
      operator: ge
      target: 0.8
    on_success: passed
    on_failure: too_low
  passed:
    terminal: true
  too_low:
    terminal: true
"""


def test_key_reads_one_field_of_the_output(tmp_path: Path) -> None:
    assert keyed_number("a=1 pass_rate=2 pass_rate=3.5", "pass_rate") == 3.5
    assert evaluate_output_numeric("x=1", "eq", 1, key="pass_rate").verdict == "error"
    root = loops_project(tmp_path, {".loops/gate.yaml": KEYED_LOOP})
    run = ll_loop(root, "run", "gate")
    assert "→ too_low" in run.stdout + run.stderr, run.stderr + run.stdout
