"""The registry of state kinds: one entry per kind kind_of can name."""

from __future__ import annotations

from little_loops.fsm.engine.kinds import (
    ACTION_KIND,
    APPROVAL_KIND,
    SUBLOOP_KIND,
    TERMINAL_KIND,
    action,
    approval,
    subloop,
    terminal,
)
from little_loops.fsm.engine.kinds.registry import STATE_KINDS


def test_every_kind_has_its_module_in_the_registry() -> None:
    assert {
        ACTION_KIND: action.run_state,
        APPROVAL_KIND: approval.run_state,
        SUBLOOP_KIND: subloop.run_state,
        TERMINAL_KIND: terminal.run_state,
    } == STATE_KINDS
