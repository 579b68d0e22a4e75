"""The stall rule: the detectors' counts, and where a stall leads (on_stall, or the end)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.definition.model import FSMLoop
from little_loops.fsm.definition.routing import StepOutcome
from little_loops.fsm.definition.transitions import STALL_LABEL
from little_loops.fsm.engine import events
from little_loops.fsm.engine.records import ExecutorSnapshot, resumed_mid_action
from little_loops.fsm.engine.stall import Stall, StallWatch
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.outcomes import Outcome

Emit = Callable[[Event, Mapping[str, object]], None]


class Stalls:
    """Runs the stall detectors (engine/stall.py registers them) and routes what they find."""

    def __init__(self, fsm: FSMLoop, emit: Emit, cwd: Path | None = None) -> None:
        self.watch = StallWatch(fsm, cwd=cwd)
        self.emit = emit
        self.stalled: dict[str, Any] | None = None  # the last stall: how a run it ended says

    def dump(self) -> dict[str, Any]:
        return {"stall_watch": self.watch.record()}

    def restore(self, snap: ExecutorSnapshot) -> None:
        self.watch.restore(snap.stall_watch)
        if resumed_mid_action(snap):
            self.watch.reentered(snap.current_state)  # entered again: not one more visit

    def entering(self, name: str, began: bool) -> StepOutcome | None:
        """Where the run goes when entering state *name* (a pass *began*) makes a stall."""
        stall = self.watch.entering(name, began)
        return None if stall is None else self._stalled(stall)

    def judged(self, name: str, verdict: str, action: ActionResult | None) -> StepOutcome | None:
        """Where the run goes when state *name*'s *verdict* makes a same_result stall."""
        stall = self.watch.judged(name, verdict, action.output if action is not None else "")
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
        payload = events.StallEvent(
            state=stall.state,
            detector=stall.detector,
            limit=stall.limit,
            count=stall.count,
            to=stall.target,
            message=message,
        )
        self.emit(Event.STALL, payload)
        if stall.target is None:
            return StepOutcome(stop=Outcome.STALL, error=message)
        return StepOutcome(stall.target, STALL_LABEL, f"stall: {stall.detector}")
