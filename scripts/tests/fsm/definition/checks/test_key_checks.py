"""The keys of a raw loop definition and their values (definition/checks/key_checks.py)."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.definition.checks.key_checks import check_definition, check_loop_settings
from little_loops.fsm.definition.checks.key_tables import LOOP_KEYS, REQUIRED_LOOP_KEYS, STATE_KEYS


def _messages(data: dict[str, Any]) -> list[str]:
    return [str(problem) for problem in check_definition(data)]


def test_a_good_definition_has_no_problem() -> None:
    data = {"name": "x", "initial": "a", "states": {"a": {"action": "x", "next": "b"}, "b": {}}}
    data["states"]["b"] = {"terminal": True}
    assert _messages(data) == []


def test_an_unknown_key_gets_a_did_you_mean() -> None:
    data = {"name": "x", "initial": "a", "states": {"a": {"action": "x", "nxt": "b"}}}
    assert _messages(data) == ["loop 'x' > states > a > nxt: unknown key (did you mean next?)"]


def test_missing_keys_and_wrong_values_say_where() -> None:
    assert _messages({"name": "x", "states": {}}) == [
        "loop 'x': missing required key 'initial'",
        "loop 'x' > states: expected at least one state",
    ]
    data = {"name": "x", "initial": "a", "states": {"a": {"terminal": "yes"}}}
    assert _messages(data) == [
        "loop 'x' > states > a > terminal: expected true or false, got 'yes'"
    ]


def test_loop_settings_are_checked_alone() -> None:
    problems = check_loop_settings({"max_iterations": -1, "name": 3})
    assert [str(p) for p in problems] == ["max_iterations: expected a whole number >= 1, got -1"]


def test_the_key_tables() -> None:
    assert set(REQUIRED_LOOP_KEYS) <= set(LOOP_KEYS)
    assert {"action", "next", "route", "evaluate", "terminal"} <= set(STATE_KEYS)
