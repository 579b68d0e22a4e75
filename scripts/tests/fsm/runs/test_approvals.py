"""The answer file: written for the question pending, taken once, stale answers dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

from little_loops.fsm.facts.errors import LoopRuntimeError
from little_loops.fsm.facts.layout import run_files
from little_loops.fsm.facts.outcomes import Status
from little_loops.fsm.runs.approvals import remove_answer, take_answer, write_answer
from little_loops.fsm.runs.state import LoopState

QUESTION = {"state": "ask", "question": "Go?", "asked_at": "2026-01-01T00:00:00.000+00:00"}


def _waiting(status: Status = Status.AWAITING_APPROVAL) -> LoopState:
    return LoopState(loop_name="x", current_state="ask", status=status, approval=dict(QUESTION))


def test_an_answer_is_taken_once(tmp_path: Path) -> None:
    write_answer("x", tmp_path, _waiting(), "success", "fine")
    answer = take_answer("x", tmp_path, QUESTION)
    assert answer is not None
    assert (answer.verdict, answer.note) == ("success", "fine")
    assert take_answer("x", tmp_path, QUESTION) is None
    assert not run_files("x", tmp_path).approval.exists()


def test_a_run_keeps_the_answer_file_until_its_log_has_the_answer(tmp_path: Path) -> None:
    write_answer("x", tmp_path, _waiting(), "success", "")
    assert take_answer("x", tmp_path, QUESTION, keep=True) is not None
    assert run_files("x", tmp_path).approval.exists()  # a crash now must not lose it
    remove_answer("x", tmp_path)
    assert not run_files("x", tmp_path).approval.exists()
    remove_answer("x", tmp_path)  # already gone: nothing to do


def test_an_answer_to_an_earlier_question_is_dropped(tmp_path: Path) -> None:
    write_answer("x", tmp_path, _waiting(), "failure", "")
    later = {**QUESTION, "asked_at": "2026-01-02T00:00:00.000+00:00"}
    assert take_answer("x", tmp_path, later) is None
    assert not run_files("x", tmp_path).approval.exists()


def test_a_finished_run_cannot_be_answered(tmp_path: Path) -> None:
    with pytest.raises(LoopRuntimeError, match="is not awaiting approval"):
        write_answer("x", tmp_path, _waiting(Status.COMPLETED), "success", "")


def test_the_first_answer_wins_before_and_after_it_is_taken(tmp_path: Path) -> None:
    write_answer("x", tmp_path, _waiting(), "success", "first")
    first = r"already approved at .* \(note: first\); the first answer counts"
    with pytest.raises(LoopRuntimeError, match=first):
        write_answer("x", tmp_path, _waiting(), "failure", "second")
    assert take_answer("x", tmp_path, QUESTION) is not None
    with pytest.raises(LoopRuntimeError, match="already approved"):
        write_answer("x", tmp_path, _waiting(), "failure", "late")
    later = {**QUESTION, "asked_at": "2026-01-02T00:00:00.000+00:00"}
    asked_again = LoopState(
        loop_name="x", current_state="ask", status=Status.AWAITING_APPROVAL, approval=later
    )
    write_answer("x", tmp_path, asked_again, "failure", "next question")
    answer = take_answer("x", tmp_path, later)
    assert answer is not None
    assert answer.note == "next question"
