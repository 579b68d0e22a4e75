"""Assembling the compiled FSM: `action_type` onto action states, the spec's context merged."""

from __future__ import annotations

from typing import Any

import pytest

from little_loops.fsm.errors import LoopDefinitionError
from little_loops.fsm.paradigms.assemble import DONE, build
from little_loops.fsm.paradigms.spec import SpecReader

STATES = {"run": {"action": "x", "next": DONE}, DONE: {"terminal": True}}


def _states() -> dict[str, dict[str, Any]]:
    return {name: dict(state) for name, state in STATES.items()}


def test_action_type_goes_onto_each_state_with_an_action() -> None:
    reader = SpecReader("paradigm 't'", {"action_type": "shell"})
    fsm = build(reader, "t", "n", "run", _states())
    assert (fsm.states["run"].action_type, fsm.states[DONE].action_type) == ("shell", None)


def test_the_spec_context_is_merged_but_cannot_replace_a_compiler_key() -> None:
    reader = SpecReader("paradigm 't'", {"context": {"a": 1}})
    fsm = build(reader, "t", "n", "run", _states(), {"b": 2})
    assert fsm.context == {"b": 2, "a": 1}
    clash = SpecReader("paradigm 't'", {"context": {"b": 1}})
    with pytest.raises(LoopDefinitionError, match="'b' is set by the t compiler"):
        build(clash, "t", "n", "run", _states(), {"b": 2})
