"""little-loops' hold on a judge's `cannot_judge` that its state does not route (`--compat`).

There, a state whose judge answers `cannot_judge` (or `cannot_judge_uncertain`) with no
route for that exact verdict (a `route:` key or `on_cannot_judge:`, even beside a table,
which then routes it; `_` does not count) is not routed: it runs
again, up to HOLD_CAP times in a row, then takes its error route (`route.error:` in a
table, else `on_error`), and with none the run stops with "no valid transition". Any other
verdict of the state starts its count again. Without `--compat` the verdict is routed as
any other (docs/little-loops.md).
"""

from __future__ import annotations

from typing import Any

from little_loops.fsm.definition.graph.routing import StepOutcome, error_way, follow_route
from little_loops.fsm.definition.graph.transitions import declared
from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.engine.records import ExecutorSnapshot
from little_loops.fsm.evaluators.judge_theirs import HOLD_CAP, is_abstention
from little_loops.fsm.evaluators.spec import ERROR_VERDICT
from little_loops.fsm.values.interpolation import InterpolationContext


def routes_exactly(state: StateConfig, verdict: str) -> bool:
    """Whether *state* declares a route for *verdict* itself (not `_`, not its error
    route): as little-loops, its shorthand counts beside a `route:` table too."""
    return any(t.label == verdict for t in declared(state))


class Abstentions:
    """Counts each state's unrouted `cannot_judge` verdicts in a row (saved as
    `abstentions`, so a resumed run keeps the count) and holds the state while under the cap."""

    def __init__(self, fsm: FSMLoop) -> None:
        self.fsm = fsm
        self.held: dict[str, int] = {}

    def dump(self) -> dict[str, Any]:
        return {"abstentions": dict(self.held)}

    def restore(self, snap: ExecutorSnapshot) -> None:
        self.held = {
            str(k): v
            for k, v in snap.abstentions.items()
            if isinstance(v, int) and not isinstance(v, bool) and 0 < v <= HOLD_CAP
        }

    def judged(
        self, name: str, state: StateConfig, verdict: str, ctx: InterpolationContext
    ) -> StepOutcome | None:
        """Where state *name* goes on *verdict* when little-loops holds it: itself again
        (under the cap), else its error route (or nowhere: no valid transition). None: the
        verdict is routed as usual (no `--compat`, another verdict, or a route for it)."""
        if not self.fsm.theirs or not is_abstention(verdict) or routes_exactly(state, verdict):
            self.held.pop(name, None)
            return None
        count = self.held.get(name, 0) + 1
        if count <= HOLD_CAP:
            self.held[name] = count
            why = f"{verdict} held ({count} of {HOLD_CAP}): no route for it, judged again"
            return StepOutcome(name, verdict, why)
        self.held.pop(name, None)
        why = f"{verdict} held {HOLD_CAP} times: its error route"
        if error_way(state) is None:
            return StepOutcome(verdict=verdict, error=f"{why}, and the state has none")
        outcome = follow_route(state, ERROR_VERDICT, ctx, name, action_failed=True)
        outcome.verdict = verdict
        if outcome.target is not None:
            outcome.reason = f"{outcome.reason} ({why})"
        return outcome
