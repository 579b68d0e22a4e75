"""A pull-request state's `pr:` block as a dataclass (loaded when a file has one)."""

from __future__ import annotations

from dataclasses import dataclass

from little_loops.fsm.definition.model import pr_keys
from little_loops.fsm.definition.model.blocks import Block


@dataclass
class PullRequestConfig(Block):
    """A pull-request state's `pr:`: a field for each row of pr_keys.BLOCK_KEYS (its default
    the row's)."""

    title: str = pr_keys.PR_DEFAULTS["title"]
    body: str | None = pr_keys.PR_DEFAULTS["body"]  # None: the run's summary alone
    forge: str = pr_keys.PR_DEFAULTS["forge"]
    remote: str = pr_keys.PR_DEFAULTS["remote"]
    branch: str | None = pr_keys.PR_DEFAULTS["branch"]  # None: the checked-out branch
    base: str | None = pr_keys.PR_DEFAULTS["base"]  # None: the repository's default branch
    checks: str = pr_keys.PR_DEFAULTS["checks"]
    merge: str = pr_keys.PR_DEFAULTS["merge"]
    interval: float = pr_keys.PR_DEFAULTS["interval"]
    backoff_rate: float = pr_keys.PR_DEFAULTS["backoff_rate"]
    max_interval: float = pr_keys.PR_DEFAULTS["max_interval"]
    max_wait: float = pr_keys.PR_DEFAULTS["max_wait"]
