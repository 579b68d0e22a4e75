"""The verdicts a state's evaluator can give, from the loop file alone (graph/verdicts.py)."""

from __future__ import annotations

from typing import Any

from little_loops.fsm.definition.graph.verdicts import (
    free_text_verdicts,
    judged_by_llm,
    state_verdicts,
)
from little_loops.fsm.definition.model.typed import FSMLoop


def _loop(state: dict[str, Any], **settings: Any) -> FSMLoop:
    data = {"name": "x", "initial": "a", "states": {"a": state, "z": {"terminal": True}}}
    return FSMLoop.from_dict({**data, **settings})


def test_a_shell_state_gives_success_or_failure() -> None:
    fsm = _loop({"action": "pytest", "on_success": "z"})
    found = state_verdicts(fsm, fsm.states["a"])
    assert found is not None
    assert (found.evaluator, found.source, found.verdicts) == (
        "exit_code",
        "exit_code",
        ("success", "failure"),
    )
    assert found.can_give("error") is True
    assert found.can_give("blocked") is False
    assert "a missing command" in found.error_causes


def test_states_that_are_not_evaluated() -> None:
    fsm = _loop({"action": "x", "next": "z"})
    assert state_verdicts(fsm, fsm.states["a"]) is None
    assert state_verdicts(fsm, fsm.states["z"]) is None


def test_nothing_ran_gives_only_success() -> None:
    fsm = _loop({"on_success": "z"})
    found = state_verdicts(fsm, fsm.states["a"])
    assert found is not None
    assert found.verdicts == ("success",)


def test_a_judge_without_an_enum_answers_free_text() -> None:
    schema = {"type": "object", "properties": {"verdict": {"type": "string"}}}
    state = {"action": "x", "evaluate": {"type": "llm_structured", "schema": schema}}
    fsm = _loop({**state, "route": {"_": "z"}})
    found = state_verdicts(fsm, fsm.states["a"])
    assert found is not None
    assert found.verdicts is None
    assert found.can_give("anything") is None
    assert free_text_verdicts(fsm) is True
    assert judged_by_llm(fsm.states["a"]) is True
    off = _loop({**state, "route": {"_": "z"}}, llm={"enabled": False})
    assert free_text_verdicts(off) is False
    judged = state_verdicts(off, off.states["a"])
    assert judged is not None
    assert judged.source == "exit_code: llm.enabled is false"


def test_judged_by_llm_only_for_an_evaluated_state() -> None:
    fsm = _loop({"action": "x", "next": "z"})
    assert judged_by_llm(fsm.states["a"]) is False
    assert judged_by_llm(fsm.states["z"]) is False
    prompt = _loop({"action": "Fix it", "action_type": "prompt", "on_success": "z"})
    assert judged_by_llm(prompt.states["a"]) is True
