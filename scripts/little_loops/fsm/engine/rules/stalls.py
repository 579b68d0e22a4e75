"""The stall rule: the detectors' counts, and where a stall leads (on_stall, or the end)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.definition.graph.routing import StepOutcome
from little_loops.fsm.definition.graph.transitions import STALL_LABEL
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.engine import events
from little_loops.fsm.engine.records import ExecutorSnapshot, resumed_mid_action
from little_loops.fsm.engine.stall import STALL_DETECTORS, Stall, StallWatch
from little_loops.fsm.facts.events import Event
from little_loops.fsm.facts.outcomes import Outcome

Emit = Callable[[Event, Mapping[str, object]], None]
FIRED_KEY = "fired"  # in `stall_watch`: the stall that fired at the current state


class Stalls:
    """Runs the stall detectors (engine/stall.py registers them) and routes what they find."""

    def __init__(self, fsm: FSMLoop, emit: Emit, cwd: Path | None = None) -> None:
        self.watch = StallWatch(fsm, cwd=cwd)
        self.emit = emit
        self.stalled: dict[str, Any] | None = None  # the last stall: how a run it ended says
        # The stall that fired at the current state, until the run leaves it: saved with the
        # `stall` event, so a resume takes its route instead of counting again.
        self.fired: Stall | None = None

    def dump(self) -> dict[str, Any]:
        record = self.watch.record()
        if self.fired is not None:
            record[FIRED_KEY] = dataclasses.asdict(self.fired)
        return {"stall_watch": record}

    def restore(self, snap: ExecutorSnapshot) -> None:
        self.watch.restore(snap.stall_watch)
        self.fired = _fired(snap.stall_watch.get(FIRED_KEY))
        if resumed_mid_action(snap):
            self.watch.reentered(snap.current_state)  # entered again: not one more visit

    def replayed(self) -> StepOutcome | None:
        """Where the stall recorded before a resume leads (it is not counted again)."""
        return None if self.fired is None else self._outcome(self.fired)

    def left(self) -> None:
        """The run left the state the stall fired at."""
        self.fired = None

    def entering(self, name: str, began: bool) -> StepOutcome | None:
        """Where the run goes when entering state *name* (a pass *began*) makes a stall."""
        stall = self.watch.entering(name, began)
        return None if stall is None else self._stalled(stall)

    def judged(self, name: str, verdict: str, action: ActionResult | None) -> StepOutcome | None:
        """Where the run goes when state *name*'s *verdict* makes a same_result stall."""
        output, code = (action.output, action.exit_code) if action is not None else ("", 0)
        stall = self.watch.judged(name, verdict, output, code)
        return None if stall is None else self._stalled(stall)

    def _stalled(self, stall: Stall) -> StepOutcome:
        """Record *stall* (the `stall` event saves it) and say where it leads."""
        self.fired = stall
        payload = events.StallEvent(
            state=stall.state,
            detector=stall.detector,
            limit=stall.limit,
            count=stall.count,
            to=stall.target,
            message=stall.message(),
        )
        self.emit(Event.STALL, payload)
        return self._outcome(stall)

    def _outcome(self, stall: Stall) -> StepOutcome:
        """Where *stall* leads: its on_stall state, else the end (terminated_by stall)."""
        self.stalled = {
            "detector": stall.detector,
            "state": stall.state,
            "limit": stall.limit,
            "count": stall.count,
        }
        if stall.target is None:
            return StepOutcome(stop=Outcome.STALL, error=stall.message())
        return StepOutcome(stall.target, STALL_LABEL, f"stall: {stall.detector}")


def _fired(saved: Any) -> Stall | None:
    """The recorded stall of a saved `stall_watch`, or None (none, or from an older file)."""
    if not isinstance(saved, dict):
        return None
    try:
        stall = Stall(**saved)
    except TypeError:
        return None
    return stall if stall.detector in STALL_DETECTORS else None
