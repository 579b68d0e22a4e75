"""The budget rule: a state that spends may not run once max_cost_usd is used up."""

from __future__ import annotations

from support.engine_parts import loop

from little_loops.fsm.definition.model.typed import StateConfig
from little_loops.fsm.engine.records import ExecutorSnapshot
from little_loops.fsm.engine.rules.budget import Budget
from little_loops.fsm.facts.spend import Spend

FSM = loop(
    {
        "fix": StateConfig(action="/fix", action_type="prompt", on_success="check"),
        "check": StateConfig(action="make test", on_success="done"),
        "done": StateConfig(terminal=True),
    },
    initial="fix",
    max_cost_usd=1.0,
)


def test_a_used_up_budget_stops_only_the_states_that_spend() -> None:
    budget = Budget(FSM, Spend(1.25))
    reason = budget.used_up("fix")
    assert reason is not None
    assert "1.25" in reason
    assert budget.used_up("check") is None
    assert Budget(FSM, Spend(0.5)).used_up("fix") is None


def test_its_slice_dumps_and_restores_to_an_equal_budget() -> None:
    budget = Budget(FSM, Spend(0.1234567, {"input_tokens": 10}))
    snap = ExecutorSnapshot(current_state="fix", iteration=1, **budget.dump())
    again = Budget(FSM)
    again.restore(snap)
    assert again.dump() == budget.dump() == {"cost_usd": 0.123457, "usage": {"input_tokens": 10}}


def test_a_child_shares_its_parents_spend() -> None:
    parent = Spend(0.5)
    child = Budget(FSM)
    child.share(parent)
    child.spend.add(0.25, None, "claude_")
    assert parent.cost_usd == 0.75
