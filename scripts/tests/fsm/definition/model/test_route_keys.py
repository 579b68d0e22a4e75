"""The routing keys in both spellings and their checks (definition/model/route_keys.py)."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.definition.checks.key_tables import STATE_KEYS
from little_loops.fsm.definition.model.route_keys import (
    exit_codes,
    route_key_problems,
)
from little_loops.fsm.definition.model.spellings import written_twice


def problems(state: dict[str, Any]) -> list[tuple[tuple[str | int, ...], str]]:
    return [*written_twice(state), *route_key_problems(state)]


def test_both_spellings_are_state_keys() -> None:
    assert {"on_yes", "on_no", "on_partial", "on_blocked", "failure"} <= set(STATE_KEYS)


def test_one_key_in_two_spellings() -> None:
    assert problems({"on_yes": "a", "on_success": "a"}) == [
        (("on_yes",), "on_yes and on_success are one key written twice: keep one (on_success)")
    ]
    assert problems({"route": {"no": "a", "failure": "b"}}) == [
        (("route", "no"), "no and failure are one verdict: keep one (failure)")
    ]
    assert problems({"terminal": True, "failure": True, "outcome": "failure"})[0][0] == ("failure",)
    assert problems({"on_yes": "a", "on_failure": "b"}) == []


def test_keys_that_need_another() -> None:
    assert problems({"max_retries": 2})[0][1].startswith("needs on_retry_exhausted")
    assert problems({"max_retries": 2, "on_retry_exhausted": "x"}) == []
    assert problems({"failure": True})[0][1].startswith("only a terminal state")


def test_exit_codes() -> None:
    assert exit_codes([75, 0]) is None
    assert exit_codes([]) is not None
    assert exit_codes([256]) == "an exit code is a whole number from 0 to 255, got 256"
    assert exit_codes(["1"]) is not None
