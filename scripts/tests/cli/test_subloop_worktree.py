"""`worktree:` on a sub-loop state: the child runs in a scratch git worktree of an existing
branch, removed after; an empty value runs it where the parent runs. Real git and bash."""

from __future__ import annotations

from pathlib import Path

from support.gitrepo import git, loops_project, run_env
from support.llproc import ll_loop

from little_loops.fsm.facts.outcomes import ExitCode

CHILD = """\
name: work
initial: edit
states:
  edit:
    action: >-
      echo "$(git rev-parse --abbrev-ref HEAD)" > where.txt &&
      git add where.txt && git commit -q -m "child work"
    next: done
  done:
    terminal: true
"""

PARENT = """\
name: parent
context:
  branch: "{branch}"
initial: delegate
states:
  delegate:
    loop: work
    worktree: "${{context.branch}}"
    on_success: done
    on_error: broken
  broken:
    terminal: true
    outcome: failure
  done:
    terminal: true
"""


def _project(tmp_path: Path, branch: str) -> Path:
    root = loops_project(
        tmp_path,
        {".loops/work.yaml": CHILD, ".loops/parent.yaml": PARENT.format(branch=branch)},
    )
    git(root, "branch", "feature")
    return root


def test_the_child_works_on_the_branch_in_a_worktree_removed_after(tmp_path: Path) -> None:
    root = _project(tmp_path, "feature")
    done = ll_loop(root, "run", "parent", env=run_env())
    assert done.returncode == ExitCode.OK, done.stderr
    assert git(root, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"  # never moved
    assert not (root / "where.txt").exists()
    assert git(root, "show", "feature:where.txt") == "feature\n"
    assert git(root, "log", "-1", "--format=%s", "main").strip() == "first"
    assert len(git(root, "worktree", "list").splitlines()) == 1  # the scratch one is gone
    assert "feature" in git(root, "branch", "--list", "feature")  # the branch stays


def test_an_empty_branch_runs_the_child_where_the_parent_runs(tmp_path: Path) -> None:
    root = _project(tmp_path, "")
    done = ll_loop(root, "run", "parent", env=run_env())
    assert done.returncode == ExitCode.OK, done.stderr
    assert (root / "where.txt").read_text() == "main\n"


def test_a_branch_that_is_not_there_is_the_verdict_error(tmp_path: Path) -> None:
    root = _project(tmp_path, "nowhere")
    done = ll_loop(root, "run", "parent", "--json", env=run_env())
    assert done.returncode == ExitCode.TERMINAL_FAILURE, done.stderr
    assert "worktree: no branch 'nowhere'" in done.stderr
