"""How a run that ends in a terminal state ends: success, or failure (by `outcome:` or name)."""

from __future__ import annotations

from collections.abc import Iterator

from little_loops.fsm.definition.model.typed import (
    OUTCOME_FAILURE,
    OUTCOME_SUCCESS,
    FSMLoop,
    StateConfig,
)

# Terminal states whose name says the run failed: with no `outcome:`, a run that ends in
# one ends as a failure (little-loops' rule, ours too; `finalize_aborted` is its name too).
FAILURE_NAMES: tuple[str, ...] = ("failed", "failure", "error", "aborted", "finalize_aborted")


def outcome_of_terminal(name: str, state: StateConfig) -> str:
    """How a run that ends in the terminal state *name* ends: its `outcome:`, else failure
    for a failure name, else success."""
    if state.outcome is not None:
        return state.outcome
    return OUTCOME_FAILURE if name in FAILURE_NAMES else OUTCOME_SUCCESS


def ends_in_failure(name: str, state: StateConfig) -> bool:
    """Whether a run that ends in the terminal state *name* is a failure."""
    return outcome_of_terminal(name, state) == OUTCOME_FAILURE


def failure_by_name(fsm: FSMLoop) -> Iterator[str]:
    """The terminal states of *fsm* that end the run as a failure by their name alone."""
    for name, state in fsm.states.items():
        if state.terminal and state.outcome is None and name in FAILURE_NAMES:
            yield name


def failure_name_note(name: str) -> str:
    """What `validate` says of the terminal *name* that ends a run as a failure by its name."""
    return (
        f"ends the run as a failure (exit 7) by its name; write outcome: failure to say so, "
        f"or outcome: success if '{name}' is a success"
    )
