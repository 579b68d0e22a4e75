"""The retry rule: run a state again on a matching result (`retry:`), and the wait in between."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.definition.graph.routing import StepOutcome
from little_loops.fsm.definition.model.typed import CURRENT_STATE_TOKEN, FSMLoop, StateConfig
from little_loops.fsm.engine import events
from little_loops.fsm.engine.attempts import AttemptRecord, Attempts, retries_on, retry_delay
from little_loops.fsm.engine.attempts import wait_event as wait_payload
from little_loops.fsm.engine.limits import RunClock
from little_loops.fsm.engine.memory import Memory
from little_loops.fsm.engine.records import ExecutorSnapshot
from little_loops.fsm.evaluators.spec import ERROR_VERDICT
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.outcomes import Outcome

Emit = Callable[[Event, Mapping[str, object]], None]


def not_retryable(state: StateConfig, outcome: StepOutcome, exit_code: int | None) -> bool:
    """Whether *outcome* is an error whose exit code `retryable_exit_codes` leaves out: it
    is not retried (`retry:`), and goes to `on_retry_exhausted` when the state has one."""
    codes = state.retryable_exit_codes
    return (
        codes is not None
        and outcome.stop is None
        and outcome.verdict == ERROR_VERDICT
        and exit_code is not None
        and exit_code not in codes
    )


class Retries:
    """The current state's attempts and the time the run spent waiting between them."""

    def __init__(self, fsm: FSMLoop, emit: Emit) -> None:
        self.fsm = fsm
        self.emit = emit
        self.attempts = Attempts()

    def dump(self) -> dict[str, Any]:
        return {"attempt": self.attempts.snapshot(), "waited_ms": dict(self.attempts.waited_ms)}

    def restore(self, snap: ExecutorSnapshot) -> None:
        self.attempts = Attempts(AttemptRecord.from_dict(snap.attempt), dict(snap.waited_ms))

    def announce(self, name: str, state: StateConfig) -> None:
        """Emit `attempt` before each attempt of a state with a retry policy."""
        policy = self.fsm.retry_of(state)
        if policy is None:
            return
        record = self.attempts.of(name)
        if record.announced:
            return  # a resumed run runs the same attempt again
        record.announced = True
        attempt = events.Attempt(
            state=name, attempt=record.number, max_attempts=policy.max_attempts
        )
        self.emit(Event.ATTEMPT, attempt)

    def finish_wait(
        self,
        name: str,
        clock: RunClock,
        wait: Callable[[float], None],
        stopping: Callable[[], Outcome | None],
    ) -> StepOutcome | None:
        """Wait out state *name*'s pending wait (also one a crash or a stop cut short), never
        past the loop's timeout; a stop ends it at once and leaves it pending: the run's end."""
        record = self.attempts.record
        if record is None or record.state != name or record.wait is None:
            return None
        pending = record.wait
        left = pending.left()
        remaining = clock.remaining_s()
        bounded = left if remaining is None else min(left, max(0.0, remaining))
        started = time.monotonic()
        wait(bounded)
        self.attempts.waited(pending.kind, time.monotonic() - started)
        stop = stopping()
        if stop is not None:
            return StepOutcome(stop=stop)
        if bounded < left:
            return StepOutcome(stop=Outcome.TIMEOUT, error="loop timeout reached during a wait")
        record.wait = None
        return None

    def retry_or(
        self,
        name: str,
        state: StateConfig,
        outcome: StepOutcome,
        action: ActionResult | None,
        memory: Memory,
    ) -> StepOutcome:
        """*outcome*, or another attempt (`again`) when the state's retry policy matches it,
        or the `on_retry_exhausted` route once the attempts are used up."""
        exit_code = action.exit_code if action is not None else None
        if not_retryable(state, outcome, exit_code):
            target = state.on_retry_exhausted
            if target is None:
                return outcome  # its error route, not another attempt
            target = name if target == CURRENT_STATE_TOKEN else target
            return StepOutcome(target, outcome.verdict, f"on_retry_exhausted (exit {exit_code})")
        policy = self.fsm.retry_of(state)
        if policy is None or outcome.stop is not None or not state.action:
            return outcome  # a decision state would judge the same value again
        if not retries_on(policy, outcome.verdict, exit_code):
            return outcome
        record = self.attempts.of(name)
        if record.number < policy.max_attempts:
            wait = self.attempts.plan_retry(name, retry_delay(policy, record.number))
            memory.acted = None  # the action runs again: a resume must not judge this one
            payload = wait_payload(name, wait, record, policy.max_attempts)
            self.emit(Event.RETRY_WAIT, payload)
            return StepOutcome(again=True)
        target = state.on_retry_exhausted
        if target is None:
            return outcome
        target = name if target == CURRENT_STATE_TOKEN else target
        return StepOutcome(target, outcome.verdict, "on_retry_exhausted")
