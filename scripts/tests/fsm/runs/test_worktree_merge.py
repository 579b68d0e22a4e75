"""A kept worktree's diff, merge and discarding, with real git; refused while its run is live."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support.gitrepo import branches, commit_all, git, head, loops_project, untouched

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.runs.locks import acquire_scope
from little_loops.fsm.runs.worktree_find import resolve
from little_loops.fsm.runs.worktree_merge import (
    LEFTOVER_MESSAGE,
    commit_leftovers,
    diff_text,
    discard_worktree,
    live_holder,
    merge_worktree,
)
from little_loops.fsm.runs.worktrees import Worktree, create_worktree


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = loops_project(tmp_path, {"README": "r\n", "app.py": "print('hi')\n"})
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def run(repo: Path) -> Worktree:
    return create_worktree(repo / ".loops", "fix", "ab12", None)


def test_the_diff_has_commits_uncommitted_and_untracked_changes(repo: Path, run: Worktree) -> None:
    (run.path / "README").write_text("committed\n")
    commit_all(run.path, "one")
    (run.path / "app.py").write_text("print('edited')\n")
    (run.path / "new.txt").write_text("untracked\n")
    status = git(run.path, "status", "--porcelain")
    text = diff_text(repo / ".loops", run)
    assert "+committed" in text
    assert "+print('edited')" in text
    assert "+untracked" in text
    assert git(run.path, "status", "--porcelain") == status  # its own index is not changed
    stat = diff_text(repo / ".loops", run, stat=True)
    assert "3 files changed" in stat
    assert "+committed" not in stat


def test_with_its_folder_gone_the_diff_is_the_branch_commits(repo: Path, run: Worktree) -> None:
    (run.path / "README").write_text("committed\n")
    commit_all(run.path, "one")
    (run.path / "lost.txt").write_text("never committed\n")
    shutil.rmtree(run.path)
    gone = resolve(repo / ".loops", "fix")
    text = diff_text(repo / ".loops", gone)
    assert "+committed" in text
    assert "lost.txt" not in text


def test_leftovers_are_committed_on_the_branch(run: Worktree) -> None:
    assert commit_leftovers(run) is None  # nothing to commit
    (run.path / "new.txt").write_text("left\n")
    sha = commit_leftovers(run)
    assert sha is not None
    assert head(run.path).startswith(sha)
    message = git(run.path, "log", "-1", "--format=%s").strip()
    assert message == LEFTOVER_MESSAGE.format(key="fix@ab12")
    assert git(run.path, "status", "--porcelain") == ""


def test_a_merge_fast_forwards_and_removes_the_worktree(repo: Path, run: Worktree) -> None:
    (run.path / "README").write_text("fixed\n")
    tip = commit_all(run.path, "fix")
    (run.path / "extra.txt").write_text("left\n")
    heard: list[str] = []
    notes = merge_worktree(repo / ".loops", run, on_note=heard.append)
    assert notes == heard
    assert notes[0].startswith("committed the changes left in the worktree on ll/fix/ab12 (")
    new_tip = head(repo)
    assert git(repo, "rev-parse", f"{new_tip}^").strip() == tip
    assert notes[1] == f"merged ll/fix/ab12 into main (fast-forward to {new_tip[:7]})"
    assert notes[2] == "removed worktree .loops/.worktrees/fix@ab12 and branch ll/fix/ab12"
    assert (repo / "README").read_text() == "fixed\n"
    assert (repo / "extra.txt").read_text() == "left\n"
    assert not run.path.exists()
    assert branches(repo) == ["main"]


def test_a_merge_after_main_moved_makes_a_merge_commit_and_keep_keeps(
    repo: Path, run: Worktree
) -> None:
    (run.path / "README").write_text("fixed\n")
    commit_all(run.path, "fix")
    (repo / "app.py").write_text("print('main')\n")
    before = commit_all(repo, "main moved")
    notes = merge_worktree(repo / ".loops", run, keep=True)
    after = head(repo)
    assert git(repo, "rev-parse", f"{after}^1").strip() == before
    assert notes == [
        f"merged ll/fix/ab12 into main (merge commit {after[:7]})",
        "kept worktree .loops/.worktrees/fix@ab12 and branch ll/fix/ab12",
    ]
    assert run.path.is_dir()
    assert branches(repo) == ["ll/fix/ab12", "main"]
    again = merge_worktree(repo / ".loops", run, keep=True)
    assert again[0] == "merged ll/fix/ab12 into main (nothing to merge: it is in there already)"


def test_a_conflict_undoes_the_merge_and_keeps_everything(repo: Path, run: Worktree) -> None:
    (run.path / "README").write_text("from the run\n")
    commit_all(run.path, "run")
    (repo / "README").write_text("from main\n")
    commit_all(repo, "main")
    (run.path / "notes.txt").write_text("left\n")
    before = untouched(repo)
    heard: list[str] = []
    with pytest.raises(LoopRuntimeError) as raised:
        merge_worktree(repo / ".loops", run, on_note=heard.append)
    assert str(raised.value).startswith(
        "merging ll/fix/ab12 into main conflicts in README: the merge was undone"
    )
    assert untouched(repo) == before
    assert heard[0].startswith("committed the changes left in the worktree")  # told anyway
    assert run.path.is_dir()
    assert branches(repo) == ["ll/fix/ab12", "main"]


def test_a_dirty_or_detached_main_checkout_is_refused(repo: Path, run: Worktree) -> None:
    (run.path / "README").write_text("fixed\n")
    tip = commit_all(run.path, "fix")
    (repo / "app.py").write_text("print('uncommitted')\n")
    with pytest.raises(LoopRuntimeError, match=r"has uncommitted changes \(app.py\)"):
        merge_worktree(repo / ".loops", run)
    git(repo, "checkout", "-q", "app.py")
    git(repo, "checkout", "-q", "--detach")
    with pytest.raises(LoopRuntimeError, match=r"is not on a branch \(detached HEAD\)"):
        merge_worktree(repo / ".loops", run)
    assert head(run.path) == tip
    assert branches(repo) == ["ll/fix/ab12", "main"]


def test_a_folder_switched_to_another_branch_is_refused(repo: Path, run: Worktree) -> None:
    git(run.path, "switch", "-q", "-c", "mine")
    moved = resolve(repo / ".loops", "fix")
    with pytest.raises(LoopRuntimeError, match=r"has mine checked out, not ll/fix/ab12"):
        merge_worktree(repo / ".loops", moved)


def test_a_live_run_is_neither_merged_nor_discarded(repo: Path, run: Worktree) -> None:
    loops = repo / ".loops"
    assert live_holder(loops, run) is None
    held = acquire_scope(run.key, ["."], loops)
    try:
        holder = live_holder(loops, run)
        assert holder is not None
        assert holder.loop == "fix@ab12"
        for doing, act in (
            ("merge", lambda: merge_worktree(loops, run)),
            ("discard", lambda: discard_worktree(loops, run)),
        ):
            with pytest.raises(LoopRuntimeError, match=rf"still running .*not going to {doing}"):
                act()
    finally:
        held.release()
    assert run.path.is_dir()
    assert discard_worktree(loops, run) == (
        "discarded worktree .loops/.worktrees/fix@ab12 and branch ll/fix/ab12"
    )
    assert not run.path.exists()
    assert branches(repo) == ["main"]


def test_a_branch_checked_out_elsewhere_is_not_discarded(
    repo: Path, run: Worktree, tmp_path: Path
) -> None:
    shutil.rmtree(run.path)
    git(repo, "worktree", "prune")
    git(repo, "worktree", "add", "-q", str(tmp_path / "mine"), "ll/fix/ab12")
    with pytest.raises(LoopRuntimeError, match=r"is checked out in .*nothing was discarded"):
        discard_worktree(repo / ".loops", resolve(repo / ".loops", "fix"))
    assert branches(repo) == ["ll/fix/ab12", "main"]
