"""A pull request's way through any forge: push, open or update, look, merge only when green."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from little_loops.fsm.forges.forge import (
    Check,
    CheckState,
    Forge,
    ForgeError,
    Mergeable,
    Place,
    PullRequest,
    Status,
)
from little_loops.fsm.forges.merge import MergeMethod
from little_loops.fsm.processes.gitcmd import git


class Verdict(StrEnum):
    """What a look at the pull request says: wait, go on (green), or fix it."""

    PENDING = "pending"  # checks not reported or running, the pushed commit not seen yet
    PASSED = "passed"  # every check passed (or skipped) on the pushed commit, and it would merge
    FAILED = "failed"  # a check failed, it conflicts with its base, or it was closed
    MERGED = "merged"  # it is merged already


@dataclass(frozen=True)
class Look:
    """One look at the pull request: the verdict, why (one line), and its checks."""

    verdict: Verdict
    reason: str
    checks: tuple[Check, ...] = ()

    @property
    def failed(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.state is CheckState.FAILED)


def push(place: Place, branch: str) -> str:
    """Push the checkout's HEAD to *branch* of the remote; the commit pushed. ForgeError
    when git refuses (the remote has commits the branch lacks, no access)."""
    if place.remote.startswith("-") or not place.remote.strip():
        raise ForgeError(f"{place.remote!r} is not a git remote's name")
    named = git(place.where, "check-ref-format", f"refs/heads/{branch}", check=False)
    if not named.ok or branch.startswith("-"):
        raise ForgeError(f"{branch!r} is not a branch name git accepts")
    head = git(place.where, "rev-parse", "--verify", "HEAD").out.strip()
    done = git(
        place.where, "push", "--quiet", place.remote, f"HEAD:refs/heads/{branch}", check=False
    )
    if not done.ok:
        raise ForgeError(f"`git push {place.remote} HEAD:{branch}` failed: {done.problem()}")
    return head


def publish(
    forge: Forge, place: Place, branch: str, base: str | None, title: str, body: str
) -> tuple[PullRequest, str]:
    """Push HEAD to *branch* and open its pull request, or update its title and body; the
    pull request and the commit pushed."""
    head = push(place, branch)
    return forge.open_or_update(place, branch, base, title, body), head


def judge(status: Status, head: str) -> Look:
    """The verdict on *status*, for the pull request whose pushed commit is *head*."""
    if status.state == "MERGED":
        return Look(Verdict.MERGED, "the pull request is merged")
    if status.state != "OPEN":
        return Look(Verdict.FAILED, f"the pull request is {status.state.lower() or 'not open'}")
    if status.head != head:
        return Look(Verdict.PENDING, f"the forge has not seen the pushed commit {head[:12]} yet")
    if not status.checks:  # none reported (None) or an empty list: never green by default
        return Look(Verdict.PENDING, "no checks have reported yet")
    checks = status.checks
    failed = [c.name for c in checks if c.state is CheckState.FAILED]
    if failed:
        return Look(Verdict.FAILED, f"checks failed: {', '.join(failed)}", checks)
    pending = [c.name for c in checks if c.state is CheckState.PENDING]
    if pending:
        return Look(Verdict.PENDING, f"checks pending: {', '.join(pending)}", checks)
    if status.mergeable is Mergeable.CONFLICTING:
        return Look(Verdict.FAILED, "the pull request conflicts with its base", checks)
    if status.mergeable is not Mergeable.MERGEABLE:
        return Look(Verdict.PENDING, "the forge has not yet said whether it would merge", checks)
    return Look(Verdict.PASSED, f"{len(checks)} checks passed", checks)


def look(forge: Forge, place: Place, pr: PullRequest, head: str, *, required: bool) -> Look:
    """The pull request's verdict now (see `judge`)."""
    return judge(forge.status(place, pr, required=required), head)


def merge_if_green(
    forge: Forge, place: Place, pr: PullRequest, seen: Look, method: MergeMethod, head: str
) -> bool:
    """Merge *pr* by *method* when *seen* (a look at it) passed: True when merged now. The
    forge merges only while the head is still *head*: a commit pushed after the look is
    never merged unchecked."""
    if seen.verdict is not Verdict.PASSED or method is MergeMethod.NONE:
        return False
    forge.merge(place, pr, method, head)
    return True
