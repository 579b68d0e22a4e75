"""Checkpoints in a real git worktree: `commit:` after actions, `rollback:` before them."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from support.gitrepo import git, linked_worktree, make_repo

from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.engine.commits import checkpoint_problem, commit_message, commit_text
from little_loops.fsm.engine.executor import ExecutionResult, FSMExecutor
from little_loops.fsm.runs.persistent import PersistentExecutor
from little_loops.fsm.validate.loopfile import load_and_validate


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with one commit the user made, and a linked worktree of it (returned)."""
    main = tmp_path / "main"
    make_repo(main, {"notes.txt": "the user's file\n"}, "the user's commit")
    return linked_worktree(main, tmp_path / "wt")


def load(tmp_path: Path, text: str) -> FSMLoop:
    path = tmp_path / "loop.yaml"
    path.write_text(textwrap.dedent(text))
    return load_and_validate(path)


def run(
    fsm: FSMLoop, worktree: Path | None, cwd: Path
) -> tuple[ExecutionResult, list[dict[str, Any]]]:
    events: list[dict[str, Any]] = []
    runner = DefaultActionRunner(cwd=cwd)
    executor = FSMExecutor(
        fsm, event_callback=events.append, action_runner=runner, worktree=worktree
    )
    return executor.run(), events


def log(repo: Path) -> list[str]:
    """Every commit message on HEAD, newest first, each as one string."""
    return [m.strip() for m in git(repo, "log", "--format=%B%x00").split("\0") if m.strip()]


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == kind]


COUNTER = """\
name: fix
initial: edit
max_iterations: 3
states:
  edit:
    action: |
      n=$(( $(cat n 2>/dev/null || echo 0) + 1 ))
      echo $n > n
      echo "counted to $n"
      echo
    commit: true
    on_success: edit
    on_failure: done
  done:
    terminal: true
"""


def test_one_commit_per_changing_pass_with_the_exact_message(repo: Path, tmp_path: Path) -> None:
    result, events = run(load(tmp_path, COUNTER), repo, repo)
    assert result.terminated_by == "max_iterations"
    assert log(repo) == [
        "ll-loop fix: edit (pass 3)\n\ncounted to 3",
        "ll-loop fix: edit (pass 2)\n\ncounted to 2",
        "ll-loop fix: edit (pass 1)\n\ncounted to 1",
        "the user's commit",
    ]
    checkpoints = of(events, "checkpoint")
    assert [(e["state"], e["pass"]) for e in checkpoints] == [("edit", 1), ("edit", 2), ("edit", 3)]
    assert checkpoints[-1]["sha"] == git(repo, "rev-parse", "HEAD").strip()
    assert git(repo, "status", "--porcelain") == ""
    # The checkpoint follows the action it commits, before its route.
    kinds = [e["event"] for e in events if e["event"] != "loop_start"]
    assert kinds[:4] == ["state_enter", "action_start", "action_complete", "checkpoint"]


def test_no_commit_when_nothing_changed(repo: Path, tmp_path: Path) -> None:
    fsm = load(
        tmp_path,
        """\
        name: fix
        initial: look
        max_iterations: 2
        states:
          look:
            action: cat notes.txt
            commit: true
            on_success: look
            on_failure: done
          done:
            terminal: true
        """,
    )
    result, events = run(fsm, repo, repo)
    assert result.iterations == 2
    assert of(events, "checkpoint") == []
    assert log(repo) == ["the user's commit"]


def test_each_pass_commits_every_changing_action_and_a_state_can_opt_out(
    repo: Path, tmp_path: Path
) -> None:
    fsm = load(
        tmp_path,
        """\
        name: fix
        initial: write
        commit: each_pass
        states:
          write:
            action: echo one > a.txt
            next: quiet
          quiet:
            action: echo two > b.txt
            commit: false
            next: more
          more:
            action: echo three > c.txt && echo wrote c
            next: done
          done:
            terminal: true
        """,
    )
    result, events = run(fsm, repo, repo)
    assert result.terminated_by == "terminal"
    assert log(repo) == [
        "ll-loop fix: more (pass 1)\n\nwrote c",  # b.txt of `quiet` went in with it
        "ll-loop fix: write (pass 1)",  # no output: no summary paragraph
        "the user's commit",
    ]
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["b.txt", "c.txt"]
    assert [e["state"] for e in of(events, "checkpoint")] == ["write", "more"]


def test_a_terminal_state_without_an_action_commits_when_entered(
    repo: Path, tmp_path: Path
) -> None:
    fsm = load(
        tmp_path,
        """\
        name: fix
        initial: write
        states:
          write:
            action: echo result > r.txt
            next: done
          done:
            terminal: true
            commit: true
        """,
    )
    run(fsm, repo, repo)
    assert log(repo)[0] == "ll-loop fix: done (pass 1)"


ROLLBACK = """\
name: fix
initial: fix
max_iterations: 2
states:
  fix:
    action: |
      echo "attempt" >> notes.txt
      echo scratch > new.txt
      mkdir -p build && echo x > build/out.o
    next: check
  check:
    action: "false"
    on_success: done
    on_failure: undo
  undo:
    rollback: true
    next: fix
  done:
    terminal: true
"""


def test_rollback_discards_changes_and_untracked_files_and_never_moves_head(
    repo: Path, tmp_path: Path
) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()
    result, events = run(load(tmp_path, ROLLBACK), repo, repo)
    assert result.terminated_by == "max_iterations"
    # Each pass: fix, check fails, undo discards what fix did (tracked and untracked).
    rollbacks = of(events, "rollback")
    assert [(e["state"], e["sha"], e["count"]) for e in rollbacks] == [("undo", head, 3)] * 2
    assert sorted(rollbacks[0]["files"]) == ["build/out.o", "new.txt", "notes.txt"]
    assert (repo / "notes.txt").read_text() == "the user's file\n"
    assert not (repo / "new.txt").exists()
    assert not (repo / "build").exists()
    assert git(repo, "rev-parse", "HEAD").strip() == head
    assert log(repo) == ["the user's commit"]


def test_rollback_returns_to_the_last_checkpoint(repo: Path, tmp_path: Path) -> None:
    fsm = load(
        tmp_path,
        """\
        name: fix
        initial: good
        states:
          good:
            action: echo good > kept.txt
            commit: true
            next: bad
          bad:
            action: echo bad > kept.txt && echo bad > junk.txt
            next: undo
          undo:
            rollback: true
            next: done
          done:
            terminal: true
        """,
    )
    run(fsm, repo, repo)
    assert (repo / "kept.txt").read_text() == "good\n"
    assert not (repo / "junk.txt").exists()
    assert log(repo) == ["ll-loop fix: good (pass 1)", "the user's commit"]


def test_without_a_worktree_commit_and_rollback_do_nothing(repo: Path, tmp_path: Path) -> None:
    # The main checkout of the fixture's repository: a user's uncommitted change in it.
    main = repo.parent / "main"
    (main / "notes.txt").write_text("the user's unsaved edit\n")
    fsm = load(tmp_path, ROLLBACK.replace("rollback: true", "rollback: true\n    commit: true"))
    result, events = run(fsm, None, main)
    assert result.terminated_by == "max_iterations"
    assert of(events, "checkpoint") == of(events, "rollback") == []
    assert log(main) == ["the user's commit"]
    assert (main / "notes.txt").read_text().startswith("the user's unsaved edit\nattempt\n")
    assert (main / "new.txt").exists()


def test_a_main_checkout_given_as_the_worktree_is_left_untouched(
    repo: Path, tmp_path: Path
) -> None:
    main = repo.parent / "main"
    (main / "notes.txt").write_text("the user's unsaved edit\n")
    result, events = run(load(tmp_path, ROLLBACK), main, main)
    assert result.terminated_by == "max_iterations"  # the run went on
    rollback = of(events, "rollback")[0]
    assert "is a main checkout, not a worktree: left untouched" in rollback["error"]
    assert "sha" not in rollback
    assert (main / "notes.txt").read_text().startswith("the user's unsaved edit\n")


def test_a_failing_commit_is_recorded_and_the_run_goes_on(repo: Path, tmp_path: Path) -> None:
    hooks = repo.parent / "main" / ".git" / "hooks"
    (hooks / "pre-commit").write_text("#!/bin/sh\necho 'no commits today' >&2\nexit 1\n")
    (hooks / "pre-commit").chmod(0o755)
    result, events = run(load(tmp_path, COUNTER), repo, repo)
    assert result.terminated_by == "max_iterations"
    checkpoints = of(events, "checkpoint")
    assert len(checkpoints) == 3
    assert checkpoints[0]["error"] == "git commit failed: no commits today"
    assert "sha" not in checkpoints[0]
    assert log(repo) == ["the user's commit"]
    assert (repo / "n").read_text() == "3\n"  # the changes stay, uncommitted


def test_a_repository_with_no_identity_gets_the_fallback_one(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git(repo.parent / "main", "config", "--unset", "user.email")
    git(repo.parent / "main", "config", "--unset", "user.name")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-global-config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("EMAIL", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("GIT_COMMITTER_EMAIL", raising=False)
    run(load(tmp_path, COUNTER.replace("max_iterations: 3", "max_iterations: 1")), repo, repo)
    assert git(repo, "log", "-1", "--format=%an <%ae> / %cn <%ce>").strip() == (
        "ll-loop <ll-loop@localhost> / ll-loop <ll-loop@localhost>"
    )


def test_the_repositorys_own_identity_is_kept(repo: Path, tmp_path: Path) -> None:
    run(load(tmp_path, COUNTER.replace("max_iterations: 3", "max_iterations: 1")), repo, repo)
    assert git(repo, "log", "-1", "--format=%an <%ae>").strip() == "Test User <test@example.com>"


def test_a_persistent_run_records_checkpoints_and_resumes_past_them(
    repo: Path, tmp_path: Path
) -> None:
    loops = tmp_path / "project" / ".loops"
    loops.mkdir(parents=True)
    fsm = load(tmp_path, COUNTER.replace("max_iterations: 3", "max_iterations: 2"))
    runner = DefaultActionRunner(cwd=repo)
    first = PersistentExecutor(fsm, loops_dir=loops, action_runner=runner, worktree=repo)
    assert first.run().terminated_by == "max_iterations"
    saved = [e for e in first.persistence.iter_events() if e["event"] == "checkpoint"]
    assert [e["sha"] for e in saved][-1] == git(repo, "rev-parse", "HEAD").strip()
    # A resume with a higher limit replays the log (checkpoints included) and goes on.
    fsm.max_iterations = 3
    again = PersistentExecutor(fsm, loops_dir=loops, action_runner=runner, worktree=repo)
    assert again.resume().iterations == 3
    assert log(repo)[0] == "ll-loop fix: edit (pass 3)\n\ncounted to 3"


def test_a_sub_loop_commits_in_the_same_worktree(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "child.yaml").write_text(
        textwrap.dedent(
            """\
            name: child
            initial: write
            states:
              write:
                action: echo child > child.txt
                commit: true
                next: done
              done:
                terminal: true
            """
        )
    )
    fsm = load(
        tmp_path,
        """\
        name: parent
        initial: sub
        states:
          sub:
            loop: child
            on_success: done
          done:
            terminal: true
        """,
    )
    run(fsm, repo, repo)
    assert log(repo)[0] == "ll-loop child: write (pass 1)"
    assert checkpoint_problem(fsm, in_worktree=False) == (
        "loop 'parent' uses commit: (state 'write' of sub-loop 'child'); checkpoints need a "
        "worktree: run it with --worktree or set worktree: true"
    )


EACH_PASS = COUNTER.replace("    commit: true\n", "").replace(
    "states:", "commit: each_pass\nstates:"
)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (COUNTER, "loop 'fix' uses commit: (state 'edit')"),
        (ROLLBACK, "loop 'fix' uses rollback: (state 'undo')"),
        (
            COUNTER.replace("    commit: true\n", "").replace(
                "states:", "commit: each_pass\nstates:"
            ),
            "loop 'fix' uses commit: each_pass",
        ),
    ],
)
def test_checkpoint_problem_outside_a_worktree(tmp_path: Path, text: str, problem: str) -> None:
    fsm = load(tmp_path, text)
    assert checkpoint_problem(fsm, in_worktree=False) == (
        f"{problem}; checkpoints need a worktree: run it with --worktree or set worktree: true"
    )
    assert checkpoint_problem(fsm, in_worktree=True) is None


def test_checkpoint_problem_is_none_without_checkpoints(tmp_path: Path) -> None:
    fsm = load(tmp_path, COUNTER.replace("commit: true", "commit: false"))
    assert checkpoint_problem(fsm, in_worktree=False) is None


def test_commit_message_summary_is_the_last_line_cut_to_100_characters() -> None:
    long = "x" * 150
    assert commit_message("l", "s", 4, f"first\n{long}\n\n  ") == [
        "ll-loop l: s (pass 4)",
        "x" * 99 + "…",
    ]
    assert commit_message("l", "s", 1, "\n \n") == ["ll-loop l: s (pass 1)"]


def test_commit_text_for_history() -> None:
    sha = "0123456789abcdef" * 2
    assert commit_text({"event": "checkpoint", "sha": sha, "pass": 2}) == "commit 0123456 (pass 2)"
    assert commit_text({"event": "checkpoint", "pass": 2, "error": "git commit failed: x"}) == (
        "commit: git commit failed: x"
    )
    rollback = {"event": "rollback", "sha": sha, "count": 1, "files": ["a"]}
    assert commit_text(rollback) == "rollback to 0123456: 1 file discarded"
    assert commit_text({**rollback, "count": 2}) == "rollback to 0123456: 2 files discarded"
    failed = {"event": "rollback", "error": "git reset failed: no HEAD"}
    assert commit_text(failed) == "rollback: git reset failed: no HEAD"


CRASH_AFTER_ACTION = """\
import os, sys
from pathlib import Path
from little_loops.fsm.actions.runners import DefaultActionRunner
from little_loops.fsm.validate.loopfile import load_and_validate
from little_loops.fsm.runs.persistent import PersistentExecutor

loop, loops, worktree = map(Path, sys.argv[1:4])

def crash(event):
    if event["event"] == "action_complete":
        os._exit(9)  # killed between the action's end and its commit

PersistentExecutor(
    load_and_validate(loop),
    loops_dir=loops,
    action_runner=DefaultActionRunner(cwd=worktree),
    worktree=worktree,
    event_callback=crash,
).run()
"""


def test_a_resume_commits_what_a_crash_left_uncommitted(repo: Path, tmp_path: Path) -> None:
    loops = tmp_path / "project" / ".loops"
    loops.mkdir(parents=True)
    path = tmp_path / "loop.yaml"
    path.write_text(COUNTER.replace("max_iterations: 3", "max_iterations: 1"))
    argv = [sys.executable, "-c", CRASH_AFTER_ACTION, str(path), str(loops), str(repo)]
    assert subprocess.run(argv, check=False).returncode == 9
    assert log(repo) == ["the user's commit"]  # the action ran; no commit yet
    resumed = PersistentExecutor(
        load_and_validate(path),
        loops_dir=loops,
        action_runner=DefaultActionRunner(cwd=repo),
        worktree=repo,
    )
    assert resumed.resume().terminated_by == "max_iterations"
    assert log(repo) == ["ll-loop fix: edit (pass 1)\n\ncounted to 1", "the user's commit"]
    assert (repo / "n").read_text() == "1\n"  # the action did not run again
