"""The settings blocks of a loop and its states as dataclasses: routes, stall, retry, archive."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Self

from little_loops.fsm.actions.registry import BY_OPTIONS_KEY
from little_loops.fsm.definition.model import pr_keys
from little_loops.fsm.definition.model.fanout import MapConfig, ParallelConfig
from little_loops.fsm.definition.model.learning import LearningConfig
from little_loops.fsm.evaluators.config import EvaluateConfig
from little_loops.fsm.values.fields import non_default_items

DEFAULT_KEEP_RUNS = 50  # finished runs of a loop the archive keeps (`archive.keep`)
DEFAULT_NOTIFY_TIMEOUT = 10.0  # seconds a notification's command or one webhook try may take
DEFAULT_NOTIFY_RETRIES = 3  # webhook tries after the first (1 s, 2 s, 4 s ... apart)
# Route-table keys with a meaning of their own; every other key is a verdict.
ROUTE_DEFAULT_KEY = "_"
ROUTE_ERROR_KEY = "_error"


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


@dataclass
class RouteConfig:
    """A verdict → state table (`route:`); `_` is the default, `_error` the error route."""

    routes: dict[str, str] = field(default_factory=dict)
    default: str | None = None
    error: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RouteConfig:
        routes = {
            str(k): v for k, v in data.items() if k not in (ROUTE_DEFAULT_KEY, ROUTE_ERROR_KEY)
        }
        return cls(
            routes=routes,
            default=data.get(ROUTE_DEFAULT_KEY),
            error=data.get(ROUTE_ERROR_KEY),
        )

    def to_dict(self) -> dict[str, str]:
        out = dict(self.routes)
        if self.default is not None:
            out[ROUTE_DEFAULT_KEY] = self.default
        if self.error is not None:
            out[ROUTE_ERROR_KEY] = self.error
        return out


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


# A state's settings blocks, each read from and written back to its own mapping (a key's
# row may name one more: key_row.Key.block).
STATE_BLOCKS: dict[str, Any] = {
    "evaluate": EvaluateConfig,
    "route": RouteConfig,
    "stall": StallConfig,
    "retry": RetryConfig,
    "learning": LearningConfig,
    "parallel": ParallelConfig,
    "map": MapConfig,
    pr_keys.PR_KEY: PullRequestConfig,
}


def yaml_key(field_name: str) -> str:
    """The loop-file key of a model field: `with_` is `with` (a Python keyword)."""
    return field_name.removesuffix("_")


def field_name(key: str) -> str:
    """The model field of a loop-file key (see yaml_key)."""
    return "with_" if key == "with" else key


# The metadata of the field that holds the action kinds' options blocks (`options`): it
# stands for one loop-file key per kind with options, its `options_key`, where it is.
BLOCKS_FIELD = {"blocks": True}


def model_keys(cls: type) -> list[str]:
    """The loop-file keys of a model dataclass: its fields, less the derived ones, with the
    options blocks' field as the key of each block."""
    out: list[str] = []
    for f in fields(cls):
        if f.metadata.get("blocks"):
            out += BY_OPTIONS_KEY
        elif f.metadata.get("keys"):
            out += f.metadata["keys"]  # one field for several keys (the lint flags)
        elif f.metadata.get("rows"):
            out += f.metadata["rows"]()  # the keys whose rows name no field (`more`)
        elif not f.metadata.get("derived"):
            out.append(yaml_key(f.name))
    return out


_PLAIN_KEYS: dict[type, frozenset[str]] = {}  # worked out once per class


def plain_keys(cls: type) -> frozenset[str]:
    """The loop-file keys of *cls* that are one field each (not an options block); worked
    out once per class (every state of every loop read asks)."""
    found = _PLAIN_KEYS.get(cls)
    if found is None:
        found = _PLAIN_KEYS[cls] = frozenset(
            yaml_key(f.name)
            for f in fields(cls)
            # a derived field (the loaded children, the source file, `theirs`) is no key
            if not any(f.metadata.get(kind) for kind in ("blocks", "keys", "rows", "derived"))
        )
    return found


def option_blocks(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The options blocks of a loop or state in *data*, by key (a null one is left out)."""
    return {key: data[key] for key in BY_OPTIONS_KEY if data.get(key) is not None}
