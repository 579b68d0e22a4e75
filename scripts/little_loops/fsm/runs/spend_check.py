"""Whether a run's spend can be counted: each agent it may call reports or prices what it spent.

Before the first step, every agent a reachable state may run on (each of a fallback list
that the preflight does not skip, in the list's order) or be judged through is asked its
kind's `uncounted(machine, options)`. With a budget (`max_cost_usd`, `--max-cost`), one
whose spend cannot be counted stops the run before it starts: the budget could not be
kept. Without one, a warning says the run's cost leaves it out. An agent the preflight
skips (not installed, cannot run here) never runs, so its spend is none.
"""

from __future__ import annotations

from collections.abc import Collection

from little_loops.fsm.actions.machine import Machine
from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.facts.errors import LoopSetupError
from little_loops.fsm.facts.spend import budget_unkept
from little_loops.fsm.runs.preflight import needs, reachable_states


def uncounted(
    fsm: FSMLoop,
    start: str | None = None,
    machine: Machine | None = None,
    skipped: Collection[str] = (),
) -> list[str]:
    """One line for each agent of a run of *fsm* (from *start*) whose spend cannot be
    counted here, naming the first state that calls it and why (with the fix); the agents
    the preflight *skipped* (preflight.Readiness.skipped) are left out: they never run."""
    machine = Machine.here() if machine is None else machine
    where: dict[tuple[str | None, str], tuple[FSMLoop, StateConfig]] = {
        (None if loop is fsm else loop.name, name): (loop, state)
        for name, loop, state in reachable_states(fsm, start)
    }
    lines = []
    for agent, uses in needs(fsm, start).items():
        if agent in skipped:
            continue
        for use in uses:
            kind = use.kind
            if kind is None or kind.uncounted is None or (use.subloop, use.state) not in where:
                continue
            loop, state = where[(use.subloop, use.state)]
            why = kind.uncounted(machine, loop.options_for(state, kind))
            if why is not None:
                lines.append(f"{use.where}, whose spend cannot be counted: {why}")
                break  # one line an agent: its first state
    return lines


def require_counted(
    fsm: FSMLoop,
    start: str | None = None,
    machine: Machine | None = None,
    skipped: Collection[str] = (),
) -> list[str]:
    """Raise LoopSetupError when the run has a budget and the spend of an agent that can run
    (not *skipped*) cannot be counted (one line); else the warnings for such agents (empty
    when every spend is counted)."""
    lines = uncounted(fsm, start, machine, skipped)
    if lines and fsm.max_cost_usd is not None:
        raise LoopSetupError(budget_unkept(fsm.max_cost_usd, "; and ".join(lines)))
    return [f"{line}; the run's cost leaves it out" for line in lines]
