"""The state kinds (action, approval, sub-loop, learning, pr, fan-out, terminal): names."""

from __future__ import annotations

from little_loops.fsm.definition.model.fanout_keys import fan_out_of
from little_loops.fsm.definition.model.learning_keys import proves
from little_loops.fsm.definition.model.typed import StateConfig

ACTION_KIND = "action"
APPROVAL_KIND = "approval"  # `action_type: approval` in a loop file
SUBLOOP_KIND = "subloop"  # `loop:`
TERMINAL_KIND = "terminal"
LEARNING_KIND = "learning"  # `type: learning` with `learning:`
FANOUT_KIND = "fanout"  # `parallel:` or `map:`
PR_KIND = "pr"  # `pr:`: push, open or update a pull request, wait for its checks, merge


def kind_of(state: StateConfig) -> str:
    """The kind of *state*, a key of kind_registry.STATE_KINDS."""
    if state.terminal:
        return TERMINAL_KIND
    if state.is_approval():
        return APPROVAL_KIND
    if state.loop is not None:
        return SUBLOOP_KIND
    if state.pr is not None:
        return PR_KIND
    if proves(state):
        return LEARNING_KIND
    if fan_out_of(state) is not None:
        return FANOUT_KIND
    return ACTION_KIND
