"""The `stall:`, `retry:` and `notify:` blocks as dataclasses (loaded when a file has one)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Self

from little_loops.fsm.definition.model.blocks import (
    DEFAULT_NOTIFY_RETRIES,
    DEFAULT_NOTIFY_TIMEOUT,
    Block,
)


@dataclass
class StallConfig(Block):
    """Stall breakers (`stall:` of the loop or of a state): end a run that spins in place."""

    same_result: int | None = None  # the same verdict on the same output N times in a row
    no_change_passes: int | None = None  # no change to the git working tree in N passes
    max_visits: int | None = None  # a state entered more than N times
    # same_result masks what differs from run to run (engine/volatile.py); None: true
    ignore_volatile: bool | None = None
    on_stall: str | None = None  # where a stall goes (none: the run ends, terminated_by stall)


@dataclass
class RetryConfig(Block):
    """When and how often to run a state's action again (`retry:`), as in AWS Step Functions."""

    on: list[str | int] = field(default_factory=lambda: ["error"])  # verdicts, error, exit codes
    max_attempts: int = 3  # attempts in all, the first one included
    interval: float = 1.0  # seconds before the second attempt
    backoff_rate: float = 2.0  # each further wait is this many times the one before
    max_interval: float | None = None  # no wait is longer than this
    jitter: str = "none"  # "full": each wait is a random time from 0 to its length

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        on = data.get("on")
        return super().from_dict(
            {**data, "on": [on]} if "on" in data and not isinstance(on, list) else data
        )


@dataclass
class NotifyConfig(Block):
    """Who hears that a run ended (`notify:`): a command, a webhook, for which outcomes."""

    command: str | None = None
    webhook: str | None = None
    on: list[str] | None = None  # outcome words (facts/outcomes NOTIFY_OUTCOMES); None: all
    timeout: float = DEFAULT_NOTIFY_TIMEOUT
    retries: int = DEFAULT_NOTIFY_RETRIES
