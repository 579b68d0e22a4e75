"""A loop model written back as plain data: reading order, defaults dropped, round trip."""

from __future__ import annotations

from little_loops.fsm.definition.loop_dict import loop_to_dict
from little_loops.fsm.definition.model import FSMLoop


def test_keys_come_in_reading_order_and_defaults_are_dropped() -> None:
    data = {
        "max_steps": 9,
        "states": {"a": {"action": "true", "next": "b"}, "b": {"terminal": True}},
        "initial": "a",
        "name": "n",
        "context": {"x": "1"},
        "category": "demo",
    }
    out = loop_to_dict(FSMLoop.from_dict(data))
    assert list(out)[:4] == ["name", "initial", "context", "states"]
    assert out["max_steps"] == 9
    assert out["category"] == "demo"
    assert "max_iterations" not in out  # the default is left out


def test_the_plain_data_reads_back_as_the_same_loop() -> None:
    data = {
        "name": "n",
        "initial": "a",
        "on_handoff": "terminate",
        "states": {
            "a": {"action": "exit 1", "on_success": "b", "on_error": "b"},
            "b": {"terminal": True},
        },
    }
    loop = FSMLoop.from_dict(data)
    assert FSMLoop.from_dict(loop.to_dict()) == loop
    assert loop.to_dict() == loop_to_dict(loop)
