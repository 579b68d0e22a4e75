"""Hostile uses of `--worktree` runs and `ll-loop worktree`: the main checkout stays as it was
and nothing is lost. Real git, real bash."""

from __future__ import annotations

import json
import os
import signal
import textwrap
from pathlib import Path
from typing import Any

import pytest
from support.gitrepo import git, make_repo, picture, run_env
from support.llproc import ll_loop, start, wait_for

from little_loops.fsm.facts.layout import run_files
from little_loops.fsm.facts.outcomes import ExitCode

EDIT = """\
    name: edit
    initial: fix
    states:
      fix:
        action: echo fixed >> work.txt
        commit: true
        next: done
      done:
        terminal: true
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A project under git with its loop committed, and a staged change of the user's."""
    root = tmp_path / "project"
    make_repo(root, {"notes.txt": "notes\n", ".loops/edit.yaml": textwrap.dedent(EDIT)})
    (root / "staged.txt").write_text("staged by the user\n")
    git(root, "add", "staged.txt")
    return root


def test_a_checkpoint_never_writes_the_main_index_named_by_git_index_file(repo: Path) -> None:
    # A git hook (or a wrapper run from one) has GIT_INDEX_FILE set to the main checkout's
    # index: the worktree's checkpoint must still use the worktree's own index.
    before = picture(repo)
    stage = git(repo, "ls-files", "--stage")
    env = run_env(GIT_INDEX_FILE=str(repo / ".git" / "index"))
    done = ll_loop(repo, "run", "edit", "--worktree", "--run-id", "gi01", env=env)
    assert done.returncode == ExitCode.OK, done.stderr
    assert git(repo, "ls-files", "--stage") == stage
    assert picture(repo) == before
    tree = repo / ".loops" / ".worktrees" / "edit@gi01"
    assert git(tree, "status", "--porcelain") == ""  # the work is in the checkpoint commit
    assert git(repo, "log", "--format=%s", "-1", "ll/edit/gi01").strip() == (
        "ll-loop edit: fix (pass 1)"
    )


GIT_ADD = """\
    name: git-add
    worktree: true
    initial: fix
    states:
      fix:
        action: echo fixed >> work.txt && git add -A
        next: done
      done:
        terminal: true
"""


def test_a_worktree_runs_actions_use_the_worktrees_index_not_git_index_file(repo: Path) -> None:
    (repo / ".loops" / "git-add.yaml").write_text(textwrap.dedent(GIT_ADD))
    git(repo, "add", ".loops/git-add.yaml")
    git(repo, "commit", "-q", "-m", "git-add loop")
    (repo / "staged.txt").write_text("staged by the user\n")
    git(repo, "add", "staged.txt")
    before = picture(repo)
    stage = git(repo, "ls-files", "--stage")
    env = run_env(GIT_INDEX_FILE=str(repo / ".git" / "index"))
    done = ll_loop(repo, "run", "git-add", "--run-id", "ga01", env=env)
    assert done.returncode == ExitCode.OK, done.stderr
    assert git(repo, "ls-files", "--stage") == stage
    assert picture(repo) == before
    tree = repo / ".loops" / ".worktrees" / "git-add@ga01"
    assert git(tree, "status", "--porcelain") == "A  work.txt\n"  # staged in its own index


COMMIT_THEN_WAIT = """\
    name: commit-then-wait
    initial: change
    states:
      change:
        action: echo changed >> work.txt
        commit: true
        next: wait
      wait:
        action: test -f "$GO" || sleep 30
        next: done
      done:
        terminal: true
"""


def test_a_state_file_edited_by_hand_cannot_make_the_end_of_a_run_delete_its_commits(
    repo: Path, tmp_path: Path
) -> None:
    (repo / ".loops" / "commit-then-wait.yaml").write_text(textwrap.dedent(COMMIT_THEN_WAIT))
    go = tmp_path / "go"
    env = run_env(GO=str(go))
    key, branch = "commit-then-wait@cw01", "ll/commit-then-wait/cw01"
    run = start(repo, "run", "commit-then-wait", "--worktree", "--run-id", "cw01", env=env)
    state = run_files(key, repo / ".loops").state
    wait_for(lambda: _saved(state).get("current_state") == "wait", timeout=20)
    os.kill(run.pid, signal.SIGKILL)
    run.wait()
    tip = git(repo, "rev-parse", branch).strip()
    saved = _saved(state)
    saved["worktree"]["base"] = tip  # the branch's commit now looks like its base
    state.write_text(json.dumps(saved))
    go.touch()
    done = ll_loop(repo, "resume", key, env=env)
    assert done.returncode == ExitCode.OK, done.stderr
    assert git(repo, "rev-parse", branch).strip() == tip  # the branch and its commit are kept
    assert "kept worktree" in done.stderr, done.stderr


def _saved(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def test_merge_or_discard_never_deletes_a_worktree_made_from_inside_it(repo: Path) -> None:
    git(repo, "commit", "-q", "-m", "the user's staged file")  # merge needs a clean checkout
    outer = ll_loop(repo, "run", "edit", "--worktree", "--run-id", "out1", env=run_env())
    assert outer.returncode == ExitCode.OK, outer.stderr
    folder = repo / ".loops" / ".worktrees" / "edit@out1"
    inner = ll_loop(folder, "run", "edit", "--worktree", "--run-id", "in01", env=run_env())
    assert inner.returncode == ExitCode.OK, inner.stderr
    precious = folder / ".loops" / ".worktrees" / "edit@in01" / "precious.txt"
    precious.write_text("uncommitted work of the inner run\n")
    head = git(repo, "rev-parse", "HEAD")
    for action in ("merge", "discard"):
        done = ll_loop(repo, "worktree", action, "edit@out1", env=run_env())
        assert done.returncode == 1, done.stderr
        assert done.stderr.startswith("ll-loop: error: "), done.stderr
        assert "holds another worktree" in done.stderr, done.stderr
        assert precious.read_text() == "uncommitted work of the inner run\n"
        assert git(repo, "rev-parse", "HEAD") == head  # nothing merged either


WAIT_THEN_WRITE = """\
    name: wait-then-write
    initial: change
    states:
      change:
        action: echo changed >> work.txt
        commit: true
        next: wait
      wait:
        action: test -f "$GO" || sleep 30
        next: write
      write:
        action: echo written >> written.txt
        next: done
      done:
        terminal: true
"""


def test_resume_never_follows_a_symlink_planted_at_the_worktrees_place(
    repo: Path, tmp_path: Path
) -> None:
    (repo / ".loops" / "wait-then-write.yaml").write_text(textwrap.dedent(WAIT_THEN_WRITE))
    go = tmp_path / "go"
    env = run_env(GO=str(go))
    key = "wait-then-write@sy01"
    run = start(repo, "run", "wait-then-write", "--worktree", "--run-id", "sy01", env=env)
    state = run_files(key, repo / ".loops").state
    wait_for(lambda: _saved(state).get("current_state") == "wait", timeout=20)
    os.kill(run.pid, signal.SIGKILL)
    run.wait()
    folder = repo / ".loops" / ".worktrees" / key
    folder.rename(tmp_path / "moved")
    folder.symlink_to(repo)  # the main checkout
    before = picture(repo)
    go.touch()
    done = ll_loop(repo, "resume", key, env=env)
    assert done.returncode != ExitCode.OK
    assert done.stderr.startswith("ll-loop: error: "), done.stderr
    assert "symbolic link" in done.stderr, done.stderr
    assert not (repo / "written.txt").exists()
    assert picture(repo) == before


def test_worktree_commands_never_follow_a_symlink_planted_at_the_worktrees_place(
    repo: Path, tmp_path: Path
) -> None:
    git(repo, "commit", "-q", "-m", "the user's staged file")  # merge needs a clean checkout
    done = ll_loop(repo, "run", "edit", "--worktree", "--run-id", "sy02", env=run_env())
    assert done.returncode == ExitCode.OK, done.stderr
    folder = repo / ".loops" / ".worktrees" / "edit@sy02"
    folder.rename(tmp_path / "moved")
    folder.symlink_to(repo)  # the main checkout, which has an untracked file of the user's
    (repo / "private.txt").write_text("the user's, never to be committed\n")
    before = picture(repo)
    branches = git(repo, "for-each-ref", "refs/heads")
    for action in ("merge", "discard", "diff"):
        done = ll_loop(repo, "worktree", action, "edit@sy02", env=run_env())
        assert done.returncode == 1, done.stderr
        assert done.stderr.startswith("ll-loop: error: "), done.stderr
        assert "symbolic link" in done.stderr, done.stderr
    assert picture(repo) == before
    assert git(repo, "for-each-ref", "refs/heads") == branches


def test_an_option_like_base_of_a_background_run_is_refused_as_a_ref(repo: Path) -> None:
    done = ll_loop(repo, "run", "edit", "--worktree", "--background", "--base=-x", env=run_env())
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("ll-loop: error: "), done.stderr
    assert "--base '-x': no such commit, branch or tag" in done.stderr, done.stderr
    assert "usage:" not in done.stderr
    # Refused before a child starts: the refusal does not depend on the child's start-up
    # being quick enough to be watched (no background log was begun).
    assert "background run" not in done.stderr, done.stderr
    assert not list((repo / ".loops").glob(".running/*.log"))


NEW_FILE = """\
    name: new-file
    initial: write
    states:
      write:
        action: echo "the run's work" > new.txt
        next: done
      done:
        terminal: true
"""


def test_new_files_count_as_changes_when_git_status_hides_untracked_files(repo: Path) -> None:
    # `status.showUntrackedFiles=no` (common in big repositories) must not make a run that
    # only made new files look like it changed nothing: its worktree would be deleted.
    git(repo, "commit", "-q", "-m", "the user's staged file")  # merge needs a clean checkout
    git(repo, "config", "status.showUntrackedFiles", "no")
    (repo / ".loops" / "new-file.yaml").write_text(textwrap.dedent(NEW_FILE))
    done = ll_loop(repo, "run", "new-file", "--worktree", "--run-id", "nf01", env=run_env())
    assert done.returncode == ExitCode.OK, done.stderr
    assert "kept worktree" in done.stderr, done.stderr
    merged = ll_loop(repo, "worktree", "merge", "new-file@nf01", env=run_env())
    assert merged.returncode == ExitCode.OK, merged.stderr
    assert (repo / "new.txt").read_text() == "the run's work\n"
