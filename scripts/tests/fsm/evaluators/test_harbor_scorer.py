"""The harbor_scorer evaluator: a benchmark scorer's exit code and printed score."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.gitrepo import loops_project
from support.llproc import ll_loop

from little_loops.fsm.evaluators.harbor_scorer import SPEC, evaluate_harbor_scorer


@pytest.mark.parametrize(
    ("output", "code", "verdict"),
    [
        ("0.85\n", 0, "success"),
        ("  1 ", 0, "success"),
        ("0.85\n", 3, "failure"),
        ("", 1, "failure"),
        ("score: 0.85\n", 0, "error"),
        ("", 0, "error"),
    ],
)
def test_exit_code_and_printed_number_give_the_verdict(
    output: str, code: int, verdict: str
) -> None:
    assert evaluate_harbor_scorer(output, code).verdict == verdict


def test_details_carry_the_score_or_the_exit_code() -> None:
    assert evaluate_harbor_scorer("0.5", 0).details == {"score": 0.5, "exit_code": 0}
    assert evaluate_harbor_scorer("x", 2).details == {"exit_code": 2}
    assert "not a number" in evaluate_harbor_scorer("x", 0).details["error"]
    assert SPEC.detail({"score": 0.5}) == "(score 0.5)"


# In little-loops' spelling: on_yes / on_no, a failure terminal by name.
LOOP = """\
name: bench
initial: score
states:
  score:
    action: 'printf "%s\\n" "$SCORE"; exit "$CODE"'
    action_type: shell
    evaluate:
      type: harbor_scorer
    capture: benchmark_score
    on_yes: report
    on_no: failed
    on_error: failed
  report:
    action: 'echo "scored ${captured.benchmark_score.output}"'
    next: done
  done:
    terminal: true
  failed:
    terminal: true
"""


@pytest.mark.parametrize(
    ("score", "code", "path", "exit_code"),
    [("0.75", "0", "report", 0), ("0.75", "4", "failed", 1), ("n/a", "0", "failed", 1)],
)
def test_a_run_routes_by_the_scorer(
    tmp_path: Path, score: str, code: str, path: str, exit_code: int
) -> None:
    root = loops_project(tmp_path, {".loops/bench.yaml": LOOP})
    check = ll_loop(root, "validate", "bench")
    assert check.returncode == 0, check.stderr + check.stdout
    run = ll_loop(root, "run", "bench", env={**os.environ, "SCORE": score, "CODE": code})
    out = run.stdout + run.stderr
    assert f"→ {path}" in out, out
    assert (run.returncode == 0) == (exit_code == 0), out
    if path == "report":
        assert "scored 0.75" in out
