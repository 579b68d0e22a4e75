"""The git worktree of a `--worktree` run: made, sized up, and kept or removed at its end.

A run's worktree is `<loops_dir>/.worktrees/NAME@ID/` on branch `ll/NAME/ID`; the commit it
started from is recorded by git itself (`git config branch.ll/NAME/ID.llbase SHA`, removed
with the branch), so nothing here needs the run's state file. Nothing here writes to the main
checkout's working tree or index.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.layout import (
    make_running_dir,
    run_key,
    split_run_key,
    worktree_branch,
    worktree_path,
    worktrees_dir,
)
from little_loops.fsm.facts.runfile import display_path
from little_loops.fsm.processes.gitcmd import git, git_lines, repo_lock, status_lines

if TYPE_CHECKING:
    from little_loops.fsm.runs.place import RunPlace

BASE_KEY = "llbase"  # `branch.<branch>.llbase`: the commit the run's worktree started from


@dataclass(frozen=True)
class Worktree:
    """One run's worktree: its folder, its branch and the commit the branch started from.

    *present* is False when the folder was deleted by hand (the branch, and its commits, are
    still there); *head_branch* is the branch the folder has checked out (None: detached, or
    no folder).
    """

    path: Path
    branch: str
    base_sha: str
    loop: str
    run_id: str
    present: bool = True
    head_branch: str | None = None

    @property
    def key(self) -> str:
        """`NAME@ID`, as commands name the run."""
        return run_key(self.loop, self.run_id)

    @property
    def on_branch(self) -> bool:
        """Whether the folder still has the run's branch checked out."""
        return self.present and self.head_branch == self.branch


@dataclass(frozen=True)
class Changes:
    """What a worktree holds beyond its base commit."""

    commits: int  # commits on the branch after the base
    files: int  # files that differ from the base, committed or not (untracked ones too)
    uncommitted: bool  # `git status --porcelain` is not empty
    moved: bool  # the branch is no longer at its base commit

    @property
    def any(self) -> bool:
        """Whether removing the worktree and branch would lose anything."""
        return self.moved or self.uncommitted

    def summary(self) -> str:
        """`2 commits, 3 files changed + uncommitted`."""
        text = f"{_plural(self.commits, 'commit')}, {_plural(self.files, 'file')} changed"
        return text + (" + uncommitted" if self.uncommitted else "")


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def repo_top(path: Path) -> Path | None:
    """The top folder of the git checkout *path* is in, or None when it is in none."""
    folder = Path(path).absolute()
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    done = git(folder, "rev-parse", "--show-toplevel", check=False)
    return Path(done.out.strip()) if done.ok and done.out.strip() else None


def require_repo(path: Path) -> Path:
    """repo_top(*path*), or a one-line LoopRuntimeError when it is in no git repository or
    the repository has no commit yet (a worktree starts from a commit)."""
    top = repo_top(path)
    if top is None:
        raise LoopRuntimeError(
            f"{Path(path).absolute()} is not in a git repository:"
            " worktrees need one (git init, and a first commit)"
        )
    if not git(top, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False).ok:
        raise LoopRuntimeError(
            f"the git repository {top} has no commits yet: a worktree starts from a commit"
            " (make a first commit)"
        )
    return top


def main_repo(loops_dir: Path) -> Path:
    """The top of the main checkout: the git checkout *loops_dir* is in."""
    return require_repo(Path(loops_dir).absolute().parent)


def resolve_commit(top: Path, ref: str | None) -> str:
    """The full sha of *ref* (HEAD when None) in the repository *top*; one line when unknown."""
    wanted = "HEAD" if ref is None else ref
    done = git(
        top,
        "rev-parse",
        "--verify",
        "--quiet",
        "--end-of-options",
        f"{wanted}^{{commit}}",
        check=False,
    )
    if ref is not None and (ref.startswith("-") or not done.ok):
        raise LoopRuntimeError(f"--base {ref!r}: no such commit, branch or tag in {top}")
    return done.out.strip()


def _check_branch_name(top: Path, branch: str, loop_name: str) -> None:
    if not git(top, "check-ref-format", f"refs/heads/{branch}", check=False).ok:
        raise LoopRuntimeError(
            f"loop name {loop_name!r} cannot be part of a git branch name ({branch}):"
            " rename the loop to run it in a worktree"
        )


def branch_exists(top: Path, branch: str) -> bool:
    """Whether the local branch *branch* exists in the repository *top*."""
    return git(top, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", check=False).ok


def create_worktree(loops_dir: Path, loop_name: str, run_id: str, base: str | None) -> Worktree:
    """Make the worktree of run *run_id* of *loop_name*: branch `ll/NAME/ID` from *base* (a
    commit, branch or tag; HEAD of the main checkout when None), checked out in
    `<loops_dir>/.worktrees/NAME@ID/` (a folder git ignores), its base recorded in git config.

    Refuses (LoopRuntimeError, one line) when the branch or folder exists already, outside
    a git repository, or for a *base* that names no commit. The main checkout's working tree
    and index are not touched.
    """
    loops_dir = Path(loops_dir).absolute()
    top = main_repo(loops_dir)
    sha = resolve_commit(top, base)
    _check_branch_name(top, worktree_branch(loop_name, run_id), loop_name)
    with repo_lock(top):
        return _create(top, loops_dir, loop_name, run_id, sha)


def _create(top: Path, loops_dir: Path, loop_name: str, run_id: str, sha: str) -> Worktree:
    """create_worktree's work, under the repository lock (so the checks hold)."""
    branch = worktree_branch(loop_name, run_id)
    path = worktree_path(loops_dir, loop_name, run_id)
    if branch_exists(top, branch):
        raise LoopRuntimeError(
            f"branch {branch} exists already: run {run_key(loop_name, run_id)}"
            " has a worktree (ll-loop worktree list)"
        )
    if path.exists() or path.is_symlink():
        raise LoopRuntimeError(f"{display_path(path)} exists already: not making a worktree there")
    make_running_dir(worktrees_dir(loops_dir))  # with a `.gitignore` of `*`: git ignores it
    try:
        git(top, "worktree", "add", "--quiet", "-b", branch, str(path), sha)
        git(top, "config", f"branch.{branch}.{BASE_KEY}", sha)
    except LoopRuntimeError:
        remove_worktree(top, path, branch)  # the branch may have been made: it was not there
        raise
    return Worktree(path, branch, sha, loop_name, run_id, True, branch)


def workdir_in(worktree: Worktree, main_cwd: Path) -> Path:
    """The folder in *worktree* that matches *main_cwd* in the main checkout (the same path
    relative to the top): the run's working folder. Made when the commit has no such folder
    (an untracked or empty one in the main checkout)."""
    main_cwd = Path(main_cwd).resolve()
    top = repo_top(main_cwd)
    if top is None:
        raise LoopRuntimeError(f"{main_cwd} is not in a git repository")
    try:
        relative = main_cwd.relative_to(top.resolve())
    except ValueError:
        raise LoopRuntimeError(f"{main_cwd} is not inside the checkout {top}") from None
    folder = worktree.path / relative
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextlib.contextmanager
def snapshot_index(worktree: Path) -> Iterator[dict[str, str]]:
    """An environment whose GIT_INDEX_FILE is a copy of *worktree*'s index with every change
    added (`git add -A`), untracked files too: `git diff --cached BASE` then shows all of it,
    and the worktree's own index is left as it was."""
    index = Path(git(worktree, "rev-parse", "--git-path", "index").out.strip())
    index = index if index.is_absolute() else worktree / index
    with tempfile.TemporaryDirectory(prefix="ll-loop-index-") as folder:
        copy = Path(folder) / "index"
        if index.is_file():
            shutil.copyfile(index, copy)
        env = {"GIT_INDEX_FILE": str(copy)}
        git(worktree, "add", "-A", env=env)
        yield env


def changes(worktree: Worktree) -> Changes:
    """What *worktree* holds beyond its base: commits, files changed (committed, staged,
    unstaged and untracked, against the base), uncommitted changes or not."""
    top = worktree.path if worktree.present else None
    tip = worktree.branch if top is None else "HEAD"
    where = top if top is not None else _repo_of(worktree)
    head = git(where, "rev-parse", "--verify", f"{tip}^{{commit}}").out.strip()
    commits = int(git(where, "rev-list", "--count", f"{worktree.base_sha}..{head}").out.strip())
    if top is None:
        files = git_lines(where, "diff", "--name-only", "-z", worktree.base_sha, head)
        return Changes(commits, _count_z(files), False, head != worktree.base_sha)
    uncommitted = bool(status_lines(top))
    with snapshot_index(top) as env:
        names = git(top, "diff", "--cached", "--name-only", "-z", worktree.base_sha, env=env)
    return Changes(commits, _count_z([names.out]), uncommitted, head != worktree.base_sha)


def _count_z(chunks: list[str]) -> int:
    return sum(1 for chunk in chunks for name in chunk.split("\0") if name)


def _repo_of(worktree: Worktree) -> Path:
    """The main checkout of a worktree whose folder is gone (`.loops/.worktrees/x` → `.`)."""
    return require_repo(worktree.path.parent.parent.parent)


def finish_worktree(loops_dir: Path, loop_name: str, place: RunPlace) -> str:
    """At the end of run *place* of *loop_name*, in a worktree: keep_or_remove its worktree.
    A one-line note saying which, for the user."""
    if place.path is None or place.run_id is None:
        raise LoopRuntimeError(f"run of {loop_name!r} has no worktree to finish")
    top = main_repo(loops_dir)
    branch = place.branch or worktree_branch(loop_name, place.run_id)
    recorded = git(top, "config", "--get", f"branch.{branch}.{BASE_KEY}", check=False)
    # Git's own record first: a state file edited by hand must not make commits look like
    # none (the branch would be deleted with them). With no base known, nothing is removed.
    base = recorded.out.strip() or place.base
    if not base:
        return f"kept worktree {display_path(place.path)} (branch {branch}: its base is unknown)"
    worktree = Worktree(place.path, branch, base, loop_name, place.run_id, True, branch)
    return keep_or_remove(worktree, top)


def keep_or_remove(worktree: Worktree, top: Path | None = None) -> str:
    """Keep *worktree* when it holds anything (commits beyond its base, uncommitted
    changes), else remove the folder and the branch; a one-line note saying which. *top*:
    the main checkout (found from the folder when None)."""
    top = _repo_of(worktree) if top is None else top
    if not worktree.path.is_dir():
        with repo_lock(top):
            git(top, "worktree", "prune")
        return f"the worktree {display_path(worktree.path)} is gone; branch {worktree.branch} kept"
    found = changes(worktree)
    if found.any:
        return (
            f"kept worktree {display_path(worktree.path)} (branch {worktree.branch}:"
            f" {found.summary()})"
        )
    remove_worktree(top, worktree.path, worktree.branch)
    return (
        f"removed worktree {display_path(worktree.path)} and branch {worktree.branch}:"
        " the run changed nothing"
    )


def remove_worktree(top: Path, path: Path, branch: str, *, merged_only: bool = False) -> None:
    """Remove the worktree folder *path* (whatever is in it; git forgets it when it is gone
    already) and delete *branch* (with *merged_only*, `git branch -d`: only when merged)."""
    with repo_lock(top):
        if path.is_dir():
            refuse_nested(top, path)
            git(top, "worktree", "remove", "--force", str(path))
        else:
            git(top, "worktree", "prune")
        if branch_exists(top, branch):
            git(top, "branch", "-d" if merged_only else "-D", "--quiet", branch)


def refuse_nested(top: Path, path: Path) -> None:
    """LoopRuntimeError when another worktree lies inside *path* (a run started from in
    there): removing *path* would delete that one's files, uncommitted work included."""
    inside = Path(path).resolve()
    for line in git(top, "worktree", "list", "--porcelain").out.splitlines():
        other = Path(line.removeprefix("worktree ")).resolve()
        if line.startswith("worktree ") and other != inside and other.is_relative_to(inside):
            raise LoopRuntimeError(
                f"{display_path(path)} holds another worktree, {display_path(other)}:"
                " merge or discard that one first; nothing was changed"
            )


def remove_untouched(loops_dir: Path, key: str, base: str) -> str:
    """Remove the worktree and branch of run *key* made by a start-up that never got to its
    first step, unless they hold something (a commit beyond *base*, a change): a note saying
    which. The folder and branch are the ones ll-loop makes for *key*, not what a file says."""
    name, run_id = split_run_key(key)
    if run_id is None:
        return f"run {key} has no worktree"
    top = main_repo(loops_dir)
    path, branch = worktree_path(Path(loops_dir), name, run_id), worktree_branch(name, run_id)
    with repo_lock(top):
        tip = git(top, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", check=False)
        moved = tip.ok and tip.out.strip() != base
        if not tip.ok and not os.path.lexists(path):
            return "it had made no worktree yet"
        status = git(path, "status", "--porcelain", check=False) if path.is_dir() else None
        if moved or (status is not None and status.ok and status.out.strip()):
            return f"kept worktree {display_path(path)} and branch {branch}: they hold changes"
        known = any(
            line == f"worktree {path.resolve()}"
            for line in git(top, "worktree", "list", "--porcelain").out.splitlines()
        )
        if path.is_dir() and not known:  # git was killed before it registered the folder
            return f"left {display_path(path)}: git does not know it as a worktree"
        remove_worktree(top, path, branch)
    return f"removed its worktree {display_path(path)} and branch {branch}"
