"""The open_question_stall evaluator, in a real run: stop once the count stops falling."""

from __future__ import annotations

from pathlib import Path

from support.gitrepo import loops_project
from support.llproc import ll_loop

from little_loops.fsm.evaluators.config import EvaluateConfig, LLMConfig
from little_loops.fsm.evaluators.open_question_stall import SPEC


def test_a_lower_count_is_progress(tmp_path: Path) -> None:
    (tmp_path / "h").write_text("9\n8\n8\n")
    config = EvaluateConfig(type="open_question_stall", history_file=str(tmp_path / "h"))
    result = SPEC.run(config, "", 0, LLMConfig(), None)
    assert (result.verdict, result.details["best"]) == ("failure", 8.0)
    (tmp_path / "h").write_text("9\n8\n7\n")
    assert SPEC.run(config, "", 0, LLMConfig(), None).verdict == "success"


LOOP = """\
name: decide
initial: count
max_iterations: 10
context:
  hist: counts
states:
  count:
    action: |
      n=$(wc -l < counts 2>/dev/null || echo 0)
      set -- 5 4 4 4 1
      shift "$n"; echo "$1" >> counts
    evaluate:
      type: open_question_stall
      history_file: ${context.hist}
      max_stall: 2
    on_success: count
    on_failure: ask
  ask:
    terminal: true
"""


def test_a_run_stops_when_questions_stop_closing(tmp_path: Path) -> None:
    root = loops_project(tmp_path, {".loops/decide.yaml": LOOP})
    run = ll_loop(root, "run", "decide")
    assert run.returncode == 0, run.stderr + run.stdout
    assert (root / "counts").read_text().split() == ["5", "4", "4", "4"]
