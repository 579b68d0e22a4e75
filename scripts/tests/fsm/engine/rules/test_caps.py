"""The cap rules: max_steps, max_iterations and their routes, max_retries (engine/rules/caps.py)."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.engine.rules.caps import Divert, arrived, at_cap
from little_loops.fsm.facts.outcomes import Outcome


def loop(**settings: Any) -> FSMLoop:
    states = {
        "work": {"action": "true", "on_success": "work", "max_retries": 1},
        "summary": {"action": "true", "next": "done"},
        "done": {"terminal": True},
    }
    if settings.pop("no_exhausted", False):
        del states["work"]["max_retries"]
    else:
        states["work"]["on_retry_exhausted"] = "summary"
    return FSMLoop.from_dict({"name": "l", "initial": "work", "states": states, **settings})


def test_no_cap_enters_the_state() -> None:
    assert arrived(loop(), "work", 0, 0, None, False) is None


def test_max_steps_stops_or_diverts_once() -> None:
    assert arrived(loop(max_steps=2), "work", 2, 0, None, False) is Outcome.MAX_STEPS
    fsm = loop(max_steps=2, on_max_steps="summary")
    way = arrived(fsm, "work", 2, 0, None, False)
    assert way == Divert("summary", "on_max_steps (max_steps 2 reached)", Outcome.MAX_STEPS)
    # in the cap's route: its state runs, then the run ends at the cap
    assert arrived(fsm, "summary", 3, 0, "max_steps", False) is None
    assert arrived(fsm, "done", 3, 0, "max_steps", True) is Outcome.MAX_STEPS


def test_a_terminal_is_reached_at_the_cap() -> None:
    assert arrived(loop(max_steps=2), "done", 2, 0, None, False) is None


def test_max_iterations_route() -> None:
    assert at_cap(loop(), Outcome.MAX_ITERATIONS) is Outcome.MAX_ITERATIONS
    way = at_cap(loop(on_max_iterations="summary", max_iterations=4), Outcome.MAX_ITERATIONS)
    assert isinstance(way, Divert)
    assert way.target == "summary"
    assert way.reason == "on_max_iterations (max_iterations 4 reached)"


def test_max_retries_diverts_after_the_retries() -> None:
    fsm = loop()
    assert arrived(fsm, "work", 5, 1, None, False) is None  # the first retry
    way = arrived(fsm, "work", 5, 2, None, False)
    assert way == Divert("summary", "on_retry_exhausted (max_retries 1)")
