"""Run worktrees with real git: made from HEAD or a base, sized up, kept or removed at the end."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.gitrepo import branches, commit_all, git, head, loops_project, untouched
from support.slowdown import scaled

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.layout import GITIGNORE, worktree_path, worktrees_dir
from little_loops.fsm.runs.place import RunPlace
from little_loops.fsm.runs.worktree_find import find_worktrees, resolve
from little_loops.fsm.runs.worktree_merge import discard_worktree, merge_worktree
from little_loops.fsm.runs.worktrees import (
    create_worktree,
    finish_worktree,
    keep_or_remove,
    repo_top,
    workdir_in,
)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = loops_project(tmp_path, {"src/app.py": "print('hi')\n", "README": "r\n"})
    monkeypatch.chdir(root)
    return root


def test_create_makes_the_branch_and_folder_and_leaves_the_main_checkout_alone(
    repo: Path,
) -> None:
    (repo / "README").write_text("the user's uncommitted edit\n")
    (repo / "scratch.txt").write_text("untracked\n")
    before = untouched(repo)
    worktree = create_worktree(repo / ".loops", "fix", "ab12", None)
    assert worktree.path == worktree_path(repo / ".loops", "fix", "ab12")
    assert worktree.path.is_dir()
    assert worktree.branch == "ll/fix/ab12"
    assert worktree.base_sha == head(repo)
    assert head(worktree.path) == head(repo)
    assert git(worktree.path, "symbolic-ref", "--short", "HEAD").strip() == "ll/fix/ab12"
    assert git(repo, "config", "branch.ll/fix/ab12.llbase").strip() == head(repo)
    # The worktree has the committed files, not the user's uncommitted ones.
    assert (worktree.path / "README").read_text() == "r\n"
    assert not (worktree.path / "scratch.txt").exists()
    assert (worktrees_dir(repo / ".loops") / GITIGNORE).read_text().endswith("*\n")
    assert untouched(repo) == before
    # Running in it (editing, committing) still leaves the main checkout as it was.
    (worktree.path / "src" / "app.py").write_text("print('fixed')\n")
    commit_all(worktree.path, "fix")
    note = keep_or_remove(worktree)
    assert note.startswith("kept worktree")
    assert untouched(repo) == before


def test_a_base_ref_is_the_start_and_a_bad_one_is_one_line(repo: Path) -> None:
    first = head(repo)
    (repo / "README").write_text("second\n")
    commit_all(repo, "second")
    git(repo, "tag", "v1", first)
    worktree = create_worktree(repo / ".loops", "fix", "ab12", "v1")
    assert worktree.base_sha == first
    assert head(worktree.path) == first
    with pytest.raises(LoopRuntimeError) as raised:
        create_worktree(repo / ".loops", "fix", "cd34", "no-such-ref")
    assert str(raised.value) == f"--base 'no-such-ref': no such commit, branch or tag in {repo}"
    assert branches(repo) == ["ll/fix/ab12", "main"]


def test_an_existing_branch_or_folder_is_refused(repo: Path) -> None:
    create_worktree(repo / ".loops", "fix", "ab12", None)
    with pytest.raises(LoopRuntimeError, match=r"^branch ll/fix/ab12 exists already"):
        create_worktree(repo / ".loops", "fix", "ab12", None)
    worktree_path(repo / ".loops", "fix", "cd34").mkdir()
    with pytest.raises(LoopRuntimeError, match=r"fix@cd34 exists already"):
        create_worktree(repo / ".loops", "fix", "cd34", None)
    assert branches(repo) == ["ll/fix/ab12", "main"]


def test_outside_a_repository_or_before_a_commit_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "plain" / ".loops").mkdir(parents=True)
    assert repo_top(tmp_path / "plain") is None
    with pytest.raises(LoopRuntimeError, match=r"is not in a git repository: worktrees need one"):
        create_worktree(tmp_path / "plain" / ".loops", "fix", "ab12", None)
    empty = tmp_path / "empty"
    (empty / ".loops").mkdir(parents=True)
    git(empty, "init", "--quiet")
    with pytest.raises(LoopRuntimeError, match=r"has no commits yet"):
        create_worktree(empty / ".loops", "fix", "ab12", None)


def test_a_loop_name_git_cannot_take_is_refused(repo: Path) -> None:
    with pytest.raises(LoopRuntimeError, match=r"loop name 'a..b' cannot be part of a git branch"):
        create_worktree(repo / ".loops", "a..b", "ab12", None)


def test_the_working_folder_is_the_same_subfolder_in_the_worktree(repo: Path) -> None:
    worktree = create_worktree(repo / ".loops", "fix", "ab12", None)
    assert workdir_in(worktree, repo) == worktree.path
    assert workdir_in(worktree, repo / "src") == worktree.path / "src"


def test_finish_removes_a_worktree_that_changed_nothing(repo: Path) -> None:
    worktree = create_worktree(repo / ".loops", "fix", "ab12", None)
    # An ignored file (a cache) does not count as a change.
    (repo / ".git" / "info" / "exclude").write_text("cache/\n")
    (worktree.path / "cache").mkdir()
    (worktree.path / "cache" / "x.pyc").write_text("compiled\n")
    note = keep_or_remove(worktree)
    assert note == (
        "removed worktree .loops/.worktrees/fix@ab12 and branch ll/fix/ab12: the run changed"
        " nothing"
    )
    assert not worktree.path.exists()
    assert branches(repo) == ["main"]
    assert find_worktrees(repo / ".loops") == []


@pytest.mark.parametrize("how", ["commit", "edit", "new file"])
def test_finish_keeps_a_worktree_with_commits_or_changes(repo: Path, how: str) -> None:
    worktree = create_worktree(repo / ".loops", "fix", "ab12", None)
    if how == "new file":
        (worktree.path / "new.txt").write_text("new\n")
    else:
        (worktree.path / "README").write_text("changed\n")
    if how == "commit":
        commit_all(worktree.path, "change")
    note = keep_or_remove(worktree)
    expected = {
        "commit": "1 commit, 1 file changed",
        "edit": "0 commits, 1 file changed + uncommitted",
        "new file": "0 commits, 1 file changed + uncommitted",
    }[how]
    assert note == f"kept worktree .loops/.worktrees/fix@ab12 (branch ll/fix/ab12: {expected})"
    assert worktree.path.is_dir()
    assert [wt.key for wt in find_worktrees(repo / ".loops")] == ["fix@ab12"]


def test_find_and_resolve(repo: Path) -> None:
    for name, run_id in (("fix", "ab12"), ("fix", "cd34"), ("lint", "ef56")):
        create_worktree(repo / ".loops", name, run_id, None)
    # A worktree of the user's own elsewhere is none of ours, even named like one.
    git(repo, "worktree", "add", "--quiet", "-b", "mine", str(repo.parent / "mine@zz99"))
    loops = repo / ".loops"
    assert [wt.key for wt in find_worktrees(loops)] == ["fix@ab12", "fix@cd34", "lint@ef56"]
    assert [wt.key for wt in find_worktrees(loops, "fix")] == ["fix@ab12", "fix@cd34"]
    assert resolve(loops, "lint").key == "lint@ef56"
    assert resolve(loops, "fix@cd34").key == "fix@cd34"
    with pytest.raises(LoopRuntimeError) as raised:
        resolve(loops, "fix")
    assert str(raised.value) == (
        "loop 'fix' has 2 kept worktrees: fix@ab12, fix@cd34; name one as NAME@ID"
    )
    with pytest.raises(LoopRuntimeError) as raised:
        resolve(loops, "fix@zz99")
    assert str(raised.value) == "no kept worktree 'fix@zz99': loop 'fix' has fix@ab12, fix@cd34"
    with pytest.raises(LoopRuntimeError) as raised:
        resolve(loops, "lnit")
    assert str(raised.value) == "loop 'lnit' has no kept worktree (did you mean lint?)"


def test_a_folder_deleted_by_hand_keeps_its_branch_until_discarded(repo: Path) -> None:
    worktree = create_worktree(repo / ".loops", "fix", "ab12", None)
    (worktree.path / "README").write_text("changed\n")
    tip = commit_all(worktree.path, "change")
    shutil.rmtree(worktree.path)
    (found,) = find_worktrees(repo / ".loops")
    assert (found.key, found.present) == ("fix@ab12", False)
    git(repo, "worktree", "prune")  # git forgets the folder: the branch is still found
    (found,) = find_worktrees(repo / ".loops")
    assert (found.key, found.present, head(repo, found.branch)) == ("fix@ab12", False, tip)
    assert discard_worktree(repo / ".loops", found).startswith("discarded worktree")
    assert branches(repo) == ["main"]
    assert find_worktrees(repo / ".loops") == []


def test_a_deleted_folder_can_still_be_merged(repo: Path) -> None:
    worktree = create_worktree(repo / ".loops", "fix", "ab12", None)
    (worktree.path / "README").write_text("changed\n")
    tip = commit_all(worktree.path, "change")
    shutil.rmtree(worktree.path)
    notes = merge_worktree(repo / ".loops", resolve(repo / ".loops", "fix"))
    assert notes[0].startswith("the folder .loops/.worktrees/fix@ab12 is gone")
    assert head(repo) == tip
    assert (repo / "README").read_text() == "changed\n"
    assert branches(repo) == ["main"]


MAKE_AND_FINISH = """
import sys
from pathlib import Path
from little_loops.fsm.runs.worktrees import create_worktree, keep_or_remove
worktree = create_worktree(Path(sys.argv[1]), "fix", sys.argv[2], None)
if sys.argv[2].startswith("k"):
    (worktree.path / "new.txt").write_text("kept")
print(keep_or_remove(worktree))
"""


def test_runs_started_together_each_get_their_worktree(repo: Path) -> None:
    # `git worktree add` reads every other worktree and fails on one being made or removed
    # at that moment: without the repository lock, some of these failed.
    ids = [f"k{n:03d}" for n in range(6)] + [f"r{n:03d}" for n in range(6)]
    starts = [
        subprocess.Popen(
            [sys.executable, "-c", MAKE_AND_FINISH, str(repo / ".loops"), run_id],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for run_id in ids
    ]
    results = [(start.communicate(timeout=scaled(120)), start.returncode) for start in starts]
    assert [code for _, code in results] == [0] * len(ids), [err for (_, err), _ in results]
    assert branches(repo) == [f"ll/fix/{run_id}" for run_id in ids[:6]] + ["main"]
    assert [wt.run_id for wt in find_worktrees(repo / ".loops")] == ids[:6]


def test_finish_takes_the_run_place_the_run_was_started_with(repo: Path) -> None:
    made = create_worktree(repo / ".loops", "fix", "ab12", None)
    place = RunPlace("ab12", made.path, made.path, made.branch, made.base_sha)
    (made.path / "README").write_text("changed\n")
    note = finish_worktree(repo / ".loops", "fix", place)
    assert note.endswith("(branch ll/fix/ab12: 0 commits, 1 file changed + uncommitted)")
    (made.path / "README").write_text("r\n")
    # A place with no branch and base (an older state file) finds them from git.
    assert finish_worktree(repo / ".loops", "fix", RunPlace("ab12", made.path)).startswith(
        "removed worktree .loops/.worktrees/fix@ab12 and branch ll/fix/ab12"
    )
    assert branches(repo) == ["main"]
