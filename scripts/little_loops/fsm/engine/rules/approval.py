"""The approval rule: the question an approval state waits on, and where its answer comes from."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from little_loops.fsm.engine.config import Answers
from little_loops.fsm.engine.records import ExecutorSnapshot

# How often a run waiting in-process (--wait-approval) looks for the answer.
ANSWER_POLL_S = 0.25
# How to answer a question (NAME: the loop's name), as the display and `status` say it.
ANSWER_COMMANDS = "ll-loop approve NAME [--note TEXT] / ll-loop reject NAME [--note TEXT]"
ANSWER_KEY = "answer"  # in the pending question: the answer taken, until the run moves on


class Approval:
    """The pending question ({state, question, asked_at, deadline}) and how to read answers."""

    def __init__(
        self,
        answers: Answers | None = None,
        *,
        wait: bool = False,
        kept: Callable[[], None] | None = None,
    ) -> None:
        self.pending: dict[str, Any] | None = None
        self.answers = answers
        self.wait = wait  # wait for the answer in this process (--wait-approval)
        self.kept = kept  # told once the answer taken is recorded (its file may go)

    def dump(self) -> dict[str, Any]:
        return {"approval": self.pending}

    def restore(self, snap: ExecutorSnapshot) -> None:
        self.pending = snap.approval

    def answer(self) -> tuple[str, str] | None:
        """The answer to the pending question: (verdict, note), or None while none is given."""
        if self.pending is None or self.answers is None:
            return None
        return self.answers(self.pending)

    def record(self, verdict: str, note: str) -> None:
        """The pending question got *verdict*: kept with it (the `approval` event saves it)
        until the run leaves the state, so a resume routes it instead of asking again."""
        self.pending = {**(self.pending or {}), ANSWER_KEY: {"verdict": verdict, "note": note}}

    def saved(self) -> None:
        """The recorded answer is in the run's log: where it came from may forget it."""
        if self.kept is not None:
            self.kept()

    def recorded(self, state: str) -> tuple[str, str] | None:
        """The answer recorded for the question of *state* before a resume, if any."""
        pending = self.pending
        answer = pending.get(ANSWER_KEY) if pending and pending.get("state") == state else None
        if not isinstance(answer, dict) or not isinstance(answer.get("verdict"), str):
            return None
        note = answer.get("note")
        return answer["verdict"], note if isinstance(note, str) else ""

    def left(self) -> None:
        """The run left the approval state: its question is closed."""
        self.pending = None
