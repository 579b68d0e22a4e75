"""The diff_stall evaluator, with real git: stop once the working tree's diff stops changing."""

from __future__ import annotations

from pathlib import Path

from support.gitrepo import git, loops_project, make_repo
from support.llproc import ll_loop

from little_loops.fsm.evaluators.diff_stall import evaluate_diff_stall


def test_the_count_of_unchanged_rounds(tmp_path: Path) -> None:
    root = tmp_path / "r"
    make_repo(root, {"f": "a\n"})
    assert evaluate_diff_stall(None, 2, root).verdict == "success"  # remembers
    assert evaluate_diff_stall(None, 2, root).details["stall_count"] == 1
    assert evaluate_diff_stall(None, 2, root).verdict == "failure"
    (root / "f").write_text("b\n")
    changed = evaluate_diff_stall(None, 2, root)
    assert (changed.verdict, changed.details["diff_changed"]) == ("success", True)


def test_each_scope_counts_apart_and_no_repository_is_an_error(tmp_path: Path) -> None:
    root = tmp_path / "r"
    make_repo(root, {"a/f": "1\n", "b/f": "1\n"})
    evaluate_diff_stall(["a"], 1, root)
    assert evaluate_diff_stall(["a"], 1, root).verdict == "failure"
    assert evaluate_diff_stall(["b"], 1, root).verdict == "success"
    plain = tmp_path / "plain"
    plain.mkdir()
    assert evaluate_diff_stall(None, 1, plain).verdict == "error"


LOOP = """\
name: fixer
initial: work
max_iterations: 20
states:
  work:
    action: |
      n=$(cat .count 2>/dev/null || echo 0); n=$((n+1)); echo $n > .count
      if [ $n -le 3 ]; then echo "line $n" >> f; fi
    evaluate:
      type: diff_stall
      scope: [f]
      max_stall: 2
    on_success: work
    on_failure: stalled
  stalled:
    terminal: true
"""


def test_a_run_ends_after_two_rounds_without_change(tmp_path: Path) -> None:
    root = loops_project(tmp_path, {".loops/fixer.yaml": LOOP, "f": "0\n"})
    run = ll_loop(root, "run", "fixer")
    assert run.returncode == 0, run.stderr + run.stdout
    assert (root / ".count").read_text().strip() == "5"
    assert "→ stalled" in run.stdout + run.stderr


def test_its_memory_is_never_committed_by_the_loop(tmp_path: Path) -> None:
    root = loops_project(tmp_path, {".loops/fixer.yaml": LOOP, "f": "0\n"})
    assert ll_loop(root, "run", "fixer").returncode == 0
    untracked = git(root, "status", "--porcelain", "--untracked-files=all")
    assert "ll-diff-stall" not in untracked, untracked


def test_a_memory_file_that_is_a_symbolic_link_is_not_written_through(tmp_path: Path) -> None:
    root = tmp_path / "r"
    make_repo(root, {"f": "a\n"})
    evaluate_diff_stall(None, 2, root)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    for memory in (root / ".loops" / "tmp").glob("ll-diff-stall-*"):
        memory.unlink()
        memory.symlink_to(victim)
    result = evaluate_diff_stall(None, 2, root)
    assert result.verdict == "error"
    assert "symbolic link" in str(result.details)
    assert victim.read_text() == "precious\n"
