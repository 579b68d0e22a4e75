"""The approval state kind: ask, take the answer (or stop awaiting it), route it."""

from __future__ import annotations

from typing import Any

from support.engine_parts import loop, parts

from little_loops.fsm.definition.graph.routing import StepOutcome
from little_loops.fsm.definition.model.typed import StateConfig
from little_loops.fsm.engine.config import ExecutorConfig
from little_loops.fsm.engine.kinds.approval import run_state
from little_loops.fsm.facts.outcomes import Outcome

ASK = StateConfig(
    action="Ship ${context.what}?", action_type="approval", on_success="done", on_failure="done"
)
FSM = loop({"ask": ASK, "done": StateConfig(terminal=True)}, initial="ask", context={"what": "v2"})


def test_without_an_answer_the_run_stops_awaiting_it_with_the_question_saved() -> None:
    run, emitted = parts(FSM)
    assert run_state(run, "ask", ASK, None) == StepOutcome(stop=Outcome.AWAITING_APPROVAL)
    assert emitted.names() == ["approval_wait"]
    assert run.approval.pending is not None
    assert run.approval.pending["question"] == "Ship v2?"


def test_an_answer_is_routed_and_read_as_the_result() -> None:
    asked: list[dict[str, Any]] = []

    def answers(pending: dict[str, Any]) -> tuple[str, str]:
        asked.append(pending)
        return "failure", "not today"

    run, emitted = parts(FSM, config=ExecutorConfig(answers=answers))
    outcome = run_state(run, "ask", ASK, None)
    assert (outcome.target, outcome.verdict) == ("done", "failure")
    assert emitted.seen == [
        ("approval", {"state": "ask", "verdict": "failure", "note": "not today"})
    ]
    assert run.memory.last_result == {
        "verdict": "failure",
        "details": {"note": "not today"},
        "note": "not today",
    }
    # recorded with the question until the run leaves the state (a resume routes it)
    assert run.approval.recorded("ask") == ("failure", "not today")
    assert asked[0]["question"] == "Ship v2?"


def test_an_answer_recorded_before_a_resume_is_routed_without_asking_again() -> None:
    def answers(pending: dict[str, Any]) -> tuple[str, str]:
        raise AssertionError("asked again")

    run, emitted = parts(FSM, config=ExecutorConfig(answers=answers))
    run.approval.pending = {"state": "ask", "question": "Ship v2?", "asked_at": "t"}
    run.approval.record("failure", "not today")
    outcome = run_state(run, "ask", ASK, None)
    assert (outcome.target, outcome.verdict) == ("done", "failure")
    assert emitted.seen == []  # its `approval` event is in the log already
    assert run.memory.prev_result is not None
    assert run.memory.prev_result["output"] == "not today"
