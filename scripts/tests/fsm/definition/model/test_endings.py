"""How a run ending in a terminal state ends: by outcome, else by name (model/endings.py)."""

from __future__ import annotations

from little_loops.fsm.definition.model.endings import (
    ends_in_failure,
    failure_by_name,
    failure_name_note,
    outcome_of_terminal,
)
from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig


def test_outcome_first_then_the_name() -> None:
    plain = StateConfig(terminal=True)
    assert outcome_of_terminal("done", plain) == "success"
    assert outcome_of_terminal("stuck", plain) == "success"
    for name in ("failed", "failure", "error", "aborted"):
        assert ends_in_failure(name, plain)
    assert not ends_in_failure("failed", StateConfig(terminal=True, outcome="success"))
    assert ends_in_failure("stuck", StateConfig(terminal=True, outcome="failure"))


def test_failure_true_is_outcome_failure() -> None:
    state = StateConfig.from_dict({"terminal": True, "failure": True})
    assert state.outcome == "failure"
    assert StateConfig.from_dict({"terminal": True, "failure": False}).outcome == "success"


def test_the_terminals_a_name_decides() -> None:
    fsm = FSMLoop.from_dict(
        {
            "name": "l",
            "initial": "a",
            "states": {
                "a": {"action": "true", "next": "failed"},
                "failed": {"terminal": True},
                "error": {"terminal": True, "outcome": "failure"},
            },
        }
    )
    assert list(failure_by_name(fsm)) == ["failed"]
    assert failure_name_note("failed").startswith("ends the run as a failure (exit 7)")
