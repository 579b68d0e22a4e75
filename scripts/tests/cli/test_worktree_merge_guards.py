"""`ll-loop worktree merge` never touches what the user did not give it: their ignored and
untracked files, their merge or bisect in progress; merges at once wait for each other."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support import llproc
from support.gitrepo import branches, commit_all, git, head, loops_project, untouched

from little_loops.fsm.facts.outcomes import ExitCode
from little_loops.fsm.runs.worktrees import Worktree, create_worktree


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = loops_project(tmp_path, {"app.py": "one\n", ".gitignore": "local.env\n"})
    (root / "local.env").write_text("TOKEN=the-users-secret\n")
    monkeypatch.chdir(root)
    return root


def worktree(repo: Path, run_id: str = "ab12") -> Worktree:
    return create_worktree(repo / ".loops", "fix", run_id, None)


def merge(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return llproc.console(repo, "worktree", "merge", *args, timeout=60)


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == ExitCode.FAILED, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("ll-loop: error: ")
    return line.removeprefix("ll-loop: error: ")


def test_an_ignored_file_of_the_user_is_never_overwritten(repo: Path) -> None:
    wt = worktree(repo)
    (wt.path / ".gitignore").write_text("")  # the run un-ignores it, and writes its own
    (wt.path / "local.env").write_text("TOKEN=from-the-run\n")
    commit_all(wt.path, "the run's work")
    before = untouched(repo)
    message = one_line_error(merge(repo, "fix"))
    assert message == (
        "merging ll/fix/ab12 would overwrite local.env in the main checkout, which git does"
        " not track (untracked or ignored): move it away, or remove it from the branch, then"
        " merge again; nothing was merged"
    )
    assert (repo / "local.env").read_text() == "TOKEN=the-users-secret\n"
    assert untouched(repo) == before
    assert branches(repo) == ["ll/fix/ab12", "main"]
    (repo / "local.env").rename(repo / "saved.env")  # moved away: the merge goes ahead
    assert merge(repo, "fix").returncode == 0
    assert (repo / "local.env").read_text() == "TOKEN=from-the-run\n"


def test_an_untracked_file_in_place_of_a_folder_is_never_overwritten(repo: Path) -> None:
    wt = worktree(repo)
    (wt.path / "notes").mkdir()
    (wt.path / "notes" / "a.txt").write_text("run\n")
    (wt.path / "build").write_text("run\n")
    commit_all(wt.path, "the run's work")
    (repo / "notes").write_text("the user's own notes\n")  # a file where the run has a folder
    (repo / "build").mkdir()
    (repo / "build" / "out.o").write_text("the user's build\n")  # a folder of untracked files
    message = one_line_error(merge(repo, "fix"))
    assert message.startswith("merging ll/fix/ab12 would overwrite build, notes/a.txt in the")
    assert (repo / "notes").read_text() == "the user's own notes\n"
    assert (repo / "build" / "out.o").read_text() == "the user's build\n"


@pytest.mark.parametrize(
    ("start", "marker", "words"),
    [
        (("merge", "-s", "ours", "--no-commit", "mine"), "MERGE_HEAD", "a merge"),
        (("bisect", "start"), "BISECT_LOG", "a bisect"),
        (("cherry-pick", "--no-commit", "mine"), "CHERRY_PICK_HEAD", "a cherry-pick"),
    ],
)
def test_the_users_merge_or_bisect_in_progress_is_left_alone(
    repo: Path, start: tuple[str, ...], marker: str, words: str
) -> None:
    wt = worktree(repo)
    (wt.path / "app.py").write_text("two\n")
    commit_all(wt.path, "the run's work")
    git(repo, "switch", "-q", "-c", "mine")
    (repo / "mine.txt").write_text("mine\n")
    commit_all(repo, "the user's work")
    git(repo, "switch", "-q", "main")
    git(repo, *start)
    if marker == "CHERRY_PICK_HEAD":  # a clean checkout, in the middle of a cherry-pick
        git(repo, "reset", "-q", "--hard")
        (repo / ".git" / "CHERRY_PICK_HEAD").write_text(head(repo, "mine") + "\n")
    recorded = (repo / ".git" / marker).read_text()
    before = untouched(repo)
    message = one_line_error(merge(repo, "fix"))
    assert message.startswith(f"the main checkout {repo} is in the middle of {words} ({marker}")
    assert message.endswith("; nothing was merged")
    assert (repo / ".git" / marker).read_text() == recorded  # theirs, still there
    assert untouched(repo) == before
    assert branches(repo) == ["ll/fix/ab12", "main", "mine"]


def test_ten_merges_at_once_each_merge_and_none_undoes_another(repo: Path) -> None:
    ids = [f"m{number:03d}" for number in range(10)]
    for run_id in ids:
        wt = worktree(repo, run_id)
        (wt.path / f"{run_id}.txt").write_text(f"{run_id}\n")
        commit_all(wt.path, f"run {run_id}")
    merges = [llproc.start(repo, "worktree", "merge", f"fix@{run_id}") for run_id in ids]
    for run_id, proc in zip(ids, merges, strict=True):
        out, err = llproc.finish(proc, timeout=120)
        assert proc.returncode == 0, err
        assert f"merged ll/fix/{run_id} into main (" in out
    for run_id in ids:
        assert (repo / f"{run_id}.txt").read_text() == f"{run_id}\n"
        git(repo, "cat-file", "-e", f"HEAD:{run_id}.txt")  # committed, in HEAD
    assert not (repo / ".git" / "MERGE_HEAD").exists()
    assert git(repo, "status", "--porcelain") == ""
    assert (repo / "local.env").read_text() == "TOKEN=the-users-secret\n"
    assert branches(repo) == ["main"]
