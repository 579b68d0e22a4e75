"""Memory: what a run remembers between states, dumped and restored by itself."""

from __future__ import annotations

from dataclasses import asdict

from little_loops.fsm.engine.memory import Memory
from little_loops.fsm.engine.records import ExecutorSnapshot


def _memory() -> Memory:
    return Memory(
        captured={"n": {"output": "3"}},
        prev_result={"state": "a", "verdict": "success"},
        last_result={"verdict": "error", "details": {"error": "boom"}},
        started_at="2026-01-01T00:00:00+00:00",
        continuation="note",
        acted={"output": "x", "stderr": "", "exit_code": 0, "duration_ms": 1},
        sessions={"fix": "sess-1"},
    )


def test_its_slice_dumps_and_restores_to_an_equal_memory() -> None:
    saved = _memory()
    snap = ExecutorSnapshot(current_state="a", iteration=1, entered=True, **saved.dump())
    again = Memory()
    again.restore(snap)
    assert again.dump() == saved.dump()
    assert again.resumed_action is not None
    assert again.resumed_action.output == "x"
    assert set(saved.dump()) <= set(asdict(snap))


def test_a_state_stopped_mid_action_forgets_no_finished_action() -> None:
    snap = ExecutorSnapshot(current_state="a", iteration=1, entered=True)
    memory = _memory()
    memory.restore(snap)
    assert (memory.acted, memory.resumed_action) == (None, None)


def test_the_error_of_the_last_verdict() -> None:
    assert _memory().error_detail() == "boom"
    assert Memory().error_detail() is None
