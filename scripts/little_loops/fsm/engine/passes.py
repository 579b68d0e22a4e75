"""Count a run's passes (its iterations, for `max_iterations`): one rule for runs and rehearsals."""

from __future__ import annotations

from dataclasses import dataclass, field

from little_loops.fsm.definition.model.typed import StateConfig
from little_loops.fsm.engine.records import ExecutorSnapshot


@dataclass
class Passes:
    """Where a run is in its passes.

    A pass begins at the first state that is not terminal, whenever the loop comes back
    to a state it already ran in this pass, and at the first state after a `maintain`
    restart. Entering a terminal state never begins one on its own.
    """

    iteration: int = 0
    states: list[str] = field(default_factory=list)  # states already run in this pass
    pending: bool = False  # a maintain restart: a new pass begins before the next state

    @classmethod
    def resumed(cls, snap: ExecutorSnapshot, *, rerun: bool) -> Passes:
        """The passes of a run resumed at *snap*; with *rerun*, its current state runs again
        within the same pass (so it is taken out of the states already run)."""
        ran = [s for s in snap.pass_states if not (rerun and s == snap.current_state)]
        return cls(snap.iteration, ran, snap.pass_pending)

    def begins(self, name: str, state: StateConfig) -> bool:
        """Whether entering *state* (named *name*) begins a new pass."""
        if self.pending:
            return True
        if state.terminal:
            return False
        return self.iteration == 0 or name in self.states

    def start(self) -> None:
        """Begin the next pass."""
        self.iteration += 1
        self.states = []
        self.pending = False

    def ran(self, name: str) -> None:
        """Note that the state *name* runs in this pass."""
        self.states.append(name)

    def restarted(self) -> None:
        """A `maintain` restart: the next state entered begins a new pass."""
        self.pending = True
