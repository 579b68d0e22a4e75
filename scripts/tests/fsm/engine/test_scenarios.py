"""`simulate --scenario`: little-loops' named verdict patterns, by the number of the action."""

from __future__ import annotations

import pytest

from little_loops.cli.simulate import SCENARIO_NAMES
from little_loops.fsm.engine.scenarios import SCENARIOS, scenario_verdict


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
