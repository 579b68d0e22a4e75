"""The rate-limit rule: an agent's (or the judge's) limit waits, then the step runs again."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.actions.ratelimit import KIND_WORDS, AgentLimit, judge_limit
from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.actions.spec import ActionKindSpec
from little_loops.fsm.definition.graph.routing import StepOutcome
from little_loops.fsm.definition.model.blocks import RateLimitConfig
from little_loops.fsm.definition.model.ratelimit_routing import state_rate_limit
from little_loops.fsm.definition.model.typed import CURRENT_STATE_TOKEN, StateConfig
from little_loops.fsm.engine.attempts import FIRST_AGENT, wait_event
from little_loops.fsm.engine.memory import Memory
from little_loops.fsm.engine.records import ExecutorSnapshot
from little_loops.fsm.engine.rules.retries import Retries
from little_loops.fsm.evaluators.spec import ERROR_VERDICT, EvaluationResult
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.outcomes import Outcome

EVERY_AGENT = "every agent"  # whose limit a wait is when all of a fallback list are limited


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
        self, name: str, kind: ActionKindSpec, result: ActionResult, memory: Memory
    ) -> StepOutcome | None:
        """An agent's (*kind*'s) session that ended on a rate, overload or usage limit:
        wait, run again."""
        limit = kind.usage_limit(result)
        return self._wait(name, limit, memory, rejudge=None, agent=kind.agent)

    def wait_for(self, name: str, limit: AgentLimit, memory: Memory) -> StepOutcome:
        """Every agent of the state's list is limited (*limit*: until the first is free):
        wait, then run the step again on the first that is."""
        return self._planned(name, limit, memory, None, EVERY_AGENT)

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
        limit: AgentLimit | None,
        memory: Memory,
        *,
        rejudge: ActionResult | None,
        agent: str | None = None,
    ) -> StepOutcome | None:
        """Wait for *limit* (None: there is none) as `_planned` does."""
        return None if limit is None else self._planned(name, limit, memory, rejudge, agent)

    def _planned(
        self,
        name: str,
        limit: AgentLimit,
        memory: Memory,
        rejudge: ActionResult | None,
        agent: str | None,
    ) -> StepOutcome:
        """Wait for *limit* and run the step again (only its evaluation when *rejudge* is the
        action's result); past the state's `max_wait`, go to its `on_rate_limit_exhausted`
        or end the run."""
        attempts, state = self.retries.attempts, self.retries.fsm.states.get(name)
        config = self._config(state)
        judged = rejudge is not None
        wait = attempts.plan_limit(name, limit, config, rejudge=judged, agent=agent)
        if wait is None:
            words = KIND_WORDS.get(limit.kind, "limit")
            whose = f"{agent or FIRST_AGENT}'s"
            if state is not None and state.on_rate_limit_exhausted is not None:
                target = state.on_rate_limit_exhausted
                target = name if target == CURRENT_STATE_TOKEN else target
                return StepOutcome(target, ERROR_VERDICT, f"on_rate_limit_exhausted ({words})")
            return StepOutcome(
                stop=Outcome.ERROR,
                error=f"{whose} {words} did not lift within rate_limit.max_wait"
                f" ({config.max_wait:g}s): {limit.message}",
            )
        if rejudge is None:
            memory.acted = None  # the action runs again: a resume must not judge this one
        record = attempts.of(name)
        self.retries.emit(Event.RATE_LIMIT_WAIT, wait_event(name, wait, record, None))
        return StepOutcome(again=True, rejudge=rejudge)

    def _config(self, state: StateConfig | None) -> RateLimitConfig:
        """The waits of *state*: its own keys laid over the loop's `rate_limit:`."""
        loop = self.retries.fsm.rate_limit
        if state is None:
            return loop
        return state_rate_limit(
            loop,
            retries=state.max_rate_limit_retries,
            base=state.rate_limit_backoff_base_seconds,
            max_wait=state.rate_limit_max_wait_seconds,
            ladder=state.rate_limit_long_wait_ladder,
        )
