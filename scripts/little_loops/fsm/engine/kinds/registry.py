"""The registry of state kinds: the core names a kind (kinds.kind_of), the driver runs it."""

from __future__ import annotations

from typing import Protocol

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.definition.model import StateConfig
from little_loops.fsm.definition.routing import StepOutcome
from little_loops.fsm.engine.kinds import action as kind_action
from little_loops.fsm.engine.kinds import approval as kind_approval
from little_loops.fsm.engine.kinds import learning as kind_learning
from little_loops.fsm.engine.kinds import subloop as kind_subloop
from little_loops.fsm.engine.kinds import terminal as kind_terminal
from little_loops.fsm.engine.kinds.names import (
    ACTION_KIND,
    APPROVAL_KIND,
    LEARNING_KIND,
    SUBLOOP_KIND,
    TERMINAL_KIND,
)
from little_loops.fsm.engine.run import Run


class StateKind(Protocol):
    """Run state *name* of a run (its action already ran when *done* is given): the
    outcome to route, or None when the run may end there (a terminal state)."""

    def __call__(
        self, run: Run, name: str, state: StateConfig, done: ActionResult | None
    ) -> StepOutcome | None: ...


STATE_KINDS: dict[str, StateKind] = {
    ACTION_KIND: kind_action.run_state,
    APPROVAL_KIND: kind_approval.run_state,
    SUBLOOP_KIND: kind_subloop.run_state,
    LEARNING_KIND: kind_learning.run_state,
    TERMINAL_KIND: kind_terminal.run_state,
}
