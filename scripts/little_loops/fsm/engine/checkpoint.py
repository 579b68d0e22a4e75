"""What a run's executor saves and goes on from: its snapshot, and restoring one (resume)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.definition.model import FSMLoop
from little_loops.fsm.engine.attempts import AttemptRecord, Attempts
from little_loops.fsm.engine.limits import RunClock
from little_loops.fsm.engine.passes import Passes
from little_loops.fsm.engine.records import ExecutorSnapshot, acted_result
from little_loops.fsm.engine.stall import StallWatch
from little_loops.fsm.facts.errors import LoopError
from little_loops.fsm.facts.spend import Spend


class Checkpoints:
    """The snapshot/restore half of FSMExecutor (the fields it sets are declared here)."""

    fsm: FSMLoop
    current_state: str
    passes: Passes
    entered: bool
    captured: dict[str, Any]
    prev_result: dict[str, Any] | None
    last_result: dict[str, Any] | None
    arrived_on_error: str | None
    started_at: str
    continuation: str | None
    acted: dict[str, Any] | None
    resumed_action: ActionResult | None
    spend: Spend
    sessions: dict[str, str]
    clock: RunClock
    approval: dict[str, Any] | None  # the question an approval state waits on
    stall: StallWatch  # the stall breakers' counts
    attempts: Attempts
    pending_child: dict[str, Any] | None  # a saved child to go on with (engine/subloop.py)
    child_snapshot: Callable[[], dict[str, Any] | None]

    def elapsed_ms(self) -> int:
        return self.clock.elapsed_ms()

    def snapshot(self) -> ExecutorSnapshot:
        return ExecutorSnapshot(
            current_state=self.current_state,
            iteration=self.passes.iteration,
            pass_states=list(self.passes.states),
            entered=self.entered,
            pass_pending=self.passes.pending,
            captured=dict(self.captured),  # a copy: the run goes on changing its own
            prev_result=self.prev_result,
            last_result=self.last_result,
            arrived_on_error=self.arrived_on_error,
            started_at=self.started_at,
            elapsed_ms=self.elapsed_ms(),
            continuation=self.continuation,
            cost_usd=round(self.spend.cost_usd, 6),  # micro-dollars, as every record
            usage=dict(self.spend.usage),
            action_result=self.acted,
            approval=self.approval,
            stall_watch=self.stall.record(),
            sessions=dict(self.sessions),
            attempt=self.attempts.snapshot(),
            waited_ms=dict(self.attempts.waited_ms),
            child=self.child_snapshot(),
        )

    def restore(self, snap: ExecutorSnapshot) -> None:
        """Continue from *snap* on the next run(): the saved state runs again from its start."""
        if snap.current_state not in self.fsm.states:
            raise LoopError(
                f"cannot resume: saved state '{snap.current_state}' is not a state of loop "
                f"'{self.fsm.name}' (the loop file changed?)"
            )
        self.current_state = snap.current_state
        # A state whose action finished goes on to its verdict; one that was entered
        # (stopped or crashed mid-action) runs again within the same pass; one that was only
        # routed to is entered as an uninterrupted run would.
        finished = snap.entered and snap.action_result is not None
        self.passes = Passes.resumed(snap, rerun=snap.entered and not finished)
        self.entered = finished
        self.acted = snap.action_result if finished else None
        self.resumed_action = acted_result(self.acted) if self.acted is not None else None
        self.captured = dict(snap.captured)
        self.prev_result = snap.prev_result
        self.last_result = snap.last_result
        self.arrived_on_error = snap.arrived_on_error
        self.started_at = snap.started_at
        self.clock.elapsed_before_ms = snap.elapsed_ms
        self.continuation = snap.continuation
        self.spend = Spend(snap.cost_usd, dict(snap.usage))
        self.approval = snap.approval
        self.stall.restore(snap.stall_watch)
        if snap.entered and not finished:
            self.stall.reentered(snap.current_state)  # entered again: not one more visit
        self.sessions = dict(snap.sessions)
        self.attempts = Attempts(AttemptRecord.from_dict(snap.attempt), dict(snap.waited_ms))
        self.pending_child = snap.child if snap.entered and not finished else None
        self._check_saved_children()

    def _check_saved_children(self) -> None:
        """Refuse, as for the run's own state, a saved sub-loop that its file no longer
        has: routing it as the verdict `error` would end the run that could be resumed."""
        fsm, state, saved = self.fsm, self.current_state, self.pending_child
        while isinstance(saved, dict):
            child, name, at = fsm.children.get(state), saved.get("loop"), saved.get("current_state")
            if child is None or child.name != name:
                raise LoopError(
                    f"cannot resume: state '{state}' of loop '{fsm.name}' no longer runs "
                    f"loop '{name}' (the loop file changed?)"
                )
            if at not in child.states:
                raise LoopError(
                    f"cannot resume: saved state '{at}' is not a state of loop "
                    f"'{child.name}' (the loop file changed?)"
                )
            fsm, state, saved = child, str(at), saved.get("child")
