"""What a simulation notes instead of knowing: references it leaves as written, limits."""

from __future__ import annotations

from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.engine.simulate_notes import known, limit_notes


def _loop(**extra: object) -> FSMLoop:
    data = {"name": "n", "initial": "a", "states": {"a": {"terminal": True}}, **extra}
    return FSMLoop.from_dict(data)


def test_context_and_state_are_known_but_outputs_are_not() -> None:
    assert known("context", "x", None)
    assert known("state", "name", None)
    assert known("loop", "name", None)
    assert not known("loop", "elapsed", None)
    assert not known("captured", "x", None)
    assert known("result", "verdict", None)
    assert not known("result", "output", None)


def test_limit_notes_name_calls_backoff_timeout_and_budget() -> None:
    notes = limit_notes(_loop(backoff=2, timeout=60, max_cost_usd=1.5), 2, 1, 3)
    text = "\n".join(notes)
    assert "2 prompt actions and 1 LLM evaluation" in text
    assert "4.0s in all (2 × 2s)" in text
    assert "timeout (1m 0s) not simulated" in text
    assert "max_cost_usd (1.5) not simulated" in text


def test_a_plain_walk_has_no_notes() -> None:
    assert limit_notes(_loop(), 0, 0, 1) == []
