"""The registry of state kinds: one entry per kind kind_of can name."""

from __future__ import annotations

from little_loops.fsm.engine.kinds import action as kind_action
from little_loops.fsm.engine.kinds import approval as kind_approval
from little_loops.fsm.engine.kinds import fanout as kind_fanout
from little_loops.fsm.engine.kinds import learning as kind_learning
from little_loops.fsm.engine.kinds import pr as kind_pr
from little_loops.fsm.engine.kinds import subloop as kind_subloop
from little_loops.fsm.engine.kinds import terminal as kind_terminal
from little_loops.fsm.engine.kinds.names import (
    ACTION_KIND,
    APPROVAL_KIND,
    FANOUT_KIND,
    LEARNING_KIND,
    PR_KIND,
    SUBLOOP_KIND,
    TERMINAL_KIND,
)
from little_loops.fsm.engine.kinds.registry import STATE_KINDS


def test_every_kind_has_its_module_in_the_registry() -> None:
    assert {
        ACTION_KIND: kind_action.run_state,
        APPROVAL_KIND: kind_approval.run_state,
        SUBLOOP_KIND: kind_subloop.run_state,
        LEARNING_KIND: kind_learning.run_state,
        FANOUT_KIND: kind_fanout.run_state,
        PR_KIND: kind_pr.run_state,
        TERMINAL_KIND: kind_terminal.run_state,
    } == STATE_KINDS
