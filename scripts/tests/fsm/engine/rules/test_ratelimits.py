"""The rate-limit rule: Claude's limit (or the judge's) is a wait and the step runs again."""

from __future__ import annotations

from support.engine_parts import Recorded, loop

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.definition.model.typed import RateLimitConfig, StateConfig
from little_loops.fsm.engine.memory import Memory
from little_loops.fsm.engine.records import ExecutorSnapshot
from little_loops.fsm.engine.rules.ratelimits import RateLimits
from little_loops.fsm.engine.rules.retries import Retries
from little_loops.fsm.evaluators.spec import EvaluationResult
from little_loops.fsm.facts.outcomes import Outcome

FIX = StateConfig(action="/fix", action_type="prompt", on_success="done")
SHELL = StateConfig(action="make", on_success="done")
FSM = loop({"fix": FIX, "make": SHELL, "done": StateConfig(terminal=True)}, initial="fix")
LIMITED = ActionResult("API Error: 429 rate limited", "", 1, 1, error="claude exited 1")


def _rule(max_wait: float = 600) -> tuple[RateLimits, Recorded]:
    emitted = Recorded()
    fsm = loop(
        FSM.states, initial="fix", rate_limit=RateLimitConfig(ladder=[30.0], max_wait=max_wait)
    )
    return RateLimits(Retries(fsm, emitted)), emitted


def test_a_claude_session_ended_on_a_limit_waits_and_runs_again() -> None:
    rule, emitted = _rule()
    memory = Memory(acted={"output": "x"})
    outcome = rule.after_action("fix", FIX.action_kind(), LIMITED, memory)
    assert outcome is not None
    assert outcome.again
    assert outcome.rejudge is None
    assert memory.acted is None
    assert emitted.names() == ["rate_limit_wait"]
    assert (
        rule.after_action("make", SHELL.action_kind(), LIMITED, Memory()) is None
    )  # a shell action


def test_a_limit_past_max_wait_ends_the_run_with_error() -> None:
    rule, _ = _rule(max_wait=0)
    outcome = rule.after_action("fix", FIX.action_kind(), LIMITED, Memory())
    assert outcome is not None
    assert outcome.stop == Outcome.ERROR


def test_the_judges_limit_judges_the_same_action_again() -> None:
    rule, _ = _rule()
    refused = EvaluationResult("error", {"error": "API error 529 overloaded"})
    action = ActionResult("42", "", 0, 1)
    outcome = rule.after_judge("fix", refused, action, Memory())
    assert outcome is not None
    assert outcome.rejudge is action


def test_it_keeps_no_slice_of_its_own() -> None:
    rule, _ = _rule()
    rule.restore(ExecutorSnapshot(current_state="fix", iteration=1))
    assert rule.dump() == {}


def test_a_states_own_waits_run_out_into_its_route() -> None:
    own = StateConfig(
        action="/fix",
        action_type="prompt",
        on_success="done",
        rate_limit_max_wait_seconds=0,
        on_rate_limit_exhausted="done",
    )
    fsm = loop({"fix": own, "done": StateConfig(terminal=True)}, initial="fix")
    rule = RateLimits(Retries(fsm, Recorded()))
    outcome = rule.after_action("fix", own.action_kind(), LIMITED, Memory())
    assert outcome is not None
    assert (outcome.target, outcome.verdict, outcome.stop) == ("done", "error", None)
