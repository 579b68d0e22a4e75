"""Whether a state's action is guarded: its tamper guard's and pre-patch check's policies.

Read at every step; the guards themselves (tamper.py, prepatch.py) are loaded only by a run
whose states have them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from little_loops.fsm.definition.model.run_keys import TAMPER_GUARD

if TYPE_CHECKING:
    from little_loops.fsm.definition.model.typed import FSMLoop, StateConfig


def tamper_policy(fsm: FSMLoop, state: StateConfig) -> str | None:
    """The tamper policy of *state*: its own TAMPER_GUARD value, else the loop's (None: none).
    Only a state with an action is guarded."""
    if not state.action:
        return None
    own = state.value(TAMPER_GUARD)
    policy = own if own is not None else fsm.value(TAMPER_GUARD)
    return None if policy is None else str(policy)


def prepatch_policy(fsm: FSMLoop, state: StateConfig) -> str | None:
    """The pre-patch policy of *state*: its own `prepatch_check:`, else the loop's (None:
    none). Only a state with an action is checked."""
    if not state.action:
        return None
    return state.prepatch_check if state.prepatch_check is not None else fsm.prepatch_check
