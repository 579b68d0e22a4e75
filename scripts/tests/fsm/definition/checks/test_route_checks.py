"""The caps' routes and the failure-named terminals in `validate` (checks/route_checks.py)."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.definition.checks.route_checks import route_problems
from little_loops.fsm.definition.model.typed import FSMLoop


def problems(**settings: Any) -> list[tuple[tuple[str | int, ...], str, str]]:
    states = {"a": {"action": "true", "next": "done"}, "done": {"terminal": True}}
    states.update(settings.pop("states", {}))
    fsm = FSMLoop.from_dict({"name": "l", "initial": "a", "states": states, **settings})
    return list(route_problems(fsm))


def test_a_cap_route_names_a_state() -> None:
    assert problems(max_steps=3, on_max_steps="done") == []
    assert problems(max_steps=3, on_max_steps="dnoe") == [
        (("on_max_steps",), "'dnoe' is not a state (did you mean done?)", "error")
    ]
    assert problems(on_max_iterations="done") == []


def test_on_max_steps_without_max_steps_is_never_taken() -> None:
    assert problems(on_max_steps="done") == [
        (("on_max_steps",), "never taken: the loop sets no max_steps", "warning")
    ]


def test_a_failure_name_gets_a_note() -> None:
    found = problems(states={"failed": {"terminal": True}})
    assert [(path, severity) for path, _, severity in found] == [(("states", "failed"), "warning")]
    assert problems(states={"failed": {"terminal": True, "outcome": "failure"}}) == []
