"""Cost per agent and model, folded from a run's events (runs/agent_figures.py)."""

from __future__ import annotations

from little_loops.fsm.runs.agent_figures import JUDGE, AgentBook, agent_of


def test_the_agent_of_a_step_old_records_read_as_claude() -> None:
    assert agent_of({"action_type": "prompt", "agent": "other"}) == "other"
    assert agent_of({"action_type": "prompt"}) == "claude"  # before agents were recorded
    assert agent_of({"action_type": "slash_command"}) == "claude"
    assert agent_of({"action_type": "shell"}) is None  # a command is no agent


def test_actions_judges_and_a_sub_loops_agents_each_count_in_their_row() -> None:
    book = AgentBook()
    book.add("action_complete", {"cost_usd": 0.5, "models": {"m1": 0.5}}, "claude")
    book.add("action_complete", {"cost_usd": 0.25, "usage": {"input_tokens": 4}}, "mine")
    book.add("evaluate", {"cost_usd": 0.01, "model": "judge-1"}, "claude")
    book.add("evaluate", {"verdict": "success"}, "claude")  # no model gave it: no row
    book.add("evaluate", {"cost_usd": 1.0, "final_state": "done"}, None)  # a sub-loop's total
    book.add_nested("action_start", {"action_type": "prompt", "agent": "mine"})
    book.add_nested("action_complete", {"cost_usd": 1.0})
    rows = book.to_dict()
    assert rows["claude"] == {"actions": 1, "cost_usd": 0.5, "tokens": {}, "models": {"m1": 0.5}}
    assert rows["mine"]["actions"] == 2
    assert rows["mine"]["cost_usd"] == 1.25
    assert rows["mine"]["tokens"] == {"input_tokens": 4}
    assert rows[JUDGE] == {
        "actions": 0,
        "cost_usd": 0.01,
        "tokens": {},
        "models": {"judge-1": 0.01},
    }


def test_switches_are_kept_as_the_report_lists_them() -> None:
    book = AgentBook()
    event = {
        "event": "agent_switch",
        "ts": "t",
        "state": "fix",
        "from": "a",
        "to": "b",
        "reason": "usage_limit",
        "resets": None,
    }
    book.add("agent_switch", event, None)
    assert list(book.switches) == [
        {"ts": "t", "state": "fix", "from": "a", "to": "b", "reason": "usage_limit"}
    ]
