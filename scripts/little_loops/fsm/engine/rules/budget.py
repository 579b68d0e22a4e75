"""The budget rule: the run's spend (the whole tree's) and `max_cost_usd` before a state."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.engine.limits import spends
from little_loops.fsm.engine.records import ExecutorSnapshot
from little_loops.fsm.facts.spend import Spend


class Budget:
    """What the run spent (cost and usage), and whether its budget lets a state run."""

    def __init__(self, fsm: FSMLoop, spend: Spend | None = None) -> None:
        self.fsm = fsm
        self.spend = spend if spend is not None else Spend()

    def dump(self) -> dict[str, Any]:
        return {
            "cost_usd": round(self.spend.cost_usd, 6),  # micro-dollars, as every record
            "usage": dict(self.spend.usage),
        }

    def restore(self, snap: ExecutorSnapshot) -> None:
        self.spend = Spend(snap.cost_usd, dict(snap.usage))

    def share(self, spend: Spend) -> None:
        """Count into *spend* (a sub-loop's parent's): one budget and one total for a tree."""
        self.spend = spend

    def used_up(self, name: str) -> str | None:
        """Why state *name* may not run (it calls Claude and the budget is used up), or None."""
        limit = self.fsm.max_cost_usd
        if limit is None or not spends(self.fsm, self.fsm.states[name]):
            return None
        return self.spend.budget_message(limit, name) if self.spend.reached(limit) else None
