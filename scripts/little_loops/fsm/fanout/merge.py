"""Merge a fan-out's branches (`green`, `best`, `none`): a conflict is undone and reported."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from little_loops.fsm.definition.model.fanout import MERGE_BEST, MERGE_GREEN, MERGE_NONE, MERGES
from little_loops.fsm.facts.safetext import one_line
from little_loops.fsm.fanout.branches import SUCCESS, BranchRecord, ll_loop
from little_loops.fsm.processes.containment import CONTAINMENT
from little_loops.fsm.processes.gitcmd import git

MERGE_TIMEOUT = 600.0


@dataclass(frozen=True)
class Merged:
    """What the merge did: the branches merged, and those it could not merge (each with a
    one-line reason; their work is still on their branch)."""

    merged: tuple[BranchRecord, ...]
    refused: tuple[tuple[BranchRecord, str], ...]


def to_merge(
    how: str, records: Sequence[BranchRecord], picked: Sequence[BranchRecord]
) -> list[BranchRecord]:
    """The branches *how* merges, in branch order."""
    if how == MERGE_NONE:
        return []
    if how == MERGE_GREEN:
        return [r for r in records if r.verdict == SUCCESS]
    if how == MERGE_BEST:
        return list(picked[:1])
    raise ValueError(f"merge: {how!r} is not one of {', '.join(MERGES)}")


def merge(records: Sequence[BranchRecord], project: Path, base: str | None) -> Merged:
    """Merge each of *records* (in turn) into the branch *project* has checked out; their
    worktrees and branches are kept until `tidy` (a resume then sees what was merged)."""
    merged: list[BranchRecord] = []
    refused: list[tuple[BranchRecord, str]] = []
    for record in records:
        if record.git_branch is None:
            continue  # not a repository: the branch worked in the project itself
        if not _exists(project, record.git_branch):
            if _work_left(record):  # its child deleted its own branch: say so, keep the folder
                reason = (
                    f"its branch {record.git_branch} is gone but its worktree"
                    f" {record.worktree} still has work in it: look there"
                )
                record.merged = f"not merged: {reason}"
                refused.append((record, reason))
                continue
            record.merged = "nothing to merge: no branch left (merged before, or no change)"
            continue
        if _merged_already(record, project, base):
            record.merged = "merged"
            merged.append(record)
            continue
        done = _ll_loop(project, "worktree", "merge", record.key, "--keep")
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        if done.returncode == 0:
            record.merged = "merged"
            merged.append(record)
        else:
            last = said[-1] if said else f"ll-loop worktree merge exited {done.returncode}"
            reason = one_line(last.removeprefix("ll-loop: error: "))
            record.merged = f"not merged: {reason}"
            refused.append((record, reason))
    return Merged(tuple(merged), tuple(refused))


def tidy(keys: Sequence[str], records: Sequence[BranchRecord], project: Path) -> None:
    """Remove the worktree and branch of each merged branch of *keys* (its commits are in
    the project's branch now); one already gone is no error."""
    for record in records:
        if record.key in keys and record.git_branch and _exists(project, record.git_branch):
            _ll_loop(project, "worktree", "discard", record.key)


def _exists(project: Path, branch: str) -> bool:
    return git(project, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", check=False).ok


def _work_left(record: BranchRecord) -> bool:
    """Whether the branch's worktree folder is still there with something git would commit
    (or git cannot tell: its HEAD is gone)."""
    if record.worktree is None or not record.worktree.is_dir():
        return False
    left = git(record.worktree, "status", "--porcelain", check=False)
    return not left.ok or bool(left.out.strip())


def _merged_already(record: BranchRecord, project: Path, base: str | None) -> bool:
    """Whether the branch's work is in the project's branch already (merged by a run that
    was killed before it could say so): nothing left uncommitted in its worktree, and its
    tip, beyond the base, an ancestor of HEAD."""
    assert record.git_branch is not None
    if record.worktree is not None and record.worktree.is_dir():
        left = git(record.worktree, "status", "--porcelain", check=False)
        if not left.ok or left.out.strip():
            return False
    tip = git(project, "rev-parse", f"refs/heads/{record.git_branch}", check=False).out.strip()
    if not tip or tip == base:
        return False
    return git(project, "merge-base", "--is-ancestor", tip, "HEAD", check=False).ok


def _ll_loop(project: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Run `ll-loop ARGS` in *project* to its end (in our process group: a Ctrl-C at the
    terminal reaches it too); past MERGE_TIMEOUT it is ended and TimeoutExpired raised."""
    argv = ll_loop(*args)
    child = CONTAINMENT.start(
        argv,
        cwd=project,
        streams=(subprocess.DEVNULL, subprocess.PIPE, subprocess.PIPE),
        session=False,
    )
    try:
        out, err = child.process.communicate(timeout=MERGE_TIMEOUT)
    except subprocess.TimeoutExpired:
        child.reap()
        child.process.communicate()
        raise
    return subprocess.CompletedProcess(argv, child.process.returncode, out, err)
