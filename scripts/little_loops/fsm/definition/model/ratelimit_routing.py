"""A state's own rate-limit waits (little-loops' keys) laid over the loop's `rate_limit:`."""

from __future__ import annotations

from dataclasses import replace

from little_loops.fsm.definition.model.blocks import RateLimitConfig
from little_loops.fsm.definition.model.key_row import STATE, Key
from little_loops.fsm.definition.model.retry_keys import wait_ladder
from little_loops.fsm.values.value_checks import (
    WAIT_SECONDS,
    integer,
    optional,
    string,
)

# The short tier a state gets when it sets one of its two keys and not the other: this many
# waits, the first this many seconds, each twice the one before (then the long ladder).
DEFAULT_SHORT_RETRIES = 3
DEFAULT_BACKOFF_BASE = 30.0

# The label of the loop graph's edge to where a state goes when its waits run out.
RATE_LIMIT_EXHAUSTED_LABEL = "rate_limit_exhausted"
# A state's own waits (the names are little-loops').
KEYS: tuple[Key, ...] = (
    Key(
        "max_rate_limit_retries",
        (STATE,),
        optional(integer(0)),
        "Waits of the short tier before the long ladder (default 3 when "
        "rate_limit_backoff_base_seconds is set).",
    ),
    Key(
        "rate_limit_backoff_base_seconds",
        (STATE,),
        optional(WAIT_SECONDS),
        "Seconds of the first short-tier wait; each next one is twice as long. Default 30 when "
        "max_rate_limit_retries is set.",
    ),
    Key(
        "rate_limit_max_wait_seconds",
        (STATE,),
        optional(WAIT_SECONDS),
        "This state's rate_limit.max_wait: its waits in all.",
    ),
    Key(
        "rate_limit_long_wait_ladder",
        (STATE,),
        optional(wait_ladder),
        "This state's rate_limit.ladder, after the short tier.",
    ),
    Key(
        "on_rate_limit_exhausted",
        (STATE,),
        optional(string),
        "The state to go to when the waits reach their max_wait; none: the run ends with an error.",
        route=RATE_LIMIT_EXHAUSTED_LABEL,
    ),
)


def short_tier(retries: int | None, base: float | None) -> list[float]:
    """The waits of the short tier: *retries* of them from *base* seconds, doubling (none
    when neither is set)."""
    if retries is None and base is None:
        return []
    count = DEFAULT_SHORT_RETRIES if retries is None else int(retries)
    first = DEFAULT_BACKOFF_BASE if base is None else float(base)
    return [first * 2**k for k in range(count)]


def state_rate_limit(
    loop: RateLimitConfig,
    *,
    retries: int | None = None,
    base: float | None = None,
    max_wait: float | None = None,
    ladder: list[float] | None = None,
) -> RateLimitConfig:
    """The waits of one state: the short tier (*retries* from *base*, doubling), then *ladder*
    (else the loop's), for at most *max_wait* seconds in all (else the loop's `max_wait`)."""
    short = short_tier(retries, base)
    if not short and ladder is None and max_wait is None:
        return loop
    long = list(ladder) if ladder is not None else list(loop.ladder)
    return replace(
        loop,
        ladder=short + long,
        max_wait=float(max_wait) if max_wait is not None else loop.max_wait,
    )
