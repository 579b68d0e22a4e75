"""The classify evaluator: a printed token is the verdict, routed by the state's route table."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.gitrepo import loops_project
from support.llproc import ll_loop

from little_loops.fsm.evaluators.classify import SPEC, evaluate_classify
from little_loops.fsm.evaluators.config import EvaluateConfig, LLMConfig


@pytest.mark.parametrize(
    ("output", "line", "verdict"),
    [
        ("noise\nfile\n", None, "file"),
        ("noise\nfile\n\n  \n", "last", "file"),
        ("  first \nsecond\n", "first", "first"),
        ("a\nb\nc\n", 1, "b"),
        ("a\nb\nc\n", -3, "a"),
        ("a\n", 5, ""),
        ("", None, ""),
    ],
)
def test_the_chosen_line_is_the_verdict(output: str, line: str | int | None, verdict: str) -> None:
    assert evaluate_classify(output, line).verdict == verdict


def test_a_bad_line_choice_or_a_failed_action_is_an_error() -> None:
    assert evaluate_classify("a", "middle").verdict == "error"
    config = EvaluateConfig(type="classify")
    result = SPEC.run(config, "file\n", 2, LLMConfig(), None)
    assert (result.verdict, result.details["error"]) == ("error", "action exited with code 2")


def test_every_route_key_is_a_verdict_it_can_give() -> None:
    assert SPEC.verdicts_for(EvaluateConfig(type="classify")) is None


LOOP = """\
name: sink
initial: pick
states:
  pick:
    action: printf 'choosing\\n%s\\n' "$SINK"
    evaluate:
      type: classify
    route:
      file: wrote_file
      issue: wrote_issue
      _: nothing
      _error: nothing
  wrote_file:
    action: echo file
    next: done
  wrote_issue:
    action: echo issue
    next: done
  nothing:
    terminal: true
  done:
    terminal: true
"""


@pytest.mark.parametrize(("sink", "path"), [("issue", "wrote_issue"), ("", "nothing")])
def test_a_run_routes_by_the_printed_token(tmp_path: Path, sink: str, path: str) -> None:
    root = loops_project(tmp_path, {".loops/sink.yaml": LOOP})
    assert ll_loop(root, "validate", "sink").returncode == 0
    run = ll_loop(root, "run", "sink", env={**os.environ, "SINK": sink})
    assert run.returncode == 0, run.stderr + run.stdout
    assert f"→ {path}" in run.stdout + run.stderr


def test_simulate_takes_a_scripted_token_through_the_route_table(tmp_path: Path) -> None:
    root = loops_project(tmp_path, {".loops/sink.yaml": LOOP})
    walk = ll_loop(root, "simulate", "sink", "--verdicts", "pick=issue", "--default", "success")
    assert walk.returncode == 0, walk.stderr + walk.stdout
    assert "→ wrote_issue (route 'issue')" in walk.stdout + walk.stderr
