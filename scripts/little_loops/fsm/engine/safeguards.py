"""The executor's stall breakers and approval gates: a stall's route, an approval's wait."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.definition.model import StateConfig
from little_loops.fsm.definition.routing import StepOutcome, follow_route
from little_loops.fsm.definition.transitions import STALL_LABEL, TIMEOUT_LABEL
from little_loops.fsm.engine import events
from little_loops.fsm.engine.checkpoint import Checkpoints
from little_loops.fsm.engine.stall import Stall, StallWatch
from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.facts.timefmt import iso_now
from little_loops.fsm.values.interpolation import InterpolationContext, interpolate

# The terminated_by of a run stopped at an approval state, and of one ended by a stall.
AWAITING_APPROVAL = "awaiting_approval"
STALLED = "stall"
# How often a run waiting in-process (--wait-approval) looks for the answer.
ANSWER_POLL_S = 0.25
# Answers the question of an approval: (verdict, note), or None while none is given.
Answers = Callable[[dict[str, Any]], tuple[str, str] | None]
# How to answer a question (NAME: the loop's name), as the display and `status` say it.
ANSWER_COMMANDS = "ll-loop approve NAME [--note TEXT] / ll-loop reject NAME [--note TEXT]"


class Safeguards(Checkpoints):
    """The part of FSMExecutor that breaks stalls and waits at approval gates."""

    answers: Answers | None  # set by the run that keeps the answers (PersistentExecutor)
    wait_approval: bool  # wait for the answer in this process (--wait-approval)
    _shutdown: threading.Event
    _shutdown_reason: str
    before_wait: Callable[[], None] | None

    def _init_safeguards(self) -> None:
        self.stall = StallWatch(self.fsm)
        self.stalled: dict[str, Any] | None = None  # the last stall: how a run it ended says
        self.approval = None
        self.answers = None
        self.wait_approval = False

    def _emit(self, event: str, data: Mapping[str, object]) -> None:
        raise NotImplementedError

    def _context(self) -> InterpolationContext:
        raise NotImplementedError

    # -- stall breakers ----------------------------------------------------------------

    def _same_result(
        self, name: str, verdict: str, action: ActionResult | None
    ) -> StepOutcome | None:
        """Where the run goes when state *name*'s *verdict* makes a same_result stall."""
        stall = self.stall.judged(name, verdict, action.output if action is not None else "")
        return None if stall is None else self._stalled(stall)

    def _stalled(self, stall: Stall) -> StepOutcome:
        """Where *stall* leads: its on_stall state, else the end (terminated_by stall)."""
        message = stall.message()
        self.stalled = {
            "detector": stall.detector,
            "state": stall.state,
            "limit": stall.limit,
            "count": stall.count,
        }
        self._emit(
            events.STALL_EVENT,
            events.StallEvent(
                state=stall.state,
                detector=stall.detector,
                limit=stall.limit,
                count=stall.count,
                to=stall.target,
                message=message,
            ),
        )
        if stall.target is None:
            return StepOutcome(stop=STALLED, error=message)
        return StepOutcome(stall.target, STALL_LABEL, f"stall: {stall.detector}")

    # -- approval gates ----------------------------------------------------------------

    def _ask(self, name: str, state: StateConfig) -> StepOutcome:
        """Ask *state*'s question and take its answer: now, after waiting (--wait-approval),
        or on a resume (the run stops with terminated_by awaiting_approval meanwhile)."""
        pending = self.approval
        if pending is None or pending.get("state") != name:
            try:
                question = interpolate(state.action or "", self._context())
            except InterpolationError as exc:
                return StepOutcome(stop="error", error=f"in action of state '{name}': {exc}")
            pending = {"state": name, "question": question, "asked_at": iso_now()}
            if state.timeout is not None:
                pending["deadline"] = time.time() + float(state.timeout)
            self.approval = pending
        answer = self.answers(pending) if self.answers is not None else None
        if answer is not None:  # answered while the run was stopped
            return self._answered(name, state, *answer)
        wait = events.ApprovalWait(
            state=name,
            question=str(pending.get("question", "")),
            asked_at=str(pending.get("asked_at", "")),
            answer_with=ANSWER_COMMANDS.replace("NAME", self.fsm.name),
        )
        deadline = pending.get("deadline")
        if isinstance(deadline, int | float):
            wait["deadline"] = datetime.fromtimestamp(deadline, UTC).isoformat(timespec="seconds")
        self._emit("approval_wait", wait)
        waited = False
        while True:
            answer = self.answers(pending) if self.answers is not None else None
            if answer is not None:
                return self._answered(name, state, *answer)
            if isinstance(deadline, int | float) and time.time() >= deadline:
                return self._answered(name, state, TIMEOUT_LABEL, "")
            if not self.wait_approval:
                return StepOutcome(stop=AWAITING_APPROVAL)
            if self._shutdown.is_set():
                return StepOutcome(stop=self._shutdown_reason)
            if self.clock.deadline_passed():
                return StepOutcome(stop="timeout")
            if not waited and self.before_wait is not None:
                self.before_wait()  # the log says where the run waits before it does
            waited = True
            self._shutdown.wait(ANSWER_POLL_S)

    def _answered(self, name: str, state: StateConfig, verdict: str, note: str) -> StepOutcome:
        """The approval state *name* got *verdict* (or timed out): `${result.note}`, route."""
        self.approval = None
        self._emit("approval", events.ApprovalAnswer(state=name, verdict=verdict, note=note))
        self.last_result = {"verdict": verdict, "details": {"note": note}, "note": note}
        code = 0 if verdict == "success" else 1
        self.prev_result = {
            "state": name,
            "output": note,
            "stderr": "",
            "exit_code": code,
            "verdict": verdict,
        }
        if verdict == TIMEOUT_LABEL:
            return StepOutcome(state.on_timeout, verdict, "on_timeout")
        return follow_route(state, verdict, self._context(), name)
