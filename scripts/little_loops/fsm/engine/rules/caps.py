"""The cap rules: `max_steps`, `max_iterations` and their `on_max_*` routes, and `max_retries`.

Pure: the core (engine/core.py) asks on each arrival at a state whether a cap stops the
run there, or diverts it. A cap with a route (`on_max_steps: summary`) sends the run to
that state once; when it has run, the run ends with the cap's outcome wherever it goes
next (a cap reached again inside that route cannot divert it a second time).
"""

from __future__ import annotations

from dataclasses import dataclass

from little_loops.fsm.definition.model.typed import CURRENT_STATE_TOKEN, FSMLoop
from little_loops.fsm.facts.outcomes import Outcome, outcome_of


@dataclass(frozen=True)
class Divert:
    """Go to *target* instead of entering the state; *cap*: the cap whose route it is."""

    target: str
    reason: str
    cap: Outcome | None = None


def at_cap(fsm: FSMLoop, cap: Outcome) -> Divert | Outcome:
    """What reaching *cap* (MAX_STEPS or MAX_ITERATIONS) does: its route, else the end."""
    if cap == Outcome.MAX_STEPS:
        target, limit = fsm.on_max_steps, fsm.max_steps
    else:
        target, limit = fsm.on_max_iterations, fsm.max_iterations
    if target is None:
        return cap
    return Divert(target, f"on_{cap} ({cap} {limit} reached)", cap)


def arrived(
    fsm: FSMLoop, name: str, steps: int, repeats: int, capped: str | None, cap_done: bool
) -> Divert | Outcome | None:
    """Whether arriving at state *name* (after *steps* states run, entered *repeats* times
    again in a row) ends the run at a cap (an Outcome) or diverts it; None: enter it."""
    if capped is not None:
        return outcome_of(capped) if cap_done else None
    state = fsm.states[name]
    if state.terminal:
        return None  # a terminal reached is reached: no step of its own is capped
    if fsm.max_steps is not None and steps >= fsm.max_steps:
        return at_cap(fsm, Outcome.MAX_STEPS)
    target = state.on_retry_exhausted
    if state.max_retries is not None and repeats > state.max_retries and target is not None:
        target = name if target == CURRENT_STATE_TOKEN else target
        return Divert(target, f"on_retry_exhausted (max_retries {state.max_retries})")
    return None
