"""A mapping-valued key checked as one value."""

from __future__ import annotations

from little_loops.fsm.definition.model.block_values import block_problem, keyed_block
from little_loops.fsm.values.value_checks import boolean


def test_keys_and_values() -> None:
    allowed = {"enabled": boolean}
    assert block_problem({"enabled": True}, allowed) is None
    assert block_problem({"enable": True}, allowed) == "unknown key enable (did you mean enabled?)"
    assert (
        block_problem({"enabled": 1}, allowed, "x > ")
        == "x > enabled: expected true or false, got 1"
    )
    assert block_problem([], allowed) == "expected a mapping, got a list"
    assert keyed_block(allowed)(None) is None
