"""A child's own max_cost_usd is its verdict `error`; the run's budget stops the whole tree."""

from __future__ import annotations

import json

import pytest
from support import llproc
from support.fake_claude import spender_loop, spending_claude
from support.project import LoopProject

from little_loops.fsm.facts.outcomes import ExitCode

BOSS = """\
name: boss
initial: work
{budget}
states:
  work:
    loop: spender
    on_success: done
    on_failure: done
    on_error: fallback
  fallback:
    terminal: true
    outcome: failure
  done:
    terminal: true
"""


@pytest.fixture
def spending(loop_project: LoopProject, monkeypatch: pytest.MonkeyPatch) -> LoopProject:
    spending_claude(loop_project.root, monkeypatch)
    return loop_project


def test_a_childs_own_budget_is_the_error_verdict(spending: LoopProject) -> None:
    # Was: the whole run stopped with exit 6, and `resume --max-cost` could not lift the
    # child's own limit, so the run could never go on.
    spending.write("spender", spender_loop(0.1))
    spending.write("boss", BOSS.format(budget=""))
    result = llproc.console(spending.root, "run", "boss", "--json")
    assert result.returncode == ExitCode.TERMINAL_FAILURE, result.stderr
    end = json.loads(result.stdout)
    assert end["final_state"] == "fallback"
    assert end["cost_usd"] == pytest.approx(0.12)


def test_the_runs_budget_below_the_childs_stops_the_tree(spending: LoopProject) -> None:
    spending.write("spender", spender_loop(1))
    spending.write("boss", BOSS.format(budget="max_cost_usd: 0.1"))
    result = llproc.console(spending.root, "run", "boss", "--json")
    assert result.returncode == ExitCode.BUDGET, result.stderr
    assert json.loads(result.stdout)["final_state"] == "work"
