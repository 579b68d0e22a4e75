"""The native fsm paradigm: a file of states passes through as its model."""

from __future__ import annotations

from little_loops.fsm.definition.model.typed import FSMLoop
from little_loops.fsm.paradigms.registry import compile_paradigm


def test_no_paradigm_key_is_fsm_passthrough() -> None:
    spec = {
        "name": "x",
        "initial": "a",
        "states": {"a": {"action": "true", "next": "b"}, "b": {"terminal": True}},
    }
    fsm = compile_paradigm(spec)
    assert fsm == FSMLoop.from_dict(spec)
    assert fsm.paradigm is None
