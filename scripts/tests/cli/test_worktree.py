"""`ll-loop worktree list|diff|merge|discard` through the console script, on real git repos."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import llproc
from support.gitrepo import branches, commit_all, git, head, loops_project, untouched

from little_loops.fsm.facts.layout import run_key
from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.runs.locks import acquire_scope
from little_loops.fsm.runs.worktrees import Worktree, create_worktree


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = loops_project(tmp_path, {"app.py": "one\ntwo\nthree\n", "README": "r\n"})
    monkeypatch.chdir(root)
    return root


def worktree(repo: Path, run_id: str = "ab12", name: str = "fix") -> Worktree:
    return create_worktree(repo / ".loops", name, run_id, None)


def ll(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return llproc.console(repo, "worktree", *args)


def one_line_error(done: subprocess.CompletedProcess[str], code: int = ExitCode.FAILED) -> str:
    """The single `ll-loop: error:` line of a refused command (no traceback, nothing else)."""
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("ll-loop: error: ")
    return line.removeprefix("ll-loop: error: ")


def edit(wt: Worktree, commit: bool = True) -> str:
    """The loop's work: app.py's middle line changed (committed unless not *commit*)."""
    (wt.path / "app.py").write_text("one\nTWO\nthree\n")
    return commit_all(wt.path, "fix two") if commit else ""


@pytest.fixture
def live(repo: Path) -> Iterator[str]:
    """Run fix@ab12 made live: its scope lock is held by this test's process."""
    handle = acquire_scope(run_key("fix", "ab12"), ["."], repo / ".loops")
    yield "fix@ab12"
    handle.release()


def test_list_shows_each_kept_worktree(repo: Path) -> None:
    edit(worktree(repo, "ab12"))
    other = worktree(repo, "cd34")
    (other.path / "new.txt").write_text("new\n")
    done = ll(repo, "list")
    assert done.returncode == ExitCode.OK, done.stderr
    lines = [line.split("  ") for line in done.stdout.splitlines()]
    assert [[cell.strip() for cell in line if cell.strip()] for line in lines] == [
        ["RUN", "BRANCH", "CHANGES", "STATUS", "PATH"],
        ["fix@ab12", "ll/fix/ab12", "1 commit, 1 file changed", "-", ".loops/.worktrees/fix@ab12"],
        [
            "fix@cd34",
            "ll/fix/cd34",
            "0 commits, 1 file changed + uncommitted",
            "-",
            ".loops/.worktrees/fix@cd34",
        ],
    ]
    rows = json.loads(ll(repo, "list", "fix", "--json").stdout)
    assert [(r["run"], r["commits"], r["uncommitted"]) for r in rows] == [
        ("fix@ab12", 1, False),
        ("fix@cd34", 0, True),
    ]
    assert ll(repo, "list", "lint").stderr == "ll-loop: no kept worktrees of loop 'lint'\n"


def test_list_shows_a_live_run_as_running(repo: Path, live: str) -> None:
    worktree(repo)
    assert "  running  " in ll(repo, "list").stdout


def test_diff_shows_commits_and_uncommitted_changes_against_the_base(repo: Path) -> None:
    wt = worktree(repo)
    edit(wt)
    (wt.path / "new.txt").write_text("brand new\n")  # untracked, uncommitted
    index_before = git(wt.path, "ls-files", "--stage")
    done = ll(repo, "diff", "fix")
    assert done.returncode == ExitCode.OK, done.stderr
    assert "-two\n+TWO\n" in done.stdout
    assert "+++ b/new.txt\n@@ -0,0 +1 @@\n+brand new\n" in done.stdout
    assert git(wt.path, "ls-files", "--stage") == index_before  # its index is left alone
    stat = ll(repo, "diff", "fix@ab12", "--stat").stdout
    assert "app.py  | 2 +-\n new.txt | 1 +\n" in stat
    assert "2 files changed, 2 insertions(+), 1 deletion(-)" in stat


def test_merge_fast_forwards_and_removes_the_worktree(repo: Path) -> None:
    wt = worktree(repo)
    tip = edit(wt)
    done = ll(repo, "merge", "fix")
    assert done.returncode == ExitCode.OK, done.stderr
    assert done.stdout.splitlines() == [
        f"merged ll/fix/ab12 into main (fast-forward to {tip[:7]})",
        "removed worktree .loops/.worktrees/fix@ab12 and branch ll/fix/ab12",
    ]
    assert head(repo) == tip
    assert (repo / "app.py").read_text() == "one\nTWO\nthree\n"
    assert not wt.path.exists()
    assert branches(repo) == ["main"]
    assert git(repo, "status", "--porcelain") == ""


def test_merge_makes_a_merge_commit_when_main_moved_on(repo: Path) -> None:
    wt = worktree(repo)
    tip = edit(wt, commit=False)  # left uncommitted: merge commits it on the branch first
    (repo / "README").write_text("main moved on\n")
    moved = commit_all(repo, "main moves on")
    done = ll(repo, "merge", "fix", "--keep")
    assert done.returncode == ExitCode.OK, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("committed the changes left in the worktree on ll/fix/ab12 (")
    assert lines[1] == f"merged ll/fix/ab12 into main (merge commit {head(repo)[:7]})"
    assert lines[2] == "kept worktree .loops/.worktrees/fix@ab12 and branch ll/fix/ab12"
    tip = head(repo, "ll/fix/ab12")
    assert git(repo, "log", "-1", "--format=%s", tip).strip() == (
        "ll-loop fix@ab12: changes left at the end of the run"
    )
    assert git(repo, "rev-list", "--parents", "-1", "HEAD").split()[1:] == [moved, tip]
    assert (repo / "app.py").read_text() == "one\nTWO\nthree\n"
    assert (repo / "README").read_text() == "main moved on\n"
    assert wt.path.is_dir()


def test_a_conflict_is_reported_and_nothing_is_lost(repo: Path) -> None:
    wt = worktree(repo)
    tip = edit(wt)
    (repo / "app.py").write_text("one\nzwei\nthree\n")
    main_tip = commit_all(repo, "main edits the same line")
    (repo / "untracked.txt").write_text("the user's\n")
    before = untouched(repo)
    done = ll(repo, "merge", "fix")
    assert one_line_error(done) == (
        "merging ll/fix/ab12 into main conflicts in app.py: the merge was undone and the main"
        " checkout is as it was; worktree and branch kept (merge by hand: git merge ll/fix/ab12)"
    )
    assert untouched(repo) == before
    assert head(repo) == main_tip
    assert head(repo, "ll/fix/ab12") == tip
    assert not (repo / ".git" / "MERGE_HEAD").exists()
    assert (wt.path / "app.py").read_text() == "one\nTWO\nthree\n"


def test_merge_refuses_a_dirty_main_checkout(repo: Path) -> None:
    wt = worktree(repo)
    tip = edit(wt)
    (repo / "README").write_text("the user's work in progress\n")
    before = untouched(repo)
    done = ll(repo, "merge", "fix")
    assert one_line_error(done) == (
        f"the main checkout {repo} has uncommitted changes (README): commit or stash them"
        " first; nothing was merged"
    )
    assert untouched(repo) == before
    assert head(repo, "ll/fix/ab12") == tip


def test_merge_refuses_a_detached_main_checkout(repo: Path) -> None:
    edit(worktree(repo))
    git(repo, "checkout", "--quiet", "--detach")
    before = untouched(repo)
    assert one_line_error(ll(repo, "merge", "fix")).startswith(
        f"the main checkout {repo} is not on a branch (detached HEAD)"
    )
    assert untouched(repo) == before


def test_discard_removes_the_worktree_and_branch(repo: Path) -> None:
    wt = worktree(repo)
    edit(wt)
    (wt.path / "new.txt").write_text("uncommitted\n")
    before = untouched(repo)
    done = ll(repo, "discard", "fix@ab12")
    assert done.returncode == ExitCode.OK, done.stderr
    assert done.stdout == "discarded worktree .loops/.worktrees/fix@ab12 and branch ll/fix/ab12\n"
    assert not wt.path.exists()
    assert branches(repo) == ["main"]
    assert untouched(repo) == before
    assert ll(repo, "list").stderr == "ll-loop: no kept worktrees\n"


@pytest.mark.parametrize("action", ["merge", "discard"])
def test_a_live_run_is_refused(repo: Path, live: str, action: str) -> None:
    wt = worktree(repo)
    tip = edit(wt)
    message = one_line_error(ll(repo, action, live))
    assert message.startswith(f"run fix@ab12 is still running (pid {llproc.os.getpid()}): not")
    assert message.endswith("stop it first with 'll-loop stop fix@ab12'")
    assert wt.path.is_dir()
    assert head(repo, "ll/fix/ab12") == tip
    assert head(repo) != tip


def test_discard_refuses_a_branch_checked_out_elsewhere(repo: Path) -> None:
    wt = worktree(repo)
    edit(wt)
    git(wt.path, "switch", "--quiet", "--detach")
    git(repo, "worktree", "add", "--quiet", str(repo.parent / "elsewhere"), "ll/fix/ab12")
    assert one_line_error(ll(repo, "discard", "fix")) == (
        f"branch ll/fix/ab12 is checked out in {repo.parent / 'elsewhere'}: check out another"
        " branch there first; nothing was discarded"
    )
    assert "ll/fix/ab12" in branches(repo)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("diff", "nope"), "loop 'nope' has no kept worktree"),
        (("merge", "fix@zz99"), "no kept worktree 'fix@zz99': loop 'fix' has fix@ab12"),
        (("discard", "fxi"), "loop 'fxi' has no kept worktree (did you mean fix?)"),
    ],
)
def test_a_bad_name_is_one_line(repo: Path, args: tuple[str, ...], message: str) -> None:
    worktree(repo)
    assert one_line_error(ll(repo, *args)) == message
    assert branches(repo) == ["ll/fix/ab12", "main"]


def test_several_worktrees_need_an_id(repo: Path) -> None:
    worktree(repo, "ab12")
    worktree(repo, "cd34")
    assert one_line_error(ll(repo, "discard", "fix")) == (
        "loop 'fix' has 2 kept worktrees: fix@ab12, fix@cd34; name one as NAME@ID"
    )
    assert len(branches(repo)) == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("merge",), "worktree merge needs the run: NAME or NAME@ID (ll-loop worktree list)"),
        (("diff", "fix", "--keep"), "worktree diff does not take --keep"),
        (("list", "--stat"), "worktree list does not take --stat"),
    ],
)
def test_usage_errors_exit_2(repo: Path, args: tuple[str, ...], message: str) -> None:
    assert one_line_error(ll(repo, *args), ExitCode.USAGE) == message


def test_outside_a_git_repository_is_one_line(tmp_path: Path) -> None:
    (tmp_path / ".loops").mkdir()
    assert one_line_error(ll(tmp_path, "list")) == (
        f"{tmp_path} is not in a git repository: worktrees need one (git init, and a first commit)"
    )
