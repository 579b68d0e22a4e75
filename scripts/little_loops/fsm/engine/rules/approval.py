"""The approval rule: the question an approval state waits on, and where its answer comes from."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.engine.config import Answers
from little_loops.fsm.engine.records import ExecutorSnapshot

# How often a run waiting in-process (--wait-approval) looks for the answer.
ANSWER_POLL_S = 0.25
# How to answer a question (NAME: the loop's name), as the display and `status` say it.
ANSWER_COMMANDS = "ll-loop approve NAME [--note TEXT] / ll-loop reject NAME [--note TEXT]"


class Approval:
    """The pending question ({state, question, asked_at, deadline}) and how to read answers."""

    def __init__(self, answers: Answers | None = None, *, wait: bool = False) -> None:
        self.pending: dict[str, Any] | None = None
        self.answers = answers
        self.wait = wait  # wait for the answer in this process (--wait-approval)

    def dump(self) -> dict[str, Any]:
        return {"approval": self.pending}

    def restore(self, snap: ExecutorSnapshot) -> None:
        self.pending = snap.approval

    def answer(self) -> tuple[str, str] | None:
        """The answer to the pending question: (verdict, note), or None while none is given."""
        if self.pending is None or self.answers is None:
            return None
        return self.answers(self.pending)
