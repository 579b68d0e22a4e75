"""A kept worktree's diff, its merge into the main checkout, or its discarding (not while live)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.runfile import display_path
from little_loops.fsm.processes.gitcmd import git, git_lines, repo_lock, status_lines
from little_loops.fsm.runs.locks import LockRecord, live_claim
from little_loops.fsm.runs.worktree_find import worktree_entries
from little_loops.fsm.runs.worktrees import (
    Worktree,
    main_repo,
    refuse_nested,
    remove_worktree,
    snapshot_index,
)

LEFTOVER_MESSAGE = "ll-loop {key}: changes left at the end of the run"


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

    Refused, with nothing changed, when the run is live, the main checkout has uncommitted
    changes to tracked files or is not on a branch. A conflict undoes the merge (`git merge
    --abort`) and raises a one-line error naming the files: the worktree and branch stay.
    Returns what was done, one line each; *on_note* is called with each line as it is done
    (so a commit of leftovers is told even when the merge then conflicts).
    """
    top = main_repo(loops_dir)
    current = _current_branch(top, worktree.branch)
    refuse_if_live(loops_dir, worktree, "merge")
    _refuse_dirty_main(top)
    _refuse_moved_folder(worktree)
    if worktree.present and not keep:
        with repo_lock(top):
            refuse_nested(top, worktree.path)  # before the merge, not after it
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
    before = _head(top)
    tip = git(top, "rev-parse", "--verify", f"refs/heads/{worktree.branch}").out.strip()
    done = git(top, "merge", "--no-edit", "--quiet", worktree.branch, check=False)
    if not done.ok:
        _undo_merge(top, worktree, current, done.problem())
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


def _head(top: Path) -> str:
    return git(top, "rev-parse", "HEAD").out.strip()


def _undo_merge(top: Path, worktree: Worktree, current: str, problem: str) -> None:
    """After a failed `git merge`: abort it when it stopped at conflicts, then raise."""
    conflicts = git_lines(top, "diff", "--name-only", "--diff-filter=U")
    merging = git(top, "rev-parse", "--verify", "--quiet", "MERGE_HEAD", check=False).ok
    if merging:
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
