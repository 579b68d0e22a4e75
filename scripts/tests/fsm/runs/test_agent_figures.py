"""Cost per agent and model, folded from a run's events (runs/agent_figures.py)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

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


def test_a_cost_that_is_no_amount_counts_as_nothing() -> None:
    # A damaged or foreign log (or one a custom agent wrote before its costs were checked):
    # the report's figures stay finite, never below 0, and `--json` stays JSON.
    book = AgentBook()
    for cost in (float("nan"), -5.0, float("inf"), 0.25):
        book.add("action_complete", {"cost_usd": cost, "models": {"m": cost}}, "mine")
    row = book.to_dict()["mine"]
    assert row["actions"] == 4
    assert row["cost_usd"] == 0.25
    assert row["models"] == {"m": 0.25}
    assert not any(map(math.isnan, row["models"].values()))


def test_the_report_of_a_log_with_a_nan_cost_is_json(tmp_path: Path) -> None:
    import json

    from support.llproc import ll_loop

    (tmp_path / ".loops").mkdir()
    (tmp_path / ".loops" / "spent.yaml").write_text(
        "name: spent\ninitial: ask\nagent: mine\n"
        "agents:\n  mine: {command: \"echo 'cost: $1'\", cost_pattern: 'cost: \\$([0-9.]+)'}\n"
        "states:\n  ask: {action: Ask, action_type: prompt, next: done}\n"
        "  done: {terminal: true}\n"
    )
    run = ll_loop(tmp_path, "run", "spent", "--no-llm", timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    log = tmp_path / ".loops" / ".running" / "spent.events.jsonl"
    log.write_text(log.read_text().replace('"cost_usd":1.0', '"cost_usd":NaN'))
    assert "NaN" in log.read_text()
    report = ll_loop(tmp_path, "report", "spent", "--json")
    assert report.returncode == 0, report.stderr
    shown = json.loads(report.stdout, parse_constant=lambda name: pytest.fail(name))
    assert shown["agents"]["mine"]["cost_usd"] == 0
    text = ll_loop(tmp_path, "report", "spent")
    assert "nan" not in text.stdout
