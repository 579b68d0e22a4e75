"""The rate-limit rule: Claude's (or the judge's) limit waits, then the step runs again."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.actions.ratelimit import KIND_WORDS, ClaudeLimit, judge_limit
from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.actions.spec import ActionKindSpec
from little_loops.fsm.definition.model import StateConfig
from little_loops.fsm.definition.routing import StepOutcome
from little_loops.fsm.engine.attempts import wait_event
from little_loops.fsm.engine.memory import Memory
from little_loops.fsm.engine.records import ExecutorSnapshot
from little_loops.fsm.engine.rules.retries import Retries
from little_loops.fsm.evaluators.spec import ERROR_VERDICT, EvaluationResult
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.outcomes import Outcome


class RateLimits:
    """Plans the waits for a limit in the current state's attempt record, which the retry
    rule owns and saves (one record: a retry after a limit starts the limit's count again)."""

    def __init__(self, retries: Retries) -> None:
        self.retries = retries

    def dump(self) -> dict[str, Any]:
        return {}  # its counts are in the retry rule's `attempt`

    def restore(self, snap: ExecutorSnapshot) -> None:
        return None

    def after_action(
        self,
        name: str,
        state: StateConfig,
        result: ActionResult,
        memory: Memory,
        kind: ActionKindSpec | None = None,
    ) -> StepOutcome | None:
        """An agent session (of *kind*, default the state's action type's) that ended on a
        rate, overload or usage limit: wait, run again."""
        spec = state.action_kind() if kind is None else kind
        return self._wait(name, spec.usage_limit(result), memory, rejudge=None)

    def after_judge(
        self, name: str, result: EvaluationResult, action: ActionResult | None, memory: Memory
    ) -> StepOutcome | None:
        """The LLM judge refused with 429/529 (after its own retries): wait, judge again."""
        if result.verdict != ERROR_VERDICT:
            return None
        limit = judge_limit(result.details)
        if limit is None:
            return None
        return self._wait(name, limit, memory, rejudge=action or ActionResult("", "", 0, 0))

    def _wait(
        self,
        name: str,
        limit: ClaudeLimit | None,
        memory: Memory,
        *,
        rejudge: ActionResult | None,
    ) -> StepOutcome | None:
        """Wait for *limit* and run the step again (only its evaluation when *rejudge* is the
        action's result), or end the run past `rate_limit.max_wait`."""
        if limit is None:
            return None
        attempts, config = self.retries.attempts, self.retries.fsm.rate_limit
        wait = attempts.plan_limit(name, limit, config, rejudge=rejudge is not None)
        if wait is None:
            words = KIND_WORDS.get(limit.kind, "limit")
            return StepOutcome(
                stop=Outcome.ERROR,
                error=f"Claude's {words} did not lift within rate_limit.max_wait"
                f" ({config.max_wait:g}s): {limit.message}",
            )
        if rejudge is None:
            memory.acted = None  # the action runs again: a resume must not judge this one
        record = attempts.of(name)
        self.retries.emit(Event.RATE_LIMIT_WAIT, wait_event(name, wait, record, None))
        return StepOutcome(again=True, rejudge=rejudge)
