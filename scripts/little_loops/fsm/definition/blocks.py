"""The settings blocks of a loop and its states as dataclasses: stall, retry, limits, archive."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Self

from little_loops.fsm.values.fields import non_default_items

DEFAULT_KEEP_RUNS = 50  # finished runs of a loop the archive keeps (`archive.keep`)
DEFAULT_NOTIFY_TIMEOUT = 10.0  # seconds a notification's command or one webhook try may take
DEFAULT_NOTIFY_RETRIES = 3  # webhook tries after the first (1 s, 2 s, 4 s ... apart)


class Block:
    """A settings mapping read into a dataclass: its known keys in, its non-default fields out."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in data.items() if k in known})

    def to_dict(self) -> dict[str, Any]:
        return non_default_items(self)


@dataclass
class StallConfig(Block):
    """Stall breakers (`stall:` of the loop or of a state): end a run that spins in place."""

    same_result: int | None = None  # the same verdict on the same output N times in a row
    no_change_passes: int | None = None  # no change to the git working tree in N passes
    max_visits: int | None = None  # a state entered more than N times
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


# Seconds to wait for each successive rate limit of Claude with no reset time given.
DEFAULT_RATE_LIMIT_LADDER: tuple[float, ...] = (60, 300, 900, 1800)
DEFAULT_RATE_LIMIT_MAX_WAIT = 6 * 60 * 60.0  # a usage limit resets within five hours


@dataclass
class RateLimitConfig(Block):
    """How to wait out Claude's rate, overload and usage limits (`rate_limit:`)."""

    ladder: list[float] = field(default_factory=lambda: list(DEFAULT_RATE_LIMIT_LADDER))
    max_wait: float = DEFAULT_RATE_LIMIT_MAX_WAIT  # longest wait in a row for one step


@dataclass
class ArchiveConfig(Block):
    """How many finished runs of the loop the archive keeps, and for how long (`archive:`)."""

    keep: int = DEFAULT_KEEP_RUNS
    max_age_days: float | None = None


@dataclass
class NotifyConfig(Block):
    """Who hears that a run ended (`notify:`): a command, a webhook, for which outcomes."""

    command: str | None = None
    webhook: str | None = None
    on: list[str] | None = None  # outcome words (facts/outcomes NOTIFY_OUTCOMES); None: all
    timeout: float = DEFAULT_NOTIFY_TIMEOUT
    retries: int = DEFAULT_NOTIFY_RETRIES
