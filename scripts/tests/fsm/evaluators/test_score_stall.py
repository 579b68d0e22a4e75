"""The score_stall evaluator, in a real run: the loop stops refining once scores plateau."""

from __future__ import annotations

from pathlib import Path

from support.gitrepo import loops_project
from support.llproc import ll_loop

from little_loops.fsm.evaluators.config import EvaluateConfig, LLMConfig
from little_loops.fsm.evaluators.dispatch import evaluate
from little_loops.fsm.evaluators.score_stall import HISTORY, SPEC
from little_loops.fsm.values.interpolation import InterpolationContext


def test_the_default_history_is_in_the_run_folder(tmp_path: Path) -> None:
    (tmp_path / ".score_history").write_text("5\n5.2\n")
    ctx = InterpolationContext(context={"run_dir": str(tmp_path)})
    result = evaluate(EvaluateConfig(type="score_stall"), "", 0, ctx)
    assert (result.verdict, result.details["stall_count"]) == ("failure", 1)
    assert SPEC.defaults == {"history_file": HISTORY}


def test_epsilon_is_the_least_improvement(tmp_path: Path) -> None:
    (tmp_path / "h").write_text("5\n5.2\n")
    config = EvaluateConfig(type="score_stall", history_file=str(tmp_path / "h"), epsilon=0.1)
    assert SPEC.run(config, "", 0, LLMConfig(), None).verdict == "success"


LOOP = """\
name: refine
initial: score
max_iterations: 10
states:
  score:
    action: |
      n=$(wc -l < scores 2>/dev/null || echo 0)
      set -- 3 6 6.2 6.3 9
      shift "$n"; echo "$1" >> scores
    evaluate:
      type: score_stall
      history_file: scores
      max_stall: 2
    on_success: score
    on_failure: accept
  accept:
    terminal: true
"""


def test_a_run_stops_at_the_plateau(tmp_path: Path) -> None:
    root = loops_project(tmp_path, {".loops/refine.yaml": LOOP})
    run = ll_loop(root, "run", "refine")
    assert run.returncode == 0, run.stderr + run.stdout
    assert (root / "scores").read_text().split() == ["3", "6", "6.2", "6.3"]
