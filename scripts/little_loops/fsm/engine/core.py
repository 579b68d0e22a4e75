"""The stepping core: a position and what happened in, the next position and a command out.

Nothing here runs a process, touches a file, reads git or a clock: the driver
(engine/executor.py) reads the clock and the budget into `Readings`, performs each
command, and feeds back what happened (as Temporal's workflow activations do).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from little_loops.fsm.definition.graph.routing import StepOutcome, illegal_route, no_route
from little_loops.fsm.definition.graph.transitions import MAINTAIN_LABEL, restart
from little_loops.fsm.definition.model.endings import ends_in_failure
from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.engine.kinds.names import TERMINAL_KIND, kind_of
from little_loops.fsm.engine.passes import Passes
from little_loops.fsm.engine.records import ExecutorSnapshot, resumed_mid_action
from little_loops.fsm.engine.rules import caps
from little_loops.fsm.evaluators.spec import ERROR_VERDICT
from little_loops.fsm.facts.outcomes import HANDOFFS, Outcome, outcome_of


@dataclass(frozen=True)
class Position:
    """Where a run is: its state, whether it was entered, its passes, how it came there."""

    state: str
    entered: bool = False  # the state's entry (and action) has begun
    iteration: int = 0
    pass_states: tuple[str, ...] = ()  # states already run in this pass
    pass_pending: bool = False  # a maintain restart: a new pass begins before the next state
    arrived_on_error: str | None = None  # see ExecutorSnapshot.arrived_on_error
    steps: int = 0  # states run (max_steps)
    # The state's entry is among `steps`: a resume that runs it again from its start (after
    # a crash or a stop inside it) goes on with the same step, never counting it twice.
    counted: bool = False
    repeats: int = 0  # times the state was entered again in a row (its max_retries)
    capped: str | None = None  # the cap (an Outcome) whose on_max_* route runs
    cap_done: bool = False  # that route's state has run: the next arrival ends the run

    def dump(self) -> dict[str, Any]:
        """This slice of the run's snapshot."""
        return {
            "current_state": self.state,
            "entered": self.entered,
            "iteration": self.iteration,
            "pass_states": list(self.pass_states),
            "pass_pending": self.pass_pending,
            "arrived_on_error": self.arrived_on_error,
            "caps": {
                "steps": self.steps,
                "counted": self.counted,
                "repeats": self.repeats,
                "capped": self.capped,
                "cap_done": self.cap_done,
            },
        }

    @classmethod
    def restored(cls, snap: ExecutorSnapshot) -> Position:
        """The position a run resumed at *snap* goes on from: a state whose action finished
        goes on to its verdict; one stopped mid-action runs again within the same pass; one
        only routed to is entered as an uninterrupted run would."""
        rerun = resumed_mid_action(snap)
        passes = Passes.resumed(snap, rerun=rerun)
        caps = snap.caps
        steps = int(caps.get("steps") or 0)
        # Entered again, it is counted again (_enter): not one more step. A log written
        # before `counted` was saved had counted every entry.
        if rerun and caps.get("counted", True) is True and steps > 0:
            steps -= 1
        return cls(
            state=snap.current_state,
            entered=snap.entered and snap.action_result is not None,
            iteration=passes.iteration,
            pass_states=tuple(passes.states),
            pass_pending=passes.pending,
            arrived_on_error=snap.arrived_on_error,
            steps=steps,
            repeats=int(caps.get("repeats") or 0),
            # a run that ended at a cap goes on past it once resumed (the limit was raised)
            capped=None if caps.get("cap_done") else caps.get("capped"),
        )

    def passes(self) -> Passes:
        """A copy of the passes, for the one rule that counts them (engine/passes.py)."""
        return Passes(self.iteration, list(self.pass_states), self.pass_pending)

    def with_passes(self, passes: Passes) -> Position:
        return _moved(
            self,
            iteration=passes.iteration,
            pass_states=tuple(passes.states),
            pass_pending=passes.pending,
        )


def _moved(at: Position, **changes: Any) -> Position:
    """`dataclasses.replace(at, **changes)` for the position, made at each step: a copy of
    its fields, not a call of the frozen class's `__init__` (a guarded set per field)."""
    if not changes.keys() <= at.__dict__.keys():
        unknown = sorted(changes.keys() - at.__dict__.keys())
        raise TypeError(f"Position has no field {unknown[0]!r}")
    there = object.__new__(Position)
    there.__dict__.update(at.__dict__, **changes)
    return there


# -- what happened (fed in) ------------------------------------------------------------


@dataclass(frozen=True)
class Arrived:
    """The run is at its position's state and has not entered it yet."""


@dataclass(frozen=True)
class WaitEnded:
    """The backoff wait before a new pass ended (or was cut short)."""


@dataclass(frozen=True)
class Routed:
    """The state's action, answer or child gave *outcome*; *error*: the error of the
    verdict `error` it routes on, if any (a terminal reached so is a failure)."""

    outcome: StepOutcome
    error: str | None = None


@dataclass(frozen=True)
class TerminalDone:
    """The terminal state's action (if any) ran: end the run, or restart a maintain loop."""


Happened = Arrived | WaitEnded | Routed | TerminalDone


@dataclass(frozen=True)
class Readings:
    """What the driver read before the step: the stop flag, the clock, the budget."""

    stopping: Outcome | None = None  # a stop was asked for (interrupted or stopped)
    deadline_passed: bool = False
    remaining_s: float | None = None  # before the loop's timeout; None: it has none
    budget_error: str | None = None  # the budget is used up for the current state: why


# -- what to do (given out) ------------------------------------------------------------


@dataclass(frozen=True)
class Stop:
    """End the run with *outcome*."""

    outcome: Outcome
    error: str | None = None


@dataclass(frozen=True)
class Wait:
    """Wait *seconds* (a loop's backoff), then feed back WaitEnded."""

    seconds: float


@dataclass(frozen=True)
class Enter:
    """Run the current state as its *kind* does (engine/kind_registry); *began*: a pass began."""

    kind: str
    began: bool


@dataclass(frozen=True)
class Move:
    """The run left *source* for the position's state: emit the route, then feed back Arrived."""

    source: str
    verdict: str | None
    reason: str


Command = Stop | Wait | Enter | Move


def step(
    fsm: FSMLoop, at: Position, happened: Happened, read: Readings
) -> tuple[Position, Command]:
    """The next position and command for *happened* at *at*."""
    if isinstance(happened, Arrived):
        return _arrived(fsm, at, read)
    if isinstance(happened, WaitEnded):
        if read.stopping is not None:
            return at, Stop(read.stopping)
        if read.deadline_passed:
            return at, Stop(Outcome.TIMEOUT)
        return _begun(fsm, at, read)
    if isinstance(happened, Routed):
        return _routed(fsm, at, happened)
    return _leave_terminal(fsm, at)


def entered(at: Position) -> Position:
    """*at* once its state is entered (it runs in this pass)."""
    return _moved(at, entered=True, pass_states=(*at.pass_states, at.state))


def _arrived(fsm: FSMLoop, at: Position, read: Readings) -> tuple[Position, Command]:
    if read.stopping is not None:
        return at, Stop(read.stopping)
    # The budget is checked before a pass is counted, so a run stopped by it shows the
    # passes that ran, and a resume with a higher budget starts the next one.
    if read.budget_error is not None:
        return at, Stop(Outcome.BUDGET, read.budget_error)
    capped = caps.arrived(fsm, at.state, at.steps, at.repeats, at.capped, at.cap_done)
    if isinstance(capped, Outcome):
        return at, Stop(capped)
    if capped is not None:
        return _diverted(fsm, at, capped)
    if at.capped is not None:  # the cap's route: its state runs within the pass at the cap
        return _enter(fsm, at, read, began=False)
    if not at.passes().begins(at.state, fsm.states[at.state]):
        return _enter(fsm, at, read, began=False)
    if at.iteration >= fsm.max_iterations:
        return _diverted(fsm, at, caps.at_cap(fsm, Outcome.MAX_ITERATIONS))
    if read.deadline_passed:
        return at, Stop(Outcome.TIMEOUT)
    if at.iteration > 0 and fsm.backoff:
        # never past the loop's timeout; a stop during it leaves the pass pending
        wait = float(fsm.backoff)
        if read.remaining_s is not None:
            wait = min(wait, max(0.0, read.remaining_s))
        return at, Wait(wait)
    return _begun(fsm, at, read)


def _begun(fsm: FSMLoop, at: Position, read: Readings) -> tuple[Position, Command]:
    passes = at.passes()
    passes.start()
    return _enter(fsm, at.with_passes(passes), read, began=True)


def _enter(fsm: FSMLoop, at: Position, read: Readings, *, began: bool) -> tuple[Position, Command]:
    state = fsm.states[at.state]
    if not state.terminal and read.deadline_passed:
        return at, Stop(Outcome.TIMEOUT)
    if not state.terminal:
        at = _moved(at, steps=at.steps + 1, counted=True)
    return at, Enter(kind_of(state), began)


def _diverted(fsm: FSMLoop, at: Position, way: caps.Divert | Outcome) -> tuple[Position, Command]:
    """Stop at a cap with no route (*way* an Outcome), or take its route (caps.Divert)."""
    if isinstance(way, Outcome):
        return at, Stop(way)
    if way.target not in fsm.states:
        return at, Stop(Outcome.ERROR, illegal_route(at.state, way.target, None, fsm.states))
    there = _moved(
        at, state=way.target, entered=False, arrived_on_error=None, repeats=0, counted=False
    )
    if way.cap is not None:
        there = _moved(there, capped=str(way.cap), cap_done=False)
    return there, Move(at.state, None, way.reason)


def _routed(fsm: FSMLoop, at: Position, routed: Routed) -> tuple[Position, Command]:
    outcome = routed.outcome
    if outcome.stop is not None:
        stop = outcome_of(outcome.stop)
        if stop in HANDOFFS:  # the step is over: its continuation is a step of its own
            at = _moved(at, counted=False)
        return at, Stop(stop, outcome.error)
    if outcome.target is None:
        return at, Stop(Outcome.ERROR, no_route(at.state, outcome))
    return _move(fsm, at, outcome.target, outcome.verdict, outcome.reason, routed.error)


def _move(
    fsm: FSMLoop,
    at: Position,
    target: str,
    verdict: str | None,
    reason: str,
    error: str | None = None,
) -> tuple[Position, Command]:
    if target not in fsm.states:
        return at, Stop(Outcome.ERROR, illegal_route(at.state, target, verdict, fsm.states))
    why = None
    if verdict == ERROR_VERDICT:
        why = f"reached from state '{at.state}' on the verdict error"
        why = f"{why}: {error}" if error else why
    again = at.repeats + 1 if target == at.state else 0
    done = at.cap_done or at.capped is not None  # the cap's route ran: the run ends next
    there = _moved(
        at, state=target, entered=False, arrived_on_error=why, repeats=again, counted=False
    )
    return _moved(there, cap_done=done), Move(at.state, verdict, reason)


def _leave_terminal(fsm: FSMLoop, at: Position) -> tuple[Position, Command]:
    state = fsm.states[at.state]
    if at.capped is not None:  # a cap's route ended here: the run ends at the cap
        return at, Stop(outcome_of(at.capped))
    way = restart(fsm, state)
    if way is None:
        # A terminal reached on the verdict `error` is a failure whatever it is called:
        # a run whose Claude step could not run must not exit 0 (facts/outcomes.py).
        why = at.arrived_on_error
        if ends_in_failure(at.state, state) or why is not None:
            return at, Stop(Outcome.TERMINAL_FAILURE, why)
        return at, Stop(Outcome.TERMINAL)
    if way.target not in fsm.states:
        return at, Stop(Outcome.ERROR, illegal_route(at.state, way.target, None, fsm.states))
    restarted = _moved(at, pass_pending=True)
    return _move(fsm, restarted, way.target, MAINTAIN_LABEL, "maintain restart")


__all__ = [
    "TERMINAL_KIND",
    "Arrived",
    "Command",
    "Enter",
    "Happened",
    "Move",
    "Position",
    "Readings",
    "Routed",
    "Stop",
    "TerminalDone",
    "Wait",
    "WaitEnded",
    "entered",
    "step",
]
