"""Every event the executor emits has the shape its TypedDict in `engine/events.py` declares."""

from __future__ import annotations

from typing import Any

import pytest

from little_loops.fsm.actions.request import ActionRequest, ActionResult
from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig
from little_loops.fsm.engine import events
from little_loops.fsm.engine.executor import FSMExecutor

SHAPES: dict[str, Any] = {
    "loop_start": events.LoopStart,
    "state_enter": events.StateEnter,
    "action_start": events.ActionStart,
    "action_complete": events.ActionComplete,
    "evaluate": events.Evaluation,
    "route": events.Route,
    "session_lost": events.SessionLost,
    "loop_complete": events.LoopComplete,
}
# Only `evaluate` carries further keys: the evaluator's details.
OPEN_SHAPES = {"evaluate"}


class Runner:
    def __init__(self) -> None:
        self.count = 0

    def run(self, request: ActionRequest) -> ActionResult:
        action = request.action
        self.count += 1
        result = ActionResult("x" * 3000, "", 1 if self.count == 1 else 0, 3)
        if action == "broken":
            result.error = "cannot run"
        return result


def _events(fsm: FSMLoop) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    FSMExecutor(fsm, seen.append, Runner()).run()
    return seen


@pytest.mark.parametrize(
    "states",
    [
        {
            "check": StateConfig(action="pytest", on_success="done", on_failure="fix"),
            "fix": StateConfig(action="fix", next="check"),
            "done": StateConfig(terminal=True),
        },
        {
            "check": StateConfig(action="broken", next="done", on_error="failed"),
            "done": StateConfig(terminal=True),
            "failed": StateConfig(terminal=True, action="echo end"),
        },
    ],
)
def test_every_event_matches_its_declared_shape(states: dict[str, StateConfig]) -> None:
    seen = _events(FSMLoop(name="t", initial="check", states=states, max_iterations=5))
    kinds = {e["event"] for e in seen}
    assert kinds <= set(SHAPES)
    assert {"loop_start", "state_enter", "action_start", "action_complete"} <= kinds
    for event in seen:
        shape = SHAPES[event["event"]]
        keys = set(event) - {"event", "ts"}
        assert shape.__required_keys__ <= keys, event
        if event["event"] not in OPEN_SHAPES:
            assert keys <= shape.__required_keys__ | shape.__optional_keys__, event
