"""The approval rule: the pending question is its slice; answers are read from where it is told."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.engine.records import ExecutorSnapshot
from little_loops.fsm.engine.rules.approval import Approval

PENDING = {"state": "ask", "question": "Ship?", "asked_at": "2026-01-01T00:00:00+00:00"}


def test_its_slice_dumps_and_restores_the_pending_question() -> None:
    rule = Approval()
    rule.pending = dict(PENDING)
    again = Approval()
    again.restore(ExecutorSnapshot(current_state="ask", iteration=1, **rule.dump()))
    assert again.dump() == {"approval": PENDING}


def test_an_answer_is_read_only_for_a_pending_question() -> None:
    seen: list[dict[str, Any]] = []

    def answers(pending: dict[str, Any]) -> tuple[str, str]:
        seen.append(pending)
        return "success", ""

    rule = Approval(answers)
    assert rule.answer() is None
    rule.pending = dict(PENDING)
    assert rule.answer() == ("success", "")
    assert seen == [PENDING]
    assert Approval(None).answer() is None


def test_an_answer_taken_is_recorded_with_its_question_until_the_run_leaves() -> None:
    """Recorded, it is in the slice a resume restores (and routed without asking again);
    `saved` tells its source it may forget it; leaving the state closes the question."""
    kept: list[bool] = []
    rule = Approval(kept=lambda: kept.append(True))
    rule.pending = dict(PENDING)
    assert rule.recorded("ask") is None
    rule.record("failure", "not today")
    rule.saved()
    assert kept == [True]
    again = Approval()
    again.restore(ExecutorSnapshot(current_state="ask", iteration=1, **rule.dump()))
    assert again.recorded("ask") == ("failure", "not today")
    assert again.recorded("other") is None
    again.left()
    assert again.dump() == {"approval": None}
    garbled = Approval()
    garbled.pending = {**PENDING, "answer": {"verdict": 3}}
    assert garbled.recorded("ask") is None
