"""`simulate --scenario`: little-loops' named verdict patterns, by the number of the action."""

from __future__ import annotations

import pytest

from little_loops.cli.simulate import SCENARIO_NAMES
from little_loops.fsm.engine.scenarios import SCENARIOS, Scenario, scenario_verdict
from little_loops.fsm.facts.errors import LoopDefinitionError


def test_the_cli_lists_every_scenario_in_order() -> None:
    assert tuple(SCENARIOS) == SCENARIO_NAMES


@pytest.mark.parametrize(
    ("scenario", "verdicts"),
    [
        ("all-pass", ["success"] * 4),
        ("all-fail", ["failure"] * 4),
        ("all-error", ["error"] * 4),
        ("first-fail", ["failure", "success", "success", "success"]),
        ("alternating", ["failure", "success", "failure", "success"]),
    ],
)
def test_the_verdict_of_each_action(scenario: str, verdicts: list[str]) -> None:
    assert [scenario_verdict(scenario, call) for call in range(1, 5)] == verdicts


def test_a_state_that_ran_nothing_passes() -> None:
    assert scenario_verdict("all-fail", None) == "success"


def test_a_scenario_counts_the_actions_run() -> None:
    scenario = Scenario("alternating")
    seen = []
    for runs_action in (True, False, True, True):
        scenario.entered(runs_action)
        seen.append(scenario.verdict()[0])
    assert seen == ["failure", "success", "success", "failure"]


def test_an_unknown_scenario_is_refused() -> None:
    with pytest.raises(LoopDefinitionError, match=r"^--scenario 'all-ok': not a scenario \("):
        Scenario("all-ok")


def test_the_error_route_of_a_next_state_when_its_action_fails() -> None:
    from little_loops.fsm.definition.model.typed import StateConfig

    state = StateConfig(action="make", next="check", on_error="broken")
    scenario = Scenario("first-fail")
    scenario.entered(True)
    choice = scenario.error_route(state)
    assert choice is not None
    assert choice.target == "broken"
    scenario.entered(True)
    assert scenario.error_route(state) is None  # the second action passes
