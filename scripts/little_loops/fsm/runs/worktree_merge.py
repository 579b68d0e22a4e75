"""A kept worktree's diff, its merge into the main checkout, or its discarding (not while live)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.layout import MERGE_LOCK
from little_loops.fsm.facts.runfile import display_path
from little_loops.fsm.processes.gitcmd import git, git_lines, repo_lock, status_lines
from little_loops.fsm.runs.locks import LockRecord, live_claim, waiting_flock
from little_loops.fsm.runs.worktree_find import worktree_entries
from little_loops.fsm.runs.worktrees import (
    Worktree,
    main_repo,
    refuse_nested,
    remove_worktree,
    snapshot_index,
)

LEFTOVER_MESSAGE = "ll-loop {key}: changes left at the end of the run"
MERGE_LOCK_WAIT = 300.0  # seconds a merge waits for another one of the same repository
# What the user is in the middle of, by the file git keeps meanwhile (`git rev-parse
# --git-path NAME`: a linked checkout has its own), and how to get out of it.
IN_PROGRESS = (
    ("MERGE_HEAD", "a merge", "git commit, or git merge --abort"),
    ("rebase-merge", "a rebase", "git rebase --continue, or git rebase --abort"),
    ("rebase-apply", "a rebase or git am", "git rebase --abort, or git am --abort"),
    ("CHERRY_PICK_HEAD", "a cherry-pick", "git cherry-pick --continue, or --abort"),
    ("REVERT_HEAD", "a revert", "git revert --continue, or --abort"),
    ("sequencer", "a cherry-pick or revert", "git cherry-pick --abort, or git revert --abort"),
    ("BISECT_LOG", "a bisect", "git bisect reset"),
)


def diff_text(loops_dir: Path, worktree: Worktree, *, stat: bool = False) -> str:
    """`git diff BASE` of the worktree: its commits and its uncommitted changes (untracked
    files too) against the commit it started from; `--stat` with *stat*. The worktree's own
    index is not changed. With its folder gone, the branch's commits only."""
    options = ["--no-color", "--no-ext-diff", *(["--stat"] if stat else [])]
    if not worktree.present:
        top = main_repo(loops_dir)
        return git(top, "diff", *options, worktree.base_sha, worktree.branch).out
    with snapshot_index(worktree.path) as env:
        return git(worktree.path, "diff", "--cached", *options, worktree.base_sha, env=env).out


def _current_branch(top: Path, branch: str) -> str:
    """The branch the main checkout is on; one line when detached or on *branch* itself."""
    done = git(top, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    if not done.ok:
        raise LoopRuntimeError(
            f"the main checkout {top} is not on a branch (detached HEAD): check out the"
            f" branch to merge {branch} into first; nothing was merged"
        )
    current = done.out.strip()
    if current == branch:
        raise LoopRuntimeError(
            f"the main checkout {top} has {branch} itself checked out: check out the branch"
            " to merge it into first; nothing was merged"
        )
    return current


def _checked_out_elsewhere(top: Path, worktree: Worktree) -> Path | None:
    """Another checkout (not the run's folder) that has the run's branch checked out."""
    for entry in worktree_entries(top):
        path = Path(entry["worktree"])
        same = path.resolve() == worktree.path.resolve()
        if entry.get("branch") == f"refs/heads/{worktree.branch}" and not same:
            return path
    return None


def _refuse_dirty_main(top: Path) -> None:
    """LoopRuntimeError when the main checkout has changes to tracked files: it is never
    touched then (untracked files are fine; git itself refuses to overwrite one)."""
    dirty = status_lines(top, untracked=False)
    if dirty:
        names = ", ".join(line[3:] for line in dirty[:5]) + (", ..." if len(dirty) > 5 else "")
        raise LoopRuntimeError(
            f"the main checkout {top} has uncommitted changes ({names}): commit or stash"
            " them first; nothing was merged"
        )


def commit_leftovers(worktree: Worktree) -> str | None:
    """Commit what the run left uncommitted in its worktree, on its branch; the new commit's
    short sha, or None when there was nothing to commit."""
    if not status_lines(worktree.path):
        return None
    git(worktree.path, "add", "-A")
    message = LEFTOVER_MESSAGE.format(key=worktree.key)
    git(worktree.path, "commit", "--quiet", "-m", message)
    return git(worktree.path, "rev-parse", "--short", "HEAD").out.strip()


def _refuse_moved_folder(worktree: Worktree) -> None:
    if worktree.present and not worktree.on_branch:
        has = worktree.head_branch or "a detached HEAD"
        raise LoopRuntimeError(
            f"{display_path(worktree.path)} has {has} checked out, not {worktree.branch}:"
            f" switch it back (git -C {display_path(worktree.path)} switch {worktree.branch})"
        )


def merge_worktree(
    loops_dir: Path,
    worktree: Worktree,
    *,
    keep: bool = False,
    on_note: Callable[[str], None] | None = None,
) -> list[str]:
    """Merge the run's branch into the branch the main checkout is on (a fast-forward when
    possible, else a merge commit); then remove its worktree and branch unless *keep*.
    Changes left uncommitted in the worktree are committed on the branch first.

    One merge of a repository at a time (merge_lock). Refused, with nothing changed, when
    the run is live, the main checkout has uncommitted changes to tracked files, is not on
    a branch, is in the middle of a merge, rebase, cherry-pick, revert or bisect, or has an
    untracked or ignored file the merge would write over. A conflict undoes the merge (our
    own `git merge --abort`) and raises a one-line error naming the files: the worktree and
    branch stay.
    Returns what was done, one line each; *on_note* is called with each line as it is done
    (so a commit of leftovers is told even when the merge then conflicts).
    """
    top = main_repo(loops_dir)
    refuse_if_live(loops_dir, worktree, "merge")
    with merge_lock(top):
        current = _current_branch(top, worktree.branch)
        refuse_in_progress(top)
        _refuse_dirty_main(top)
        _refuse_moved_folder(worktree)
        if worktree.present and not keep:
            with repo_lock(top):
                refuse_nested(top, worktree.path)  # before the merge, not after it
        return _merge(top, loops_dir, worktree, current, keep, on_note)


def _merge(
    top: Path,
    loops_dir: Path,
    worktree: Worktree,
    current: str,
    keep: bool,
    on_note: Callable[[str], None] | None,
) -> list[str]:
    """merge_worktree's work, under the merge lock, once nothing stops it."""
    notes: list[str] = []

    def say(note: str) -> None:
        notes.append(note)
        if on_note is not None:
            on_note(note)

    if worktree.present:
        sha = commit_leftovers(worktree)
        if sha is not None:
            say(f"committed the changes left in the worktree on {worktree.branch} ({sha})")
    else:
        with repo_lock(top):
            git(top, "worktree", "prune")
        say(
            f"the folder {display_path(worktree.path)} is gone: merging the commits of"
            f" {worktree.branch} only"
        )
    refuse_overwrites(top, worktree.branch)
    before = _head(top)
    tip = git(top, "rev-parse", "--verify", f"refs/heads/{worktree.branch}").out.strip()
    done = git(top, "merge", "--no-edit", "--quiet", worktree.branch, check=False)
    if not done.ok:
        _undo_merge(top, worktree, current, tip, done.problem())
    after = _head(top)
    if after == before:
        how = "nothing to merge: it is in there already"
    elif after == tip:
        how = f"fast-forward to {after[:7]}"
    else:
        how = f"merge commit {after[:7]}"
    say(f"merged {worktree.branch} into {current} ({how})")
    elsewhere = _checked_out_elsewhere(top, worktree)
    if elsewhere is not None:
        say(f"kept branch {worktree.branch}: it is checked out in {elsewhere}")
    elif keep:
        say(f"kept worktree {display_path(worktree.path)} and branch {worktree.branch}")
    else:
        remove_worktree(top, worktree.path, worktree.branch, merged_only=True)
        say(f"removed worktree {display_path(worktree.path)} and branch {worktree.branch}")
    return notes


def merge_lock(top: Path) -> contextlib.AbstractContextManager[None]:
    """The flock that lets one `worktree merge` of the repository *top* run at a time (any
    checkout of it): a merge started meanwhile waits, up to MERGE_LOCK_WAIT seconds."""
    common = Path(git(top, "rev-parse", "--git-common-dir").out.strip())
    path = (common if common.is_absolute() else top / common) / MERGE_LOCK
    busy = (
        f"another ll-loop worktree merge in {top} has been going on for"
        f" {MERGE_LOCK_WAIT:.0f}s (it holds {path}): try again once it has ended;"
        " nothing was merged"
    )
    return waiting_flock(path, MERGE_LOCK_WAIT, busy)


def refuse_in_progress(top: Path) -> None:
    """LoopRuntimeError when the main checkout is in the middle of a merge, rebase,
    cherry-pick, revert or bisect of the user's: a merge now would mix into it, and undoing
    ours would undo theirs."""
    names = [name for name, _, _ in IN_PROGRESS]
    args = [arg for name in names for arg in ("--git-path", name)]
    paths = git(top, "rev-parse", *args).out.splitlines()
    for (name, what, how), found in zip(IN_PROGRESS, paths, strict=True):
        path = Path(found) if Path(found).is_absolute() else top / found
        if os.path.lexists(path):
            raise LoopRuntimeError(
                f"the main checkout {top} is in the middle of {what} ({name} is there):"
                f" finish it first ({how}); nothing was merged"
            )


def refuse_overwrites(top: Path, branch: str) -> None:
    """LoopRuntimeError when merging *branch* would write over a file of the main checkout
    that git does not track (untracked, or ignored: git itself replaces an ignored file,
    `.env` and its secrets included): the paths the branch changed since it forked, and
    the folders above them, checked against the working tree."""
    fork = git(top, "merge-base", "HEAD", branch, check=False).out.strip()
    if not fork:
        return  # unrelated histories: git refuses the merge itself
    changed = git(top, "diff", "--name-only", "--no-renames", "-z", fork, branch).out
    tracked = set(git(top, "ls-files", "-z").out.split("\0"))
    at_risk = [name for name in changed.split("\0") if name and _at_risk(top, name, tracked)]
    if at_risk:
        names = ", ".join(at_risk[:5]) + (", ..." if len(at_risk) > 5 else "")
        raise LoopRuntimeError(
            f"merging {branch} would overwrite {names} in the main checkout, which git does"
            f" not track (untracked or ignored): move it away, or remove it from the branch,"
            " then merge again; nothing was merged"
        )


def _at_risk(top: Path, name: str, tracked: set[str]) -> bool:
    """Whether writing the path *name* would replace something untracked: the path itself
    (a file, a link, or a folder holding untracked files) or a file or link in the place
    of a folder above it."""
    parts = name.split("/")
    for depth in range(1, len(parts)):
        above = "/".join(parts[:depth])
        path = top / above
        if above not in tracked and (path.is_symlink() or path.is_file()):
            return True
    path = top / name
    if not os.path.lexists(path) or name in tracked:
        return False
    if path.is_dir() and not path.is_symlink():
        for folder, _, files in os.walk(path):
            for file in files:
                if (Path(folder) / file).relative_to(top).as_posix() not in tracked:
                    return True
        return False
    return True


def _head(top: Path) -> str:
    return git(top, "rev-parse", "HEAD").out.strip()


def _undo_merge(top: Path, worktree: Worktree, current: str, tip: str, problem: str) -> None:
    """After a failed `git merge`: abort it when it stopped at conflicts, then raise. Only
    our own merge is aborted: one of *tip* (none was in progress before it, under the lock)."""
    conflicts = git_lines(top, "diff", "--name-only", "--diff-filter=U")
    merging = git(top, "rev-parse", "--verify", "--quiet", "MERGE_HEAD", check=False)
    if merging.ok and merging.out.strip() == tip:
        git(top, "merge", "--abort")
    if conflicts:
        names = ", ".join(conflicts[:10]) + (", ..." if len(conflicts) > 10 else "")
        raise LoopRuntimeError(
            f"merging {worktree.branch} into {current} conflicts in {names}: the merge was"
            f" undone and the main checkout is as it was; worktree and branch kept (merge by hand:"
            f" git merge {worktree.branch})"
        )
    raise LoopRuntimeError(f"`git merge {worktree.branch}` failed: {problem}; nothing was merged")


def discard_worktree(loops_dir: Path, worktree: Worktree) -> str:
    """Delete the run's worktree (whatever is in it) and its branch (its commits too).
    Refused when the run is live, or when another checkout has the branch checked out."""
    top = main_repo(loops_dir)
    refuse_if_live(loops_dir, worktree, "discard")
    elsewhere = _checked_out_elsewhere(top, worktree)
    if elsewhere is not None:
        raise LoopRuntimeError(
            f"branch {worktree.branch} is checked out in {elsewhere}: check out another"
            " branch there first; nothing was discarded"
        )
    remove_worktree(top, worktree.path, worktree.branch)
    return f"discarded worktree {display_path(worktree.path)} and branch {worktree.branch}"


def live_holder(loops_dir: Path, worktree: Worktree) -> LockRecord | None:
    """The scope lock record of the worktree's run when that run is live, else None (its
    lock is `<loops_dir>/.running/NAME@ID.lock`). An unreadable lock: CorruptStateError."""
    return live_claim(worktree.key, Path(loops_dir))


def refuse_if_live(loops_dir: Path, worktree: Worktree, doing: str) -> None:
    """LoopRuntimeError when the worktree's run is live: *doing* (`merge`) must wait."""
    holder = live_holder(loops_dir, worktree)
    if holder is not None:
        raise LoopRuntimeError(
            f"run {worktree.key} is still running (pid {holder.pid}): not going to {doing} its"
            f" worktree; stop it first with 'll-loop stop {worktree.key}'"
        )
