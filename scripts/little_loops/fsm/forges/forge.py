"""What a forge kind is (the `Forge` Protocol) and what it answers: a pull request, its checks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol, runtime_checkable

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.forges.merge import MergeMethod


class ForgeError(LoopRuntimeError):
    """The forge could not be reached or refused a call: one line naming the call and why."""


class CheckState(StrEnum):
    """Where one check of a pull request stands, in the forge's own buckets."""

    PENDING = "pending"  # queued, running, or expected and not yet reported
    PASSED = "passed"
    FAILED = "failed"  # failure, error, cancelled, timed out, action required
    SKIPPED = "skipped"  # skipped or neutral: it neither blocks nor passes


class Mergeable(StrEnum):
    """Whether the forge would merge the pull request's head into its base."""

    MERGEABLE = "mergeable"
    CONFLICTING = "conflicting"
    UNKNOWN = "unknown"  # not computed yet


@dataclass(frozen=True)
class Place:
    """Where the forge is called from: a checkout, the remote (by name) the forge hosts and
    the branch is pushed to, and the environment its CLI runs with."""

    where: Path
    remote: str
    env: Mapping[str, str]


@dataclass(frozen=True)
class PullRequest:
    """A pull request the forge holds: its number and address; *created* by this call."""

    number: int
    url: str
    created: bool = False


@dataclass(frozen=True)
class Check:
    """One check on the pull request's head: its name, state, link, and (failed) log tail."""

    name: str
    state: CheckState
    link: str = ""
    log_tail: str = ""


@dataclass(frozen=True)
class Status:
    """The pull request as the forge shows it now: the commit it has as head, whether it is
    open, merged or closed, whether it would merge, and its checks (None: none reported)."""

    head: str
    state: str  # OPEN / MERGED / CLOSED
    mergeable: Mergeable
    checks: tuple[Check, ...] | None


@runtime_checkable
class Forge(Protocol):
    """A forge kind (one module in this folder, one line in registry.py): every call the
    pull-request procedure (forges/pull.py) makes on it, from a `Place`."""

    name: str
    program: str  # its CLI, looked up on PATH
    install_hint: str

    def problem(self, place: Place) -> str | None:
        """Why this forge cannot be used from *place* (its CLI missing, not logged in, a
        remote it does not host): one line naming the fix; None when it is ready."""
        ...

    def open_or_update(
        self, place: Place, head: str, base: str | None, title: str, body: str
    ) -> PullRequest:
        """The open pull request of branch *head* with this title and body: edited when there
        is one, else opened against *base* (None: the repository's default branch)."""
        ...

    def status(self, place: Place, pr: PullRequest, *, required: bool) -> Status:
        """The pull request now; its checks (only the required ones when *required*), the
        failed ones with the tail of their log."""
        ...

    def merge(self, place: Place, pr: PullRequest, method: MergeMethod, head: str) -> None:
        """Merge *pr* by *method*, only while its head is the commit *head* (the forge
        refuses otherwise); ForgeError when it does not merge."""
        ...
