"""The terminal state kind: its action runs once as the loop's last step, then a `commit:`."""

from __future__ import annotations

from little_loops.fsm.actions.request import ActionResult
from little_loops.fsm.definition.graph.routing import StepOutcome
from little_loops.fsm.definition.model.typed import StateConfig
from little_loops.fsm.engine.kinds.action import run_action, stop_after_action
from little_loops.fsm.engine.rules.fallback import agents_of
from little_loops.fsm.engine.run import Run
from little_loops.fsm.facts.errors import InterpolationError
from little_loops.fsm.facts.outcomes import Outcome


def run_state(
    run: Run, name: str, state: StateConfig, done: ActionResult | None
) -> StepOutcome | None:
    """Run the terminal *state*'s action (unless it ran: *done*) and commit after it;
    None when the run may end there (the core decides how), else the stop that cut it."""
    result = done
    if result is None and state.action:
        ctx = run.context()
        run.enter(counted=False)
        try:
            _, result = run_action(run, name, state, ctx, agents_of(run.fsm, state))
        except InterpolationError as exc:
            return StepOutcome(stop=Outcome.ERROR, error=f"in action of state '{name}': {exc}")
    if result is not None:
        stop = stop_after_action(run, result)
        if stop is not None:
            return StepOutcome(stop=stop.stop or Outcome.ERROR, error=stop.error)
        if state.is_prompt():
            run.memory.continuation = None
    output = (run.memory.acted or {}).get("output")
    run.commits.after(name, state, output, run.position.iteration)
    return None
