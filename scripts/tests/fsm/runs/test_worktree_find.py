"""The kept worktrees of runs found from real git alone: listed, with their base, and resolved."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support.gitrepo import commit_all, git, head, loops_project

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.layout import worktree_path, worktrees_dir
from little_loops.fsm.runs.worktree_find import find_worktrees, resolve, worktree_entries
from little_loops.fsm.runs.worktrees import create_worktree


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = loops_project(tmp_path, {"README": "r\n"})
    monkeypatch.chdir(root)
    return root


def test_entries_are_one_dict_per_worktree(repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "a folder with spaces"
    git(repo, "worktree", "add", "-q", "-b", "side", str(other))
    git(repo, "worktree", "add", "-q", "--detach", str(tmp_path / "detached"))
    entries = worktree_entries(repo)
    assert [Path(entry["worktree"]) for entry in entries] == [
        repo,
        other,
        tmp_path / "detached",
    ]
    assert [entry.get("branch") for entry in entries] == [
        "refs/heads/main",
        "refs/heads/side",
        None,
    ]
    assert "detached" in entries[2]
    assert entries[0]["HEAD"] == head(repo)


def test_a_run_worktree_is_found_with_its_branch_base_and_head(repo: Path) -> None:
    loops = repo / ".loops"
    made = create_worktree(loops, "fix", "ab12", None)
    (found,) = find_worktrees(loops)
    assert found == made
    assert (found.loop, found.run_id, found.present, found.head_branch) == (
        "fix",
        "ab12",
        True,
        "ll/fix/ab12",
    )
    assert found.on_branch


def test_only_folders_named_name_at_id_under_worktrees_are_runs(repo: Path) -> None:
    loops = repo / ".loops"
    create_worktree(loops, "fix", "ab12", None)
    # A worktree in the run folder but not named as a run's, and a branch like a run's
    # that ll-loop did not make (no base recorded): neither is a kept worktree of a run.
    git(repo, "worktree", "add", "-q", "-b", "plain", str(worktrees_dir(loops) / "plain"))
    git(repo, "branch", "ll/lint/cd34")
    assert [wt.key for wt in find_worktrees(loops)] == ["fix@ab12"]
    assert find_worktrees(loops, "lint") == []


def test_a_folder_switched_to_another_branch_is_not_on_its_branch(repo: Path) -> None:
    loops = repo / ".loops"
    made = create_worktree(loops, "fix", "ab12", None)
    git(made.path, "switch", "-q", "-c", "elsewhere")
    (found,) = find_worktrees(loops)
    assert (found.branch, found.head_branch, found.present) == ("ll/fix/ab12", "elsewhere", True)
    assert not found.on_branch


def test_a_lost_base_is_where_the_branch_meets_head(repo: Path) -> None:
    loops = repo / ".loops"
    start = head(repo)
    made = create_worktree(loops, "fix", "ab12", None)
    (made.path / "README").write_text("run\n")
    commit_all(made.path, "run")
    (repo / "README").write_text("main moved\n")
    commit_all(repo, "main")
    git(repo, "config", "--unset", "branch.ll/fix/ab12.llbase")
    (found,) = find_worktrees(loops)
    assert found.base_sha == start


def test_a_branch_whose_folder_was_deleted_is_found_absent(repo: Path) -> None:
    loops = repo / ".loops"
    made = create_worktree(loops, "fix", "ab12", None)
    shutil.rmtree(made.path)
    git(repo, "worktree", "prune")
    (found,) = find_worktrees(loops)
    assert (found.key, found.present, found.head_branch) == ("fix@ab12", False, None)
    assert found.path == worktree_path(loops, "fix", "ab12")
    assert found.base_sha == made.base_sha
    assert resolve(loops, "fix@ab12") == found


def test_a_recorded_base_of_a_deleted_branch_is_no_worktree(repo: Path) -> None:
    git(repo, "config", "branch.ll/fix/ab12.llbase", head(repo))
    assert find_worktrees(repo / ".loops") == []


def test_a_link_at_a_worktree_path_is_not_resolved(repo: Path, tmp_path: Path) -> None:
    loops = repo / ".loops"
    made = create_worktree(loops, "fix", "ab12", None)
    git(repo, "worktree", "move", str(made.path), str(tmp_path / "moved"))
    made.path.symlink_to(repo)  # git would work in the main checkout through it
    with pytest.raises(LoopRuntimeError) as raised:
        resolve(loops, "fix")
    assert str(raised.value) == (
        ".loops/.worktrees/fix@ab12 is a symbolic link, not the worktree of run fix@ab12:"
        " remove the link; nothing was done"
    )


def test_no_worktrees_and_no_match_are_one_line(repo: Path) -> None:
    loops = repo / ".loops"
    assert find_worktrees(loops) == []
    with pytest.raises(LoopRuntimeError, match=r"^loop 'fix' has no kept worktree$"):
        resolve(loops, "fix")
    with pytest.raises(LoopRuntimeError, match=r"^no kept worktree 'fix@ab12'$"):
        resolve(loops, "fix@ab12")
