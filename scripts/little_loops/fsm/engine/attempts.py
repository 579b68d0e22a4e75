"""A state's attempts: the retry policy's schedule and agents' limits, and the wait in between."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from little_loops.fsm.actions.ratelimit import KIND_WORDS, AgentLimit
from little_loops.fsm.values.value_checks import MAX_LOOP_SECONDS

if TYPE_CHECKING:  # the policy blocks' classes load when a loop has one (model/blocks.py)
    import random

    from little_loops.fsm.definition.model.typed import RateLimitConfig, RetryConfig

RETRY_WAIT = "retry"  # a wait between attempts of retry:
LIMIT_WAIT = "rate_limit"  # a wait for an agent's rate, overload or usage limit
CHECKS_WAIT = "checks"  # a `pr:` state's wait before it looks at its checks again
# Whose limit a wait recorded without its agent is: the only agent there was.
FIRST_AGENT = "Claude"


def retries_on(policy: RetryConfig, verdict: str | None, exit_code: int | None) -> bool:
    """Whether *policy* retries a step that ended with *verdict* and *exit_code*."""
    for item in policy.on:
        if isinstance(item, bool):
            continue
        if isinstance(item, int):
            if exit_code is not None and exit_code == item:
                return True
        elif verdict is not None and item == verdict:
            return True
    return False


def retry_delay(policy: RetryConfig, attempt: int, rng: random.Random | None = None) -> float:
    """Seconds to wait after attempt number *attempt* (1 for the first) failed.

    interval × backoff_rate^(attempt-1), at most max_interval; with `jitter: full` a random
    time from 0 to that (Step Functions' JitterStrategy FULL).
    """
    longest = float(MAX_LOOP_SECONDS)  # as long as `interval` may be: never more
    if policy.max_interval is not None:
        longest = min(longest, float(policy.max_interval))
    interval = float(policy.interval)
    try:
        delay = interval * float(policy.backoff_rate) ** (attempt - 1)
    except OverflowError:  # a huge backoff_rate or many attempts
        delay = longest
    delay = min(delay, longest) if interval > 0 else 0.0
    if policy.jitter == "full":
        import random  # only a jittered retry policy loads it

        delay = (rng or random).uniform(0, delay)
    return delay


def ladder_delay(config: RateLimitConfig, waits_so_far: int) -> float:
    """The wait for an agent's limit the *waits_so_far*+1-th time in a row (the last repeats)."""
    ladder = config.ladder or [60.0]
    return float(ladder[min(waits_so_far, len(ladder) - 1)])


@dataclass
class Wait:
    """A wait in progress: why, and until when (epoch seconds, so it survives a crash)."""

    kind: str  # RETRY_WAIT or LIMIT_WAIT
    until: float
    seconds: float  # how long it was planned for
    limit: str | None = None  # for LIMIT_WAIT: ratelimit.RATE_LIMIT, OVERLOADED, USAGE_LIMIT
    resets: str | None = None  # the reset time the agent gave, as shown (`15:00`)
    rejudge: bool = False  # the action's result stands: only its evaluation runs again
    agent: str | None = None  # whose limit (as a person names the agent); None: Claude's

    def left(self, now: float | None = None) -> float:
        """Seconds to go: never more than it was planned for (nor a year), so a clock set
        back while the run was stopped, or a saved file's `until`, cannot stretch it."""
        longest = min(float(self.seconds), float(MAX_LOOP_SECONDS))
        return max(0.0, min(self.until - (time.time() if now is None else now), longest))


@dataclass
class AttemptRecord:
    """Where the current state is in its attempts (saved in the run's state as `attempt`)."""

    state: str
    number: int = 1  # the attempt running now or next
    announced: bool = False  # its `attempt` event was emitted
    limit_waits: int = 0  # waits for agents' limits in a row, in this step
    limit_waited_s: float = 0.0  # their length in all, for rate_limit.max_wait
    wait: Wait | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> AttemptRecord | None:
        if not isinstance(data, dict) or not isinstance(data.get("state"), str):
            return None
        wait = data.get("wait")
        try:
            return cls(
                state=data["state"],
                number=int(data.get("number", 1)),
                announced=bool(data.get("announced", False)),
                limit_waits=int(data.get("limit_waits", 0)),
                limit_waited_s=float(data.get("limit_waited_s", 0.0)),
                wait=Wait(**wait) if isinstance(wait, dict) else None,
            )
        except (TypeError, ValueError):
            return None  # an unreadable record: the state starts its attempts again


@dataclass
class Attempts:
    """The executor's attempt bookkeeping: the current record and the time spent waiting."""

    record: AttemptRecord | None = None
    waited_ms: dict[str, int] = field(default_factory=dict)

    def of(self, state: str) -> AttemptRecord:
        """The record of *state*, a new one (attempt 1) when the run just came to it."""
        if self.record is None or self.record.state != state:
            self.record = AttemptRecord(state)
        return self.record

    def left(self) -> None:
        """The run moved on to another state (or this one again, by a route)."""
        self.record = None

    def plan_retry(self, state: str, seconds: float) -> Wait:
        """Wait *seconds*, then run attempt number+1 of *state*."""
        record = self.of(state)
        record.number += 1
        record.announced = False
        record.limit_waits = 0
        record.limit_waited_s = 0.0
        record.wait = Wait(RETRY_WAIT, time.time() + seconds, seconds)
        return record.wait

    def plan_limit(
        self,
        state: str,
        limit: AgentLimit,
        config: RateLimitConfig,
        *,
        rejudge: bool,
        agent: str | None = None,
    ) -> Wait | None:
        """Wait for *limit* (until its reset time, else the ladder), or None when that would
        take *state* past `rate_limit.max_wait` in all."""
        record = self.of(state)
        now = time.time()
        if limit.resets_at is not None and limit.resets_at > now:
            seconds = limit.resets_at - now + 1.0  # a second after: the reset has happened
        else:
            seconds = ladder_delay(config, record.limit_waits)
        room = float(config.max_wait) - record.limit_waited_s
        if room <= 0:
            return None
        seconds = min(seconds, room)
        record.limit_waits += 1
        record.limit_waited_s += seconds
        record.wait = Wait(
            LIMIT_WAIT,
            now + seconds,
            seconds,
            limit=limit.kind,
            resets=limit.resets_text(),
            rejudge=rejudge,
            agent=agent,
        )
        return record.wait

    def plan_checks(self, state: str, seconds: float) -> Wait:
        """Wait *seconds*, then look again at the checks of *state*'s pull request."""
        record = self.of(state)
        record.wait = Wait(CHECKS_WAIT, time.time() + seconds, seconds)
        return record.wait

    def waited(self, kind: str, seconds: float) -> None:
        """Add a finished (or cut short) wait to the run's total."""
        self.waited_ms[kind] = self.waited_ms.get(kind, 0) + int(seconds * 1000)

    def snapshot(self) -> dict[str, Any] | None:
        return None if self.record is None else self.record.to_dict()


def wait_event(
    state: str, wait: Wait, record: AttemptRecord, max_attempts: int | None
) -> dict[str, Any]:
    """The payload of a `retry_wait` or `rate_limit_wait` event for *wait*."""
    event: dict[str, Any] = {
        "state": state,
        "seconds": round(wait.seconds, 3),
        "until": datetime.fromtimestamp(wait.until, UTC).isoformat(timespec="milliseconds"),
    }
    if wait.kind == RETRY_WAIT:
        event["attempt"] = record.number
        if max_attempts is not None:
            event["max_attempts"] = max_attempts
    else:
        event["limit"] = wait.limit or ""
        if wait.resets:
            event["resets"] = wait.resets
        event["judge"] = wait.rejudge
        if wait.agent:
            event["agent"] = wait.agent
    return event


def waiting_text(event: dict[str, Any]) -> str:
    """What a person reads for a wait event: `waiting for Claude's usage limit (resets 15:00)`."""
    if "number" in event:  # checks_wait
        why = f": {event['reason']}" if event.get("reason") else ""
        secs = _secs(event.get("seconds"))
        return f"waiting for the checks of pull request #{event['number']}{why} ({secs})"
    if "limit" in event:
        words = KIND_WORDS.get(str(event.get("limit")), "limit")
        whose = _whose(bool(event.get("judge")), event.get("agent"))
        resets = event.get("resets")
        tail = f" (resets {resets})" if resets else f" ({_secs(event.get('seconds'))})"
        return f"waiting for {whose} {words}{tail}"
    attempt = event.get("attempt")
    of = f" of {event['max_attempts']}" if event.get("max_attempts") else ""
    return f"retrying in {_secs(event.get('seconds'))} (attempt {attempt}{of})"


def _whose(judge: bool, agent: object) -> str:
    """Whose limit a wait is for: the judge's, or its agent's (Claude's in older records)."""
    if judge:
        return "the judge's"
    return f"{agent if isinstance(agent, str) and agent else FIRST_AGENT}'s"


def _secs(value: object) -> str:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "?"
    return f"{value:g}s" if value < 120 else f"{value / 60:.0f} min"


def pending_wait(attempt: Mapping[str, Any] | None, now: float | None = None) -> str | None:
    """What a saved run's `attempt` says it waits for, as `status` shows it, or None."""
    record = AttemptRecord.from_dict(dict(attempt) if attempt else None)
    if record is None or record.wait is None:
        return None
    wait = record.wait
    left = _secs(round(wait.left(now), 1))
    if wait.kind == LIMIT_WAIT:
        words = KIND_WORDS.get(wait.limit or "", "limit")
        whose = _whose(wait.rejudge, wait.agent)
        resets = f", resets {wait.resets}" if wait.resets else ""
        return f"for {whose} {words} in state {record.state}{resets} ({left} left)"
    if wait.kind == CHECKS_WAIT:
        return f"for the checks of state {record.state}'s pull request ({left} left)"
    return f"before attempt {record.number} of state {record.state} ({left} left)"
