"""Run a state again instead of routing it: `retry:` on a matching result; Claude's limits."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from little_loops.fsm.actions.ratelimit import KIND_WORDS, ClaudeLimit, judge_limit
from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.definition.model import CURRENT_STATE_TOKEN, FSMLoop, StateConfig
from little_loops.fsm.definition.routing import StepOutcome
from little_loops.fsm.engine import events
from little_loops.fsm.engine.attempts import (
    RETRY_WAIT,
    Attempts,
    retries_on,
    retry_delay,
    wait_event,
)
from little_loops.fsm.engine.limits import RunClock
from little_loops.fsm.engine.records import ExecutionResult
from little_loops.fsm.evaluators.spec import ERROR_VERDICT, EvaluationResult


class Retrying:
    """The retry-and-wait half of FSMExecutor (the fields it uses are declared here)."""

    fsm: FSMLoop
    current_state: str
    acted: dict[str, Any] | None
    attempts: Attempts
    clock: RunClock
    _shutdown: threading.Event
    _shutdown_reason: str

    _emit: Callable[[str, Mapping[str, object]], None]
    _wait: Callable[[float], None]
    _finish: Callable[..., ExecutionResult]
    _execute_state: Callable[[str, StateConfig, ActionResult | None], StepOutcome]

    def _attempts_of(
        self, state: StateConfig, done: ActionResult | None
    ) -> StepOutcome | ExecutionResult:
        """Run the current *state* (its action unless *done*) until it gives an outcome to
        route: a retry or Claude's limit runs it again after a wait (the run's end, if a
        stop or the timeout cuts that short)."""
        while True:
            ended = self._finish_wait()
            if ended is not None:
                return ended
            outcome = self._execute_state(self.current_state, state, done)
            if not outcome.again:
                return outcome
            done = outcome.rejudge

    def _announce_attempt(self, name: str, state: StateConfig) -> None:
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
        self._emit("attempt", attempt)

    def _finish_wait(self) -> ExecutionResult | None:
        """Wait out the current state's pending wait (also one a crash or a stop cut short),
        never past the loop's timeout; a stop ends it at once and leaves it pending."""
        record = self.attempts.record
        if record is None or record.state != self.current_state or record.wait is None:
            return None
        wait = record.wait
        left = wait.left()
        remaining = self.clock.remaining_s()
        bounded = left if remaining is None else min(left, max(0.0, remaining))
        started = time.monotonic()
        self._wait(bounded)
        self.attempts.waited(wait.kind, time.monotonic() - started)
        if self._shutdown.is_set():
            return self._finish(self._shutdown_reason)
        if bounded < left:
            return self._finish("timeout", error="loop timeout reached during a wait")
        record.wait = None
        return None

    def _limit_wait(
        self, name: str, limit: ClaudeLimit | None, *, rejudge: ActionResult | None
    ) -> StepOutcome | None:
        """Wait for Claude's *limit* and run the step again (only its evaluation when
        *rejudge* is the action's result), or end the run past `rate_limit.max_wait`."""
        if limit is None:
            return None
        config = self.fsm.rate_limit
        wait = self.attempts.plan_limit(name, limit, config, rejudge=rejudge is not None)
        if wait is None:
            words = KIND_WORDS.get(limit.kind, "limit")
            return StepOutcome(
                stop="error",
                error=f"Claude's {words} did not lift within rate_limit.max_wait"
                f" ({config.max_wait:g}s): {limit.message}",
            )
        if rejudge is None:
            self.acted = None  # the action runs again: a resume must not judge this one
        record = self.attempts.of(name)
        self._emit("rate_limit_wait", wait_event(name, wait, record, None))
        return StepOutcome(again=True, rejudge=rejudge)

    def _action_limit(
        self, name: str, state: StateConfig, result: ActionResult
    ) -> StepOutcome | None:
        """A Claude Code session that ended on a rate, overload or usage limit: wait, run again."""
        return self._limit_wait(name, state.action_kind().usage_limit(result), rejudge=None)

    def _judge_limit(
        self, name: str, result: EvaluationResult, action: ActionResult | None
    ) -> StepOutcome | None:
        """The LLM judge refused with 429/529 (after its own retries): wait, judge again."""
        if result.verdict != ERROR_VERDICT:
            return None
        limit = judge_limit(result.details)
        if limit is None:
            return None
        return self._limit_wait(name, limit, rejudge=action or ActionResult("", "", 0, 0))

    def _retry_or(
        self, name: str, state: StateConfig, outcome: StepOutcome, action: ActionResult | None
    ) -> StepOutcome:
        """*outcome*, or another attempt when the state's retry policy matches it, or the
        `on_retry_exhausted` route once the attempts are used up."""
        policy = self.fsm.retry_of(state)
        if policy is None or outcome.stop is not None or not state.action:
            return outcome  # a decision state would judge the same value again
        exit_code = action.exit_code if action is not None else None
        if not retries_on(policy, outcome.verdict, exit_code):
            return outcome
        record = self.attempts.of(name)
        if record.number < policy.max_attempts:
            wait = self.attempts.plan_retry(name, retry_delay(policy, record.number))
            self.acted = None  # the action runs again: a resume must not judge this one
            payload = wait_event(name, wait, record, policy.max_attempts)
            self._emit("retry_wait", payload)
            return StepOutcome(again=True)
        target = state.on_retry_exhausted
        if target is None:
            return outcome
        target = name if target == CURRENT_STATE_TOKEN else target
        return StepOutcome(target, outcome.verdict, "on_retry_exhausted")


__all__ = ["RETRY_WAIT", "Retrying"]
