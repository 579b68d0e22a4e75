"""Checkpoints as people see them: `ll-loop validate`, `ll-loop history` and the progress lines."""

from __future__ import annotations

import io
import json
import textwrap
from pathlib import Path

import pytest
from support.gitrepo import git, linked_worktree, make_repo
from support.llproc import console

from little_loops.cli.display import ProgressDisplay
from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.runs.persistent import PersistentExecutor
from little_loops.fsm.validate.loopfile import load_and_validate

LOOP = """\
name: fix
initial: fix
max_iterations: 2
states:
  fix:
    action: |
      n=$(( $(cat n 2>/dev/null || echo 0) + 1 ))
      echo $n > n
      echo "scratch $n" > scratch.txt
      echo "fixed round $n"
    commit: true
    next: check
  check:
    action: "echo failed > report.txt; [ $(cat n) -ge 5 ]"
    on_success: done
    on_failure: undo
  undo:
    action: echo "left as it was"
    rollback: true
    next: fix
  done:
    terminal: true
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git repository with the loop in .loops/ and a linked worktree beside it."""
    root = tmp_path / "project"
    make_repo(root, {".loops/fix.yaml": LOOP}, "add the loop")
    linked_worktree(root, tmp_path / "wt")
    return root


def run_in_worktree(root: Path) -> tuple[Path, str]:
    """Run the loop in the worktree, its files under the project's .loops/: (worktree, display)."""
    worktree = root.parent / "wt"
    shown = io.StringIO()
    fsm = load_and_validate(root / ".loops" / "fix.yaml")
    PersistentExecutor(
        fsm,
        loops_dir=root / ".loops",
        action_runner=DefaultActionRunner(cwd=worktree),
        worktree=worktree,
        event_callback=ProgressDisplay(shown, max_iterations=fsm.max_iterations),
    ).run()
    return worktree, shown.getvalue()


def test_history_shows_each_checkpoint_with_its_short_sha(project: Path) -> None:
    worktree, _ = run_in_worktree(project)
    shas = git(worktree, "log", "--format=%H", "main..HEAD").split()
    assert len(shas) == 2  # pass 1's fix, and pass 2's (pass 1's undo kept the commit)
    result = console(project, "history", "fix")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    commits = [line.split(" ", 1)[1] for line in lines if " checkpoint " in line]
    assert commits == [
        f"checkpoint      fix commit {shas[1][:7]} (pass 1)",
        f"checkpoint      fix commit {shas[0][:7]} (pass 2)",
    ]
    rollbacks = [line.split(" ", 1)[1] for line in lines if " rollback " in line]
    # `fix` committed its changes; `undo` discards what `check` left (report.txt).
    assert rollbacks == [
        f"rollback        undo rollback to {shas[1][:7]}: 1 file discarded",
        f"rollback        undo rollback to {shas[0][:7]}: 1 file discarded",
    ]
    assert not (worktree / "report.txt").exists()


def test_history_json_has_the_full_sha(project: Path) -> None:
    worktree, _ = run_in_worktree(project)
    result = console(project, "history", "fix", "--json")
    events = json.loads(result.stdout)
    checkpoints = [e for e in events if e["event"] == "checkpoint"]
    assert checkpoints[-1]["sha"] == git(worktree, "rev-parse", "HEAD").strip()
    assert checkpoints[-1]["pass"] == 2


def test_the_progress_lines_show_commits_and_rollbacks(project: Path) -> None:
    worktree, shown = run_in_worktree(project)
    head = git(worktree, "rev-parse", "HEAD").strip()
    assert f"       ● commit {head[:7]} (pass 2)\n" in shown
    assert "       ● rollback to " in shown


def test_validate_accepts_the_checkpoint_keys(project: Path) -> None:
    (project / ".loops" / "each.yaml").write_text(
        textwrap.dedent(
            """\
            name: each
            initial: fix
            commit: each_pass
            states:
              fix:
                action: "true"
                commit: false
                rollback: true
                next: done
              done:
                terminal: true
                commit: true
            """
        )
    )
    for name in ("fix", "each"):
        result = console(project, "validate", name)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "error" not in result.stdout


def test_validate_names_a_wrong_commit_value(project: Path) -> None:
    (project / ".loops" / "fix.yaml").write_text(LOOP.replace("commit: true", "commit: always"))
    result = console(project, "validate", "fix")
    assert result.returncode == 2
    assert "loop 'fix' > states > fix > commit: expected true or false, got 'always'" in (
        result.stdout
    )


def test_the_dry_run_plan_names_the_checkpoints(project: Path) -> None:
    result = console(project, "run", "fix", "--dry-run")
    assert result.returncode == 0, result.stderr
    plan = result.stdout
    fix = plan[plan.index("  fix  [initial]") : plan.index("  check\n")]
    assert "    commit: the worktree, when it changed\n" in fix
    undo = plan[plan.index("  undo\n") : plan.index("  done  [terminal]")]
    assert "    rollback: first, back to the worktree's last commit\n" in undo
    assert plan.count("    commit:") == 1
    assert plan.count("    rollback:") == 1
