"""Named verdict patterns for `simulate --scenario`: the verdict each action's run would get."""

from __future__ import annotations

from collections.abc import Callable

from little_loops.fsm.definition.graph.routing import RouteChoice, error_way
from little_loops.fsm.definition.model.typed import StateConfig
from little_loops.fsm.evaluators.spec import ERROR_VERDICT
from little_loops.fsm.facts.errors import LoopDefinitionError
from little_loops.fsm.facts.verdict_words import FAILURE, SUCCESS

# The names and meanings are little-loops' own (`ll-loop simulate --scenario`), so a loop
# written for it rehearses the same way here. The argument is the number of the action
# (1 for the first one the walk runs, sub-loop states counted as one action each).
SCENARIOS: dict[str, Callable[[int], str]] = {
    "all-pass": lambda call: SUCCESS,
    "all-fail": lambda call: FAILURE,
    "all-error": lambda call: ERROR_VERDICT,
    "first-fail": lambda call: FAILURE if call == 1 else SUCCESS,
    "alternating": lambda call: FAILURE if call % 2 == 1 else SUCCESS,
}

# A state that runs nothing and is still evaluated sees an empty output and exit code 0.
NOTHING_RAN = SUCCESS


def scenario_verdict(scenario: str, call: int | None) -> str:
    """The verdict *scenario* gives action number *call* (None: the state ran nothing)."""
    return NOTHING_RAN if call is None else SCENARIOS[scenario](call)


class Scenario:
    """One walk's scenario: it counts the actions the walk runs and gives each its verdict."""

    def __init__(self, name: str) -> None:
        if name not in SCENARIOS:
            raise LoopDefinitionError(
                f"--scenario {name!r}: not a scenario ({', '.join(SCENARIOS)})"
            )
        self.name = name
        self.calls = 0
        self.call: int | None = None  # the number of the current state's action

    def entered(self, runs_action: bool) -> None:
        """A state was entered; *runs_action*: it runs an action (or a sub-loop)."""
        self.calls += runs_action
        self.call = self.calls if runs_action else None

    def verdict(self) -> tuple[str, str]:
        """The verdict of the current state, and where it came from."""
        return scenario_verdict(self.name, self.call), f"scenario {self.name}"

    def error_route(self, state: StateConfig) -> RouteChoice | None:
        """Where a `next:` state goes when the scenario fails its action: its error route
        (`on_error`, `error:`), as a non-zero exit takes there (little-loops' rule), or None.
        """
        if self.call is None or SCENARIOS[self.name](self.call) == SUCCESS:
            return None
        way = error_way(state)
        return None if way is None else RouteChoice(way.target, f"{way.reason} (the action failed)")
