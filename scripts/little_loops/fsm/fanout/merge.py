"""Merge a fan-out's branches (`green`, `best`, `none`): a conflict is undone and reported."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from little_loops.fsm.facts.safetext import one_line
from little_loops.fsm.fanout.branches import SUCCESS, BranchRecord, ll_loop
from little_loops.fsm.processes.gitcmd import git

MERGE_GREEN = "green"
MERGE_BEST = "best"
MERGE_NONE = "none"
MERGES = (MERGE_GREEN, MERGE_BEST, MERGE_NONE)
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


def merge(records: Sequence[BranchRecord], project: Path) -> Merged:
    """Merge each of *records* (in turn) into the branch *project* has checked out."""
    merged: list[BranchRecord] = []
    refused: list[tuple[BranchRecord, str]] = []
    for record in records:
        if record.git_branch is None:
            continue  # not a repository: the branch worked in the project itself
        exists = git(
            project,
            "rev-parse",
            "--verify",
            "--quiet",
            f"refs/heads/{record.git_branch}",
            check=False,
        )
        if not exists.ok:
            record.merged = (
                "nothing to merge: no branch left (merged before, or it changed nothing)"
            )
            continue
        done = subprocess.run(
            ll_loop("worktree", "merge", record.key),
            cwd=project,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=MERGE_TIMEOUT,
            check=False,
        )
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
